#!/usr/bin/env bash
# bench/s3/run.sh — lt_fdw on S3 against the same dataset on local disk, and against the reference engine on the
# same S3 dataset: COUNT(*), a full-column sum, a point lookup and a 1000-row range through a btree index, with the
# test S3 server (test/s3/server.mjs) delaying each request by 0 and then LATENCY ms. Not a test: nothing is asserted.
#
#   bench/s3/run.sh [REPEAT] [LATENCY_MS]       default best of 3, 20 ms
#
# Per query: the time (psql \timing, best of REPEAT in one warm session, after one warm-up run: metadata cached;
# and the first run in a new session: cold per-backend caches), the HTTP requests the server saw and the bytes
# it sent for one warm run. The reference engine (bench/s3/ref.mjs): by default a fresh table handle each run (it
# checks for a newer version when a handle opens, and answers the rest from its session cache), and with strong
# consistency (readConsistencyInterval 0: it checks for a newer version before every read, as READ COMMITTED does).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
REPEAT=${1:-3}
LAT=${2:-20}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
TMP=$(mktemp -d /tmp/lt_bench_s3.XXXXXX)
chmod 0755 "$TMP"
. bench/s3/server.sh

echo "== dataset (reference engine): s3://lake/bench/t.lance and a local copy"
NODE_OPTIONS=--openssl-legacy-provider node test/interop/ref.mjs make s3://lake/bench/t.lance bench/s3/spec.json
mkdir -p "$TMP/local"
node test/interop/ref.mjs make "$TMP/local/t.lance" bench/s3/spec.json
chown -R "$LT_PG_OSUSER": "$TMP/local" 2>/dev/null || true

lt_pg_install "$ROOT" "$TMP/install.log"
mkdir -p "$TMP/pg" && lt_cluster_create "$TMP/pg" && lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -d postgres)
"${PSQL[@]}" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER s3 FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 's3://lake/bench', endpoint '$LT_S3_ENDPOINT', path_style 'true', allow_http 'true');
CREATE USER MAPPING FOR CURRENT_USER SERVER s3 OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER');
CREATE SERVER disk FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$TMP/local');
CREATE FOREIGN TABLE t_s3 (id bigint, grp int, x float8, s text) SERVER s3 OPTIONS (path 't.lance');
CREATE FOREIGN TABLE t_disk (id bigint, grp int, x float8, s text) SERVER disk OPTIONS (path 't.lance');
SQL

declare -A Q=(
	[count]="SELECT count(*) FROM TBL"
	[sum]="SELECT round(sum(x)::numeric, 3) FROM TBL"
	[point]="SELECT count(*) FROM (SELECT id, s FROM TBL WHERE id = 123457) q"
	[range]="SELECT count(*) FROM (SELECT id, x FROM TBL WHERE id >= 200000 AND id < 201000) q"
)
ORDER=(count sum point range)

# time QUERY-SQL: "cold warm value" (cold: the first run in a new session; warm: best of REPEAT after it)
time_query() {
	local sql=$1
	{
		echo '\timing on'
		for _ in $(seq $((REPEAT + 1))); do echo "$sql;"; done
	} | "${PSQL[@]}" -At 2>&1 | awk '/^Time:/ {t[n++] = $2} !/^Time:/ {v = $0} END {
		best = 1e18; for (i = 1; i < n; i++) if (t[i] < best) best = t[i]; printf "%.1f %.1f %s\n", t[0], best, v }'
}
# requests and bytes of one warm run (the session warms up first)
count_requests() {
	local sql=$1
	{ echo "$sql;"; echo "\\! curl -s $LT_S3_ENDPOINT/__admin/reset-stats >/dev/null"; echo "$sql;"; } |
		"${PSQL[@]}" -At >/dev/null 2>&1
	admin stats
}

# requests and bytes of the first run in a new session (cold per-backend caches)
count_requests_cold() {
	admin reset-stats >/dev/null
	"${PSQL[@]}" -At -c "$1" >/dev/null 2>&1
	admin stats
}
brief() { sed -E 's/.*"requests":([0-9]+).*"bytes_out":([0-9]+).*/\1 req, \2 B/'; }

printf '\n%-7s %-10s %9s %9s %10s   %s\n' query table "cold ms" "warm ms" value "requests: cold run / warm run"
for lat in 0 "$LAT"; do
	admin "mode?latency_ms=$lat" >/dev/null
	echo "-- server latency ${lat} ms per request"
	for q in "${ORDER[@]}"; do
		for tbl in t_disk t_s3; do
			[ "$tbl" = t_disk ] && [ "$lat" != 0 ] && continue
			sql=${Q[$q]//TBL/$tbl}
			read -r cold warm value < <(time_query "$sql")
			st=""
			[ "$tbl" = t_s3 ] && st="$(count_requests_cold "$sql" | brief) / $(count_requests "$sql" | brief)"
			printf '%-7s %-10s %9s %9s %10s   %s\n' "$q" "$tbl" "$cold" "$warm" "$value" "$st"
		done
	done
	for mode in default strong; do
		echo "-- reference engine on s3://lake/bench/t.lance, $mode consistency (cold s, warm s = best of $REPEAT, value, requests)"
		NODE_OPTIONS=--openssl-legacy-provider node bench/s3/ref.mjs s3://lake/bench/t.lance "$REPEAT" "$mode" | sed 's/^/   /'
	done
done
admin "mode?latency_ms=0" >/dev/null
echo "-- reference engine on the local copy"
node bench/s3/ref.mjs "$TMP/local/t.lance" "$REPEAT" | sed 's/^/   /'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
