#!/usr/bin/env bash
# bench/scan.sh — the issue 3 read-path benchmark: the same queries on a PostgreSQL heap table, on an lt_fdw
# foreign table and on the real Lance engine (@lancedb/lancedb), over the same rows, side by side in one run.
#
#   bench/scan.sh [ROWS] [REPEAT]       default 10,000,000 rows, best of 5 (after one warm-up run each)
#
# The table (id int64, grp int32 = i % 1000, dt date in 100 ascending runs, x float64, s 8-12 chars, t 80 chars)
# is written once with the reference library and cached under build/bench/scan<ROWS>.lance (plus a copy with a
# btree index on dt, for the Lance engine's indexed filtered sum). Then an install into a private PostgreSQL copy, a throwaway cluster in
# /tmp (runs as user postgres when root, private port, fsync off, shared_buffers $LT_BENCH_SHARED_BUFFERS
# (2GB), jit off, serial unless stated), a foreign table `lt` over the dataset and a heap copy `heap` (CREATE
# TABLE AS, VACUUM FREEZE ANALYZE, pg_prewarm). Timing: psql's \timing (client wall time over the Unix socket,
# parse + plan + execute + result), best of REPEAT in one warm session; the Lance engine in node, best of REPEAT
# of the whole query (toArrow, 128Ki-row batches; sums in JS). Queries: count(*), sum(grp), sum(x), sum(x) over
# 10% of dt, SELECT * LIMIT 10, COPY (SELECT *) TO '/dev/null' (text and binary); then with
# max_parallel_workers_per_gather = 2 (as planned; with free parallel costs; for lt also without aggregate
# pushdown). Backend memory: VmRSS / RssAnon / Pss sampled every ~20 ms during the full-width COPY of each table.
# Prints a table with ratios and the issue's targets, the answers of each side and the plans' top nodes.
# Not part of the tests (nothing is asserted); the cluster is always stopped and removed.
# Environment: LT_BENCH_SHARED_BUFFERS (2GB), LT_BENCH_NO_INDEX=1 (skip the btree copy), PG_CONFIG.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${1:-10000000}
REPEAT=${2:-5}
SB=${LT_BENCH_SHARED_BUFFERS:-2GB}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
NAME=scan$ROWS
DATA=$ROOT/build/bench/$NAME.lance
IDX=$ROOT/build/bench/$NAME-btree.lance
OUT=$ROOT/build/bench/scan
mkdir -p "$OUT"
log() { echo "$*" >&2; }

# --- the dataset (cached) ------------------------------------------------------------------------------
[ -d test/interop/node_modules/@lancedb/lancedb ] || (cd test/interop && npm ci --no-audit --no-fund >&2)
if [ ! -d "$DATA" ]; then
	log "generating $ROWS rows with the reference library into $DATA ..."
	node --max-old-space-size=8000 bench/ref_bench.mjs make-scan "$DATA.tmp" "$ROWS"
	mv "$DATA.tmp" "$DATA"
fi
if [ "${LT_BENCH_NO_INDEX:-0}" != 1 ] && [ ! -d "$IDX" ]; then
	# data files are immutable: hard-link them; the manifests are real copies, the index is written beside them
	log "adding a btree index on dt to a copy ($IDX) ..."
	rm -rf "$IDX.tmp" && cp -al "$DATA" "$IDX.tmp"
	rm -rf "$IDX.tmp/_versions" && cp -r "$DATA/_versions" "$IDX.tmp/_versions"
	[ -e "$DATA/_latest.manifest" ] && rm -f "$IDX.tmp/_latest.manifest" && cp "$DATA/_latest.manifest" "$IDX.tmp/"
	node bench/ref_bench.mjs index "$IDX.tmp"
	mv "$IDX.tmp" "$IDX"
fi
chmod a+rX build build/bench && chmod -R a+rX "$DATA"

# the dt range of the filtered sum: days 45..54 of the 100 (10% of the rows), BETWEEN = inclusive
LO=$(date -u -d "2024-01-01 + 45 days" +%F)
HI=$(date -u -d "2024-01-01 + 54 days" +%F)

# --- the Lance engine ----------------------------------------------------------------------------------
log "Lance engine: queries (best of $REPEAT) ..."
node --max-old-space-size=8000 bench/ref_bench.mjs queries "$DATA" "$REPEAT" "$LO" "$HI" >"$OUT/lance.out"
if [ -d "$IDX" ] && [ "${LT_BENCH_NO_INDEX:-0}" != 1 ]; then
	node --max-old-space-size=8000 bench/ref_bench.mjs queries "$IDX" "$REPEAT" "$LO" "$HI" |
		awk '$2 == "sum_x_dt" { $2 = "sum_x_dt_btree"; print }' >>"$OUT/lance.out"
fi

# --- PostgreSQL ----------------------------------------------------------------------------------------
log "make install (a private PostgreSQL copy) ..."
. "$ROOT/test/pg/cluster.sh"
lt_pg_install "$ROOT" "$OUT/install.log" || exit 1
if ! lt_as_pg test -r "$DATA/_versions"; then
	log "bench/scan.sh: the server user ($LT_PG_OSUSER) cannot read $DATA (make its parent directories a+x)"
	exit 1
fi
TMP=$(mktemp -d /tmp/lt_fdw_bench.XXXXXX)
SAMPLER=
cleanup() { [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null; lt_cluster_stop; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
lt_cluster_create "$TMP"
cat >>"$LT_PGDATA/postgresql.conf" <<CONF
# bench/scan.sh
shared_buffers = '$SB'
max_parallel_workers_per_gather = 0
jit = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = '20GB'
checkpoint_timeout = '1h'
CONF
lt_cluster_start
log "cluster on port $PGPORT ($TMP)"

PSQL=("$(dirname "$PG_CONFIG")/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
log "loading the heap table (CREATE TABLE AS from lt_fdw, VACUUM FREEZE ANALYZE, pg_prewarm) ..."
"${PSQL[@]}" >"$OUT/setup.log" <<SQL
CREATE EXTENSION lt_fdw;
CREATE EXTENSION pg_prewarm;
CREATE SERVER bench FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$ROOT/build/bench');
CREATE FOREIGN TABLE lt (id bigint, grp int, dt date, x double precision, s text, t text)
  SERVER bench OPTIONS (path '$NAME.lance');
ANALYZE lt;
CREATE TABLE heap AS SELECT * FROM lt;
VACUUM (FREEZE, ANALYZE) heap;
SELECT pg_size_pretty(pg_relation_size('heap')) AS heap_size, pg_prewarm('heap') AS pages_prewarmed;
SQL
cat "$OUT/setup.log" >&2

# queries: name|SQL with {T} for the table
QUERIES=(
	"count|SELECT count(*) FROM {T}"
	"sum_grp|SELECT sum(grp) FROM {T}"
	"sum_x|SELECT sum(x) FROM {T}"
	"sum_x_dt|SELECT sum(x) FROM {T} WHERE dt BETWEEN '$LO' AND '$HI'"
	"limit10|SELECT * FROM {T} LIMIT 10"
	"full|COPY (SELECT * FROM {T}) TO '/dev/null'"
	"full_bin|COPY (SELECT * FROM {T}) TO '/dev/null' (FORMAT binary)"
)
# parallel: as the planner chooses; then with parallel plans made free (so the full scan gets a Gather); then,
# for lt only, with aggregate pushdown off (a Partial Aggregate over a parallel foreign scan)
PAR_SET="SET max_parallel_workers_per_gather = 2;"
PAR_QUERIES=(
	"par_sum_x|SELECT sum(x) FROM {T}"
	"par_sum_x_dt|SELECT sum(x) FROM {T} WHERE dt BETWEEN '$LO' AND '$HI'"
	"par_full|COPY (SELECT * FROM {T}) TO '/dev/null'"
)
FORCE_SET="$PAR_SET SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;"
FORCE_QUERIES=("parf_full|COPY (SELECT * FROM {T}) TO '/dev/null'")
NOPUSH_SET="$PAR_SET SET lt_fdw.enable_aggregate_pushdown = off;"
NOPUSH_QUERIES=(
	"parnp_sum_x|SELECT sum(x) FROM {T}"
	"parnp_sum_x_dt|SELECT sum(x) FROM {T} WHERE dt BETWEEN '$LO' AND '$HI'"
)

# time_queries TABLE SETTINGS QUERY...: one session; per query a warm-up run, its answer and plan, then REPEAT
# timed runs; prints "RESULT <name> <table> <best seconds> <answer>" and the plans into $OUT/plans.txt
time_queries() {
	local table=$1 settings=$2 q name sql f=$TMP/q.sql
	shift 2
	: >"$f"
	echo "$settings" >>"$f"
	for q in "$@"; do
		name=${q%%|*} sql=${q#*|} sql=${sql//\{T\}/$table}
		{
			echo "\\echo MARK $name"
			echo "\\o $TMP/plan.$table.$name"
			[[ $sql == COPY* ]] && echo "EXPLAIN ${sql#COPY (} " | sed 's/) TO .*$/;/' || echo "EXPLAIN $sql;"
			echo "\\o"
			[[ $sql == COPY* ]] || echo "SELECT 'ANSWER', * FROM ($sql) q LIMIT 1;"
			echo "\\o /dev/null"
			echo "$sql;"
			echo "\\o"
			echo "\\timing on"
			echo "\\o /dev/null"
			for _ in $(seq "$REPEAT"); do echo "$sql;"; done
			echo "\\o"
			echo "\\timing off"
		} >>"$f"
	done
	"${PSQL[@]}" -A -t -F ' ' -f "$f" | awk -v table="$table" '
		$1 == "MARK" { name = $2; best = ""; answer = "-"; next }
		$1 == "ANSWER" { answer = $2; next }
		$1 == "Time:" { ms = $2 + 0; if (best == "" || ms < best) best = ms; results[name] = best; answers[name] = answer; order[name] = ++n }
		END { for (k in results) printf "RESULT %s %s %.6f %s\n", k, table, results[k] / 1000, answers[k] }'
	for q in "$@"; do
		name=${q%%|*}
		{ echo "== $table $name ($settings)"; cat "$TMP/plan.$table.$name"; } >>"$OUT/plans.txt"
	done
}

: >"$OUT/plans.txt"
: >"$OUT/pg.out"
log "warming (a full scan of each) ..."
"${PSQL[@]}" -c "COPY (SELECT * FROM heap) TO '/dev/null'" -c "COPY (SELECT * FROM lt) TO '/dev/null'"
for table in heap lt; do
	log "PostgreSQL: $table, serial (best of $REPEAT) ..."
	time_queries "$table" "" "${QUERIES[@]}" >>"$OUT/pg.out"
	log "PostgreSQL: $table, max_parallel_workers_per_gather = 2 (best of $REPEAT) ..."
	time_queries "$table" "$PAR_SET" "${PAR_QUERIES[@]}" >>"$OUT/pg.out"
	time_queries "$table" "$FORCE_SET" "${FORCE_QUERIES[@]}" >>"$OUT/pg.out"
done
log "PostgreSQL: lt, parallel, aggregate pushdown off (best of $REPEAT) ..."
time_queries lt "$NOPUSH_SET" "${NOPUSH_QUERIES[@]}" >>"$OUT/pg.out"

# --- backend memory through the full-width scan --------------------------------------------------------
# sample_backend TABLE: a fresh session warms its caches (LIMIT 1), sleeps (baseline), runs the COPY, sleeps;
# VmRSS, RssAnon and Pss of its backend are read every ~20 ms; prints "MEM <table> <base/max for each, kB> <HWM>"
sample_backend() {
	local table=$1 pidf=$TMP/pid.$1 pid
	rm -f "$pidf"
	"${PSQL[@]}" -A -t >/dev/null <<SQL &
\o $pidf
SELECT pg_backend_pid();
\o /dev/null
SELECT * FROM $table LIMIT 1;
SELECT pg_sleep(0.5);
COPY (SELECT * FROM $table) TO '/dev/null';
SELECT pg_sleep(0.3);
SQL
	local psql_pid=$!
	for _ in $(seq 100); do [ -s "$pidf" ] && break; sleep 0.05; done
	pid=$(tr -d ' \n' <"$pidf")
	sleep 0.2
	local rss0 anon0 pss0 rss=0 anon=0 pss=0 hwm=0 r a p h
	read -r rss0 anon0 < <(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } END { print r, a }' "/proc/$pid/status")
	pss0=$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup")
	while kill -0 "$psql_pid" 2>/dev/null && [ -r "/proc/$pid/status" ]; do
		read -r r a h < <(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^VmHWM:/ { h = $2 } END { print r, a, h }' \
			"/proc/$pid/status" 2>/dev/null || echo "0 0 0")
		p=$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)
		[ "${r:-0}" -gt "$rss" ] && rss=$r
		[ "${a:-0}" -gt "$anon" ] && anon=$a
		[ "${p:-0}" -gt "$pss" ] && pss=$p
		[ "${h:-0}" -gt "$hwm" ] && hwm=$h
		sleep 0.02
	done
	wait "$psql_pid"
	echo "MEM $table $rss0 $rss $anon0 $anon $pss0 $pss $hwm"
}
log "backend memory through the full-width COPY (lt, then heap) ..."
{ sample_backend lt; sample_backend heap; } >"$OUT/mem.out"

# --- the table -----------------------------------------------------------------------------------------
echo
echo "== bench/scan: $ROWS rows, best of $REPEAT, warm; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "   heap / lt_fdw: psql \\timing (client wall time); Lance: @lancedb/lancedb 0.31 (lance 8) in node, whole query"
awk -v rows="$ROWS" '
	FILENAME ~ /lance.out$/ { lance[$2] = $3; lans[$2] = $4; next }
	FILENAME ~ /pg.out$/ { t[$2, $3] = $4; ans[$2, $3] = $5; next }
	function ms(s) { return s == "" ? "-" : sprintf("%.2f", s * 1000) }
	function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2fx", a / b) }
	function row(label, k, lk, target, met,   h, l, r) {
		h = t[k, "heap"]; l = t[k, "lt"]; r = (lk == "") ? "" : lance[lk]
		printf "%-34s %10s %10s %10s %8s %8s  %-22s %s\n", label, ms(h), ms(l), ms(r), ratio(l, h), ratio(l, r), target, met
	}
	function chk(ok) { return ok ? "met" : "MISSED" }
	END {
		printf "%-34s %10s %10s %10s %8s %8s  %-22s %s\n", "query", "heap ms", "lt ms", "lance ms", "lt/heap", "lt/lance", "target", ""
		row("count(*)", "count", "count", "<= 1 ms", chk(t["count", "lt"] <= 0.001))
		row("sum(grp)", "sum_grp", "sum_grp", "<= 1.0x Lance", chk(t["sum_grp", "lt"] <= lance["sum_grp"]))
		row("sum(x)", "sum_x", "sum_x", "<= 1.0x Lance", chk(t["sum_x", "lt"] <= lance["sum_x"]))
		row("sum(x) WHERE dt 10%", "sum_x_dt", "sum_x_dt", "<= 1.0x Lance", chk(t["sum_x_dt", "lt"] <= lance["sum_x_dt"]))
		if ("sum_x_dt_btree" in lance)
			row("  (Lance with a btree on dt)", "sum_x_dt", "sum_x_dt_btree", "(reference only)", "")
		row("SELECT * LIMIT 10", "limit10", "limit10", "<= 0.3 ms", chk(t["limit10", "lt"] <= 0.0003))
		row("COPY (SELECT *) TO /dev/null", "full", "full", "<= 0.75x heap", chk(t["full", "lt"] <= 0.75 * t["full", "heap"]))
		row("  the same, FORMAT binary", "full_bin", "full", "<= 0.75x heap", chk(t["full_bin", "lt"] <= 0.75 * t["full_bin", "heap"]))
		print "parallel, max_parallel_workers_per_gather = 2 (the Lance column repeats its own run above):"
		row("  sum(x)", "par_sum_x", "sum_x", "<= 1.0x Lance", chk(t["par_sum_x", "lt"] <= lance["sum_x"]))
		row("  sum(x) WHERE dt 10%", "par_sum_x_dt", "sum_x_dt", "<= 1.0x Lance", chk(t["par_sum_x_dt", "lt"] <= lance["sum_x_dt"]))
		row("  COPY (SELECT *) TO /dev/null", "par_full", "full", "<= 0.75x heap", chk(t["par_full", "lt"] <= 0.75 * t["par_full", "heap"]))
		row("  COPY, parallel_*_cost = 0", "parf_full", "full", "<= 0.75x heap", chk(t["parf_full", "lt"] <= 0.75 * t["parf_full", "heap"]))
		t["parnp_sum_x", "heap"] = t["par_sum_x", "heap"]; t["parnp_sum_x_dt", "heap"] = t["par_sum_x_dt", "heap"]
		row("  sum(x), lt agg pushdown off", "parnp_sum_x", "sum_x", "<= 1.0x Lance", chk(t["parnp_sum_x", "lt"] <= lance["sum_x"]))
		row("  sum(x) WHERE dt, pushdown off", "parnp_sum_x_dt", "sum_x_dt", "<= 1.0x Lance", chk(t["parnp_sum_x_dt", "lt"] <= lance["sum_x_dt"]))
		print ""
		print "answers (heap / lt / lance):"
		split("count sum_grp sum_x sum_x_dt limit10 par_sum_x par_sum_x_dt parnp_sum_x parnp_sum_x_dt", ks, " ")
		for (i = 1; i in ks; i++) {
			k = ks[i]; lk = k; sub(/^par(np)?_/, "", lk)
			printf "  %-14s %s / %s / %s\n", k, ans[k, "heap"], ans[k, "lt"], (lk in lans) ? lans[lk] : "-"
		}
	}' "$OUT/lance.out" "$OUT/pg.out"
echo
echo "plans (top node; all in $OUT/plans.txt):"
awk 'function flush() { if (hdr != "") printf "  %-22s %s\n", hdr, top }
	/^== / { flush(); hdr = $2 " " $3; top = ""; next }
	{ l = $0; sub(/^ *(-> *)?/, "", l); sub(/  \(cost.*/, "", l) }
	top == "" { top = l; next }
	l ~ /^(Gather|Parallel|Partial)/ && top !~ /Gather|Parallel/ { top = top " / " l }
	END { flush() }' "$OUT/plans.txt"
echo
echo "backend memory through the full-width COPY (kB; baseline -> max during the scan; target: < 100 MB growth):"
awk '{ printf "  %-5s VmRSS %8d -> %8d (+%d)  RssAnon %8d -> %8d (+%d)  Pss %8d -> %8d (+%d)  VmHWM %d\n",
	$2, $3, $4, $4 - $3, $5, $6, $6 - $5, $7, $8, $8 - $7, $9 }' "$OUT/mem.out"
