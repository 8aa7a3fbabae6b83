#!/usr/bin/env bash
# demo/run.sh — lt_fdw from a fresh Debian 12 machine (as root) to a working demo, in one command:
#
#   1. installs the packages and npm modules, builds lt_fdw and lt-inspect      (scripts/setup.sh)
#   2. writes a small Lance dataset with the real Lance engine                  (test/interop/ref.mjs make)
#   3. reads it back with lt_fdw's own C reader                                 (build/lt-inspect info, scan)
#      and checks that it returns exactly what Lance returns                    (test/interop/ref.mjs scan)
#   4. installs the extension into a throwaway PostgreSQL 15 cluster, runs CREATE EXTENSION lt_fdw, queries
#      the dataset and writes to it in one transaction; the cluster is stopped and removed at the end
#   5. reads the new version back with the real Lance engine
#
# Environment: LT_DEMO_DIR  where the dataset goes (default /tmp/lt_fdw_demo; it is recreated and kept,
#                           so build/lt-inspect can be pointed at it afterwards)
#              PG_CONFIG    (default /usr/lib/postgresql/15/bin/pg_config)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
DEMO=${LT_DEMO_DIR:-/tmp/lt_fdw_demo}
DS=$DEMO/events.lance
REF=test/interop/ref.mjs

if [ -t 1 ]; then B=$'\033[1m' N=$'\033[0m'; else B='' N=''; fi
say() { printf '\n%s### %s%s\n' "$B" "$*" "$N"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "1. packages, npm modules, build"
scripts/setup.sh

say "2. a Lance dataset written by the real Lance engine (@lancedb/lancedb 0.31.0 = lance 8.0.0)"
if [ ! -f "$REF" ]; then
	echo "demo/run.sh: $REF (the reference harness) is missing" >&2
	exit 1
fi
rm -rf "$DEMO"
mkdir -p "$DEMO"
run node "$REF" make "$DS" demo/events.spec.json
chmod -R a+rX "$DEMO"                                  # lance writes 0600 files; the server reads as postgres
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$DEMO"     # and (later) writes into the dataset
echo "(spec: demo/events.spec.json — 8 rows in 2 fragments, then a delete of id = 4: id int64, dt date32, kind utf8, value float64, tags list<utf8>)"

say "3. read it with lt_fdw's own C reader"
# info prints one JSON object; show it one key (and one fragment / field / version) per line
printf '$ build/lt-inspect info %s\n' "$DS"
build/lt-inspect info "$DS" | node -e '
  const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const keys = Object.keys(j);
  console.log("{");
  keys.forEach((k, i) => {
    const v = j[k], end = i < keys.length - 1 ? "," : "";
    if (Array.isArray(v) && v.length > 0 && typeof v[0] === "object")
      console.log(`  "${k}": [\n${v.map((x) => "    " + JSON.stringify(x)).join(",\n")}\n  ]${end}`);
    else
      console.log(`  "${k}": ${JSON.stringify(v)}${end}`);
  });
  console.log("}");'
echo
run build/lt-inspect scan "$DS"
node "$REF" scan "$DS" >"$DEMO/expected.jsonl"
build/lt-inspect scan "$DS" >"$DEMO/actual.jsonl"
if cmp -s "$DEMO/expected.jsonl" "$DEMO/actual.jsonl"; then
	echo "lt-inspect returns exactly what Lance returns: $(wc -l <"$DEMO/actual.jsonl") rows"
else
	echo "lt-inspect and Lance disagree:" >&2
	diff "$DEMO/expected.jsonl" "$DEMO/actual.jsonl" >&2 || true
	exit 1
fi

say "4. the extension in a throwaway PostgreSQL 15 cluster"
echo "$ make install"
make -s install PG_CONFIG="$PG_CONFIG" >/dev/null
. test/pg/cluster.sh
PGTMP=$(mktemp -d /tmp/lt_fdw_demo_pg.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$PGTMP"' EXIT
lt_cluster_create "$PGTMP"
lt_cluster_start
echo "(cluster on 127.0.0.1:$PGPORT, removed when the demo ends)"
psql_demo() { "$LT_PGBIN/psql" -X -q -d postgres -v ON_ERROR_STOP=1 --echo-queries "$@"; }
psql_demo -v root="$DEMO" <<'SQL'
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'root');
IMPORT FOREIGN SCHEMA "." FROM SERVER lake INTO public OPTIONS (import_row_id 'true');
\d events
SELECT * FROM events ORDER BY _rowid;
SELECT dt, count(*), sum(value) FROM events GROUP BY dt ORDER BY dt;
EXPLAIN (COSTS OFF) SELECT id, kind FROM events WHERE dt = DATE '2026-08-02' AND value > 1;
SELECT id, kind FROM events WHERE dt = DATE '2026-08-02' AND value > 1;
-- time travel: version 2 is before the delete of id 4
CREATE FOREIGN TABLE events_v2 (id bigint, kind text, value double precision)
  SERVER lake OPTIONS (path 'events.lance', version '2');
SELECT * FROM events_v2 WHERE id = 4;
-- writes: the whole transaction becomes one new Lance version (an Update: a deletion vector + a new fragment)
BEGIN;
INSERT INTO events (id, dt, kind, value, tags) VALUES (9, DATE '2026-08-03', 'buy', 7.5, ARRAY['app']);
DELETE FROM events WHERE id = 1;
UPDATE events SET value = value * 2 WHERE id = 2;
COMMIT;
SELECT id, dt, kind, value, tags FROM events ORDER BY id;
SQL
say "5. the Lance engine reads what PostgreSQL wrote"
run node "$REF" scan "$DS"
echo
say "done"
echo "dataset kept in $DS — try: build/lt-inspect info $DS"
