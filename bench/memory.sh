#!/usr/bin/env bash
# bench/memory.sh — the backend's peak memory where issue 15 found it unbounded, in a throwaway cluster.
#
#   bench/memory.sh spill [ROWS] [WORK_MEM]        point 13; default 3,000,000 rows, 64kB
#   bench/memory.sh cleanup [VERSIONS] [KEEP_EVERY]  point 8; default 10,000 versions, every 10th row kept
#
# Peak memory is VmHWM of /proc/<pid>/status of a fresh backend after the statement (read with psql's \!
# on this machine), next to the statement's answer and its time.
#
# spill: a dataset of ROWS rows (id int64, k int64 = a permutation of the ids, v float64, t text = 'key ' || k),
# written by lt_fdw (INSERT from generate_series), statistics claiming 10 distinct keys (n_distinct, ANALYZE)
# so that planning pushes the GROUP BY down:
#   pushed / pushed text   SELECT count(*), sum(n), sum(s) FROM (SELECT k, count(*) n, sum(v) s FROM t GROUP BY k) q
#                          (and grouped by t), computed by lt_fdw, spilling
#   postgres / pg text     the same with lt_fdw.enable_aggregate_pushdown = off (PostgreSQL's HashAggregate)
# then EXPLAIN ANALYZE of the pushed one.
# cleanup: a dataset made by the reference engine gets VERSIONS versions from a loop of single-row INSERT and
# DELETE transactions (every KEEP_EVERY-th row stays, so the manifests grow to VERSIONS / (2 * KEEP_EVERY)
# fragments and the old versions reference thousands of distinct files); then lt_versions and lt_cleanup's dry
# run over them.
# Not part of the tests (making the data takes minutes); nothing is asserted.
#   LT_BENCH_KEEP=DIR   keep (and reuse) the generated datasets in DIR
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WHAT=${1:-}
case $WHAT in
	spill) ROWS=${2:-3000000} WORK_MEM=${3:-64kB} ;;
	cleanup) NVERSIONS=${2:-10000} KEEP_EVERY=${3:-10} WORK_MEM=4MB ;;
	*) sed -n '2,24p' "$0"; exit 2 ;;
esac
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
OUT=$ROOT/build/bench/memory
mkdir -p "$OUT"
log() { echo "$*" >&2; }

. "$ROOT/test/pg/cluster.sh"
log "make install (a private PostgreSQL copy) ..."
lt_pg_install "$ROOT" "$OUT/install.log" || exit 1
TMP=$(mktemp -d /tmp/lt_fdw_bench_memory.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
chmod 0777 "$TMP"
LAKE=${LT_BENCH_KEEP:-$TMP/lake}
mkdir -p "$LAKE" "$TMP/pg"
chmod 0777 "$LAKE"
lt_cluster_create "$TMP/pg"
lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)

# make DIR SCHEMA_JSON: an empty dataset (or with 100 generated rows: GENERATE=1) by the reference engine
make_dataset() {
	printf '{"storage": "2.1", "schema": %s, %s}\n' "$2" \
		"$([ "${GENERATE:-0}" = 1 ] && echo '"generate": {"n": 100}, "fragment_sizes": [50, 50]' || echo '"rows": []')" >"$TMP/spec.json"
	chmod a+r "$TMP/spec.json"
	lt_as_pg node "$ROOT/test/interop/ref.mjs" make "$1" "$TMP/spec.json" >/dev/null
	chown -R "$LT_PG_OSUSER" "$1" 2>/dev/null || true
}

# peak LABEL SQL: VmHWM of a fresh backend after SQL (kB)
peak() {
	local start=$SECONDS
	"$LT_PGBIN/psql" -X -q -At -d postgres >"$TMP/peak.out" 2>&1 <<SQL
SELECT pg_backend_pid() AS pid \gset
\setenv LT_BACKEND_PID :pid
SET work_mem = '$WORK_MEM';
SET max_parallel_workers_per_gather = 0;
$2 \g $TMP/peak.result
\! grep -E '^VmHWM' /proc/\$LT_BACKEND_PID/status
SQL
	printf '%-12s VmHWM %8s kB  (%s s)  result: %s\n' "$1" "$(grep -Eo 'VmHWM:[[:space:]]+[0-9]+' "$TMP/peak.out" | grep -Eo '[0-9]+')" \
		"$((SECONDS - start))" "$(tr '\n' ' ' <"$TMP/peak.result" 2>/dev/null | cut -c1-120)"
	grep -q ERROR "$TMP/peak.out" && cat "$TMP/peak.out"
	return 0
}

"${PSQL[@]}" -c "CREATE EXTENSION lt_fdw" -c "CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE')"

if [ "$WHAT" = spill ]; then
	ds=keys$ROWS.lance
	if [ ! -d "$LAKE/$ds/_versions" ]; then
		log "writing $ROWS rows ..."
		rm -rf "$LAKE/$ds.tmp"
		make_dataset "$LAKE/$ds.tmp" '[{"name": "id", "type": "int64", "nullable": false}, {"name": "k", "type": "int64"},
			{"name": "v", "type": "float64"}, {"name": "t", "type": "utf8"}]'
		"${PSQL[@]}" -c "CREATE FOREIGN TABLE w (id bigint, k bigint, v double precision, t text) SERVER lake OPTIONS (path '$ds.tmp')" \
			-c "INSERT INTO w SELECT g, (g::bigint * 7919) % $ROWS, g / 3.0, 'key ' || (g::bigint * 7919) % $ROWS FROM generate_series(1, $ROWS) g" \
			-c "DROP FOREIGN TABLE w"
		mv "$LAKE/$ds.tmp" "$LAKE/$ds"
	fi
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE t (id bigint, k bigint, v double precision, t text) SERVER lake OPTIONS (path '$ds')" \
		-c "ALTER FOREIGN TABLE t ALTER COLUMN k SET (n_distinct = 10), ALTER COLUMN t SET (n_distinct = 10)" -c "ANALYZE t"
	q="SELECT count(*), sum(n), sum(s) FROM (SELECT k, count(*) n, sum(v) s FROM t GROUP BY k) q"
	qt="SELECT count(*), sum(n), sum(s) FROM (SELECT t, count(*) n, sum(v) s FROM t GROUP BY t) q"
	echo "$ROWS rows, $ROWS distinct keys, work_mem $WORK_MEM"
	peak baseline "SELECT count(*) FROM t WHERE id < 0"
	peak pushed "$q"
	peak "pushed text" "$qt"
	peak postgres "SET lt_fdw.enable_aggregate_pushdown = off; $q"
	peak "pg text" "SET lt_fdw.enable_aggregate_pushdown = off; $qt"
	"$LT_PGBIN/psql" -X -q -d postgres -c "SET work_mem = '$WORK_MEM'" -c "SET max_parallel_workers_per_gather = 0" \
		-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $q"
else
	if [ ! -d "$LAKE/many.lance/_versions" ]; then
		GENERATE=1 make_dataset "$LAKE/many.lance" '[{"name": "id", "type": "int64", "nullable": false}, {"name": "value", "type": "utf8"}]'
	fi
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE many (id bigint, value text) SERVER lake OPTIONS (path 'many.lance')"
	have=$(ls "$LAKE/many.lance/_versions" | grep -c '\.manifest$')
	if [ "$have" -lt "$NVERSIONS" ]; then
		log "making $((NVERSIONS - have)) more versions ..."
		start=$SECONDS
		"${PSQL[@]}" -c "DO \$\$ BEGIN FOR i IN 1..$(((NVERSIONS - have) / 2)) LOOP
  INSERT INTO many VALUES (-i, 'v'); COMMIT;
  IF i % $KEEP_EVERY = 0 THEN INSERT INTO many VALUES (-i - 1000000000, 'w'); ELSE DELETE FROM many WHERE id = -i; END IF;
  COMMIT; END LOOP; END \$\$"
		log "... in $((SECONDS - start)) s"
	fi
	echo "versions: $(ls "$LAKE/many.lance/_versions" | grep -c '\.manifest$') manifests" \
		"($(du -sb "$LAKE/many.lance/_versions" | cut -f1) bytes), $(find "$LAKE/many.lance" -type f | wc -l) files in the dataset," \
		"$("${PSQL[@]}" -At -c "SELECT count(*) FROM lt_fragments('many')") fragments in the newest version"
	peak baseline "SELECT count(*) FROM lt_fragments('many')"
	peak versions "SELECT count(*) FROM lt_versions('many')"
	peak "dry run" "SELECT old_versions, files_removed, bytes_removed FROM lt_cleanup('many', '0 seconds', dry_run => true)"
	peak "dry files" "SELECT count(*) FROM lt_cleanup_files('many', '0 seconds', dry_run => true)"
fi
