# bench/s3/server.sh — what the S3 benchmarks share (sourced from the checkout's root, with TMP set): a throwaway
# cluster (test/pg/cluster.sh) and the test S3 server (test/s3/server.mjs) on loopback, both stopped and TMP removed
# at exit; LT_S3_ENDPOINT and the credentials exported; admin PATH asks the server's admin API (stats, reset-stats,
# mode?latency_ms=N).
SERVER_PID=
. test/pg/cluster.sh
lt_bench_s3_cleanup() {
	lt_cluster_stop
	if [ -n "$SERVER_PID" ]; then exec 9>&-; sleep 0.5; kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
	rm -rf "$TMP"
}
trap lt_bench_s3_cleanup EXIT

mkfifo "$TMP/ctl"
NODE_OPTIONS=--openssl-legacy-provider node test/s3/server.mjs "$TMP/objects" lake <"$TMP/ctl" >"$TMP/port" 2>"$TMP/server.log" &
SERVER_PID=$!
exec 9>"$TMP/ctl"
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT=$(sed -nE 's/.*"port": *([0-9]+).*/\1/p' "$TMP/port")
export LT_S3_ENDPOINT=http://127.0.0.1:$PORT AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
admin() { curl -s "$LT_S3_ENDPOINT/__admin/$1"; }
