#!/usr/bin/env bash
# bench/index_build.sh [ROWS] — index build time and size, lt_fdw (lt-inspect create-index) beside the Lance
# engine (createIndex), on the same dataset, per kind. The engine's JavaScript binding cannot build zone maps,
# so zonemap has lt_fdw's numbers only. Prints one line per kind: rows, seconds (best of 3), lt_fdw's peak
# memory (VmHWM of lt-inspect, kB), bytes, ratios. LT_BENCH_MEMORY_MB: the build's memory (64, PostgreSQL's
# default maintenance_work_mem; past it the sort spills runs to temporary files).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROWS=${1:-1000000}
INSPECT=$ROOT/build/lt-inspect
MEM_MB=${LT_BENCH_MEMORY_MB:-64}
W=$(mktemp -d "${TMPDIR:-/tmp}/lt-ixbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
cat >"$W/spec.json" <<JSON
{"schema": [
  {"name": "id", "type": "int64", "nullable": false, "gen": "seq"},
  {"name": "k", "type": "int32", "gen": {"bits": 8}},
  {"name": "s", "type": "utf8", "gen": {"card": 1000}},
  {"name": "tags", "type": "list<utf8>", "gen": {"item": {"len": 5}, "len": [0, 3]}},
  {"name": "f", "type": "float64"}
 ], "generate": {"n": $ROWS}, "fragments": 4}
JSON
(cd "$ROOT/test/interop" && node ref.mjs make "$W/base.lance" "$W/spec.json" >/dev/null)
cases="id:btree k:bitmap s:bitmap s:btree tags:label_list f:btree f:zonemap"
printf '%-16s %9s %10s %10s %7s %10s %11s %11s %7s\n' index rows lt_fdw_s engine_s ratio lt_peak_kB lt_bytes engine_bytes ratio
for c in $cases; do
	col=${c%%:*} kind=${c#*:}
	best_lt="" best_ref="" lt_bytes="" ref_bytes="" peak=0
	for rep in 1 2 3; do
		rm -rf "$W/a.lance" "$W/b.lance"; cp -r "$W/base.lance" "$W/a.lance"; cp -r "$W/base.lance" "$W/b.lance"
		out=$(/usr/bin/time -f '%e %M' -o "$W/time" "$INSPECT" create-index "$W/a.lance" --column "$col" --kind "$kind" \
			--max-memory-mb "$MEM_MB")
		read -r lt kb <"$W/time"
		[ "$kb" -gt "$peak" ] && peak=$kb
		lt_bytes=$(node -e 'console.log(JSON.parse(process.argv[1]).bytes)' "$out")
		[ -z "$best_lt" ] || [ "$(echo "$lt < $best_lt" | bc)" = 1 ] && best_lt=$lt
		if [ "$kind" != zonemap ]; then
			res=$(cd "$ROOT/test/interop" && node -e '
				const lancedb=require("@lancedb/lancedb"), fs=require("fs"), os=require("os"), path=require("path");
				(async () => {
					const tmp=fs.mkdtempSync(path.join(os.tmpdir(),"ixb-")); fs.symlinkSync(process.argv[1], path.join(tmp,"t.lance"));
					const tbl=await (await lancedb.connect(tmp)).openTable("t");
					const cfg={btree:"btree",bitmap:"bitmap",label_list:"labelList"}[process.argv[3]];
					const t0=process.hrtime.bigint();
					await tbl.createIndex(process.argv[2], {config: lancedb.Index[cfg]()});
					const t1=process.hrtime.bigint();
					const ix=(await tbl.listIndices()).find(x=>x.columns[0]===process.argv[2]);
					console.log(Number(t1-t0)/1e9, ix.sizeBytes);
					fs.rmSync(tmp,{recursive:true});
				})();' "$W/b.lance" "$col" "$kind")
			ref=${res% *} ref_bytes=${res#* }
			[ -z "$best_ref" ] || [ "$(echo "$ref < $best_ref" | bc)" = 1 ] && best_ref=$ref
		fi
	done
	if [ -n "$best_ref" ]; then
		printf '%-16s %9s %10.3f %10.3f %7.2f %10s %11s %11s %7.3f\n' "$col/$kind" "$ROWS" "$best_lt" "$best_ref" \
			"$(echo "$best_lt / $best_ref" | bc -l)" "$peak" "$lt_bytes" "$ref_bytes" "$(echo "$lt_bytes / $ref_bytes" | bc -l)"
	else
		printf '%-16s %9s %10.3f %10s %7s %10s %11s %11s %7s\n' "$col/$kind" "$ROWS" "$best_lt" - - "$peak" "$lt_bytes" - -
	fi
done
