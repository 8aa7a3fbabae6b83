#!/usr/bin/env bash
# bench/index.sh — the issue 5 index benchmark: the same selective queries on a PostgreSQL heap table with btree
# indexes, on an lt_fdw foreign table over a Lance dataset with scalar indexes, and on the real Lance engine
# (@lancedb/lancedb) using those same indexes, side by side in one run.
#
#   bench/index.sh [ROWS] [FRAGMENTS] [REPEAT]     default 10,000,000 rows in 20 fragments, best of 10
#
# The dataset (id int64 = row number, dt date in 100 ascending runs, x float64, s text) is written by the
# reference library, one fragment per add, with a btree on id and a btree on dt (its JavaScript binding cannot
# build zone maps; lt_create_index, which could, is not on main at the time of writing), cached under
# build/bench/index<ROWS>x<FRAGMENTS>.lance. A throwaway cluster (cluster.sh; fsync off, shared_buffers 1GB,
# jit off, serial) holds a foreign table `lt` over it and a heap copy `heap` with btree indexes on id and dt
# (VACUUM FREEZE ANALYZE, pg_prewarm); `lt` is ANALYZEd too. Timing: psql's \timing (client wall time, parse +
# plan + execute), best of REPEAT after a warm-up in one session; the 1000-lookup loop is a DO block of 1000
# point lookups (PL/pgSQL: a prepared statement per lookup), its time divided by 1000. The Lance engine: best of
# REPEAT in node (toArray / toArrow of the selected rows), the loop as 1000 queries. Bytes read by one lt_fdw
# point lookup are EXPLAIN ANALYZE's "Bytes Read" (index included) against the size of the dataset's files.
# Queries: point (SELECT * WHERE id = k), loop (1000 of those), in100 (count, sum(x) WHERE id IN 100 keys),
# range (count, sum(x) over 0.1% of ids), dt (count, sum(x) WHERE dt = one day: 1% of the rows).
# Prints the table with ratios and the issue's targets, the machine's load, the answers, and lt's plans.
# Not part of the tests (nothing is asserted); the cluster is always stopped and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${1:-10000000}
FRAGS=${2:-20}
REPEAT=${3:-10}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
NAME=index${ROWS}x$FRAGS
DATA=$ROOT/build/bench/$NAME.lance
OUT=$ROOT/build/bench/index
mkdir -p "$OUT"
log() { echo "$*" >&2; }
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the dataset (cached) ------------------------------------------------------------------------------
[ -d test/interop/node_modules/@lancedb/lancedb ] || { log "test/interop/node_modules is missing (scripts/setup.sh)"; exit 1; }
if [ ! -d "$DATA" ]; then
	log "generating $ROWS rows in $FRAGS fragments with the reference library (btree on id and dt) into $DATA ..."
	node --max-old-space-size=8000 bench/ref_index.mjs make "$DATA.tmp" "$ROWS" "$FRAGS"
	mv "$DATA.tmp" "$DATA"
fi
# a second dataset with a zone map on dt, when an lt-inspect with create-index is at hand
# (this build's, or LT_INDEX_TOOL): the reference's JavaScript binding cannot build zone maps
INDEX_TOOL=${LT_INDEX_TOOL:-build/lt-inspect}
ZM=$ROOT/build/bench/$NAME-zonemap.lance
if [ ! -d "$ZM" ] && { "$INDEX_TOOL" 2>&1 || true; } | grep -q "create-index"; then
	# the same rows without the btree on dt (a btree would be preferred), then the zone map
	log "the same rows with a zone map on dt instead of the btree ($ZM, $INDEX_TOOL create-index) ..."
	rm -rf "$ZM.tmp"
	node --max-old-space-size=8000 bench/ref_index.mjs make "$ZM.tmp" "$ROWS" "$FRAGS" no-dt-index
	"$INDEX_TOOL" create-index "$ZM.tmp" --column dt --kind zonemap --name dt_zone >/dev/null && mv "$ZM.tmp" "$ZM" ||
		{ log "create-index failed: no zone map query"; rm -rf "$ZM.tmp"; }
fi
chmod a+rX build build/bench && chmod -R a+rX "$DATA"
[ -d "$ZM" ] && chmod -R a+rX "$ZM"

# keys: one point, 1000 for the loop, 100 for IN, a 0.1% id range, one day of dt
KEY=$((ROWS * 7654 / 10000 + 321))
LOOP_KEYS=$(seq 1 1000 | awk -v n="$ROWS" '{ printf "%s%d", (NR > 1 ? "," : ""), ($1 * 9973 + 12345) % n }')
IN_KEYS=$(seq 1 100 | awk -v n="$ROWS" '{ printf "%s%d", (NR > 1 ? "," : ""), ($1 * 99991 + 777) % n }')
LO=$((ROWS / 3))
HI=$((LO + ROWS / 1000))
DAY=$(date -u -d "2024-01-01 + 37 days" +%F)

# --- the Lance engine ----------------------------------------------------------------------------------
OUT=$OUT node -e '
const [key, loop, inl, lo, hi, day] = process.argv.slice(1);
const q = [
  { name: "point", where: `id = ${key}`, explain: true },
  { name: "loop", loop: loop.split(",").map((k) => `id = ${k}`) },
  { name: "in100", where: `id IN (${inl})`, explain: true },
  { name: "range", where: `id >= ${lo} AND id < ${hi}`, explain: true },
  { name: "dt", where: `dt = CAST(\x27${day}\x27 AS DATE)`, explain: true },
];
require("fs").writeFileSync(process.env.OUT + "/queries.json", JSON.stringify(q));
' "$KEY" "$LOOP_KEYS" "$IN_KEYS" "$LO" "$HI" "$DAY"
log "Lance engine: queries (best of $REPEAT) ..."
node --max-old-space-size=8000 bench/ref_index.mjs queries "$DATA" "$REPEAT" "$OUT/queries.json" \
	>"$OUT/lance.out" 2>"$OUT/lance-plans.txt"

# --- PostgreSQL ----------------------------------------------------------------------------------------
log "make install (a private PostgreSQL copy) ..."
. "$ROOT/test/pg/cluster.sh"
lt_pg_install "$ROOT" "$OUT/install.log" || exit 1
TMP=$(mktemp -d /tmp/lt_fdw_bench.XXXXXX)
cleanup() { lt_cluster_stop; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
lt_cluster_create "$TMP"
cat >>"$LT_PGDATA/postgresql.conf" <<CONF
# bench/index.sh
shared_buffers = '1GB'
max_parallel_workers_per_gather = 0
jit = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = '20GB'
checkpoint_timeout = '1h'
CONF
lt_cluster_start
PSQL=("$(dirname "$PG_CONFIG")/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
log "loading the heap table and its btree indexes ..."
"${PSQL[@]}" >"$OUT/setup.log" <<SQL
CREATE EXTENSION lt_fdw;
CREATE EXTENSION pg_prewarm;
CREATE SERVER bench FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$ROOT/build/bench');
CREATE FOREIGN TABLE lt (id bigint, dt date, x double precision, s text) SERVER bench OPTIONS (path '$NAME.lance');
$([ -d "$ZM" ] && echo "CREATE FOREIGN TABLE ltzm (id bigint, dt date, x double precision, s text) SERVER bench OPTIONS (path '$NAME-zonemap.lance');")
ANALYZE lt;
CREATE TABLE heap AS SELECT * FROM lt;
CREATE INDEX heap_id ON heap (id);
CREATE INDEX heap_dt ON heap (dt);
VACUUM (FREEZE, ANALYZE) heap;
SELECT pg_prewarm('heap'), pg_prewarm('heap_id'), pg_prewarm('heap_dt');
SELECT name, kind, cardinality(covered_fragments) AS covered FROM lt_indexes('lt');
SQL

QUERIES=(
	"point|SELECT * FROM {T} WHERE id = $KEY"
	"loop|DO \$\$ DECLARE v double precision; k bigint[] := ARRAY[$LOOP_KEYS]; BEGIN FOR i IN 1..1000 LOOP SELECT x INTO v FROM {T} WHERE id = k[i]; END LOOP; END \$\$"
	"in100|SELECT count(*), sum(x) FROM {T} WHERE id IN ($IN_KEYS)"
	"range|SELECT count(*), sum(x) FROM {T} WHERE id >= $LO AND id < $HI"
	"dt|SELECT count(*), sum(x) FROM {T} WHERE dt = '$DAY'"
)
: >"$OUT/pg.out"
: >"$OUT/plans.txt"
TABLES="heap lt"
[ -d "$ZM" ] && TABLES="heap lt ltzm"
for table in $TABLES; do
	log "PostgreSQL: $table (best of $REPEAT) ..."
	f=$TMP/q.sql
	: >"$f"
	for q in "${QUERIES[@]}"; do
		name=${q%%|*} sql=${q#*|} sql=${sql//\{T\}/$table}
		{
			echo "\\echo MARK $name"
			if [[ $sql != DO* ]]; then
				echo "\\o $TMP/plan.$table.$name"
				echo "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sql;"
				echo "\\o"
				echo "SELECT 'ANSWER', q.* FROM ($sql) q LIMIT 1;"
			fi
			echo "\\o /dev/null"
			echo "$sql;"
			echo "\\timing on"
			for _ in $(seq "$REPEAT"); do echo "$sql;"; done
			echo "\\timing off"
			echo "\\o"
		} >>"$f"
	done
	[ "$table" = ltzm ] && { : >"$f"; q="dt|SELECT count(*), sum(x) FROM ltzm WHERE dt = '$DAY'"; name=dt_zonemap sql=${q#*|}
		printf '%s\n' "\\echo MARK $name" "\\o $TMP/plan.ltzm.$name" "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sql;" "\\o" \
			"SELECT 'ANSWER', q.* FROM ($sql) q LIMIT 1;" "\\o /dev/null" "$sql;" "\\timing on" >>"$f"
		for _ in $(seq "$REPEAT"); do echo "$sql;" >>"$f"; done
		printf '%s\n' "\\timing off" "\\o" >>"$f"; }
	"${PSQL[@]}" -A -t -F ' ' -f "$f" | awk -v table="$table" '
		$1 == "MARK" { name = $2; best = ""; answer = "-"; next }
		$1 == "ANSWER" { answer = $2; next }
		$1 == "Time:" { ms = $2 + 0; if (best == "" || ms < best) best = ms; results[name] = best; answers[name] = answer }
		END { for (k in results) printf "RESULT %s %s %.6f %s\n", k, table, (k == "loop" ? results[k] / 1000 : results[k]) / 1000, answers[k] }' \
		>>"$OUT/pg.out"
	for name in point in100 range dt dt_zonemap; do
		[ -f "$TMP/plan.$table.$name" ] && { echo "== $table $name"; cat "$TMP/plan.$table.$name"; } >>"$OUT/plans.txt"
	done
done
POINT_BYTES=$(grep -A40 "^== lt point" "$OUT/plans.txt" | awk '/^ *Bytes Read:/ { print $3; exit }')
DATA_BYTES=$(du -sb "$DATA" | cut -f1)
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the table ----------------------------------------------------------------------------------------
echo
echo "bench/index.sh: $ROWS rows in $FRAGS fragments, best of $REPEAT; load average before $LOAD_BEFORE, after $LOAD_AFTER ($(nproc) cores)"
printf '%-8s %12s %12s %12s %9s %9s  %s\n' query heap_ms lt_fdw_ms lance_ms lt/heap lt/lance target
for name in point loop in100 range dt; do
	h=$(awk -v n="$name" '$1 == "RESULT" && $2 == n && $3 == "heap" { print $4 }' "$OUT/pg.out")
	l=$(awk -v n="$name" '$1 == "RESULT" && $2 == n && $3 == "lt" { print $4 }' "$OUT/pg.out")
	r=$(awk -v n="$name" '$1 == "RESULT" && $2 == n { print $3 }' "$OUT/lance.out")
	case $name in point|loop) t="lt <= 0.3 ms" ;; *) t="lt <= 1.0x lance" ;; esac
	awk -v n="$name" -v h="$h" -v l="$l" -v r="$r" -v t="$t" 'BEGIN {
		printf "%-8s %12.3f %12.3f %12.3f %9.2f %9.2f  %s\n", n, h * 1000, l * 1000, r * 1000, l / h, l / r, t }'
done
if [ -d "$ZM" ]; then
	awk -v h="$(awk '$1 == "RESULT" && $2 == "dt" && $3 == "heap" { print $4 }' "$OUT/pg.out")" \
		-v l="$(awk '$1 == "RESULT" && $2 == "dt_zonemap" { print $4 }' "$OUT/pg.out")" \
		-v r="$(awk '$1 == "RESULT" && $2 == "dt" { print $3 }' "$OUT/lance.out")" 'BEGIN {
		printf "%-8s %12.3f %12.3f %12.3f %9.2f %9.2f  %s\n", "dt_zm", h * 1000, l * 1000, r * 1000, l / h, l / r,
			"lt <= 1.0x lance (lt: zone map on dt; heap: btree; lance: its btree)" }'
	grep -A12 "^== ltzm dt_zonemap" "$OUT/plans.txt" | grep -q "Lance Index: dt_zone" ||
		echo "         (lt_fdw did not use the zone map: it scanned with the filter, see $OUT/plans.txt)"
else
	echo "dt_zm    -- no zone map: no lt-inspect with create-index (LT_INDEX_TOOL); dt above uses the reference's btree"
fi
awk -v b="$POINT_BYTES" -v d="$DATA_BYTES" 'BEGIN { printf "point lookup bytes read by lt_fdw: %d of %d (%.4f%% of the dataset; target <= 1%%)\n", b, d, 100 * b / d }'
echo "answers (point: the id; others: count(*)): heap / lt: $(awk '$1 == "RESULT" { printf "%s:%s=%s ", $2, $3, $5 }' "$OUT/pg.out")"
echo "answers (rows returned): lance: $(awk '$1 == "RESULT" { printf "%s=%s ", $2, $4 }' "$OUT/lance.out")"
echo "plans: $OUT/plans.txt, the engine's: $OUT/lance-plans.txt"
