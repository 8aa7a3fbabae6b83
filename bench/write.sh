#!/usr/bin/env bash
# bench/write.sh — the issue 4 write-path benchmark, side by side in one run: the same rows written into an
# lt_fdw foreign table, into a PostgreSQL heap table (without and with a btree index) and by the real Lance
# engine's add() (@lancedb/lancedb).
#
#   bench/write.sh [ROWS] [REPEAT]      default 1,000,000 rows, best of 3
#
# The rows: the bench/scan.sh table (id int64, grp int32, dt date, x float64, s 8-12 chars, t 80 chars; 6
# columns), written once by the reference library and cached under build/bench/scan<ROWS>.lance; PostgreSQL
# reads it once into a heap table `src`. Measured (psql \timing, client wall time; each statement its own
# transaction, so the Lance commit is included; for INSERT also the CPU time the backend used, and the
# engine's process CPU time over all its threads, which the machine's other load disturbs less):
#   insert   INSERT INTO t SELECT * FROM src            lt_fdw (a fresh empty dataset each run) / heap / heap+btree
#   add      the Lance engine's add() of the same rows (in memory before the clock starts)
#   copy     COPY t FROM a file of the rows (text format)  lt_fdw / heap
#   delete   DELETE FROM t WHERE grp % 100 = 7 (1%)     lt_fdw / heap
#   update   UPDATE t SET x = x + 1 WHERE grp % 100 = 8 (1%)   lt_fdw / heap
#   single   1000 single-row INSERT transactions (one psql session)   lt_fdw / heap
#   size     bytes (MiB) of data files: lt_fdw's insert vs the engine's add() vs the heap (+ index)
# Targets (issue 4): insert <= 1.0x the engine's add(); DELETE of 1% <= 0.2x rewriting the affected fragments
# (here: every fragment, i.e. the insert time); files <= 1.1x the engine's.
# Not part of the tests (nothing is asserted); the cluster is always stopped and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${1:-1000000}
REPEAT=${2:-3}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
DATA=$ROOT/build/bench/scan$ROWS.lance
OUT=$ROOT/build/bench/write
mkdir -p "$OUT"
log() { echo "$*" >&2; }

[ -d test/interop/node_modules/@lancedb/lancedb ] || (cd test/interop && npm ci --no-audit --no-fund >&2)
if [ ! -d "$DATA" ]; then
	log "generating $ROWS rows with the reference library into $DATA ..."
	node --max-old-space-size=8000 bench/ref_bench.mjs make-scan "$DATA.tmp" "$ROWS"
	mv "$DATA.tmp" "$DATA"
fi
chmod a+rX build build/bench && chmod -R a+rX "$DATA"

. "$ROOT/test/pg/cluster.sh"
log "make install (a private PostgreSQL copy) ..."
lt_pg_install "$ROOT" "$OUT/install.log" || exit 1
TMP=$(mktemp -d /tmp/lt_fdw_bench_write.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$TMP/pg" "$TMP/lake"
chmod 0777 "$TMP" "$TMP/lake"
lt_cluster_create "$TMP/pg"
cat >>"$LT_PGDATA/postgresql.conf" <<CONF
# bench/write.sh
shared_buffers = '1GB'
max_parallel_workers_per_gather = 0
jit = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = '20GB'
checkpoint_timeout = '1h'
CONF
lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)

load0=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the Lance engine's add() -------------------------------------------------------------------------
log "Lance engine: add() of $ROWS rows (best of $REPEAT) ..."
lt_as_pg node --max-old-space-size=8000 bench/ref_write.mjs add "$DATA" "$TMP/lake/ref_add.lance" "$REPEAT" >"$OUT/ref.out"
ref_add=$(awk '$1 == "RESULT" && $2 == "add" { print $3 * 1000 }' "$OUT/ref.out")
ref_add_cpu=$(awk '$1 == "RESULT" && $2 == "add" { printf "%.0f", $5 * 1000 }' "$OUT/ref.out")

# an empty dataset with the schema, made by the engine; each lt_fdw run writes into a fresh copy of it
lt_as_pg node --input-type=module -e '
import { createRequire } from "node:module"; import fs from "node:fs"; import path from "node:path"; import os from "node:os";
const require = createRequire(process.argv[1] + "/test/interop/package.json");
const lancedb = require("@lancedb/lancedb");
const [, src, dst] = process.argv.slice(1);
const db = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-")); fs.symlinkSync(src, path.join(db, "s.lance"));
const conn = await lancedb.connect(db);
const schema = await (await conn.openTable("s")).schema();
await conn.createEmptyTable("e", schema);
fs.renameSync(path.join(db, "e.lance"), dst);' "$ROOT" "$DATA" "$TMP/lake/empty.lance"

"${PSQL[@]}" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$TMP/lake');
CREATE FOREIGN TABLE srcl (id bigint, grp integer, dt date, x double precision, s text, t text)
  SERVER lake OPTIONS (path '$DATA');
CREATE TABLE src AS SELECT * FROM srcl;
VACUUM FREEZE ANALYZE src;
COPY src TO '$TMP/rows.copy';
CREATE TABLE heap (LIKE src);
CREATE TABLE heapi (LIKE src);
CREATE INDEX ON heapi (id);
SQL

# run SQL with \timing; print the wall milliseconds of the second statement and the CPU milliseconds the
# backend used for it (utime + stime of /proc/self/stat, read by the backend itself)
HZ=$(getconf CLK_TCK)
timed() {	# sql-before sql-timed
	"${PSQL[@]}" <<<"$1" >/dev/null	# statements of their own (VACUUM cannot run in a transaction block)
	"${PSQL[@]}" -At <<SQL | awk -v hz="$HZ" '/^Time:/ { ms = $2 } /^CPU / { c[n++] = $15 + $16 } END { printf "%s %.0f\n", ms, (c[1] - c[0]) * 1000 / hz }'
SELECT 'CPU ' || pg_read_file('/proc/self/stat');
\\timing on
$2
\\timing off
SELECT 'CPU ' || pg_read_file('/proc/self/stat');
SQL
}
# best of the runs' "wall cpu" lines: "min-wall min-cpu"
best() { awk 'NR == 1 || $1 < w { w = $1 } NR == 1 || $2 < c { c = $2 } END { print w, c }'; }
wall() { echo "${1% *}"; }
cpu() { echo "${1#* }"; }
fresh_lance() {	# name: a fresh empty dataset and its foreign table
	rm -rf "$TMP/lake/$1.lance"; cp -r "$TMP/lake/empty.lance" "$TMP/lake/$1.lance"; chown -R "$LT_PG_OSUSER" "$TMP/lake/$1.lance" 2>/dev/null || true
	"${PSQL[@]}" -c "DROP FOREIGN TABLE IF EXISTS $1; CREATE FOREIGN TABLE $1 (id bigint, grp integer, dt date, x double precision, s text, t text) SERVER lake OPTIONS (path '$1.lance');"
}

log "INSERT ... SELECT of $ROWS rows: lt_fdw, heap, heap + btree (best of $REPEAT) ..."
ins_lt=$(for r in $(seq "$REPEAT"); do fresh_lance lt; timed "SELECT 1" "INSERT INTO lt SELECT * FROM src;"; done | best)
ins_heap=$(for r in $(seq "$REPEAT"); do timed "TRUNCATE heap; CHECKPOINT" "INSERT INTO heap SELECT * FROM src;"; done | best)
ins_heapi=$(for r in $(seq "$REPEAT"); do timed "TRUNCATE heapi; CHECKPOINT" "INSERT INTO heapi SELECT * FROM src;"; done | best)
check=$("${PSQL[@]}" -At -c "SELECT (SELECT count(*) || '/' || sum(id) || '/' || sum(grp) FROM lt) = (SELECT count(*) || '/' || sum(id) || '/' || sum(grp) FROM src)")
[ "$check" = t ] || log "WARNING: the lt_fdw table does not hold the source rows"

log "COPY FROM of $ROWS rows: lt_fdw, heap (best of $REPEAT) ..."
copy_lt=$(for r in $(seq "$REPEAT"); do fresh_lance ltc; timed "SELECT 1" "COPY ltc FROM '$TMP/rows.copy';"; done | best)
copy_heap=$(for r in $(seq "$REPEAT"); do timed "TRUNCATE heap; CHECKPOINT" "COPY heap FROM '$TMP/rows.copy';"; done | best)

# sizes, before any delete or update: lt_fdw's insert vs the engine's add()
size_lt=$(du -sb "$TMP/lake/lt.lance/data" | cut -f1)
size_ref=$(du -sb "$TMP/lake/ref_add.lance/data" | cut -f1)
size_heap=$("${PSQL[@]}" -At -c "SELECT pg_table_size('heap')")
size_heapi=$("${PSQL[@]}" -At -c "SELECT pg_total_relation_size('heapi')")

log "DELETE and UPDATE of 1% (a fresh copy each run) ..."
del_lt=$(for r in $(seq "$REPEAT"); do fresh_lance ltd; "${PSQL[@]}" -c "INSERT INTO ltd SELECT * FROM src"; timed "SELECT 1" "DELETE FROM ltd WHERE grp % 100 = 7;"; done | best)
upd_lt=$(for r in $(seq "$REPEAT"); do fresh_lance ltu; "${PSQL[@]}" -c "INSERT INTO ltu SELECT * FROM src"; timed "SELECT 1" "UPDATE ltu SET x = x + 1 WHERE grp % 100 = 8;"; done | best)
del_heap=$(for r in $(seq "$REPEAT"); do timed "TRUNCATE heap; INSERT INTO heap SELECT * FROM src; VACUUM ANALYZE heap" "DELETE FROM heap WHERE grp % 100 = 7;"; done | best)
upd_heap=$(for r in $(seq "$REPEAT"); do timed "TRUNCATE heap; INSERT INTO heap SELECT * FROM src; VACUUM ANALYZE heap" "UPDATE heap SET x = x + 1 WHERE grp % 100 = 8;"; done | best)

log "1000 single-row INSERT transactions ..."
{
	echo "\\timing on"
	echo "SELECT 'START';"
	for i in $(seq 1 1000); do echo "INSERT INTO lts VALUES ($i, $i, '2024-01-01', $i.5, 'single', 'one row per transaction');"; done
} >"$TMP/single_lt.sql"
sed 's/INSERT INTO lts/INSERT INTO heap/' "$TMP/single_lt.sql" >"$TMP/single_heap.sql"
sum_ms() { awk '/^Time:/ { if (started) t += $2; started = 1 } END { printf "%.1f\n", t }'; }
fresh_lance lts
single_lt=$("${PSQL[@]}" -f "$TMP/single_lt.sql" | sum_ms)
"${PSQL[@]}" -c "TRUNCATE heap"
single_heap=$("${PSQL[@]}" -f "$TMP/single_heap.sql" | sum_ms)
single_check=$("${PSQL[@]}" -At -c "SELECT count(*) FROM lts")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
echo
echo "bench/write.sh: $ROWS rows (6 columns), best of $REPEAT; load: $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end, on $(nproc) cores"
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
row() { printf '%-30s %10s %10s %7s %9s %9s %7s   %s\n' "$@"; }
row "operation" "lt_fdw ms" "other ms" "ratio" "lt cpu" "other cpu" "ratio" "other"
row "INSERT ... SELECT" "$(wall "$ins_lt")" "$ref_add" "$(ratio "$(wall "$ins_lt")" "$ref_add")" \
	"$(cpu "$ins_lt")" "$ref_add_cpu" "$(ratio "$(cpu "$ins_lt")" "$ref_add_cpu")" "Lance engine add() (target <= 1.0)"
# one measured lt_fdw statement against one measured other: wall and backend CPU, each with its ratio
vs() { row "$1" "$(wall "$2")" "$(wall "$3")" "$(ratio "$(wall "$2")" "$(wall "$3")")" \
	"$(cpu "$2")" "$(cpu "$3")" "$(ratio "$(cpu "$2")" "$(cpu "$3")")" "$4"; }
vs "INSERT ... SELECT" "$ins_lt" "$ins_heap" "heap, no index"
vs "INSERT ... SELECT" "$ins_lt" "$ins_heapi" "heap + btree(id)"
vs "COPY FROM (text)" "$copy_lt" "$copy_heap" "heap, no index"
vs "DELETE 1%" "$del_lt" "$ins_lt" "rewriting the fragments = the insert (target <= 0.2)"
vs "DELETE 1%" "$del_lt" "$del_heap" "heap"
vs "UPDATE 1%" "$upd_lt" "$upd_heap" "heap"
row "1000 single-row INSERT txns" "$single_lt" "$single_heap" "$(ratio "$single_lt" "$single_heap")" "-" "-" "-" "heap ($single_check rows landed in lt_fdw)"
printf '%-30s %10s %10s %7s   %s\n' "data MiB (bytes)" "lt_fdw" "other" "ratio" "other"
printf '%-30s %10s %10s %7s   %s\n' "" "$(mib "$size_lt")" "$(mib "$size_ref")" "$(ratio "$size_lt" "$size_ref")" "Lance engine add() (target <= 1.1): $size_lt / $size_ref bytes"
printf '%-30s %10s %10s %7s   %s\n' "" "$(mib "$size_lt")" "$(mib "$size_heap")" "$(ratio "$size_lt" "$size_heap")" "heap"
printf '%-30s %10s %10s %7s   %s\n' "" "$(mib "$size_lt")" "$(mib "$size_heapi")" "$(ratio "$size_lt" "$size_heapi")" "heap + btree(id)"
