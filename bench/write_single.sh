#!/usr/bin/env bash
# bench/write_single.sh — only the single-row part of bench/write.sh, quicker to repeat: N one-row INSERT
# transactions (one psql session, each its own Lance commit) into an lt_fdw table on a dataset the reference
# engine made, and into a heap table; prints the total and the mean per commit of the first and the last 100
# (whether a commit gets slower as versions pile up), and the backend's CPU time per statement, user and system
# (which, unlike the wall time, does not wait for the disk: fsync times vary a lot on a shared machine; the
# system time is the kernel's file work: creating files, writing them back). The test cluster runs with
# fsync = off, and lt_fdw follows the server's fsync setting, so the first two rows flush nothing; the "sync"
# rows run again after fsync and synchronous_commit are turned on (a reload): lt_fdw's 4 fsyncs per commit
# (into a second dataset of one row, so both runs start equal) against the heap's one WAL flush.
# Not a test: nothing is asserted.
#
#   bench/write_single.sh [N]          default 1000
#   CALLGRIND=1 bench/write_single.sh [N]
#                                      instead count instructions per commit (valgrind's callgrind, one single-user
#                                      backend, --dump-before=pg_parse_query so that each statement is a part of its
#                                      own): N single-row INSERTs (default 20) into tables of 100, 1,000 and 10,000
#                                      fragments (FRAGS="100 1000 10000") and into a heap table, after as many warm-up
#                                      INSERTs; prints the median per commit, the ratio to the heap and the growth
#                                      from the first size (issue 20: <= 10x the heap at 100, flat within 25%)
#   GROW=1 CALLGRIND=1 bench/write_single.sh [N]
#                                      also a one-row table with Lance's auto-cleanup in its config (interval 20,
#                                      retain_versions 20) and auto_compact '8', as bench/rowaccess.sh's growth run:
#                                      its median and its mean per commit (the cleanup and the compaction come
#                                      every 20 and every 8 commits: the mean carries them); use N >= 40
#   STRACE=1 bench/write_single.sh     instead count the backend's fsync / fdatasync / sync_file_range / getdents / stat /
#                                      open / mkdir / link / rename calls, with the wall time they took (strace -w),
#                                      with fsync and synchronous_commit on (lt_fdw syncs nothing under fsync = off);
#                                      then the order of the calls of one more commit (build/bench/commit.strace)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
N=${1:-1000}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
. "$ROOT/test/pg/cluster.sh"
TMP=$(mktemp -d /tmp/lt_bench_single.XXXXXX)
trap 'lt_cluster_stop; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
lt_pg_install "$ROOT" "$TMP/install.log" || exit 1
mkdir -p "$TMP/pg" "$TMP/lake"
chmod 0777 "$TMP" "$TMP/lake"
cat >"$TMP/spec.json" <<'JSON'
{"storage": "2.1", "schema": [{"name": "id", "type": "int64", "gen": "seq"}, {"name": "s", "type": "utf8", "gen": {"card": 10}}],
 "generate": {"n": 1}}
JSON
node test/interop/ref.mjs make "$TMP/lake/t.lance" "$TMP/spec.json" >/dev/null
cp -R "$TMP/lake/t.lance" "$TMP/lake/t2.lance"
chown -R "$LT_PG_OSUSER" "$TMP/lake" 2>/dev/null || true
lt_cluster_create "$TMP/pg"
lt_cluster_start
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
"${PSQL[@]}" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$TMP/lake');
CREATE FOREIGN TABLE lts (id bigint, s text) SERVER lake OPTIONS (path 't.lance');
CREATE FOREIGN TABLE lts2 (id bigint, s text) SERVER lake OPTIONS (path 't2.lance');
CREATE TABLE heap (id bigint, s text);
SQL
{
	echo "SELECT pg_backend_pid() AS pid \\gset"
	echo "\\setenv BPID :pid"
	echo "\\! awk '{print \$14, \$15}' /proc/\$BPID/stat >$TMP/cpu0.TBL"
	echo "\\timing on"
	echo "SELECT 'START';"
	for i in $(seq 1 "$N"); do echo "INSERT INTO TBL VALUES ($i, 'one row per transaction');"; done
	echo "\\timing off"
	echo "\\! awk '{print \$14, \$15}' /proc/\$BPID/stat >$TMP/cpu1.TBL"
} >"$TMP/single.sql"
# the backend's CPU time per statement in ms, user and system (clock ticks of 10 ms)
cpu_ms() { paste "$TMP/cpu0.$1" "$TMP/cpu1.$1" | awk -v n="$N" '{ printf "%7.3f %7.3f", ($3 - $1) * 10 / n, ($4 - $2) * 10 / n }'; }
# the per-statement times after the marker: total, mean of the first 100, mean of the last 100
stats() { awk '/^Time:/ { if (started) t[n++] = $2; started = 1 }
	END { for (i = 0; i < n; i++) { s += t[i]; if (i < 100) f += t[i]; if (i >= n - 100) l += t[i] }
	      printf "%.1f %.3f %.3f\n", s, f / (n < 100 ? n : 100), l / (n < 100 ? n : 100) }'; }
if [ "${CALLGRIND:-}" = 1 ]; then
	# tables of F fragments: one INSERT ... SELECT with max_rows_per_file 1 writes F one-row fragments at once
	FRAGS=${FRAGS:-100 1000 10000}
	N=${1:-20}
	for f in $FRAGS; do
		"${PSQL[@]}" -c "CREATE FOREIGN TABLE lt$f (id bigint, s text) SERVER lake OPTIONS (path 'f$f.lance', max_rows_per_file '1')" \
			-c "SELECT lt_create_dataset('lt$f')" >/dev/null
		"${PSQL[@]}" -c "INSERT INTO lt$f SELECT g, 'fragment' FROM generate_series(1, $f) g" >/dev/null
	done
	TABLES="heap $(for f in $FRAGS; do printf 'lt%s ' "$f"; done)"
	if [ "${GROW:-}" = 1 ]; then
		cp -R "$TMP/lake/t2.lance" "$TMP/lake/grow.lance"
		build/lt-inspect set-config "$TMP/lake/grow.lance" lance.auto_cleanup.interval 20 >/dev/null
		build/lt-inspect set-config "$TMP/lake/grow.lance" lance.auto_cleanup.retain_versions 20 >/dev/null
		chown -R "$LT_PG_OSUSER" "$TMP/lake/grow.lance" 2>/dev/null || true
		"${PSQL[@]}" -c "CREATE FOREIGN TABLE ltgrow (id bigint, s text) SERVER lake OPTIONS (path 'grow.lance', auto_compact '8')"
		TABLES="$TABLES ltgrow"
	fi
	"${PSQL[@]}" -c CHECKPOINT >/dev/null
	lt_cluster_stop
	for t in $TABLES; do
		for i in $(seq 1 $((2 * N))); do echo "INSERT INTO $t VALUES ($i, 'one row per transaction');"; done
	done >"$TMP/cg.sql"
	echo "SELECT 1;" >>"$TMP/cg.sql"	# the last INSERT's part is dumped before this statement
	chmod a+r "$TMP/cg.sql"
	mkdir -p "$TMP/cg" && chown "$LT_PG_OSUSER" "$TMP/cg" 2>/dev/null || true
	echo "callgrind: one single-user backend, $((2 * N)) INSERTs into each of: $TABLES ..." >&2
	lt_as_pg valgrind --tool=callgrind --dump-before=pg_parse_query --callgrind-out-file="$TMP/cg/cg.out" \
		"$LT_PGBIN/postgres" --single -D "$LT_PGDATA" postgres <"$TMP/cg.sql" >"$TMP/single.log" 2>&1 || true
	grep -q ERROR "$TMP/single.log" && { echo "the single-user backend failed:" >&2; grep ERROR "$TMP/single.log" | head -3 >&2; exit 1; }
	# statement s of the file is part s + 1 (part 1: startup); the median of each table's last N parts
	median() { for k in $(seq "$1" "$2"); do awk '/^(summary|totals):/ { print $2; exit }' "$TMP/cg/cg.out.$k"; done |
		sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
	mean() { for k in $(seq "$1" "$2"); do awk '/^(summary|totals):/ { print $2; exit }' "$TMP/cg/cg.out.$k"; done |
		awk '{ s += $1 } END { printf "%d", (NR ? s / NR : 0) }'; }
	s=0
	echo "bench/write_single.sh: instructions per single-row INSERT commit (callgrind, median of $N after $N warm-up)"
	printf '%-10s %10s %12s %10s %10s\n' table fragments instructions "x heap" "x first"
	for t in $TABLES; do
		v=$(median $((s + N + 2)) $((s + 2 * N + 1)))
		[ -n "${KEEP:-}" ] && cp "$TMP/cg/cg.out.$((s + 2 * N + 1))" "$ROOT/build/callgrind.commit.$t"
		[ "$t" = ltgrow ] && { m=$(mean $((s + N + 2)) $((s + 2 * N + 1)))
			echo "ltgrow (auto-cleanup interval 20, auto_compact 8): median $v, mean $m per commit"; }
		[ "$t" = heap ] && heap=$v
		[ "$t" != heap ] && [ -z "${first:-}" ] && first=$v
		awk -v t="$t" -v v="$v" -v h="$heap" -v f="${first:-}" 'BEGIN {
			fr = (t == "heap") ? "-" : substr(t, 3)
			printf "%-10s %10s %12d %10.2f %10s\n", t, fr, v, v / h, (f == "" ? "-" : sprintf("%.2f", v / f)) }'
		s=$((s + 2 * N))
	done
	exit 0
fi
if [ "${STRACE:-}" = 1 ]; then
	# one backend under strace for the whole run: syscall counts of the lt_fdw table's N commits
	"${PSQL[@]}" -c "ALTER SYSTEM SET fsync = on" -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 0.5
	{ echo "SELECT pg_backend_pid();"; echo "\\! sleep 1"; sed "s/TBL/lts/" "$TMP/single.sql"; } |
		"${PSQL[@]}" -At -f - >"$TMP/strace.out" &
	PSQLPID=$!
	sleep 0.5
	PID=$(head -n 1 "$TMP/strace.out")
	strace -c -w -f -p "$PID" -e trace=fsync,fdatasync,sync_file_range,getdents64,newfstatat,stat,statx,openat,mkdir,link,rename,unlink -o "$TMP/strace.txt" &
	SPID=$!
	wait "$PSQLPID"
	sleep 0.5; kill -INT "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true
	cat "$TMP/strace.txt"
	# the order of one commit's calls (after a warm-up INSERT in the same session)
	{ echo "SELECT pg_backend_pid();"; echo "INSERT INTO lts VALUES (0, 'warm');"; echo "\\! sleep 3";
	  echo "INSERT INTO lts VALUES (-1, 'traced');"; echo "\\! sleep 0.5"; } | "${PSQL[@]}" -At -f - >"$TMP/strace1.out" &
	PSQLPID=$!
	sleep 1
	PID=$(head -n 1 "$TMP/strace1.out")
	sleep 0.5
	strace -tt -y -f -p "$PID" -e trace=fsync,fdatasync,openat,linkat,link,renameat,rename,renameat2,unlink,pwrite64,write,writev,pwritev -o "$TMP/commit.strace" &
	SPID=$!
	wait "$PSQLPID"
	kill -INT "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true
	mkdir -p "$ROOT/build/bench" && cp "$TMP/commit.strace" "$ROOT/build/bench/commit.strace"
	echo "one commit's calls (build/bench/commit.strace): $(grep -cE 'fsync|fdatasync' "$TMP/commit.strace") fsync/fdatasync"
	grep -E 'fsync|fdatasync|link|rename' "$TMP/commit.strace" || true
	exit 0
fi
read -r lt_total lt_first lt_last < <(sed "s/TBL/lts/" "$TMP/single.sql" | "${PSQL[@]}" -f - | stats)
read -r heap_total heap_first heap_last < <(sed "s/TBL/heap/" "$TMP/single.sql" | "${PSQL[@]}" -f - | stats)
cp "$TMP/cpu0.heap" "$TMP/cpu0.heap_nosync"; cp "$TMP/cpu1.heap" "$TMP/cpu1.heap_nosync"
"${PSQL[@]}" -c "ALTER SYSTEM SET fsync = on" -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
sleep 0.5
read -r sync_total sync_first sync_last < <(sed "s/TBL/heap/" "$TMP/single.sql" | "${PSQL[@]}" -f - | stats)
read -r ltsync_total ltsync_first ltsync_last < <(sed "s/TBL/lts2/" "$TMP/single.sql" | "${PSQL[@]}" -f - | stats)
rows=$("${PSQL[@]}" -At -c "SELECT count(*) FROM lts")
versions=$(ls "$TMP/lake/t.lance/_versions" | grep -c '\.manifest$')
echo "bench/write_single.sh: $N one-row INSERT transactions; load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
printf '%-9s %10s %14s %14s %16s\n' table "total ms" "first 100 ms" "last 100 ms" "CPU ms/stmt u  s"
printf '%-9s %10s %14s %14s %16s   %s\n' lt_fdw "$lt_total" "$lt_first" "$lt_last" "$(cpu_ms lts)" "(fsync off; $rows rows, $versions versions)"
printf '%-9s %10s %14s %14s %16s   %s\n' heap "$heap_total" "$heap_first" "$heap_last" "$(cpu_ms heap_nosync)" "(fsync off)"
printf '%-9s %10s %14s %14s %16s   %s\n' "heap sync" "$sync_total" "$sync_first" "$sync_last" "$(cpu_ms heap)" "(fsync, synchronous_commit on)"
printf '%-9s %10s %14s %14s %16s   %s\n' "lt_fdw sync" "$ltsync_total" "$ltsync_first" "$ltsync_last" "$(cpu_ms lts2)" "(fsync on: 4 fsyncs per commit)"
