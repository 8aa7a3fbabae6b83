#!/usr/bin/env bash
# bench/vector.sh — the issue 16 vector-search benchmark, side by side in one run: lt_fdw's exact kNN; lt_fdw
# through the engine's IVF_PQ (nprobes 10 / 20 / 50, refine_factor 5) and IVF_HNSW_SQ (nprobes 10 / 20 / 50)
# indexes; filtered searches (cat = 7, one value of 100) with and without the engine's bitmap index on cat;
# 16 concurrent clients (pgbench over random query vectors) against the engine with 16 searches in flight;
# the Lance engine's vectorSearch with the same settings; a heap table holding the same vectors sorted by the same
# distance function in SQL; index build time and size, lt_fdw's builder (lt-inspect create-index) against the
# engine's build of the same kind.
#
#   bench/vector.sh [ROWS] [DIM] [QUERIES] [REPEAT]     default 1,000,000 rows of 128-d float32, 20 queries, best of 3
#
# The datasets (id, cat = id % 100, vec fixed_size_list<float32, DIM> around 64 cluster centres, note text) are
# written once by the engine in fragments of 100,000 rows (bench/ref_vector.mjs make) and cached under
# /tmp/vbench-1m (/tmp/vbench-ROWSxDIM for other sizes; LT_VBENCH_DIR overrides): vec.lance with its IVF_PQ
# (256 partitions, 16 sub-vectors, 8-bit codes, l2), vec_hnsw.lance with its IVF_HNSW_SQ (256 partitions, m 20,
# ef_construction 150), vec_bm.lance = vec.lance plus a bitmap index on cat, vec_base.lance without an index; the
# copies share the data files (hard links). lt_fdw's own IVF_PQ and IVF_HNSW_SQ builds of the same rows and
# parameters (vec_ltpq.lance, vec_lthnsw.lance) are made once too; the build figures are kept in
# engine_build.json / lt_build.json there, so reruns skip every build. A throwaway cluster (cluster.sh;
# lt_fdw.vector_index_cache 512MB) holds foreign tables over them and a heap copy `heap (id, cat, vec real[])`
# with a btree on cat. The queries are dataset vectors plus noise; k = 10. Latency: per query the best of REPEAT
# runs (lt_fdw and heap: clock_timestamp() around the query in PL/pgSQL, warm, one session; the engine:
# in-process in node, warm), then the median over the queries; the heap's sorts run once per query. Recall@10:
# against lt_fdw's exact answer. CPU: the backend's user + system time over the timed loop (/proc/self/stat),
# the engine's process.cpuUsage() (every thread) over its loop, per query: on this loaded shared machine compare
# CPU, not wall time. hnsw_np20_nocache: lt_fdw.vector_index_cache = 0 (every statement reads the index files, as
# IVF_HNSW_SQ searches did before their partitions were cached). exact_par2: the exact search under 2 parallel workers (the leader's CPU only).
# Concurrency: pgbench -c 16 -j 2 for LT_VBENCH_SECONDS (default 20) per setting over 200 random queries; CPU of
# the backends from the postmaster's cutime + cstime (the exited backends it reaped); the engine: 16 searches in
# flight over the same queries for as long. LT_BENCH_CALLGRIND=1 adds instructions per warm query through SQL
# (IVF_PQ at nprobes 10 / 20 / 50 and IVF_HNSW_SQ at nprobes 20; the backend under valgrind's callgrind in
# single-user mode). LT_VBENCH_SETTINGS (a regex) runs only the settings it matches; LT_VBENCH_SECONDS=0 skips the
# concurrent runs; LT_VBENCH_BUILD_ONLY=1 stops after the builds, LT_VBENCH_NO_LT_BUILD=1 skips lt_fdw's. Nothing is asserted; the cluster is always
# stopped and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${1:-1000000}
DIM=${2:-128}
NQ=${3:-20}
REPEAT=${4:-3}
SECS=${LT_VBENCH_SECONDS:-20}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
if [ "$ROWS" = 1000000 ] && [ "$DIM" = 128 ]; then DIR=${LT_VBENCH_DIR:-/tmp/vbench-1m}; else DIR=${LT_VBENCH_DIR:-/tmp/vbench-${ROWS}x$DIM}; fi
DATA=$DIR/vec.lance
OUT=$ROOT/build/bench/vector
mkdir -p "$OUT"
log() { echo "$*" >&2; }
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

[ -d test/interop/node_modules/@lancedb/lancedb ] || { log "test/interop/node_modules is missing (scripts/setup.sh)"; exit 1; }
[ -x build/lt-inspect ] || { log "build/lt-inspect is missing (make tools)"; exit 1; }
if [ ! -s "$DIR/engine_build.json" ]; then
	log "generating $ROWS rows of $DIM-d vectors, the engine's IVF_PQ, IVF_HNSW_SQ and bitmap indexes, into $DIR ..."
	rm -rf "$DIR.tmp" "$DIR"
	mkdir -p "$DIR.tmp"
	node --max-old-space-size=8000 bench/ref_vector.mjs make "$DIR.tmp/vec.lance" "$ROWS" "$DIM" 256 16 >"$DIR.tmp/engine_build.json"
	mv "$DIR.tmp" "$DIR"
fi
if [ ! -s "$DIR/lt_build.json" ] && [ -z "${LT_VBENCH_NO_LT_BUILD:-}" ]; then	# lt_fdw's builds of the same kinds and parameters on copies of vec_base
	for kind in ivf_pq ivf_hnsw_sq; do
		d=$DIR/vec_lt${kind#ivf_}.lance
		d=${d/hnsw_sq/hnsw}
		rm -rf "$d" && cp -r "$DIR/vec_base.lance" "$d" && rm -rf "$d/data" && cp -al "$DIR/vec_base.lance/data" "$d/data"
		extra=(--num-sub-vectors 16); [ $kind = ivf_hnsw_sq ] && extra=(--m 20 --ef-construction 150 --max-memory-mb 4096)
		log "lt_fdw's $kind build (lt-inspect create-index) ..."
		/usr/bin/time -f "TIME %e %U %S %M" -o "$DIR/lt_build.$kind.time" build/lt-inspect create-index "$d" --column vec \
			--kind $kind --num-partitions 256 --metric l2 "${extra[@]}" >/dev/null || { log "lt_fdw's $kind build failed"; continue; }
		read -r _ wall u sy rss <"$DIR/lt_build.$kind.time"
		echo "\"lt_$kind\": {\"wall_s\": $wall, \"cpu_s\": $(echo "$u + $sy" | bc), \"max_rss_kb\": $rss, \"bytes\": $(du -sb "$d/_indices" | cut -f1)}"
	done | paste -sd, | sed 's/^/{/; s/$/}/' >"$DIR/lt_build.json.tmp"
	mv "$DIR/lt_build.json.tmp" "$DIR/lt_build.json"
fi
chmod -R a+rX "$DIR"
[ -n "${LT_VBENCH_BUILD_ONLY:-}" ] && exit 0	# the datasets and builds only
if [ -z "${LT_BENCH_REUSE:-}" ] || [ ! -s "$OUT/engine.json" ]; then	# LT_BENCH_REUSE=1: the engine's last answers
	node bench/ref_vector.mjs queries "$DATA" 200 "$OUT/queries200.json"
	node -e 'const fs = require("fs"); fs.writeFileSync(process.argv[2], JSON.stringify(JSON.parse(fs.readFileSync(process.argv[1])).slice(0, +process.argv[3])))' \
		"$OUT/queries200.json" "$OUT/queries.json" "$NQ"
	log "the engine: vectorSearch, best of $REPEAT per query ..."
	node --max-old-space-size=8000 bench/ref_vector.mjs search "$DATA" "$OUT/queries.json" "$REPEAT" >"$OUT/engine.json"
	log "the engine: 16 searches in flight, ${SECS} s per setting ..."
	node --max-old-space-size=8000 bench/ref_vector.mjs concurrent "$DATA" "$OUT/queries200.json" 16 "$SECS" >"$OUT/engine-conc.json"
fi

# --- PostgreSQL --------------------------------------------------------------------------------------------
. test/pg/cluster.sh
lt_pg_install "$ROOT" "$OUT/install.log" || { log "installing lt_fdw failed (see $OUT/install.log)"; exit 1; }
TMP=$(mktemp -d /tmp/lt_fdw_bench_vector.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
chmod 0777 "$TMP"
lt_cluster_create "$TMP" && printf '%s\n' "shared_buffers = 1GB" "jit = off" "max_parallel_workers_per_gather = 0" \
	"lt_fdw.vector_index_cache = 512MB" >>"$LT_PGDATA/postgresql.conf" && lt_cluster_start || { log "the cluster did not start"; exit 1; }
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
node -e '
const qs = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
console.log("CREATE TABLE queries (qid int, q real[]);");
qs.forEach((q, i) => console.log(`INSERT INTO queries VALUES (${i}, ARRAY[${q.join(",")}]::real[]);`));
' "$OUT/queries200.json" >"$TMP/queries.sql"
LT_TABLES=""
[ -s "$DIR/lt_build.json" ] && LT_TABLES+="CREATE FOREIGN TABLE ltpq (id bigint, cat integer, vec real[], note text) SERVER lake OPTIONS (path 'vec_ltpq.lance');"
[ -s "$DIR/lt_build.json" ] && LT_TABLES+="CREATE FOREIGN TABLE lthn (id bigint, cat integer, vec real[], note text) SERVER lake OPTIONS (path 'vec_lthnsw.lance');"
HEAP_SQL=""	# the heap copy, when a heap setting runs
[[ heap =~ ${LT_VBENCH_SETTINGS:-.} ]] && HEAP_SQL="CREATE TABLE heap AS SELECT id, cat, vec FROM lt; CREATE INDEX ON heap (cat); VACUUM FREEZE ANALYZE heap;"
log "the foreign tables and the heap copy ..."
"${PSQL[@]}" >/dev/null <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$DIR');
CREATE FOREIGN TABLE lt (id bigint, cat integer, vec real[], note text) SERVER lake OPTIONS (path 'vec.lance');
CREATE FOREIGN TABLE ltbm (id bigint, cat integer, vec real[], note text) SERVER lake OPTIONS (path 'vec_bm.lance');
CREATE FOREIGN TABLE lth (id bigint, cat integer, vec real[], note text) SERVER lake OPTIONS (path 'vec_hnsw.lance');
$LT_TABLES
$HEAP_SQL
\i $TMP/queries.sql
-- the backend's user + system CPU time in clock ticks (1/100 s)
CREATE FUNCTION cpu_ticks() RETURNS bigint LANGUAGE sql AS
  \$\$SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/self/stat') s\$\$;
-- one setting over the first $NQ queries: each query's best-of-n latency, its ids, the backend's CPU time of the loop
CREATE FUNCTION bench(setting text, tbl text, filter text, n int, OUT qid int, OUT ms float8, OUT ids bigint[]) RETURNS SETOF record
LANGUAGE plpgsql AS \$\$
DECLARE r record; t0 timestamptz; best float8; got bigint[];
BEGIN
  FOR r IN SELECT * FROM queries WHERE queries.qid < $NQ ORDER BY 1 LOOP
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
run_setting() {	# name settings table filter: warm-up (not for the heap), then the timed loop; the backend's CPU ticks around it
	local n=$REPEAT warm="SELECT count(*) FROM bench('$1', '$3', \$\$$4\$\$, 1);"
	case $1 in heap*) n=1 warm="" ;; esac
	"${PSQL[@]}" -At >"$OUT/pg-$1.txt" <<SQL
$2
$warm
CREATE TEMP TABLE cpu AS SELECT cpu_ticks() AS t0;
CREATE TEMP TABLE res AS SELECT * FROM bench('$1', '$3', \$\$$4\$\$, $n);
SELECT 'RESULT', (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM res),
       (SELECT array_to_json(array_agg(to_json(ids) ORDER BY qid)) FROM res), (SELECT cpu_ticks() - t0 FROM cpu), $n;
SQL
}
rm -f "$OUT"/pg-*.txt
SETTINGS=("exact|SET lt_fdw.vector_index = off;|lt|" "np10|SET lt_fdw.nprobes = 10;|lt|" "np20|SET lt_fdw.nprobes = 20;|lt|"
	"np50|SET lt_fdw.nprobes = 50;|lt|" "np20_refine5|SET lt_fdw.nprobes = 20; SET lt_fdw.refine_factor = 5;|lt|"
	"hnsw_np10|SET lt_fdw.nprobes = 10;|lth|" "hnsw_np20|SET lt_fdw.nprobes = 20;|lth|" "hnsw_np50|SET lt_fdw.nprobes = 50;|lth|"
	"hnsw_np20_nocache|SET lt_fdw.nprobes = 20; SET lt_fdw.vector_index_cache = 0;|lth|"
	"cat7_np20|SET lt_fdw.nprobes = 20;|lt|WHERE cat = 7" "cat7_exact|SET lt_fdw.vector_index = off;|lt|WHERE cat = 7"
	"cat7_np20_bm|SET lt_fdw.nprobes = 20;|ltbm|WHERE cat = 7" "cat7_exact_bm|SET lt_fdw.vector_index = off;|ltbm|WHERE cat = 7"
	"exact_par2|SET lt_fdw.vector_index = off; SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;|lt|"
	"heap||heap|" "heap_cat7||heap|WHERE cat = 7")
[ -s "$DIR/lt_build.json" ] && SETTINGS+=("ltbuild_np20|SET lt_fdw.nprobes = 20;|ltpq|")
[ -s "$DIR/lt_build.json" ] && SETTINGS+=("ltbuild_hnsw_np20|SET lt_fdw.nprobes = 20;|lthn|")
for s in "${SETTINGS[@]}"; do
	IFS='|' read -r name settings tbl filter <<<"$s"
	[[ $name =~ ${LT_VBENCH_SETTINGS:-.} ]] || continue	# LT_VBENCH_SETTINGS: a regex of the settings to run
	log "lt_fdw / heap: $name ..."
	run_setting "$name" "$settings" "$tbl" "$filter"
done
for t in "np20 lt" "cat7 lt WHERE cat = 7" "cat7_bm ltbm WHERE cat = 7" "hnsw_np20 lth"; do
	read -r name tbl filter <<<"$t"
	"${PSQL[@]}" -c "SET lt_fdw.nprobes = 20; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT id FROM $tbl $filter ORDER BY vec <-> (SELECT q FROM queries WHERE qid = 0) LIMIT 10" >"$OUT/plan-$name.txt"
done

# --- 16 concurrent clients: pgbench over 200 random queries; the backends' CPU from the postmaster's reaped children --
children_ticks() { awk '{print $16 + $17}' "/proc/$(head -1 "$LT_PGDATA/postmaster.pid")/stat"; }
rm -f "$OUT/pgbench.txt"
for t in "np20 lt" "hnsw_np20 lth"; do
	read -r name tbl <<<"$t"
	[ "$SECS" -gt 0 ] && [[ $name =~ ${LT_VBENCH_SETTINGS:-.} ]] || continue
	printf '%s\n' '\set qid random(0, 199)' "SELECT id FROM $tbl ORDER BY vec <-> (SELECT q FROM queries WHERE qid = :qid) LIMIT 10;" >"$TMP/pgb.sql"
	log "pgbench -c 16: $name, ${SECS} s ..."
	c0=$(children_ticks)
	PGOPTIONS="-c lt_fdw.nprobes=20" "$LT_PGBIN/pgbench" -n -c 16 -j 2 -T "$SECS" -f "$TMP/pgb.sql" postgres >"$OUT/pgbench-$name.txt" 2>&1
	sleep 1
	c1=$(children_ticks)
	echo "$name $(awk '/^tps/ {print $3; exit}' "$OUT/pgbench-$name.txt") $(awk '/transactions actually processed/ {print $NF}' "$OUT/pgbench-$name.txt" | cut -d/ -f1) $((c1 - c0))" >>"$OUT/pgbench.txt"
done

# --- instructions per warm query (LT_BENCH_CALLGRIND=1): the backend under callgrind, single-user ---------------
# Each setting runs once with 1 query and once with 11 (the first query of queries.json, a constant in the SQL);
# (I(11) - I(1)) / 10 is a warm query's instruction count, planning and execution, without the backend's start.
rm -f "$OUT/callgrind.txt"
if [ -n "${LT_BENCH_CALLGRIND:-}" ] && command -v valgrind >/dev/null; then
	lt_cluster_stop
	Q=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))[0].join(","))' "$OUT/queries.json")
	# the cluster stopped immediately: its crash recovery once, outside the measured runs
	echo "SELECT 1;" | lt_as_pg "$LT_PGBIN/postgres" --single -D "$LT_PGDATA" postgres >/dev/null 2>&1
	for t in "np10 lt 10" "np20 lt 20" "np50 lt 50" "hnsw_np20 lth 20"; do
		read -r name tbl np <<<"$t"
		[[ $name =~ ${LT_VBENCH_SETTINGS:-.} ]] || continue
		log "callgrind: $name ..."
		for n in 1 11; do
			{ echo "SET lt_fdw.nprobes = $np;"
			  for _ in $(seq "$n"); do echo "SELECT id FROM $tbl ORDER BY vec <-> '{$Q}'::real[] LIMIT 10;"; done; } >"$TMP/cg.sql"
			chmod a+r "$TMP/cg.sql"
			lt_as_pg valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$n.out" "$LT_PGBIN/postgres" --single \
				-D "$LT_PGDATA" postgres <"$TMP/cg.sql" >/dev/null 2>&1
			eval "ir$n=\$(awk '/^totals:/ {print \$2}' "$TMP/cg.$n.out")"
		done
		echo "$name $(( (ir11 - ir1) / 10 ))" >>"$OUT/callgrind.txt"
	done
fi

# --- the table -----------------------------------------------------------------------------------------------
node - "$OUT" "$ROWS" "$DIM" "$NQ" "$DIR" "$LOAD_BEFORE" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'JS'
const fs = require("fs");
const [out, rows, dim, nq, dir, load0, load1] = process.argv.slice(2);
const rd = (f) => (fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, "utf8")) : {});
const engine = rd(`${out}/engine.json`), conc = rd(`${out}/engine-conc.json`);
const eb = rd(`${dir}/engine_build.json`), lb = rd(`${dir}/lt_build.json`);
const pg = {};
for (const f of fs.readdirSync(out).filter((f) => /^pg-.*\.txt$/.test(f))) {
  const line = fs.readFileSync(`${out}/${f}`, "utf8").split("\n").find((l) => l.startsWith("RESULT"));
  if (!line) continue;
  const [, ms, ids, ticks, n] = line.split("|");
  pg[f.slice(3, -4)] = { median_ms: Number(ms), ids: JSON.parse(ids).map((l) => (l || []).map(String)),
    cpu_ms_per_query: Number(ticks) * 10 / (Number(nq) * Number(n)) };
}
const truth = { all: pg.exact?.ids, cat7: pg.cat7_exact?.ids };
const recall = (ids, t) => (t ? (ids.reduce((s, l, i) => s + l.filter((x) => t[i].includes(x)).length / Math.max(1, Math.min(10, t[i].length)), 0) / ids.length).toFixed(3) : "-");
const rowsOf = (ids) => (ids ? (ids.reduce((s, l) => s + l.length, 0) / ids.length).toFixed(1) : "-");
const f2 = (x) => (x === undefined || Number.isNaN(x) ? "-" : x.toFixed(2));
const ratio = (a, b) => (a === undefined || !b ? "-" : (a / b).toFixed(2));
const bytes = Number(rows) * Number(dim) * 4;
console.log(`bench/vector.sh: ${rows} rows x ${dim}-d float32 (${(bytes / 2 ** 20).toFixed(0)} MiB of vectors), 256 partitions (IVF_PQ: 16 sub-vectors), ${nq} queries, k 10, median over queries of each query's best run`);
console.log(`load before ${load0}, after ${load1}`);
console.log("| setting | lt_fdw ms | engine ms | wall lt/engine | lt CPU ms/q | engine CPU ms/q | CPU lt/engine | lt recall@10 | engine recall@10 | rows lt, engine |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const s of ["exact", "np10", "np20", "np50", "np20_refine5", "hnsw_np10", "hnsw_np20", "hnsw_np50", "hnsw_np20_nocache", "cat7_np20", "cat7_np20_bm", "cat7_exact", "cat7_exact_bm"]) {
  const a = pg[s], b = engine[s.replace("_nocache", "")];
  if (!a) continue;
  const t = s.startsWith("cat7") ? truth.cat7 : truth.all;
  console.log(`| ${s} | ${f2(a.median_ms)} | ${f2(b?.median_ms)} | ${ratio(a.median_ms, b?.median_ms)} | ${f2(a.cpu_ms_per_query)} | ${f2(b?.cpu_ms_per_query)} | ${ratio(a.cpu_ms_per_query, b?.cpu_ms_per_query)} | ${recall(a.ids, t)} | ${b ? recall(b.ids, t) : "-"} | ${rowsOf(a.ids)}, ${rowsOf(b?.ids)} |`);
}
for (const [s, base] of [["heap", "exact"], ["heap_cat7", "cat7_exact"], ["heap_cat7", "cat7_exact_bm"]]) {
  const a = pg[s], l = pg[base];
  if (!a || !l) continue;
  console.log(`${s} (PostgreSQL's sort of the heap copy${s === "heap_cat7" ? ", btree on cat" : ""}): ${f2(a.median_ms)} ms, CPU ${f2(a.cpu_ms_per_query)} ms/q; heap / lt_fdw ${base}: ${ratio(a.median_ms, l.median_ms)}x wall, ${ratio(a.cpu_ms_per_query, l.cpu_ms_per_query)}x CPU; recall ${recall(a.ids, s === "heap" ? truth.all : truth.cat7)}`);
}
if (pg.exact_par2 && pg.exact)
  console.log(`exact_par2 (2 parallel workers + the leader): ${f2(pg.exact_par2.median_ms)} ms, ${ratio(pg.exact.median_ms, pg.exact_par2.median_ms)}x faster than serial; leader CPU ${f2(pg.exact_par2.cpu_ms_per_query)} ms/q; recall ${recall(pg.exact_par2.ids, truth.all)}`);
if (pg.exact)
  console.log(`exact kNN scans ${(bytes / 2 ** 30 / (pg.exact.median_ms / 1000)).toFixed(2)} GiB/s of vectors per wall second, ${(bytes / 2 ** 30 / (pg.exact.cpu_ms_per_query / 1000)).toFixed(2)} GiB/s per CPU second`);
for (const s of ["ltbuild_np20", "ltbuild_hnsw_np20"])
  if (pg[s]) console.log(`${s} (lt_fdw's own ${s.includes("hnsw") ? "IVF_HNSW_SQ" : "IVF_PQ"} build, nprobes 20): ${f2(pg[s].median_ms)} ms, CPU ${f2(pg[s].cpu_ms_per_query)} ms/q, recall@10 ${recall(pg[s].ids, truth.all)}`);
if (fs.existsSync(`${out}/pgbench.txt`)) {
  console.log("| 16 clients, nprobes 20 | lt_fdw qps (pgbench) | engine qps | qps lt/engine | lt CPU ms/q | engine CPU ms/q |");
  console.log("|---|---|---|---|---|---|");
  for (const l of fs.readFileSync(`${out}/pgbench.txt`, "utf8").trim().split("\n")) {
    const [s, tps, n, ticks] = l.split(" ");
    const e = conc[s];
    console.log(`| ${s} | ${f2(Number(tps))} | ${f2(e?.qps)} | ${ratio(Number(tps), e?.qps)} | ${f2(Number(ticks) * 10 / Number(n))} | ${f2(e?.cpu_ms_per_query)} |`);
  }
}
const kinds = [["ivf_pq", "engine_ivf_pq", "lt_ivf_pq"], ["ivf_hnsw_sq", "engine_ivf_hnsw_sq", "lt_ivf_hnsw_sq"], ["bitmap(cat)", "engine_bitmap_cat", null]];
console.log("| index build | engine wall s | engine CPU s | engine bytes | lt_fdw wall s | lt_fdw CPU s | lt_fdw bytes | CPU lt/engine |");
console.log("|---|---|---|---|---|---|---|---|");
for (const [k, e, l] of kinds) {
  const a = eb[e], b = l ? lb[l] : undefined;
  if (!a) continue;
  console.log(`| ${k} | ${a.wall_s} | ${a.cpu_s} | ${a.bytes} | ${b ? b.wall_s : "-"} | ${b ? b.cpu_s : "-"} | ${b ? b.bytes : "-"} | ${b ? ratio(b.cpu_s, a.cpu_s) : "-"} |`);
}
if (fs.existsSync(`${out}/callgrind.txt`))
  for (const l of fs.readFileSync(`${out}/callgrind.txt`, "utf8").trim().split("\n")) {
    const [s, ir] = l.split(" ");
    console.log(`${s}: callgrind ${(Number(ir) / 1e6).toFixed(2)} M instructions per warm query through SQL (planning and execution)`);
  }
JS
echo "plans: $OUT/plan-*.txt"
