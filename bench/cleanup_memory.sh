#!/usr/bin/env bash
# bench/cleanup_memory.sh — peak memory of lt_cleanup's dry run (and lt_versions) over many versions
# (issue 15, point 8: the dry run must stream the manifests, not hold them all).
#
#   bench/cleanup_memory.sh [VERSIONS] [KEEP_EVERY]     default 10,000 versions, every 10th insert kept
#
# A dataset made by the reference engine gets VERSIONS versions from a loop of single-row INSERT (+ DELETE)
# transactions: each INSERT is a version, and so is each DELETE of the row it added, except every
# KEEP_EVERY-th row, which stays — so the manifests grow to VERSIONS / (2 * KEEP_EVERY) fragments and the old
# versions reference thousands of distinct files. Then, each in a fresh session, the backend's peak resident
# memory (VmHWM of /proc/<pid>/status, read by psql's \! on this machine) after:
#   baseline   lt_fragments (the library loaded, the dataset opened)
#   versions   SELECT count(*) FROM lt_versions(...)
#   dry run    SELECT ... FROM lt_cleanup(..., '0 seconds', dry_run => true)
# Not part of the tests (generating the versions takes minutes); nothing is asserted.
#   LT_BENCH_KEEP=DIR   keep (and reuse) the generated dataset in DIR
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
NVERSIONS=${1:-10000}
KEEP_EVERY=${2:-10}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
OUT=$ROOT/build/bench/cleanup
mkdir -p "$OUT"
log() { echo "$*" >&2; }

. "$ROOT/test/pg/cluster.sh"
log "make install (a private PostgreSQL copy) ..."
lt_pg_install "$ROOT" "$OUT/install.log" || exit 1
TMP=$(mktemp -d /tmp/lt_fdw_bench_cleanup.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
chmod 0777 "$TMP"
LAKE=${LT_BENCH_KEEP:-$TMP/lake}
mkdir -p "$LAKE" "$TMP/pg"
chmod 0777 "$LAKE"
lt_cluster_create "$TMP/pg"
lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)

if [ ! -d "$LAKE/many.lance/_versions" ]; then
	cat >"$TMP/spec.json" <<'JSON'
{"storage": "2.1",
 "schema": [{"name": "id", "type": "int64", "nullable": false}, {"name": "value", "type": "utf8"}],
 "generate": {"n": 100},
 "fragment_sizes": [50, 50]}
JSON
	chmod a+r "$TMP/spec.json"
	lt_as_pg node "$ROOT/test/interop/ref.mjs" make "$LAKE/many.lance" "$TMP/spec.json" >/dev/null
	chown -R "$LT_PG_OSUSER" "$LAKE/many.lance" 2>/dev/null || true
fi
"${PSQL[@]}" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
CREATE FOREIGN TABLE many (id bigint, value text) SERVER lake OPTIONS (path 'many.lance');
SQL
have=$(ls "$LAKE/many.lance/_versions" | grep -c '\.manifest$')
if [ "$have" -lt "$NVERSIONS" ]; then
	log "making $((NVERSIONS - have)) more versions ..."
	start=$SECONDS
	"${PSQL[@]}" -c "DO \$\$ BEGIN FOR i IN 1..$(((NVERSIONS - have) / 2)) LOOP
  INSERT INTO many VALUES (-i, 'v'); COMMIT;
  IF i % $KEEP_EVERY = 0 THEN INSERT INTO many VALUES (-i - 1000000000, 'w'); ELSE DELETE FROM many WHERE id = -i; END IF;
  COMMIT; END LOOP; END \$\$"
	log "... in $((SECONDS - start)) s"
fi
nman=$(ls "$LAKE/many.lance/_versions" | grep -c '\.manifest$')
nfiles=$(find "$LAKE/many.lance" -type f | wc -l)
bytes=$(du -sb "$LAKE/many.lance/_versions" | cut -f1)
echo "versions: $nman manifests ($bytes bytes), $nfiles files in the dataset"
echo "fragments in the newest version: $("${PSQL[@]}" -At -c "SELECT count(*) FROM lt_fragments('many')")"

# peak LABEL SQL: VmHWM of a fresh backend after SQL (kB)
peak() {
	local start=$SECONDS
	"$LT_PGBIN/psql" -X -q -At -d postgres >"$TMP/peak.out" 2>&1 <<SQL
SELECT pg_backend_pid() AS pid \gset
\setenv LT_BACKEND_PID :pid
SELECT count(*) FROM lt_fragments('many') \g /dev/null
$2 \g $TMP/peak.result
\! grep -E '^VmHWM' /proc/\$LT_BACKEND_PID/status
SQL
	printf '%-10s VmHWM %8s kB  (%s s)  result: %s\n' "$1" "$(grep -Eo 'VmHWM:[[:space:]]+[0-9]+' "$TMP/peak.out" | grep -Eo '[0-9]+')" \
		"$((SECONDS - start))" "$(tr '\n' ' ' <"$TMP/peak.result" 2>/dev/null | cut -c1-120)"
	grep -q ERROR "$TMP/peak.out" && cat "$TMP/peak.out"
	return 0
}
peak baseline "SELECT 1"
peak versions "SELECT count(*) FROM lt_versions('many')"
peak "dry run" "SELECT old_versions, files_removed, bytes_removed FROM lt_cleanup('many', '0 seconds', dry_run => true)"
