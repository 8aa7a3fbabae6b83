#!/usr/bin/env bash
# bench/overwrite.sh — INSERT OVERWRITE … WHERE (issue 6), side by side in one run. Not part of the tests.
#
#   PARTS=100 ROWS=10000 REPS=3 SCALES="1000 100000 1000000" SCALE_PARTS=10 bench/overwrite.sh
#
# The table: PARTS partitions of ROWS rows (id int64, dt date32, s utf8, x float64), one dt per fragment
# (written through lt_fdw with max_rows_per_file = ROWS), with an index on dt: a zone map made by
# lt_create_index when this build has it, else the engine's btree (said in the output). The same rows
# in a heap table with a btree on dt. Measured (psql \timing, client wall time, commit included; best of REPS):
#   append      INSERT of ROWS new rows of a new day                                   lt_fdw
#   replace     lt_insert_overwrite of one indexed partition with ROWS rows of that day    lt_fdw (one Update)
#   ref         the engine's delete("dt = ...") + add(ROWS rows): two commits, timed in-process
#   heap        BEGIN; DELETE FROM h WHERE dt = ...; INSERT ...; COMMIT
#   scan        replace as above with lt_fdw.enable_index_scan = off (every fragment scanned)
# Then the metadata-only path alone for SCALE_PARTS partitions of each size in SCALES: the delete set of
# one partition planned (rolled back: no commit) and committed with empty input (a Delete), best of REPS.
# Target (issue 6): replace <= 1.2x append; the metadata-only time flat in the partition size.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PARTS=${PARTS:-100} ROWS=${ROWS:-10000} REPS=${REPS:-3}
SCALES=${SCALES:-"1000 100000 1000000"} SCALE_PARTS=${SCALE_PARTS:-10}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
log() { echo "$*" >&2; }
[ -d test/interop/node_modules/@lancedb/lancedb ] || (cd test/interop && npm ci --no-audit --no-fund >&2)
make -s -j2 all tools >&2
. "$ROOT/test/pg/cluster.sh"
lt_pg_install "$ROOT" build/bench-overwrite-install.log
TMP=$(mktemp -d /tmp/lt_fdw_bench_ow.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$TMP/pg" "$TMP/lake" && chmod 0777 "$TMP" "$TMP/lake"
lt_cluster_create "$TMP/pg"
cat >>"$LT_PGDATA/postgresql.conf" <<CONF
shared_buffers = '512MB'
max_parallel_workers_per_gather = 0
jit = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = '20GB'
CONF
lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres -At)
REF() { lt_as_pg node "$ROOT/bench/ref_overwrite.mjs" "$@"; }
# milliseconds of every statement of a script (\timing), summed
ms() { "${PSQL[@]}" -c '\timing on' -c "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | awk '{s += $1} END {printf "%.1f", s}'; }
best() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }
day() { echo "DATE '2026-01-01' + $1"; }
rows_sql() {	# day first_id n: the rows of a partition
	echo "SELECT g::bigint, $(day "$1"), 'row ' || g, g * 0.5 FROM generate_series($2, $2 + $3 - 1) g"
}
# the index on dt: a zone map (lt_create_index), or the engine's btree where this build has no lt_create_index
"${PSQL[@]}" -c "CREATE EXTENSION lt_fdw; CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$TMP/lake')"
have_zonemap=$("${PSQL[@]}" -c "SELECT count(*) FROM pg_proc WHERE proname = 'lt_create_index'")

make_table() {	# name parts rows
	local name=$1 parts=$2 rows=$3 t0
	REF empty "$TMP/lake/$name.lance"
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE $name (id bigint, dt date, s text, x float8) SERVER lake
	  OPTIONS (path '$name.lance', max_rows_per_file '$rows')"
	t0=$(date +%s.%N)
	"${PSQL[@]}" -c "INSERT INTO $name SELECT g, DATE '2026-01-01' + (g / $rows)::int, 'row ' || g, g * 0.5
	  FROM generate_series(0, $((parts * rows)) - 1) g"
	log "  $name: $parts x $rows rows written in $(echo "$(date +%s.%N) - $t0" | bc) s"
	if [ "$have_zonemap" -eq 1 ]; then
		"${PSQL[@]}" -c "SELECT index_name FROM lt_create_index('$name', 'dt', 'zonemap', 'dt_zone')" >/dev/null
	else
		REF index "$TMP/lake/$name.lance" dt btree
	fi
}

log "== $PARTS partitions x $ROWS rows ($( [ $have_zonemap -eq 1 ] && echo "zone map on dt (lt_create_index)" || echo "btree on dt, built by the engine: no zone map writer in this build"))"
make_table t "$PARTS" "$ROWS"
"${PSQL[@]}" -c "CREATE TABLE h AS SELECT * FROM t; CREATE INDEX ON h (dt); ANALYZE h"
"${PSQL[@]}" -c "SET lt_fdw.overwrite_where = \$\$dt = $(day 1)\$\$; EXPLAIN (COSTS OFF) INSERT INTO t $(rows_sql 1 0 "$ROWS")" >"$TMP/explain"
grep -E "Delete Set|Metadata-Only|Fragments To Remove|Rows To Delete" "$TMP/explain" | sed 's/^ */  explain: /' >&2
next=$((PARTS * ROWS + 1000000))
A= R= H= S=
for k in $(seq 1 "$REPS"); do
	A+=" $(ms "INSERT INTO t $(rows_sql $((1000 + k)) $next "$ROWS")")"; next=$((next + ROWS))
	R+=" $(ms "SELECT * FROM lt_insert_overwrite('t', \$\$dt = $(day $((k * 7)))\$\$, \$\$$(rows_sql $((k * 7)) $next "$ROWS")\$\$)")"; next=$((next + ROWS))
	H+=" $(ms "BEGIN; DELETE FROM h WHERE dt = $(day $((k * 7))); INSERT INTO h $(rows_sql $((k * 7)) $next "$ROWS"); COMMIT")"; next=$((next + ROWS))
	S+=" $(ms "SET lt_fdw.enable_index_scan = off; SELECT * FROM lt_insert_overwrite('t', \$\$dt = $(day $((k * 7 + 1)))\$\$, \$\$$(rows_sql $((k * 7 + 1)) $next "$ROWS")\$\$)")"; next=$((next + ROWS))
done
ref=$(REF replace "$TMP/lake/t.lance" "2026-03-01" "$ROWS" "$next" "$REPS" | sed -n 's/^RESULT replace //p')
a=$(echo $A | best) r=$(echo $R | best) h=$(echo $H | best) s=$(echo $S | best)
refms=$(echo "$ref" | awk '{printf "%.1f", $3 * 1000}')
printf '\n| replace one partition of %d x %d rows (best of %d) | ms | vs lt_fdw append |\n| --- | ---: | ---: |\n' "$PARTS" "$ROWS" "$REPS"
printf '| lt_fdw append of the same rows (INSERT) | %s | 1.00 |\n' "$a"
printf '| lt_fdw replace (lt_insert_overwrite, one Update) | %s | %.2f |\n' "$r" "$(echo "$r / $a" | bc -l)"
printf '| lt_fdw replace, index use off (every fragment scanned) | %s | %.2f |\n' "$s" "$(echo "$s / $a" | bc -l)"
printf '| engine delete + add (two commits: %s + %s s) | %s | %.2f |\n' "$(echo "$ref" | awk '{print $1}')" "$(echo "$ref" | awk '{print $2}')" "$refms" "$(echo "$refms / $a" | bc -l)"
printf '| heap DELETE + INSERT in one transaction (btree on dt) | %s | %.2f |\n' "$h" "$(echo "$h / $a" | bc -l)"

printf '\n| metadata-only removal, %d partitions of | delete set planned (ms) | committed, empty input (ms) |\n| --- | ---: | ---: |\n' "$SCALE_PARTS"
for n in $SCALES; do
	make_table "u$n" "$SCALE_PARTS" "$n"
	P= C=
	for k in $(seq 1 "$REPS"); do
		P+=" $(ms "BEGIN; SELECT * FROM lt_insert_overwrite('u$n', \$\$dt = $(day 1)\$\$, 'SELECT 1::bigint, NULL::date, NULL, NULL WHERE false'); ROLLBACK")"
		C+=" $(ms "SELECT * FROM lt_insert_overwrite('u$n', \$\$dt = $(day $((k + 1)))\$\$, 'SELECT 1::bigint, NULL::date, NULL, NULL WHERE false')")"
	done
	"${PSQL[@]}" -c "SET lt_fdw.overwrite_where = \$\$dt = $(day 0)\$\$; EXPLAIN (COSTS OFF) INSERT INTO u$n SELECT 1, NULL::date, NULL, NULL WHERE false" | grep -E "Metadata-Only" | sed "s/^ */  u$n explain: /" >&2
	printf '| %d rows each | %s | %s |\n' "$n" "$(echo $P | best)" "$(echo $C | best)"
done
echo
echo "load: $(uptime | sed 's/.*load average/load average/')"
