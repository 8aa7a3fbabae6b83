#!/usr/bin/env bash
# bench/vector_shared.sh [DIR] — two backends, each cold, with the vector index cache shared between backends
# (lt_fdw.vector_shared_cache_dir) and without it (lt_fdw.vector_shared_cache_size = 0): the CPU time of each
# backend's first indexed query, of a warm one, and each backend's RSS / PSS after its first query while the
# other is still connected.
#
# DIR: a dataset directory of bench/vector.sh (default /tmp/vbench-1m: vec.lance, 1M x 128-d with the engine's
# IVF_PQ, 256 partitions x 16 sub-vectors; LT_VSH_PATH=vec_hnsw.lance: its IVF_HNSW_SQ); it is only read. LT_VSH_NPROBES (default "20 256": 256 probes every
# partition, the whole index decoded). CPU time: /proc/<pid>/schedstat of the backend (ns on a CPU), so the
# figures hold on a loaded machine; memory: /proc/<pid>/smaps_rollup. Then 16 clients (pgbench -c 16 -j 2, nprobes
# 20, 200 random query vectors, LT_VSH_SECONDS each, default 10) on connections kept and on a new connection per
# query (-C), with and without the shared cache: queries per second and the backends' CPU per query (the
# postmaster's reaped children's user + system ticks).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DIR=${1:-/tmp/vbench-1m}
NPROBES=${LT_VSH_NPROBES:-20 256}
[ -d "$DIR/vec.lance" ] || { echo "bench/vector_shared.sh: no $DIR/vec.lance (run bench/vector.sh first)" >&2; exit 2; }
. test/pg/cluster.sh
lt_pg_install "$ROOT" build/pg-install.log
TMP=$(mktemp -d /tmp/lt_vsh.XXXXXX)
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
lt_cluster_create "$TMP"
lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
"${PSQL[@]}" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$DIR');
CREATE FOREIGN TABLE lt (id bigint, cat integer, vec real[], note text) SERVER lake OPTIONS (path '${LT_VSH_PATH:-vec.lance}');
-- this backend's CPU time (ns), and a process's memory (kB)
CREATE FUNCTION cpu_ns() RETURNS bigint LANGUAGE sql AS
  \$\$SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint\$\$;
CREATE FUNCTION mem_kb(pid int, what text) RETURNS bigint LANGUAGE sql AS
  \$\$SELECT (regexp_match(pg_read_file('/proc/' || pid || '/smaps_rollup'), what || ':\s+(\d+) kB'))[1]::bigint\$\$;
SELECT setseed(0.25);
CREATE TABLE qv AS SELECT i, array_agg(random()::real) AS q FROM generate_series(1, 200) i, generate_series(1, 128) d GROUP BY i;
SQL

# one backend: its first query (q1), a warm one (q1 again), then hold the connection for $2 seconds
backend() {	# name hold_seconds opts [the other backend's pid]
	PGOPTIONS="$3" "${PSQL[@]}" -At <<SQL >"$TMP/$1.out"
SELECT q::text AS q1 FROM qv WHERE i = 1 \gset
SELECT pg_backend_pid() AS pid \gset
SELECT 'pid ' || :pid;
SELECT cpu_ns() AS c0 \gset
SELECT count(*) FROM (SELECT id FROM lt ORDER BY vec <-> :'q1'::real[] LIMIT 10) s \gset
SELECT cpu_ns() AS c1 \gset
SELECT string_agg(id::text, ',') AS ids FROM (SELECT id FROM lt ORDER BY vec <-> :'q1'::real[] LIMIT 10) s \gset
SELECT cpu_ns() AS c2 \gset
SELECT 'first_ms ' || round((:c1 - :c0) / 1e6, 1), 'warm_ms ' || round((:c2 - :c1) / 1e6, 1);
SELECT 'ids ' || :'ids';
SELECT 'rss_kb ' || mem_kb(:pid, 'Rss'), 'pss_kb ' || mem_kb(:pid, 'Pss');
${4:+SELECT 'other_rss_kb ' || mem_kb($4, 'Rss'), 'other_pss_kb ' || mem_kb($4, 'Pss');}
SELECT 'ready';
SELECT pg_sleep($2);
SQL
}

printf '| nprobes | shared cache | backend | first query CPU ms | warm query CPU ms | RSS MB | PSS MB |\n|---|---|---|---|---|---|---|\n'
for np in $NPROBES; do
	for mode in off on; do
		shdir="$TMP/vshare-$np-$mode"
		opts="-c max_parallel_workers_per_gather=0 -c jit=off -c lt_fdw.nprobes=$np -c lt_fdw.vector_index_cache=1GB -c lt_fdw.vector_shared_cache_dir=$shdir"
		[ $mode = off ] && opts+=" -c lt_fdw.vector_shared_cache_size=0"
		backend b1 600 "$opts" &
		b1=$!
		for _ in $(seq 1 6000); do grep -q '^ready' "$TMP/b1.out" 2>/dev/null && break; sleep 0.1; done
		pid1=$(awk '/^pid / {print $2}' "$TMP/b1.out")
		# the second reads the first's memory too, while both are connected
		backend b2 0 "$opts" "$pid1"
		"${PSQL[@]}" -c "SELECT pg_terminate_backend($pid1)" >/dev/null
		wait "$b1" 2>/dev/null || true
		sed -i "s/^rss_kb .*/$(grep '^other_rss_kb' "$TMP/b2.out" | sed 's/other_//g')/" "$TMP/b1.out"
		for b in b1 b2; do
			f=$TMP/$b.out
			printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$np" "$mode" "$b" \
				"$(awk '/^first_ms/ {split($0, a, "|"); print a[1]}' "$f" | sed 's/first_ms //')" \
				"$(awk -F'|' '/^first_ms/ {print $2}' "$f" | sed 's/warm_ms //')" \
				"$(awk -F'|' '/^rss_kb/ {sub("rss_kb ", "", $1); printf "%.0f", $1 / 1024}' "$f")" \
				"$(awk -F'|' '/^rss_kb/ {sub("pss_kb ", "", $2); printf "%.0f", $2 / 1024}' "$f")"
		done
		cmp -s <(grep '^ids' "$TMP/b1.out") <(grep '^ids' "$TMP/b2.out") || echo "bench/vector_shared.sh: the two backends' answers differ (nprobes $np, shared $mode)" >&2
		[ $mode = on ] && echo "  (cache files: $(ls "$shdir" | wc -l), $(du -sm "$shdir" | cut -f1) MB)" >&2
	done
done

# --- 16 clients -----------------------------------------------------------------------------------------------
SECS=${LT_VSH_SECONDS:-10}
[ "$SECS" -gt 0 ] || exit 0
children_ticks() { awk '{print $16 + $17}' "/proc/$(head -1 "$LT_PGDATA/postmaster.pid")/stat"; }
printf '%s\n' '\set qid random(1, 200)' "SELECT id FROM lt ORDER BY vec <-> (SELECT q FROM qv WHERE i = :qid) LIMIT 10;" >"$TMP/pgb.sql"
printf '\n| 16 clients, nprobes 20 | shared cache | qps | queries | backends CPU ms per query |\n|---|---|---|---|---|\n'
for conn in kept new; do
	for mode in off on; do
		opts="-c max_parallel_workers_per_gather=0 -c jit=off -c lt_fdw.nprobes=20 -c lt_fdw.vector_index_cache=1GB -c lt_fdw.vector_shared_cache_dir=$TMP/vshare-pgb-$conn-$mode"
		[ $mode = off ] && opts+=" -c lt_fdw.vector_shared_cache_size=0"
		flag=""; [ $conn = new ] && flag=-C
		c0=$(children_ticks)
		PGOPTIONS="$opts" "$LT_PGBIN/pgbench" -n $flag -c 16 -j 2 -T "$SECS" -f "$TMP/pgb.sql" postgres >"$TMP/pgb.out" 2>&1
		sleep 1
		c1=$(children_ticks)
		n=$(awk '/transactions actually processed/ {print $NF}' "$TMP/pgb.out" | cut -d/ -f1)
		printf '| connections %s | %s | %s | %s | %s |\n' "$conn" "$mode" "$(awk '/^tps/ {printf "%.1f", $3; exit}' "$TMP/pgb.out")" "$n" \
			"$(awk -v t=$((c1 - c0)) -v n="$n" 'BEGIN {printf "%.1f", n ? t * 10 / n : 0}')"
	done
done
