#!/usr/bin/env bash
# bench/lifecycle.sh — the many-small-fragments case of issue 18, before and after lt_compact: a dataset
# created with lt_create_dataset, N single-row INSERT transactions (N fragments, N versions), then
#   scan      SELECT count(*), sum(id) over every row (the mean of 3 runs), before and after compaction;
#   update    an UPDATE and a DELETE of a few rows, before (where they may fail) and after compaction;
#   compact   the time of lt_compact and its commit;
#   indexed   lt_compact of M rows in 100 fragments, without indexes and with a btree (id) and a bitmap (a)
#             index, which the commit remaps onto the new fragments (the cost of keeping them valid);
#   create    lt_create_dataset from a query of M rows x 6 columns against CREATE TABLE AS into a heap.
# Not a test: nothing is asserted; prints one line per measurement.
#
#   bench/lifecycle.sh [N [M]]        defaults 2000 and 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
N=${1:-2000}
M=${2:-1000000}
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
"${PSQL[@]}" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$TMP/lake');
CREATE FOREIGN TABLE t (id bigint NOT NULL, s text) SERVER lake OPTIONS (path 't.lance');
SELECT rows_written FROM lt_create_dataset('t');
SQL
for i in $(seq 1 "$N"); do echo "INSERT INTO t VALUES ($i, 'one row per transaction');"; done >"$TMP/ins.sql"
start=$(date +%s.%N)
"${PSQL[@]}" -f "$TMP/ins.sql"
echo "insert   $N single-row transactions: $(echo "$(date +%s.%N) - $start" | bc) s"
# ms of the last of 3 runs of a statement
timed() { "${PSQL[@]}" -c '\timing on' -c "$1" -c "$1" -c "$1" | awk '/^Time:/ { t = $2 } END { print t }'; }
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
# create from a query against CREATE TABLE AS
"${PSQL[@]}" -c "CREATE FOREIGN TABLE c (id bigint NOT NULL, a integer, b double precision, s text, d date, f boolean) SERVER lake OPTIONS (path 'c.lance')"
Q="SELECT g::bigint AS id, (g % 1000)::int AS a, g / 7.0::float8 AS b, 'row ' || (g % 5000) AS s, DATE '2024-01-01' + (g % 365) AS d, g % 3 = 0 AS f FROM generate_series(1, $M) g"
echo "create   lt_create_dataset of $M rows x 6 columns: $("${PSQL[@]}" -At -c '\timing on' -c "SELECT * FROM lt_create_dataset('c', query => \$q\$$Q\$q\$)" | tail -n 1)"
echo "create   CREATE TABLE AS (heap) of the same: $("${PSQL[@]}" -At -c '\timing on' -c "CREATE TABLE h AS $Q" | tail -n 1)"
# compaction of M rows in 100 fragments, without and with indexes to remap
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
	echo "indexed  lt_compact of $M rows in 100 fragments, indexes $ix: $("${PSQL[@]}" -At -c '\timing on' -c "SELECT * FROM lt_compact('$tb')" | tr '\n' ' ')"
	echo "indexed  unindexed fragments after: $("${PSQL[@]}" -At -c "SELECT coalesce(sum(cardinality(unindexed_fragments)), 0) FROM lt_indexes('$tb')")"
done
