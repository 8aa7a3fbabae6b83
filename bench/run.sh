#!/usr/bin/env bash
# bench/run.sh — decode benchmark: lt_fdw's format library beside the real Lance engine, in one run.
#
#   bench/run.sh [ROWS] [REPEAT]       default 10,000,000 rows, best of 3
#
# Builds the table once with the reference library (cached under build/bench/), then times full scans of each
# column and of the whole table through both, and prints the ratio lt/ref (below 1.0 = lt_fdw faster).
# Not part of the tests: timings are never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-10000000}
REPEAT=${2:-3}
DATA=build/bench/t$ROWS.lance

[ -d test/interop/node_modules/@lancedb/lancedb ] || (cd test/interop && npm ci --no-audit --no-fund >&2)
make -s build/bench/decode build/lt-inspect >&2
if [ ! -d "$DATA" ]; then
  echo "generating $ROWS rows with the reference library..." >&2
  mkdir -p build/bench
  node bench/ref_bench.mjs make "$DATA" "$ROWS"
fi

echo "== encodings in the table (lt-inspect pages, first fragment)"
build/lt-inspect pages "$DATA" | node -e '
  const seen = new Map();
  for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean)) {
    const p = JSON.parse(l); if (p.fragment !== 0) continue;
    const k = p.column, v = `${p.layout}:${p.compression}${p.dictionary ? "+dict" : ""}`;
    if (!seen.has(k)) seen.set(k, new Map());
    seen.get(k).set(v, (seen.get(k).get(v) || 0) + 1);
  }
  for (const [k, m] of seen) console.log(`  ${k.padEnd(6)} ${[...m].map(([v, n]) => `${v} x${n}`).join(", ")}`);'

echo "== lt_fdw format library (single thread)"
build/bench/decode "$DATA" --repeat "$REPEAT" | tee build/bench/lt.out | grep -v '^RESULT'
echo "== reference: Lance engine via @lancedb/lancedb toArrow()"
node --max-old-space-size=8000 bench/ref_bench.mjs scan "$DATA" "$REPEAT" > build/bench/ref.out
cat build/bench/ref.out

echo "== ratio (lt time / reference time; < 1.0 means lt_fdw is faster)"
awk '
  FNR == NR && $1 == "RESULT" { key = ($2 == "table") ? "table" : $3; lt[key] = ($2 == "table") ? $3 : $4; next }
  $1 == "RESULT" { key = ($2 == "table") ? "table" : $3; ref[key] = ($2 == "table") ? $3 : $4; order[++n] = key }
  END { for (i = 1; i <= n; i++) { k = order[i]; if (k in lt) printf "  %-8s lt %8.4fs  ref %8.4fs  ratio %5.2fx\n", k, lt[k], ref[k], lt[k] / ref[k] } }
' build/bench/lt.out build/bench/ref.out
