#!/usr/bin/env bash
# bench/lifecycle.sh — the benchmark of issue 18 (table lifecycle), lt_fdw and the real Lance engine
# (@lancedb/lancedb 0.31.0 in test/interop, driven by bench/ref_lifecycle.mjs) side by side in one run:
#   single    a dataset created with lt_create_dataset, N single-row INSERT transactions (N fragments, N
#             versions); a scan (count(*), sum(id), the last of 3 runs), a filter, an UPDATE and a DELETE
#             before (where they may fail) and after lt_compact;
#   create    lt_create_dataset from a query of M rows x 6 columns, against the engine's createTable() of the
#             same rows (read back from lt_fdw's dataset into memory before the clock starts) and against
#             CREATE TABLE AS into a heap (target: <= 1.0x the engine), and the query alone (its share);
#   compact   a dataset of F fragments of R rows each (F INSERT transactions through lt_fdw), copied twice:
#             lt_compact of one against the engine's optimize() (its compaction) of the other, both at
#             1,048,576 target rows per fragment (target: <= 1.0x the engine); both copies must end with
#             the same rows; a scan of the F-fragment table before and after;
#   indexed   lt_compact of M rows in 100 fragments, without indexes and with a btree (id) and a bitmap (a)
#             index, which the commit remaps onto the new fragments (the cost of keeping them valid).
# Wall time (psql \timing, client side) and CPU time: the backend's (utime + stime of /proc/self/stat, read
# by the backend itself; lt_fdw is single-threaded) and the engine process's over all its threads (it runs a
# thread pool, one per core). Not a test: nothing is asserted; the cluster and its files are removed.
#
#   bench/lifecycle.sh [N [M [F [R]]]]     defaults 2000, 1000000, 1000, 1000 (N = 0 skips "single")
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
N=${1:-2000}
M=${2:-1000000}
F=${3:-1000}
R=${4:-1000}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
. "$ROOT/test/pg/cluster.sh"
TMP=$(mktemp -d /tmp/lt_bench_life.XXXXXX)
trap 'lt_cluster_stop; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
lt_pg_install "$ROOT" "$TMP/install.log" || exit 1
mkdir -p "$TMP/pg" "$TMP/lake"
chmod 0777 "$TMP" "$TMP/lake"
chown -R "$LT_PG_OSUSER" "$TMP/lake" 2>/dev/null || true
lt_cluster_create "$TMP/pg"
lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
[ -d test/interop/node_modules/@lancedb/lancedb ] || (cd test/interop && npm ci --no-audit --no-fund >&2)
"${PSQL[@]}" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$TMP/lake');
SQL
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# ms of the last of 3 runs of a statement
timed() { "${PSQL[@]}" -c '\timing on' -c "$1" -c "$1" -c "$1" | awk '/^Time:/ { t = $2 } END { print t }'; }
# "wall-ms cpu-ms" of one statement: psql's \timing and the backend's own CPU time around it
HZ=$(getconf CLK_TCK)
cputimed() {
	"${PSQL[@]}" -At <<SQL | awk -v hz="$HZ" '/^Time:/ { ms = $2 } /^CPU / { c[n++] = $15 + $16 } END { printf "%.0f %.0f\n", ms, (c[1] - c[0]) * 1000 / hz }'
SELECT 'CPU ' || pg_read_file('/proc/self/stat');
\\timing on
$1
\\timing off
SELECT 'CPU ' || pg_read_file('/proc/self/stat');
SQL
}
# "wall-ms cpu-ms" of a read-only statement: the last of 3 runs' wall, the mean of their backend CPU time
# (serial, so that the backend's CPU time is all of it)
scantimed() { cputimed "SET max_parallel_workers_per_gather = 0; $1; $1; $1;" | awk '{ printf "%s %.0f\n", $1, $2 / 3 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
verdict() { awk -v r="$1" 'BEGIN { print (r != "-" && r <= 1.0) ? "met" : "missed" }'; }
row() { printf '%-44s %9s %9s %7s %9s %9s %7s   %s\n' "$@"; }

# --- single: N single-row transactions, before and after lt_compact ---------------------------------------
if [ "$N" -gt 0 ]; then
	"${PSQL[@]}" <<SQL
CREATE FOREIGN TABLE t (id bigint NOT NULL, s text) SERVER lake OPTIONS (path 't.lance');
SELECT rows_written FROM lt_create_dataset('t');
SQL
	for i in $(seq 1 "$N"); do echo "INSERT INTO t VALUES ($i, 'one row per transaction');"; done >"$TMP/ins.sql"
	start=$(date +%s.%N)
	"${PSQL[@]}" -f "$TMP/ins.sql"
	echo "insert   $N single-row transactions: $(echo "$(date +%s.%N) - $start" | bc) s"
	echo "fragments before: $("${PSQL[@]}" -At -c "SELECT count(*) FROM lt_fragments('t')")"
	echo "scan     before compaction: $(timed 'SELECT count(*), sum(id) FROM t') ms"
	echo "filter   before compaction: $(timed "SELECT s FROM t WHERE id = $((N / 2))") ms"
	echo "update   before compaction: $("${PSQL[@]}" -c '\timing on' -c "UPDATE t SET s = 'u' WHERE id <= 3" 2>&1 | tr '\n' ' ')"
	echo "delete   before compaction: $("${PSQL[@]}" -c '\timing on' -c "DELETE FROM t WHERE id = 4" 2>&1 | tr '\n' ' ')"
	echo "compact: $("${PSQL[@]}" -At -c '\timing on' -c "SELECT * FROM lt_compact('t')" | tr '\n' ' ')"
	echo "fragments after: $("${PSQL[@]}" -At -c "SELECT count(*) FROM lt_fragments('t')")"
	echo "scan     after compaction: $(timed 'SELECT count(*), sum(id) FROM t') ms"
	echo "filter   after compaction: $(timed "SELECT s FROM t WHERE id = $((N / 2))") ms"
	echo "update   after compaction: $("${PSQL[@]}" -c '\timing on' -c "UPDATE t SET s = 'u' WHERE id <= 3" 2>&1 | tr '\n' ' ')"
	echo "delete   after compaction: $("${PSQL[@]}" -c '\timing on' -c "DELETE FROM t WHERE id = 4" 2>&1 | tr '\n' ' ')"
fi

# --- create: M rows x 6 columns from a query; the engine's createTable of the same rows; CREATE TABLE AS ---
COLS="id bigint NOT NULL, a integer, b double precision, s text, d date, f boolean"
gen() {	# the rows lo..hi of the 6-column generator
	echo "SELECT g::bigint AS id, (g % 1000)::int AS a, g / 7.0::float8 AS b, 'row ' || (g % 5000) AS s, DATE '2024-01-01' + (g % 365) AS d, g % 3 = 0 AS f FROM generate_series($1, $2) g"
}
"${PSQL[@]}" -c "CREATE FOREIGN TABLE c ($COLS) SERVER lake OPTIONS (path 'c.lance')"
cr_lt=$(cputimed "SELECT rows_written FROM lt_create_dataset('c', query => \$q\$$(gen 1 "$M")\$q\$);")
cr_heap=$(cputimed "CREATE TABLE h AS $(gen 1 "$M");")
cr_query=$(cputimed "SELECT count(q) FROM ($(gen 1 "$M")) q;")	# the query alone, every column formed
lt_as_pg node --max-old-space-size=8000 bench/ref_lifecycle.mjs create "$TMP/lake/c.lance" "$TMP/lake/ref_c.lance" >"$TMP/ref_create.out"
cr_ref=$(awk '$1 == "RESULT" { printf "%.0f %.0f %s\n", $3 * 1000, $5 * 1000, $4 }' "$TMP/ref_create.out")
"${PSQL[@]}" -c "CREATE FOREIGN TABLE rc ($COLS) SERVER lake OPTIONS (path 'ref_c.lance')"
cr_check=$("${PSQL[@]}" -At -c "SELECT (SELECT count(*) || '/' || sum(id) || '/' || sum(a) FROM c) = (SELECT count(*) || '/' || sum(id) || '/' || sum(a) FROM rc)")

# --- compact: F fragments of R rows, two identical copies; lt_compact vs the engine's optimize() ----------
"${PSQL[@]}" -c "CREATE FOREIGN TABLE k ($COLS) SERVER lake OPTIONS (path 'k.lance')" \
	-c "SELECT rows_written FROM lt_create_dataset('k')" >/dev/null
start=$(date +%s.%N)
for i in $(seq 0 $((F - 1))); do echo "INSERT INTO k $(gen $((i * R + 1)) $(((i + 1) * R)));"; done | "${PSQL[@]}" >/dev/null
fill_s=$(echo "$(date +%s.%N) - $start" | bc)
cp -a "$TMP/lake/k.lance" "$TMP/lake/kr.lance"
"${PSQL[@]}" -c "CREATE FOREIGN TABLE kr ($COLS) SERVER lake OPTIONS (path 'kr.lance')"
frags_before=$("${PSQL[@]}" -At -c "SELECT count(*) FROM lt_fragments('k')")
SCAN='SELECT count(*), sum(id), sum(a), sum(b) FROM'
scan_before=$(scantimed "$SCAN k")
cp_lt=$(cputimed "SELECT * FROM lt_compact('k');")
lt_as_pg node --max-old-space-size=8000 bench/ref_lifecycle.mjs compact "$TMP/lake/kr.lance" >"$TMP/ref_compact.out"
cp_ref=$(awk '$1 == "RESULT" { printf "%.0f %.0f\n", $3 * 1000, $5 * 1000 }' "$TMP/ref_compact.out")
ref_frags=$(awk '$1 == "RESULT" { print $6 " removed, " $7 " added, " $8 " after; " $4 " rows" }' "$TMP/ref_compact.out")
frags_after=$("${PSQL[@]}" -At -c "SELECT count(*) FROM lt_fragments('k')")
frags_after_ref=$("${PSQL[@]}" -At -c "SELECT count(*) FROM lt_fragments('kr')")
scan_after=$(scantimed "$SCAN k")
scan_after_ref=$(scantimed "$SCAN kr")
cp_check=$("${PSQL[@]}" -At -c "SELECT (SELECT count(*) || '/' || sum(id) || '/' || sum(a) FROM k) = (SELECT count(*) || '/' || sum(id) || '/' || sum(a) FROM kr), (SELECT count(*) FROM k)")

# --- indexed: compaction of M rows in 100 fragments, without and with indexes to remap --------------------
ix_out=""
for ix in none btree+bitmap; do
	tb="x_${ix//+/_}"
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE $tb (id bigint NOT NULL, a integer, s text) SERVER lake OPTIONS (path '$tb.lance')" \
		-c "SELECT rows_written FROM lt_create_dataset('$tb')" >/dev/null
	for k in $(seq 0 99); do
		echo "INSERT INTO $tb SELECT g, g % 100, 'row ' || g FROM generate_series($((k * M / 100 + 1)), $(((k + 1) * M / 100))) g;"
	done | "${PSQL[@]}" >/dev/null
	if [ "$ix" != none ]; then
		"${PSQL[@]}" -c "SELECT lt_create_index('$tb', 'id', 'btree')" -c "SELECT lt_create_index('$tb', 'a', 'bitmap')" >/dev/null
	fi
	ix_out+="indexed  lt_compact of $M rows in 100 fragments, indexes $ix: $(cputimed "SELECT * FROM lt_compact('$tb');") (wall ms, cpu ms); unindexed fragments after: $("${PSQL[@]}" -At -c "SELECT coalesce(sum(cardinality(unindexed_fragments)), 0) FROM lt_indexes('$tb')")"$'\n'
done

w() { echo "${1%% *}"; }
c() { echo "$1" | cut -d' ' -f2; }
vs() {	# label lt other note [target]
	local rw rc; rw=$(ratio "$(w "$2")" "$(w "$3")"); rc=$(ratio "$(c "$2")" "$(c "$3")")
	row "$1" "$(w "$2")" "$(w "$3")" "$rw" "$(c "$2")" "$(c "$3")" "$rc" "$4${5:+ (target <= 1.0: wall $(verdict "$rw"), cpu $(verdict "$rc"))}"
}
echo
echo "bench/lifecycle.sh: M=$M rows x 6 columns; F=$F fragments x R=$R rows; load: $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end, on $(nproc) cores"
row "operation" "lt ms" "other ms" "ratio" "lt cpu" "other cpu" "ratio" "other"
vs "create from a query, $M rows" "$cr_lt" "$cr_ref" "engine createTable() (cpu: all threads); same rows: $cr_check" target
vs "create from a query, $M rows" "$cr_lt" "$cr_heap" "CREATE TABLE AS (heap)"
row "the query alone (in both of the above)" "$(w "$cr_query")" "" "" "$(c "$cr_query")" "" "" "SELECT count(q) FROM (query) q"
vs "compact $F fragments x $R rows" "$cp_lt" "$cp_ref" "engine optimize() (cpu: all threads); same rows: $cp_check" target
echo "fill     $F INSERT transactions of $R rows: $fill_s s"
echo "fragments lt_fdw: $frags_before before, $frags_after after; engine: $ref_frags (lt_fdw counts $frags_after_ref)"
echo "scan     $SCAN (wall ms of the last of 3 runs, cpu ms their mean): $scan_before over $frags_before fragments; after lt_compact $scan_after; after the engine's compaction $scan_after_ref"
printf '%s' "$ix_out"
