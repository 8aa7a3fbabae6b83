#!/usr/bin/env bash
# bench/spill_memory.sh — peak memory of a pushed-down GROUP BY with far more keys than planned
# (issue 15, point 13: 3M distinct keys at work_mem 64kB used 1.05 GB before the aggregate spilled).
#
#   bench/spill_memory.sh [ROWS] [WORK_MEM]     default 3,000,000 rows (all keys distinct), 64kB
#
# One dataset of ROWS rows (id int64, k int64 = a permutation of the ids, v float64, t text), written by
# lt_fdw (INSERT from generate_series), statistics claiming 10 distinct keys (n_distinct, ANALYZE) so that
# planning pushes the GROUP BY down. Then, each in a fresh session, the backend's peak resident memory
# (VmHWM of /proc/<pid>/status, read by psql's \! on this machine) and the answer of:
#   pushed       SELECT count(*), sum(n), sum(s) FROM (SELECT k, count(*) n, sum(v) s FROM t GROUP BY k) q
#   pushed text  the same grouped by t (a text key)
#   postgres     the same with lt_fdw.enable_aggregate_pushdown = off (PostgreSQL's HashAggregate)
# EXPLAIN ANALYZE of the pushed one shows what it spilled. Not part of the tests; nothing is asserted.
#   LT_BENCH_KEEP=DIR   keep (and reuse) the generated dataset in DIR
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${1:-3000000}
WORK_MEM=${2:-64kB}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
OUT=$ROOT/build/bench/spill
mkdir -p "$OUT"
log() { echo "$*" >&2; }

. "$ROOT/test/pg/cluster.sh"
log "make install (a private PostgreSQL copy) ..."
lt_pg_install "$ROOT" "$OUT/install.log" || exit 1
TMP=$(mktemp -d /tmp/lt_fdw_bench_spill.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
chmod 0777 "$TMP"
LAKE=${LT_BENCH_KEEP:-$TMP/lake}
mkdir -p "$LAKE" "$TMP/pg"
chmod 0777 "$LAKE"
lt_cluster_create "$TMP/pg"
lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)

if [ ! -d "$LAKE/keys$ROWS.lance/_versions" ]; then
	cat >"$TMP/spec.json" <<'JSON'
{"storage": "2.1",
 "schema": [{"name": "id", "type": "int64", "nullable": false}, {"name": "k", "type": "int64"},
            {"name": "v", "type": "float64"}, {"name": "t", "type": "utf8"}],
 "rows": []}
JSON
	chmod a+r "$TMP/spec.json"
	lt_as_pg node "$ROOT/test/interop/ref.mjs" make "$LAKE/keys$ROWS.lance.tmp" "$TMP/spec.json" >/dev/null
	chown -R "$LT_PG_OSUSER" "$LAKE/keys$ROWS.lance.tmp" 2>/dev/null || true
	"${PSQL[@]}" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
CREATE FOREIGN TABLE w (id bigint, k bigint, v double precision, t text) SERVER lake OPTIONS (path 'keys$ROWS.lance.tmp');
INSERT INTO w SELECT g, (g * 7919) % $ROWS, g / 3.0, 'key ' || (g * 7919) % $ROWS FROM generate_series(1, $ROWS) g;
DROP EXTENSION lt_fdw CASCADE;
SQL
	mv "$LAKE/keys$ROWS.lance.tmp" "$LAKE/keys$ROWS.lance"
fi
"${PSQL[@]}" <<SQL
CREATE EXTENSION IF NOT EXISTS lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
CREATE FOREIGN TABLE t (id bigint, k bigint, v double precision, t text) SERVER lake OPTIONS (path 'keys$ROWS.lance');
ALTER FOREIGN TABLE t ALTER COLUMN k SET (n_distinct = 10), ALTER COLUMN t SET (n_distinct = 10);
ANALYZE t;
SQL

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
q="SELECT count(*), sum(n), sum(s) FROM (SELECT k, count(*) n, sum(v) s FROM t GROUP BY k) q"
qt="SELECT count(*), sum(n), sum(s) FROM (SELECT t, count(*) n, sum(v) s FROM t GROUP BY t) q"
peak baseline "SELECT count(*) FROM t WHERE id < 0"
peak pushed "$q"
peak "pushed text" "$qt"
peak postgres "SET lt_fdw.enable_aggregate_pushdown = off; $q"
peak "pg text" "SET lt_fdw.enable_aggregate_pushdown = off; $qt"
"$LT_PGBIN/psql" -X -q -d postgres -c "SET work_mem = '$WORK_MEM'; SET max_parallel_workers_per_gather = 0;" \
	-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $q"
