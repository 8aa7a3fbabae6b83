#!/usr/bin/env bash
# bench/s3/take.sh — a sparse take on S3: exact kNN with a bitmap prefilter selecting 1% of a vector table
# (WHERE cat = 7 over ROWS 128-d float32 vectors, cat cycling 0..99, the engine's bitmap index on cat), through
# the test S3 server (test/s3/server.mjs) with each request delayed by 0 and then LATENCY ms. Not a test.
#
#   bench/s3/take.sh [ROWS] [REPEAT] [LATENCY_MS]       default 1,000,000 rows, best of 3, 20 ms
#
# Per S3 take gap (LT_S3_TAKE_GAP in the server's environment: the default, 1 MiB, and 0, a request per row) and
# per latency: the best warm wall time of REPEAT runs (psql \timing, one session, after a warm-up run), the
# backend's CPU time per query (utime + stime of the backend from /proc, over the REPEAT runs), the GETs and
# bytes the server saw for one warm run, and the scan's own counters (EXPLAIN ANALYZE: Read Requests, Bytes Read).
# LT_TAKE_EXPLAIN=1 prints the EXPLAIN ANALYZE of each setting.
# LT_BASE_ROOT=DIR also runs the build of another tree (a checkout of an earlier commit, built: the before).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
ROWS=${1:-1000000}
REPEAT=${2:-3}
LAT=${3:-20}
BASE_ROOT=${LT_BASE_ROOT:-}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
TMP=$(mktemp -d /tmp/lt_bench_s3take.XXXXXX)
chmod 0755 "$TMP"
. bench/s3/server.sh

FRAGS=$(( (ROWS + 99999) / 100000 ))
cat >"$TMP/spec.json" <<JSON
{
  "description": "bench/s3/take.sh: $ROWS rows, vec fixed_size_list<float32,128>, cat 0..99 with a bitmap index",
  "storage": "2.1",
  "schema": [
    {"name": "id", "type": "int64", "nullable": false, "gen": "seq"},
    {"name": "cat", "type": "int32", "nullable": false, "gen": {"cycle": [$(seq -s, 0 99)]}},
    {"name": "vec", "type": "fixed_size_list<float32,128>"}
  ],
  "generate": {"n": $ROWS},
  "fragments": $FRAGS,
  "ops": [{"op": "create_index", "column": "cat", "kind": "bitmap"}]
}
JSON
echo "== dataset (reference engine): s3://lake/bench/take.lance, $ROWS rows in $FRAGS fragments"
t0=$(date +%s)
NODE_OPTIONS=--openssl-legacy-provider node test/interop/ref.mjs make s3://lake/bench/take.lance "$TMP/spec.json" >/dev/null
echo "   written in $(( $(date +%s) - t0 )) s"

Q="SELECT id FROM t WHERE cat = 7 ORDER BY vec <-> array_fill(0.5::real, ARRAY[128]) LIMIT 10"

run_gap() {	# GAP ("" = the default)
	local gap=$1 lat out
	if [ -n "$gap" ]; then export LT_S3_TAKE_GAP=$gap; else unset LT_S3_TAKE_GAP; fi
	lt_cluster_start
	"${PSQL[@]}" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
CREATE SERVER IF NOT EXISTS s3 FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 's3://lake/bench', endpoint '$LT_S3_ENDPOINT', path_style 'true', allow_http 'true');
DO \$\$ BEGIN
  CREATE USER MAPPING FOR CURRENT_USER SERVER s3 OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER');
EXCEPTION WHEN duplicate_object THEN NULL; END \$\$;
DROP FOREIGN TABLE IF EXISTS t;
CREATE FOREIGN TABLE t (id bigint, cat integer, vec real[]) SERVER s3 OPTIONS (path 'take.lance');
SQL
	for lat in 0 "$LAT"; do
		admin "mode?latency_ms=$lat" >/dev/null
		# one session: a warm-up run, REPEAT timed runs between two readings of the backend's CPU ticks, then
		# one run counted by the server and one EXPLAIN ANALYZE
		out=$({
			echo "$Q;"
			echo "SELECT pg_backend_pid() AS bpid \\gset"
			echo '\setenv BPID :bpid'
			echo "\\! echo cpu0 \$(awk '{print \$14 + \$15}' /proc/\$BPID/stat)"
			echo '\timing on'
			for _ in $(seq "$REPEAT"); do echo "$Q;"; done
			echo '\timing off'
			echo "\\! echo cpu1 \$(awk '{print \$14 + \$15}' /proc/\$BPID/stat)"
			echo "\\! curl -s $LT_S3_ENDPOINT/__admin/reset-stats >/dev/null"
			echo "SELECT 'ids ' || string_agg(id::text, ',') FROM ($Q) s;"
			echo "\\! echo stats \$(curl -s $LT_S3_ENDPOINT/__admin/stats)"
			echo "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $Q;"
		} | "${PSQL[@]}" -At 2>&1)
		cpu=$(awk '/^cpu0 / {a = $2} /^cpu1 / {b = $2} END {printf "%.0f", (b - a) * 10 / '"$REPEAT"'}' <<<"$out")
		best=$(awk '/^Time:/ {t = $2 + 0; if (best == "" || t < best) best = t} END {printf "%.1f", best}' <<<"$out")
		stats=$(sed -n 's/^stats //p' <<<"$out")
		gets=$(sed -E 's/.*"get":([0-9]+).*/\1/' <<<"$stats")
		bytes=$(sed -E 's/.*"bytes_out":([0-9]+).*/\1/' <<<"$stats")
		reads=$(awk -F': ' '/Read Requests:/ {n += $2} END {print n + 0}' <<<"$out")
		rbytes=$(awk -F': ' '/Bytes Read:/ {n += $2} END {print n + 0}' <<<"$out")
		ids=$(sed -n 's/^ids //p' <<<"$out")
		[ -n "${LT_TAKE_EXPLAIN:-}" ] && grep -vE '^(cpu|stats|ids|Time:|[0-9]+$)' <<<"$out" | sed 's/^/   /'
		printf '%-8s %4s ms  best %8s ms  CPU %6s ms/q  GETs %6s  bytes sent %11s  scan: %6s reads %11s bytes  ids %s\n' \
			"${gap:-default}" "$lat" "$best" "$cpu" "$gets" "$bytes" "$reads" "$rbytes" "$ids"
	done
	lt_cluster_stop
}

setup_build() {	# ROOT
	lt_pg_install "$1" "$TMP/install.log"
	rm -rf "$TMP/pg" && mkdir -p "$TMP/pg" && lt_cluster_create "$TMP/pg"
	PSQL=("$LT_PGBIN/psql" -X -q -d postgres)
}
echo "== exact kNN, WHERE cat = 7 (1%), k 10"
echo "take gap, server latency per request, best warm wall time, backend CPU per query (utime + stime), the server's"
echo "GETs and bytes for one warm run, the scan's EXPLAIN ANALYZE counters, the ids returned"
if [ -n "$BASE_ROOT" ]; then
	echo "-- before: the build of $BASE_ROOT (no take gap: a sparse row a request, or a stream through the page)"
	setup_build "$BASE_ROOT"
	run_gap ""
fi
echo "-- after: the build of $ROOT"
setup_build "$ROOT"
run_gap ""
run_gap 0
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
