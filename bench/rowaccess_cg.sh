#!/usr/bin/env bash
# bench/rowaccess_cg.sh — the instruction part of bench/rowaccess.sh, quick to repeat while working on the point
# lookup path: one cluster kept between runs, one single-user backend under callgrind per run.
#
#   bench/rowaccess_cg.sh setup          a cluster under $W (default /tmp/lt_rowaccess_cg) with `lt` over
#                                        build/bench/row1000000.lance (made by bench/rowaccess.sh) and `heap`
#   bench/rowaccess_cg.sh run TAG        the measured statements; medians printed, the last part of each kind
#                                        kept as $W/res/TAG/cg.<kind> for callgrind_annotate
#
# Kinds (N = 20 each after N warm-ups, environment N): point (keys 7,919 apart: a new btree page each), limit
# (SELECT * LIMIT 10), repeat (the warm-up's keys again: cached pages and files), prep (EXECUTE of a prepared
# point lookup, as pgbench -M prepared runs it: a generic plan after the fifth). Each counts parse, plan and
# execute (and the single-user backend printing the row, the same for both tables). Not a test.
#
#   bench/rowaccess_cg.sh wide TAG       target 7 alone, as bench/rowaccess.sh measures it: a full-width scan
#                                        of each table (a warm-up, then the measured one); prints the heap's
#                                        heap_getnextslot + slot_getsomeattrs_int and lt's ltIterateForeignScan
#                                        (inclusive), the ratio, and keeps $W/res/TAG/cg.wide.{heap,lt}
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
W=${W:-/tmp/lt_rowaccess_cg}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export LT_PGTREE=${LT_PGTREE:-$W/pgtree}	# its own PostgreSQL copy: a test run's install is not replaced
ROWS=1000000
NAME=row$ROWS
N=${N:-20}
mkdir -p "$W"
. test/pg/cluster.sh
lt_pg_install "$ROOT" "$W/install.log"
# cg_run NAME: $W/NAME.sql through a single-user server (LT_PGDATA) under callgrind, a dump per statement
# (cg.out.N in $W/cg; part 1 is the startup); results go to $W/res/$TAG
cg_run() {
	rm -rf "$W/cg"
	mkdir -p "$W/cg" "$W/res/$TAG"
	chown "$LT_PG_OSUSER" "$W/cg" 2>/dev/null || true
	chmod a+r "$W/$1.sql"
	lt_as_pg valgrind --tool=callgrind --dump-before=pg_parse_query --callgrind-out-file="$W/cg/cg.out" \
		"$LT_PGBIN/postgres" --single -D "$LT_PGDATA" postgres <"$W/$1.sql" >"$W/$1.log" 2>&1 || true
}

case ${1:-} in
setup)
	[ -d "build/bench/$NAME.lance" ] || { echo "build/bench/$NAME.lance is missing: run bench/rowaccess.sh once" >&2; exit 1; }
	chmod a+rX build build/bench && chmod -R a+rX "build/bench/$NAME.lance"
	rm -rf "$W/pg"
	mkdir -p "$W/pg"
	lt_cluster_create "$W/pg"
	cat >>"$LT_PGDATA/postgresql.conf" <<CONF
shared_buffers = '1GB'
max_parallel_workers_per_gather = 0
jit = off
CONF
	lt_cluster_start
	"$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER bench FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$ROOT/build/bench');
CREATE FOREIGN TABLE lt (id bigint, grp integer, dt date, x double precision, s text, t text)
	SERVER bench OPTIONS (path '$NAME.lance');
ANALYZE lt;
CREATE TABLE heap AS SELECT * FROM lt;
CREATE INDEX heap_id ON heap (id);
VACUUM (FREEZE, ANALYZE) heap;
CHECKPOINT;
SQL
	lt_cluster_stop
	;;
run)
	TAG=${2:?a tag}
	LT_PGDATA=$W/pg/data
	{
		for t in heap lt; do for i in $(seq 1 $((2 * N))); do echo "SELECT * FROM $t WHERE id = $(( (i * 7919 + 13) % ROWS ));"; done; done
		for t in heap lt; do for i in $(seq 1 $((2 * N))); do echo "SELECT * FROM $t LIMIT 10;"; done; done
		for t in heap lt; do for i in $(seq 1 $((2 * N))); do echo "SELECT * FROM $t WHERE id = $(( (((i - 1) % N) * 7907 + 11) % ROWS ));"; done; done
		for t in heap lt; do
			echo "PREPARE p$t(bigint) AS SELECT * FROM $t WHERE id = \$1;"
			for i in $(seq 1 $((2 * N))); do echo "EXECUTE p$t($(( (i * 7919 + 13) % ROWS )));"; done
		done
		echo "SELECT 1;"
	} >"$W/single.sql"
	cg_run single
	median() {
		for k in $(seq "$1" "$2"); do awk '/^(summary|totals):/ { print $2; exit }' "$W/cg/cg.out.$k"; done |
			sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
	}
	# statement s (from 1) of the file is part s + 1 (part 1: startup); a PREPARE is a statement of its own
	s=0
	for what in point.heap point.lt limit.heap limit.lt repeat.heap repeat.lt prep.heap prep.lt; do
		case $what in prep.*) s=$((s + 1)) ;; esac
		echo "$what $(median $((s + N + 2)) $((s + 2 * N + 1)))"
		cp "$W/cg/cg.out.$((s + 2 * N))" "$W/res/$TAG/cg.$what"
		s=$((s + 2 * N))
	done | tee "$W/res/$TAG/summary"
	;;
wide)
	TAG=${2:?a tag}
	LT_PGDATA=$W/pg/data
	WIDE="num_nulls(id, grp, dt, x, s, t) = 6"	# bench/rowaccess.sh's: reads every column, never true
	for t in heap heap lt lt; do echo "SELECT count(*) FROM $t WHERE $WIDE;"; done >"$W/wide.sql"
	echo "SELECT 1;" >>"$W/wide.sql"
	cg_run wide
	incl() { callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f="$2" '{ n = $0; sub(/ \[.*/, "", n); sub(/.*:/, "", n) } n == f && !done { gsub(",", "", $1); print $1; done = 1 }'; }
	cp "$W/cg/cg.out.3" "$W/res/$TAG/cg.wide.heap"
	cp "$W/cg/cg.out.5" "$W/res/$TAG/cg.wide.lt"
	heap=$(( $(incl "$W/res/$TAG/cg.wide.heap" heap_getnextslot) + $(incl "$W/res/$TAG/cg.wide.heap" slot_getsomeattrs_int) ))
	lt=$(incl "$W/res/$TAG/cg.wide.lt" ltIterateForeignScan)
	echo "wide.heap $heap wide.lt $lt ratio $(awk -v h="$heap" -v l="$lt" 'BEGIN { printf "%.3f", l / h }')" |
		tee "$W/res/$TAG/summary"
	;;
*)
	sed -n '2,/^set -e/p' "$0" | sed '$d'
	exit 2
	;;
esac
