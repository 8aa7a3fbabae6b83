#!/usr/bin/env bash
# bench/merge.sh — merge-insert (upsert) side by side in one run: lt_merge_insert into an lt_fdw foreign table
# and the real Lance engine's mergeInsert (@lancedb/lancedb) of the same source rows into the same dataset,
# with a PostgreSQL heap table's MERGE for context.
#
#   bench/merge.sh [ROWS] [REPEAT]      default 1,000,000 rows, best of 3
#
# The table: the bench/scan.sh rows (id int64, grp int32, dt date, x float64, s 8-12 chars, t 80 chars), written
# once by the reference library and cached under build/bench/scan<ROWS>.lance. The sources: every row with
# id % 100 = 0 (1%) or id % 10 = 0 (10%), x + 1 — every source row matches one row (all updates, no inserts).
# Measured (client wall time, the Lance commit included; a fresh copy of the dataset for every run):
#   lt_fdw     SELECT lt_merge_insert('t', 'SELECT * FROM src', '{id}')   the source a heap table
#   engine     mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll()   the source in memory
#   heap       MERGE INTO heap USING src ... (heap with a primary key on id)
# Each is also run with a btree index on id (lt_create_index / the engine's createIndex, built before the clock).
# Not part of the tests (nothing is asserted); the cluster is always stopped and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${1:-1000000}
REPEAT=${2:-3}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
DATA=$ROOT/build/bench/scan$ROWS.lance
OUT=$ROOT/build/bench/merge
mkdir -p "$OUT"
log() { echo "$*" >&2; }

[ -d test/interop/node_modules/@lancedb/lancedb ] || { log "test/interop/node_modules is missing (scripts/setup.sh)"; exit 1; }
if [ ! -d "$DATA" ]; then
	log "generating $ROWS rows with the reference library into $DATA ..."
	node --max-old-space-size=8000 bench/ref_bench.mjs make-scan "$DATA.tmp" "$ROWS"
	mv "$DATA.tmp" "$DATA"
fi
chmod a+rX build build/bench && chmod -R a+rX "$DATA"

. "$ROOT/test/pg/cluster.sh"
log "make install (a private PostgreSQL copy) ..."
lt_pg_install "$ROOT" "$OUT/install.log" || exit 1
TMP=$(mktemp -d /tmp/lt_fdw_bench_merge.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$TMP/pg" "$TMP/lake"
chmod 0777 "$TMP" "$TMP/lake"
lt_cluster_create "$TMP/pg"
cat >>"$LT_PGDATA/postgresql.conf" <<CONF
# bench/merge.sh
shared_buffers = '1GB'
work_mem = '64MB'
max_parallel_workers_per_gather = 0
jit = off
max_wal_size = '20GB'
checkpoint_timeout = '1h'
CONF
lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)

# the base datasets: the rows, and the rows with a btree index on id (built by the engine)
lt_as_pg cp -r "$DATA" "$TMP/lake/base.lance"
lt_as_pg cp -r "$DATA" "$TMP/lake/base_ix.lance"
lt_as_pg node bench/ref_bench.mjs index "$TMP/lake/base_ix.lance" id

"${PSQL[@]}" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$TMP/lake');
CREATE FOREIGN TABLE srcl (id bigint, grp integer, dt date, x double precision, s text, t text)
  SERVER lake OPTIONS (path 'base.lance');
CREATE TABLE src1 AS SELECT id, grp, dt, x + 1 AS x, s, t FROM srcl WHERE id % 100 = 0;
CREATE TABLE src10 AS SELECT id, grp, dt, x + 1 AS x, s, t FROM srcl WHERE id % 10 = 0;
CREATE TABLE heap0 AS SELECT * FROM srcl;
ALTER TABLE heap0 ADD PRIMARY KEY (id);
VACUUM FREEZE ANALYZE src1; VACUUM FREEZE ANALYZE src10; VACUUM FREEZE ANALYZE heap0;
SQL
sum0=$("${PSQL[@]}" -At -c "SELECT round(sum(x)::numeric, 3) FROM srcl")

timed() {	# sql-before sql-timed: the milliseconds of the timed statement
	"${PSQL[@]}" <<<"$1" >/dev/null
	"${PSQL[@]}" <<SQL | awk '/^Time:/ { ms = $2 } END { print ms }'
\\timing on
$2
SQL
}
best() { sort -n | head -n 1; }
fresh_lance() {	# name base: a fresh copy of a base dataset and its foreign table
	rm -rf "$TMP/lake/$1.lance"; lt_as_pg cp -r "$TMP/lake/$2.lance" "$TMP/lake/$1.lance"
	"${PSQL[@]}" -c "DROP FOREIGN TABLE IF EXISTS $1; CREATE FOREIGN TABLE $1 (id bigint, grp integer, dt date, x double precision, s text, t text) SERVER lake OPTIONS (path '$1.lance');"
}
declare -A R
for pct in 1 10; do
	mod=$((100 / pct))
	for ix in "" _ix; do
		log "merge-insert of $pct% ($((ROWS / mod)) rows)${ix:+ with a btree index on id}: lt_fdw (best of $REPEAT) ..."
		R[lt$pct$ix]=$(for r in $(seq "$REPEAT"); do fresh_lance lt "base$ix";
			timed "SELECT 1" "SELECT * FROM lt_merge_insert('lt', 'SELECT * FROM src$pct', '{id}');"; done | best)
		got=$("${PSQL[@]}" -At -c "SELECT count(*) || ' ' || round(sum(x)::numeric, 3) FROM lt")
		want=$("${PSQL[@]}" -At -c "SELECT $ROWS || ' ' || round(($sum0 + (SELECT count(*) FROM src$pct))::numeric, 3)")
		[ "$got" = "$want" ] || log "WARNING: after lt_merge_insert the table has (count, sum(x)) $got, not $want"
		log "merge-insert of $pct%${ix:+ with the index}: the Lance engine (best of $REPEAT) ..."
		lt_as_pg node --max-old-space-size=8000 bench/ref_write.mjs merge "$TMP/lake/base$ix.lance" "$TMP/lake/ref.lance" "$mod" "$REPEAT" \
			>"$OUT/ref$pct$ix.out"
		R[ref$pct$ix]=$(awk '$1 == "RESULT" { print $3 * 1000 }' "$OUT/ref$pct$ix.out")
	done
	log "MERGE of $pct% into a heap table with a primary key (best of $REPEAT) ..."
	R[heap$pct]=$(for r in $(seq "$REPEAT"); do
		timed "DROP TABLE IF EXISTS heap; CREATE TABLE heap AS SELECT * FROM heap0; ALTER TABLE heap ADD PRIMARY KEY (id); VACUUM ANALYZE heap; CHECKPOINT" \
			"MERGE INTO heap h USING src$pct s ON h.id = s.id WHEN MATCHED THEN UPDATE SET grp = s.grp, dt = s.dt, x = s.x, s = s.s, t = s.t WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.grp, s.dt, s.x, s.s, s.t);"
	done | best)
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
echo
echo "bench/merge.sh: merge-insert into $ROWS rows (6 columns), every source row an update, best of $REPEAT;" \
	"load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
printf '%-30s %12s %12s %8s %12s %8s\n' "source" "lt_fdw ms" "engine ms" "ratio" "heap MERGE" "ratio"
for pct in 1 10; do
	for ix in "" _ix; do
		printf '%-30s %12s %12s %8s %12s %8s\n' "$pct% ($((ROWS * pct / 100)) rows)${ix:+, btree on id}" "${R[lt$pct$ix]}" "${R[ref$pct$ix]}" \
			"$(ratio "${R[lt$pct$ix]}" "${R[ref$pct$ix]}")" "${R[heap$pct]}" "$(ratio "${R[lt$pct$ix]}" "${R[heap$pct]}")"
	done
done
