#!/usr/bin/env bash
# bench/vector.sh — the issue 16 vector-search benchmark, side by side in one run: lt_fdw's exact kNN, lt_fdw
# through the engine's IVF_PQ index (nprobes 10 / 20 / 50, refine_factor 5, a filtered search), the Lance
# engine's vectorSearch with the same settings, and a heap table holding the same vectors sorted by the same
# distance function in SQL.
#
#   bench/vector.sh [ROWS] [DIM] [QUERIES] [REPEAT]     default 1,000,000 rows of 128-d float32, 20 queries, best of 3
#
# The dataset (id, cat = id % 100, vec fixed_size_list<float32, DIM> around 64 cluster centres, note text) is
# written by the engine in fragments of 100,000 rows with an IVF_PQ index (256 partitions, 16 sub-vectors, 8-bit
# codes, l2; bench/ref_vector.mjs), cached under build/bench/vec<ROWS>x<DIM>/. A throwaway cluster (cluster.sh)
# holds a foreign table `lt` over it and a heap copy `heap (id, cat, vec real[])`. The queries are dataset
# vectors plus noise; k = 10. Latency: per query the best of REPEAT runs (lt_fdw and heap: clock_timestamp()
# around the query in PL/pgSQL, warm, one session; the engine: in-process in node), then the median over the
# queries. Recall@10: against lt_fdw's exact answer (the engine's exact answer is reported beside it). CPU time
# of the backend for the whole timed loop (from /proc) is printed for lt_fdw's settings. exact_par2: the exact
# search under 2 parallel workers (Gather Merge; the leader's CPU only). The engine's CPU time per query is its
# process's (every thread) over its timed loop: on a loaded machine compare CPU, not wall time.
# LT_BENCH_CALLGRIND=1 adds instructions per warm IVF_PQ query through SQL at nprobes 10 / 20 / 50 (the backend
# under valgrind's callgrind in single-user mode). Nothing is asserted;
# the cluster is always stopped and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${1:-1000000}
DIM=${2:-128}
NQ=${3:-20}
REPEAT=${4:-3}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
DIR=$ROOT/build/bench/vec${ROWS}x$DIM
DATA=$DIR/vec.lance
OUT=$ROOT/build/bench/vector
mkdir -p "$OUT"
log() { echo "$*" >&2; }
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

[ -d test/interop/node_modules/@lancedb/lancedb ] || { log "test/interop/node_modules is missing (scripts/setup.sh)"; exit 1; }
if [ ! -d "$DATA" ]; then
	log "generating $ROWS rows of $DIM-d vectors with an IVF_PQ index (the engine) into $DIR ..."
	rm -rf "$DIR.tmp"
	node --max-old-space-size=8000 bench/ref_vector.mjs make "$DIR.tmp/vec.lance" "$ROWS" "$DIM" 256 16 >"$OUT/build.json"
	mv "$DIR.tmp" "$DIR"
fi
chmod a+rX build build/bench "$DIR" && chmod -R a+rX "$DATA"
if [ -z "${LT_BENCH_REUSE:-}" ] || [ ! -s "$OUT/engine.json" ]; then	# LT_BENCH_REUSE=1: the engine's last answers
	node bench/ref_vector.mjs queries "$DATA" "$NQ" "$OUT/queries.json"
	log "the engine: vectorSearch, best of $REPEAT per query ..."
	node --max-old-space-size=8000 bench/ref_vector.mjs search "$DATA" "$OUT/queries.json" "$REPEAT" >"$OUT/engine.json"
fi

# --- PostgreSQL --------------------------------------------------------------------------------------------
. test/pg/cluster.sh
lt_pg_install "$ROOT" "$OUT/install.log" || { log "installing lt_fdw failed (see $OUT/install.log)"; exit 1; }
TMP=$(mktemp -d /tmp/lt_fdw_bench_vector.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
chmod 0777 "$TMP"
lt_cluster_create "$TMP" && printf '%s\n' "shared_buffers = 1GB" "jit = off" "max_parallel_workers_per_gather = 0" \
	>>"$LT_PGDATA/postgresql.conf" && lt_cluster_start || { log "the cluster did not start"; exit 1; }
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
node -e '
const qs = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
console.log("CREATE TABLE queries (qid int, q real[]);");
qs.forEach((q, i) => console.log(`INSERT INTO queries VALUES (${i}, ARRAY[${q.join(",")}]::real[]);`));
' "$OUT/queries.json" >"$TMP/queries.sql"
"${PSQL[@]}" >/dev/null <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$DIR');
CREATE FOREIGN TABLE lt (id bigint, cat integer, vec real[], note text) SERVER lake OPTIONS (path 'vec.lance');
CREATE TABLE heap AS SELECT id, cat, vec FROM lt;
VACUUM FREEZE ANALYZE heap;
\i $TMP/queries.sql
-- the backend's user + system CPU time in clock ticks (1/100 s)
CREATE FUNCTION cpu_ticks() RETURNS bigint LANGUAGE sql AS
  \$\$SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/self/stat') s\$\$;
-- one setting over every query: each query's best-of-n latency, its ids, the backend's CPU time of the loop
CREATE FUNCTION bench(setting text, tbl text, filter text, n int, OUT qid int, OUT ms float8, OUT ids bigint[]) RETURNS SETOF record
LANGUAGE plpgsql AS \$\$
DECLARE r record; t0 timestamptz; best float8; got bigint[];
BEGIN
  FOR r IN SELECT * FROM queries ORDER BY 1 LOOP
    best := 'infinity';
    FOR i IN 1..n LOOP
      t0 := clock_timestamp();
      EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM %I %s ORDER BY vec <-> \$1 LIMIT 10) s', tbl, filter) INTO got USING r.q;
      best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
    END LOOP;
    qid := r.qid; ms := best; ids := got;
    RETURN NEXT;
  END LOOP;
END \$\$;
SQL
run_setting() {	# name settings table filter: warm-up, then the timed loop; the backend's CPU ticks around it
	"${PSQL[@]}" -At >"$OUT/pg-$1.txt" <<SQL
$2
SELECT count(*) FROM bench('$1', '$3', \$\$$4\$\$, 1);
CREATE TEMP TABLE cpu AS SELECT cpu_ticks() AS t0;
CREATE TEMP TABLE res AS SELECT * FROM bench('$1', '$3', \$\$$4\$\$, $REPEAT);
SELECT 'RESULT', (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM res),
       (SELECT array_to_json(array_agg(to_json(ids) ORDER BY qid)) FROM res), (SELECT cpu_ticks() - t0 FROM cpu);
SQL
}
for s in "exact|SET lt_fdw.vector_index = off;|lt|" "np10|SET lt_fdw.nprobes = 10;|lt|" "np20|SET lt_fdw.nprobes = 20;|lt|" \
	"np50|SET lt_fdw.nprobes = 50;|lt|" "np20_refine5|SET lt_fdw.nprobes = 20; SET lt_fdw.refine_factor = 5;|lt|" \
	"cat7_np20|SET lt_fdw.nprobes = 20;|lt|WHERE cat = 7" "cat7_exact|SET lt_fdw.vector_index = off;|lt|WHERE cat = 7" \
	"exact_par2|SET lt_fdw.vector_index = off; SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;|lt|" \
	"heap||heap|" "heap_cat7||heap|WHERE cat = 7"; do
	IFS='|' read -r name settings tbl filter <<<"$s"
	log "lt_fdw / heap: $name ..."
	run_setting "$name" "$settings" "$tbl" "$filter"
done
"${PSQL[@]}" -c "SET lt_fdw.nprobes = 20; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT id FROM lt WHERE cat = 7 ORDER BY vec <-> (SELECT q FROM queries WHERE qid = 0) LIMIT 10" >"$OUT/plan-cat7.txt"
"${PSQL[@]}" -c "SET lt_fdw.nprobes = 20; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT id FROM lt ORDER BY vec <-> (SELECT q FROM queries WHERE qid = 0) LIMIT 10" >"$OUT/plan-np20.txt"

# --- instructions per IVF_PQ query (LT_BENCH_CALLGRIND=1): the backend under callgrind, single-user -----------
# Each nprobes setting runs once with 1 query and once with 11 (the first query of queries.json, a constant in the
# SQL); (I(11) - I(1)) / 10 is a warm query's instruction count, planning and execution, without the backend's start.
rm -f "$OUT/callgrind.txt"
if [ -n "${LT_BENCH_CALLGRIND:-}" ] && command -v valgrind >/dev/null; then
	lt_cluster_stop
	Q=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))[0].join(","))' "$OUT/queries.json")
	# the cluster stopped immediately: its crash recovery once, outside the measured runs
	echo "SELECT 1;" | lt_as_pg "$LT_PGBIN/postgres" --single -D "$LT_PGDATA" postgres >/dev/null 2>&1
	for np in 10 20 50; do
		for n in 1 11; do
			{ echo "SET lt_fdw.nprobes = $np;"
			  for _ in $(seq "$n"); do echo "SELECT id FROM lt ORDER BY vec <-> '{$Q}'::real[] LIMIT 10;"; done; } >"$TMP/cg.sql"
			chmod a+r "$TMP/cg.sql"
			lt_as_pg valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$n.out" "$LT_PGBIN/postgres" --single \
				-D "$LT_PGDATA" postgres <"$TMP/cg.sql" >/dev/null 2>&1
			eval "ir$n=\$(awk '/^totals:/ {print \$2}' "$TMP/cg.$n.out")"
		done
		echo "np$np $(( (ir11 - ir1) / 10 ))" >>"$OUT/callgrind.txt"
	done
fi

# --- the table -----------------------------------------------------------------------------------------------
node - "$OUT" "$ROWS" "$DIM" "$NQ" "$REPEAT" "$LOAD_BEFORE" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'JS'
const fs = require("fs");
const [out, rows, dim, nq, repeat, load0, load1] = process.argv.slice(2);
const engine = JSON.parse(fs.readFileSync(`${out}/engine.json`, "utf8"));
const pg = {};
for (const f of fs.readdirSync(out).filter((f) => /^pg-.*\.txt$/.test(f))) {
  const line = fs.readFileSync(`${out}/${f}`, "utf8").split("\n").find((l) => l.startsWith("RESULT"));
  if (!line) continue;
  const [, ms, ids, ticks] = line.split("|");
  const name = f.slice(3, -4);
  pg[name] = { median_ms: Number(ms), ids: JSON.parse(ids).map((l) => (l || []).map(String)),
    cpu_ms_per_query: Number(ticks) * 10 / (Number(nq) * Number(repeat)) };
}
const truth = { all: pg.exact.ids, cat7: pg.cat7_exact.ids };
const recall = (ids, t) => ids.reduce((s, l, i) => s + l.filter((x) => t[i].includes(x)).length / Math.max(1, Math.min(10, t[i].length)), 0) / ids.length;
const rowsOf = (ids) => ids.reduce((s, l) => s + l.length, 0) / ids.length;
const bytes = Number(rows) * Number(dim) * 4;
console.log(`bench/vector.sh: ${rows} rows x ${dim}-d float32 (${(bytes / 2 ** 20).toFixed(0)} MiB of vectors), IVF_PQ 256 partitions x 16 sub-vectors, ${nq} queries, k 10, best of ${repeat} per query, median over queries`);
console.log(`load before ${load0}, after ${load1}`);
console.log("setting        | lt_fdw ms | engine ms | lt/engine | lt recall@10 | engine recall@10 | rows (lt, engine) | lt CPU ms/query | engine CPU ms/query | CPU lt/engine");
for (const s of ["exact", "np10", "np20", "np50", "np20_refine5", "cat7_np20", "cat7_exact"]) {
  const t = s.startsWith("cat7") ? truth.cat7 : truth.all;
  const a = pg[s], b = engine[s];
  if (!a || !b) continue;
  console.log(`${s.padEnd(14)} | ${a.median_ms.toFixed(2).padStart(9)} | ${b.median_ms.toFixed(2).padStart(9)} | ${(a.median_ms / b.median_ms).toFixed(2).padStart(9)} | ${recall(a.ids, t).toFixed(3).padStart(12)} | ${recall(b.ids, t).toFixed(3).padStart(16)} | ${rowsOf(a.ids).toFixed(1)}, ${rowsOf(b.ids).toFixed(1)} | ${a.cpu_ms_per_query.toFixed(2)} | ${b.cpu_ms_per_query === undefined ? "-" : b.cpu_ms_per_query.toFixed(2)} | ${b.cpu_ms_per_query ? (a.cpu_ms_per_query / b.cpu_ms_per_query).toFixed(2) : "-"}`);
}
for (const s of ["heap", "heap_cat7"]) {
  const a = pg[s];
  if (!a) continue;
  const base = s === "heap" ? pg.exact : pg.cat7_exact;
  console.log(`${s.padEnd(14)} | ${a.median_ms.toFixed(2).padStart(9)} | heap / lt_fdw exact: ${(a.median_ms / base.median_ms).toFixed(1)}x | CPU ms/query ${a.cpu_ms_per_query.toFixed(2)} | recall ${recall(a.ids, s === "heap" ? truth.all : truth.cat7).toFixed(3)}`);
}
if (pg.exact_par2) {
  const a = pg.exact_par2;
  console.log(`exact_par2     | ${a.median_ms.toFixed(2).padStart(9)} | exact kNN, 2 parallel workers + the leader: ${(pg.exact.median_ms / a.median_ms).toFixed(2)}x the serial | leader CPU ms/query ${a.cpu_ms_per_query.toFixed(2)} (the workers' not counted) | recall ${recall(a.ids, truth.all).toFixed(3)}`);
}
if (fs.existsSync(`${out}/callgrind.txt`))
  for (const l of fs.readFileSync(`${out}/callgrind.txt`, "utf8").trim().split("\n")) {
    const [s, ir] = l.split(" ");
    console.log(`${s.padEnd(14)} | callgrind: ${(Number(ir) / 1e6).toFixed(2)} M instructions per warm query through SQL (planning and execution)`);
  }
console.log(`lt_fdw exact kNN scans ${(bytes / 2 ** 30 / (pg.exact.median_ms / 1000)).toFixed(2)} GiB/s of vectors`);
JS
echo "plans: $OUT/plan-np20.txt $OUT/plan-cat7.txt"
