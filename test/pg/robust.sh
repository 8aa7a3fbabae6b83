#!/usr/bin/env bash
# test/pg/robust.sh — no hang, no unbounded wait, no misleading state (issue 15, points 6-9, 12, 14, 15).
#
# On a throwaway cluster, datasets made by the real Lance engine, then damaged or raced on:
#   fifo      a FIFO in place of a data file, a deletion file, the newest manifest, the version hint: each
#             an error naming it, within the outer timeout (an open() of a FIFO used to block for good);
#   manifest  a directory in place of the newest manifest: reads and writes fail naming it (they used to
#             read the previous version, and every write lost "20 races");
#   lock      commits of this cluster's sessions to one dataset queue on a lock: while one commit is held
#             (lt_fdw.test_commit_wait_lock), another ends with 55P03 under lock_timeout, a third with
#             57014 when cancelled, and both go through once the first commits; many writers at once all
#             commit, no row lost;
#   cancel    lt_versions and lt_cleanup (its dry run too) over many versions end with 57014 under
#             statement_timeout, lt_cleanup before removing anything
#             (with LT_ROBUST_VERSIONS versions: enough that reading them outlasts the 20 ms timeout), and a
#             btree lt_create_index over a million text values, then built in full and looked up;
#   spill     the same btree under maintenance_work_mem 1MB: sorted runs spill to temporary files (logged)
#             and merge in passes; its files are the in-memory build's bytes; no temporary file is left,
#             after a cancelled spilling build either;
#   frags     UPDATE / DELETE on a table of more than 2,048 fragments;
#   replace   DELETE + INSERT in one transaction while another session appends a row matching the DELETE:
#             40001 (a non-matching append, or a DELETE alone, commits);
#   groups    a GROUP BY of 200,000 keys under work_mem 64kB: left to PostgreSQL without statistics; with
#             statistics claiming 10 keys (pushed down) it spills to temporary files (EXPLAIN ANALYZE says
#             so) and answers, a cancel ends it and leaves no temporary file;
#   create    INSERT into a foreign table whose path holds no dataset says creating one is not supported;
#   progress  lt_compact, lt_create_dataset from a query, lt_add_column, lt_alter_column_type, a btree build and
#             lt_optimize_indexes, each held mid-way (lt_fdw.test_progress_wait_lock): a second session sees
#             its row in lt_stat_progress / pg_stat_progress_create_index, gone once it finishes;
#   perms     a file the server's OS user cannot read, a directory it cannot write: 42501 naming that OS
#             user and what it needs;
#   fds       (last: restarts the cluster with max_files_per_process = 80) point lookups in three datasets
#             of 100 two-row fragments find their rows and the backend's open descriptors stay under the
#             limit (the file caches, 32 files per dataset version, close idle files past PostgreSQL's budget).
# Every wait is bounded by an outer `timeout`; nothing asserts on time.
#
#   test/pg/robust.sh                install (private PostgreSQL copy), run
#   test/pg/robust.sh --no-install   the extension is already installed
# Environment: LT_ROBUST_VERSIONS (versions for the cancel checks, default 3000), LT_ROBUST_FRAGS
# (fragments for the frags check, default 2100), LT_ROBUST_ONLY (only these sections, e.g. "lock frags").
# Ends with "robust: N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step robust 41 "$@"
lt_step_prepare
NVERSIONS=${LT_ROBUST_VERSIONS:-3000}
NFRAGS=${LT_ROBUST_FRAGS:-2100}

lt_step_cluster "max_connections = 60"
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
ref() { lt_as_pg node "$ROOT/test/interop/ref.mjs" "$@"; }
# sql LABEL SQL: run SQL with an outer timeout; its output (errors with SQLSTATE) in $TMP/out
sql() {
	timeout -k 5 "${OUTER:-60}" "$LT_PGBIN/psql" -X -q -d postgres -v VERBOSITY=verbose -c "$2" >"$TMP/out" 2>&1
	echo $? >"$TMP/rc"
}
# expect LABEL PATTERN...: the last sql's output matches every (grep -E) pattern, and it did not time out
expect() {
	local label=$1 p; shift
	if [ "$(cat "$TMP/rc")" -ge 124 ]; then
		bad "$label: timed out (hung)"; sed 's/^/     /' "$TMP/out"; return
	fi
	for p in "$@"; do
		if ! grep -qE -- "$p" "$TMP/out"; then
			bad "$label: no /$p/ in:"; sed 's/^/     /' "$TMP/out"; return
		fi
	done
	ok "$label"
}

cat >"$TMP/spec.json" <<'JSON'
{"storage": "2.1",
 "schema": [{"name": "id", "type": "int64", "nullable": false}, {"name": "value", "type": "utf8"}],
 "generate": {"n": 100},
 "fragment_sizes": [50, 50]}
JSON
chmod a+r "$TMP/spec.json"
ref make "$LAKE/base.lance" "$TMP/spec.json" >/dev/null 2>"$TMP/make.err" || { cat "$TMP/make.err" >&2; finish "ref make failed"; }
chown -R "$LT_PG_OSUSER" "$LAKE/base.lance" 2>/dev/null
copy() { rm -rf "$LAKE/$1.lance"; cp -a "$LAKE/base.lance" "$LAKE/$1.lance"; chown -R "$LT_PG_OSUSER" "$LAKE/$1.lance" 2>/dev/null; }
"${PSQL[@]}" >"$TMP/setup.out" 2>&1 <<SQL || { cat "$TMP/setup.out"; finish "setup failed"; }
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
SQL
table() { "${PSQL[@]}" -c "CREATE FOREIGN TABLE IF NOT EXISTS $1 (id bigint, value text) SERVER lake OPTIONS (path '$1.lance')" >/dev/null; }
newest_manifest() { ls "$LAKE/$1.lance/_versions/" | grep -E '^[0-9]+\.manifest$' | LC_ALL=C sort | head -1; }
apsql() {	# NAME SQL: in the background, output in $TMP/NAME.out, exit code in $TMP/NAME.rc
	(PGAPPNAME=$1 timeout -k 5 300 "$LT_PGBIN/psql" -X -q -d postgres -v VERBOSITY=verbose -c "$2" >"$TMP/$1.out" 2>&1
	 echo $? >"$TMP/$1.rc") &
}
q() { "$LT_PGBIN/psql" -X -At -d postgres -c "$1"; }
# wait_for NAME: until session NAME waits for a lock (60 s at most); false when it never does
wait_for() {
	for _ in $(seq 600); do
		[ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$1' AND wait_event_type = 'Lock'")" = 1 ] && return 0
		[ -f "$TMP/$1.rc" ] && return 1
		sleep 0.1
	done
	return 1
}
wait_done() { for _ in $(seq 600); do [ -f "$TMP/$1.rc" ] && return 0; sleep 0.1; done; return 1; }
# want SECTION: the section runs (LT_ROBUST_ONLY unset, or naming it)
want() { [ -z "${LT_ROBUST_ONLY:-}" ] || [[ " $LT_ROBUST_ONLY " == *" $1 "* ]]; }
# a writer into FIFO $1, so that a backend blocked opening it (the old code) gets unstuck
unblock() { (timeout 5 sh -c "echo x > '$1'" 2>/dev/null &); }

# ---- fifo -------------------------------------------------------------------------------------------
if want fifo; then
OUTER=60
copy fifo_data; table fifo_data
f=$(ls "$LAKE/fifo_data.lance/data" | head -1)
rm "$LAKE/fifo_data.lance/data/$f"; mkfifo -m 0666 "$LAKE/fifo_data.lance/data/$f"
sql "fifo data file" "SELECT count(value) FROM fifo_data"
unblock "$LAKE/fifo_data.lance/data/$f"
expect "a FIFO in place of a data file: an error naming it" "$f" "FIFO"

copy fifo_del; table fifo_del
"${PSQL[@]}" -c "DELETE FROM fifo_del WHERE id = (SELECT min(id) FROM fifo_del)" >/dev/null
f=$(ls "$LAKE/fifo_del.lance/_deletions" | head -1)
rm "$LAKE/fifo_del.lance/_deletions/$f"; mkfifo -m 0666 "$LAKE/fifo_del.lance/_deletions/$f"
sql "fifo deletion file" "SELECT count(*) FROM fifo_del WHERE value IS NOT NULL"
unblock "$LAKE/fifo_del.lance/_deletions/$f"
expect "a FIFO in place of a deletion file: an error naming it" "$f" "FIFO"

copy fifo_man; table fifo_man
m=$(newest_manifest fifo_man)
rm "$LAKE/fifo_man.lance/_versions/$m"; mkfifo -m 0666 "$LAKE/fifo_man.lance/_versions/$m"
sql "fifo manifest" "SELECT count(*) FROM fifo_man"
unblock "$LAKE/fifo_man.lance/_versions/$m"
expect "a FIFO in place of the newest manifest: an error naming it (read)" "$m" "FIFO"
sql "fifo manifest" "INSERT INTO fifo_man VALUES (1000, 'x')"
unblock "$LAKE/fifo_man.lance/_versions/$m"
expect "a FIFO in place of the newest manifest: an error naming it (write)" "$m" "FIFO"

copy fifo_hint; table fifo_hint
h="$LAKE/fifo_hint.lance/_versions/latest_version_hint.json"
rm -f "$h"; mkfifo -m 0666 "$h"
sql "fifo hint" "SELECT count(*) FROM fifo_hint"
unblock "$h"
expect "a FIFO as the version hint: an error naming it" "latest_version_hint.json" "FIFO"
fi

# ---- manifest: a directory in place of the newest one -------------------------------------------------
if want manifest; then
copy dirman; table dirman
m=$(newest_manifest dirman)
rm "$LAKE/dirman.lance/_versions/$m"; mkdir "$LAKE/dirman.lance/_versions/$m"; chmod 0777 "$LAKE/dirman.lance/_versions/$m"
sql "dir manifest read" "SELECT count(*) FROM dirman"
expect "a directory in place of the newest manifest: reads fail naming it (XX001)" "XX001" "$m.*is a directory"
sql "dir manifest write" "INSERT INTO dirman VALUES (1000, 'x')"
expect "a directory in place of the newest manifest: writes fail naming it (XX001)" "XX001" "$m.*is a directory"
fi

# ---- lock: commits of the cluster's sessions to one dataset queue --------------------------------------
if want lock; then
copy locked; table locked
rm -f "$TMP"/lt_*.rc
apsql lt_hold "SELECT pg_advisory_lock(4242), pg_sleep(300)"
for _ in $(seq 100); do [ "$(q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND granted")" = 1 ] && break; sleep 0.1; done
apsql lt_a "SET lt_fdw.test_commit_wait_lock = 4242; INSERT INTO locked VALUES (1001, 'lock-a')"
if wait_for lt_a; then
	ok "lock: a commit held at its commit point (test_commit_wait_lock)"
	sql "lock_timeout" "SET lock_timeout = '200ms'; INSERT INTO locked VALUES (1002, 'lock-b')"
	expect "lock: a second commit to the dataset waits for the first, and ends with 55P03 under lock_timeout" "55P03"
	apsql lt_c "INSERT INTO locked VALUES (1003, 'lock-c')"
	if wait_for lt_c; then
		check "lock: the waiting commit shows in pg_locks (advisory, objsubid 19540)" 			"$(q "SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 19540 AND NOT granted")" t
		q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'lt_c'" >/dev/null
		wait_done lt_c
		cp "$TMP/lt_c.out" "$TMP/out"; cp "$TMP/lt_c.rc" "$TMP/rc"
		expect "lock: a waiting commit answers cancel (57014)" "57014"
	else
		bad "lock: a third commit waits for the lock"; cat "$TMP/lt_c.out"
	fi
	apsql lt_d "INSERT INTO locked VALUES (1004, 'lock-d')"
	wait_for lt_d || bad "lock: a fourth commit waits for the lock"
else
	bad "lock: a commit held at its commit point (test_commit_wait_lock)"; cat "$TMP/lt_a.out"
fi
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lt_hold'" >/dev/null
wait_done lt_a; wait_done lt_d
check "lock: the held commit and the one queued behind it commit once it is released" \
	"$(cat "$TMP/lt_a.rc" "$TMP/lt_d.rc" 2>/dev/null | tr '\n' ' ')$(q "SELECT string_agg(value, ',' ORDER BY value) FROM locked WHERE value LIKE 'lock-%'")" "0 0 lock-a,lock-d"

copy writers; table writers
W=16 N=10
for w in $(seq $W); do
	(ok_n=0
	 for i in $(seq $N); do
		"$LT_PGBIN/psql" -X -q -d postgres -c "INSERT INTO writers VALUES ($((10000 + w * 100 + i)), 'writer')" 2>>"$TMP/writers.err" && ok_n=$((ok_n + 1))
	 done
	 echo "$ok_n" >"$TMP/writer.$w") &
done
wait
total=0; for w in $(seq $W); do total=$((total + $(cat "$TMP/writer.$w" 2>/dev/null || echo 0))); done
check "lock: $W sessions committing $N single-row INSERTs each at once: every one commits" "$total" "$((W * N))"
check "lock: ... and every row is there" "$(q "SELECT count(*) FROM writers WHERE value = 'writer'")" "$((W * N))"
[ -s "$TMP/writers.err" ] && sed 's/^/     /' "$TMP/writers.err" | head -5
fi

# ---- cancel: long loops answer statement_timeout ------------------------------------------------------
if want cancel; then
copy many; table many
OUTER=900 sql "many versions" "DO \$\$ BEGIN FOR i IN 1..$((NVERSIONS / 2)) LOOP
  INSERT INTO many VALUES (-i, 'v'); COMMIT; DELETE FROM many WHERE id = -i; COMMIT; END LOOP; END \$\$"
[ "$(cat "$TMP/rc")" = 0 ] || { cat "$TMP/out"; bad "cancel: $NVERSIONS versions made"; }
nman() { ls "$LAKE/many.lance/_versions" | grep -c '\.manifest$'; }
before=$(nman)
warm="SELECT count(*) FROM lt_fragments('many'); SET statement_timeout = '20ms';"
# lt_versions reads a manifest header per version: on an idle machine 3,000 of them can take under 20 ms
sql "versions" "SELECT count(*) FROM lt_fragments('many'); SET statement_timeout = '1ms'; SELECT count(*) FROM lt_versions('many')"
expect "cancel: lt_versions over $before versions ends with 57014 under statement_timeout" "57014"
sql "cleanup dry" "$warm SELECT files_removed FROM lt_cleanup('many', '0 seconds', dry_run => true)"
expect "cancel: lt_cleanup's dry run over $before versions ends with 57014 under statement_timeout" "57014"
sql "cleanup" "$warm SELECT files_removed FROM lt_cleanup('many', '0 seconds')"
expect "cancel: lt_cleanup over $before versions ends with 57014 under statement_timeout" "57014"
check "cancel: ... before it removed anything (it stops while reading the manifests)" "$(nman)" "$before"
sql "cleanup" "SELECT old_versions FROM lt_cleanup('many', '0 seconds', dry_run => true)"
check "cancel: then a dry run lists the $((before - 1)) old versions" "$(grep -Eo '^ *[0-9]+$' "$TMP/out" | tr -d ' ')" "$((before - 1))"
check "cancel: ... and removes nothing" "$(nman)" "$before"

copy sortme; table sortme
OUTER=600 sql "sort rows" "INSERT INTO sortme SELECT g, md5(g::text) || md5((g * 7)::text) FROM generate_series(1, 1000000) g"
[ "$(cat "$TMP/rc")" = 0 ] || { cat "$TMP/out"; bad "cancel: a million text rows written"; }
sql "btree" "SET maintenance_work_mem = '1GB'; SET statement_timeout = '200ms'; SELECT rows_indexed FROM lt_create_index('sortme', 'value', 'btree')"
expect "cancel: a btree lt_create_index over a million text values ends with 57014 under statement_timeout" "57014"
# the same build, not cancelled: its sort (runs merged) gives the index the rows a scan gives
OUTER=600 sql "btree build" "SET maintenance_work_mem = '1GB'; SELECT rows_indexed FROM lt_create_index('sortme', 'value', 'btree')"
expect "cancel: ... then built without a timeout" "1000100"
pick="SELECT value FROM sortme WHERE id IN (7, 65537, 500000, 999999)"
check "cancel: ... and lookups through it find what a scan finds" \
	"$(q "SELECT count(*) FROM sortme WHERE value = ANY (ARRAY($pick))" 2>&1)|$(q "SET lt_fdw.enable_index_scan = off; SELECT count(*) FROM sortme WHERE value = ANY (ARRAY($pick))" 2>&1 | tail -1)" "4|4"
check "cancel: ... a range through the index" \
	"$(q "SELECT count(*) FROM sortme WHERE value >= 'f' AND value < 'f1'" 2>&1)" \
	"$(q "SET lt_fdw.enable_index_scan = off; SELECT count(*) FROM sortme WHERE value >= 'f' AND value < 'f1'" 2>&1 | tail -1)"
fi

# ---- spill: an index build past maintenance_work_mem sorts externally -------------------------------------
if want spill && want cancel; then
tmplogs() { grep -c 'LOG:  temporary file: ' "$LT_PGLOG"; }
logs0=$(tmplogs)
OUTER=600 sql "spilled build" "SET maintenance_work_mem = '1MB'; SET log_temp_files = 0; SELECT rows_indexed FROM lt_create_index('sortme', 'value', 'btree', 'value_spilled')"
expect "spill: the btree over a million text values built again under maintenance_work_mem 1MB" "1000100"
logs1=$(tmplogs)
check "spill: ... its sorted runs went to temporary files (log_temp_files logged more than 100)" "$((logs1 - logs0 > 100))" 1
# "name uuid" of each index segment
segs() { "$ROOT/build/lt-inspect" index "$LAKE/sortme.lance" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n").filter(Boolean)){const o=JSON.parse(l);for(const g of o.segments)console.log(o.name+" "+g.uuid)}})'; }
u1=$(segs | awk '$1 == "value_idx" {print $2}') u2=$(segs | awk '$1 == "value_spilled" {print $2}')
same=0
if [ -n "$u1" ] && [ -n "$u2" ] && [ "$(ls "$LAKE/sortme.lance/_indices/$u1")" = "$(ls "$LAKE/sortme.lance/_indices/$u2")" ]; then
	same=1
	for f in $(ls "$LAKE/sortme.lance/_indices/$u1"); do
		cmp -s "$LAKE/sortme.lance/_indices/$u1/$f" "$LAKE/sortme.lance/_indices/$u2/$f" || same=0
	done
fi
check "spill: ... its files are the in-memory build's, byte for byte ($(ls "$LAKE/sortme.lance/_indices/$u1" 2>/dev/null | paste -sd' '))" "$same" 1
check "spill: ... and it left no temporary file" "$(q "SELECT count(*) FROM pg_ls_tmpdir()")" 0
sql "spill cancel" "SET maintenance_work_mem = '1MB'; SET statement_timeout = '1s'; SELECT rows_indexed FROM lt_create_index('sortme', 'value', 'btree', 'value_cancel')"
expect "spill: a spilling build ends with 57014 under statement_timeout" "57014"
check "spill: ... and leaves no temporary file" "$(q "SELECT count(*) FROM pg_ls_tmpdir()")" 0
fi

# ---- frags: UPDATE / DELETE past 2,048 fragments -------------------------------------------------------
if want frags; then
copy frags
"${PSQL[@]}" -c "CREATE FOREIGN TABLE frags (id bigint, value text) SERVER lake OPTIONS (path 'frags.lance', max_rows_per_file '1')" >/dev/null
OUTER=600 sql "frags" "INSERT INTO frags SELECT 1000000000 + g, 'f' FROM generate_series(1, $NFRAGS) g"
check "frags: $NFRAGS one-row fragments appended" "$(q "SELECT count(*) FROM lt_fragments('frags')")" "$((NFRAGS + 2))"
check "frags: DELETE of a row in fragment $((NFRAGS + 2)) (past 2,048)" \
	"$(q "DELETE FROM frags WHERE id = 1000000000 + $NFRAGS RETURNING id - 1000000000" 2>&1 | grep -v '^DELETE')" "$NFRAGS"
check "frags: UPDATE of rows in fragments 3 and $((NFRAGS + 1))" \
	"$(q "UPDATE frags SET value = 'updated' WHERE id IN (1000000001, 1000000000 + $((NFRAGS - 1))) RETURNING id - 1000000000" 2>&1 | grep -v '^UPDATE' | sort -n | tr '\n' ' ')" "1 $((NFRAGS - 1)) "
check "frags: ... the rows read back" "$(q "SELECT count(*) || ' ' || count(*) FILTER (WHERE value = 'updated') FROM frags WHERE value IN ('f', 'updated')")" "$((NFRAGS - 1)) 2"
fi

# ---- replace: the DELETE+INSERT spelling has the concurrent-append check ------------------------------
if want replace; then
copy repl; table repl
# race TAG A_STATEMENTS B_VALUE: A deletes and writes in a transaction, B appends a row with value B_VALUE
# meanwhile (psql's \! runs B in another session while A's transaction is open), then A commits
race() {
	timeout -k 5 120 "$LT_PGBIN/psql" -X -q -d postgres -v VERBOSITY=verbose >"$TMP/out" 2>&1 <<SQL
BEGIN;
$2
\! "$LT_PGBIN/psql" -X -q -d postgres -c "INSERT INTO repl VALUES (-$RANDOM, '$3')"
COMMIT;
SQL
	echo $? >"$TMP/rc"
}
race r1 "DELETE FROM repl WHERE value = 'day1'; INSERT INTO repl VALUES (-1, 'day1');" day1
expect "replace: DELETE + INSERT while another session appends a matching row: 40001 naming the predicate" \
	"40001" "value = 'day1'"
check "replace: ... and the appended row is there, not the replace's" "$(q "SELECT count(*) || ' ' || count(*) FILTER (WHERE id = -1) FROM repl WHERE value = 'day1'")" "1 0"
race r2 "DELETE FROM repl WHERE value = 'day2'; INSERT INTO repl VALUES (-2, 'day2');" other
check "replace: ... a concurrent row that does not match: the replace commits" "$(cat "$TMP/rc" "$TMP/out")" 0
check "replace: ... its row replaced the day" "$(q "SELECT string_agg(id::text, ',') FROM repl WHERE value = 'day2'")" "-2"
race r3 "DELETE FROM repl WHERE value = 'day1';" day1
check "replace: a DELETE alone is no replace: it commits beside a concurrent matching append" "$(cat "$TMP/rc" "$TMP/out")" 0
fi

# ---- groups: a pushed-down GROUP BY stays within hash_mem -------------------------------------------
if want groups; then
copy groups; table groups
OUTER=600 sql "groups rows" "INSERT INTO groups SELECT g, 'g' FROM generate_series(1, 200000) g"
gq="SET work_mem = '64kB'; SET max_parallel_workers_per_gather = 0;"
sql "groups plan" "$gq EXPLAIN (COSTS OFF) SELECT id, count(*) FROM groups GROUP BY id"
expect "groups: 200,000 keys, no statistics, work_mem 64kB: the GROUP BY is left to PostgreSQL's aggregation" \
	"(HashAggregate|GroupAggregate)"
check "groups: ... which answers it" \
	"$(q "$gq SELECT count(*) || ' ' || sum(n) FROM (SELECT id, count(*) AS n FROM groups GROUP BY id) s" 2>&1 | tail -1)" "200100 200100"
q "ALTER FOREIGN TABLE groups ALTER COLUMN id SET (n_distinct = 10)" >/dev/null
q "ANALYZE groups" >/dev/null
sql "groups stale" "$gq SELECT count(*) || ' ' || sum(n) FROM (SELECT id, count(*) AS n FROM groups GROUP BY id) s"
expect "groups: statistics claiming 10 keys (pushed down): spilled once the groups outgrow hash_mem, and answered" \
	"200100 200100"
sql "groups spilled" "$gq EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id, count(*) FROM groups GROUP BY id"
expect "groups: ... EXPLAIN ANALYZE of the pushed-down aggregate says what it spilled" \
	"Lance Aggregate" "Rows Spilled: [1-9]" "Disk Usage: [1-9][0-9]* kB"
sql "groups cancel" "$gq SET statement_timeout = '20ms'; SELECT count(*) FROM (SELECT id, count(*) FROM groups GROUP BY id) s"
expect "groups: ... a spilling aggregate ends with 57014 under statement_timeout" "57014"
check "groups: ... and leaves no temporary file" "$(q "SELECT count(*) FROM pg_ls_tmpdir()")" 0
fi

# ---- create: INSERT where there is no dataset ---------------------------------------------------------
if want create; then
"${PSQL[@]}" -c "CREATE FOREIGN TABLE newtab (id bigint, value text) SERVER lake OPTIONS (path 'new.lance')" >/dev/null
sql "create" "INSERT INTO newtab VALUES (1, 'x')"
expect "INSERT into a path without a dataset: says creating one from SQL is not supported yet" \
	"58P01" "no Lance dataset at" "Creating a dataset from SQL is not supported yet"
fi

# ---- perms: a file the server cannot read ------------------------------------------------------------
if want perms; then
if [ "$(id -u)" -eq 0 ] || [ "$LT_PG_OSUSER" = "$(id -un)" ]; then
	copy perms; table perms
	f=$(ls "$LAKE/perms.lance/data" | head -1)
	chmod 000 "$LAKE/perms.lance/data/$f"
	if lt_as_pg test -r "$LAKE/perms.lance/data/$f"; then
		echo "skip perms: the server's OS user reads a mode 000 file (not counted)"
	else
		sql "perms read" "SELECT count(value) FROM perms"
		expect "an unreadable data file: 42501 naming the OS user and that it needs read access" \
			"42501" "$f" "OS user \"$LT_PG_OSUSER\"" "needs read access"
	fi
	chmod 0555 "$LAKE/perms.lance/data"
	sql "perms write" "INSERT INTO perms VALUES (1000, 'x')"
	expect "a data directory the server cannot write: 42501 naming the OS user and that it needs write and create" \
		"42501" "OS user \"$LT_PG_OSUSER\"" "needs write and create access"
	chmod 0755 "$LAKE/perms.lance/data"
fi
fi

# ---- progress: long work is visible to a second session while it runs --------------------------------
# Each operation runs with lt_fdw.test_progress_wait_lock: after its first reported step it waits for an
# advisory lock another session holds, so the progress row is read while the work is held mid-way (no
# timing); then the lock is released and the work must finish and its row go away.
if want progress; then
copy prog; table prog
copy prog2; table prog2
for i in 1 2 3 4 5; do q "INSERT INTO prog VALUES ($((2000 + i)), 'p')" >/dev/null; done
# held NAME SQL VIEW-QUERY: SQL runs held; the VIEW-QUERY's answer (for session NAME) once it shows a row
held() {
	local name=$1 sql=$2 view=$3 got=""
	rm -f "$TMP/$name.rc" "$TMP/lt_phold.rc"
	apsql lt_phold "SELECT pg_advisory_lock(4343), pg_sleep(300)"
	for _ in $(seq 100); do [ "$(q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4343 AND granted")" = 1 ] && break; sleep 0.1; done
	apsql "$name" "SET lt_fdw.test_progress_wait_lock = 4343; $sql"
	for _ in $(seq 600); do
		# held: waiting at the pause (wait event Extension), so the row no longer moves: the same answer twice,
		# 0.2 s apart (a passing moment in another wait of class Extension is not the pause)
		got=$(q "SELECT ($view) FROM pg_stat_activity a WHERE a.application_name = '$name' AND a.wait_event = 'Extension'")
		[ -f "$TMP/$name.rc" ] && break
		if [ -n "$got" ]; then
			sleep 0.2
			[ "$(q "SELECT ($view) FROM pg_stat_activity a WHERE a.application_name = '$name' AND a.wait_event = 'Extension'")" = "$got" ] && break
		fi
		sleep 0.1
	done
	HELD=$got
	q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lt_phold'" >/dev/null
	wait_done "$name"
	HELD_RC=$(cat "$TMP/$name.rc" 2>/dev/null)
	[ "$HELD_RC" = 0 ] || sed 's/^/     /' "$TMP/$name.out"
	GONE=$(q "SELECT count(*) FROM lt_stat_progress p JOIN pg_stat_activity a USING (pid) WHERE a.application_name = '$name'")
}
lt_row="SELECT p.operation || '|' || p.phase || '|' || coalesce(p.fragments_total::text, '-') || '|' || coalesce(p.rows_total::text, '-')
	|| '|' || (p.fragments_done BETWEEN 0 AND coalesce(p.fragments_total, p.fragments_done))
	|| '|' || (p.rows_done BETWEEN 1 AND coalesce(p.rows_total, p.rows_done)) || '|' || (c.tuples_processed = p.rows_done)
	|| '|' || p.rows_done || '|' || p.fragments_done
	FROM lt_stat_progress p JOIN pg_stat_progress_copy c USING (pid) WHERE p.pid = a.pid"
plan=$(q "SELECT fragments_to_compact || '|' || live_rows FROM lt_table_stats('prog')")
held lt_pc "SELECT fragments_removed FROM lt_compact('prog')" "$lt_row"
check "progress: lt_compact shows in lt_stat_progress while held (fragments and rows of the plan, COPY's rows counter)" \
	"$(cut -d'|' -f1-7 <<<"$HELD")" "compact|writing data files|${plan%|*}|${plan#*|}|true|true|true"
check "progress: ... then finishes, and its row is gone" "$HELD_RC|$GONE|$(q "SELECT fragments FROM lt_table_stats('prog')")" "0|0|1"

"${PSQL[@]}" -c "CREATE FOREIGN TABLE prog_new (id bigint, value text) SERVER lake OPTIONS (path 'prog_new.lance')" >/dev/null
held lt_pn "SELECT rows_written FROM lt_create_dataset('prog_new', NULL, 'SELECT g::bigint, ''v'' || g FROM generate_series(1, 20000) g')" "$lt_row"
check "progress: lt_create_dataset from a query shows its rows so far (totals unknown)" \
	"$(cut -d'|' -f1-7 <<<"$HELD")" "create dataset|writing data files|-|-|true|true|true"
check "progress: ... held mid-way (rows done less than the query's 20000)" "$(cut -d'|' -f8 <<<"$HELD" | awk '$1 != "" {print ($1 < 20000)}')" 1
check "progress: ... then finishes with every row, and its row is gone" "$HELD_RC|$GONE|$(q "SELECT count(*) FROM prog_new")" "0|0|20000"

held lt_pa "SELECT lt_add_column('prog2', 'extra', 'integer', '7')" "$lt_row"
check "progress: lt_add_column with a value shows fragments and rows of total, held after the first fragment's rows" \
	"$(cut -d'|' -f1-9 <<<"$HELD")" "add column|writing data files|2|100|true|true|true|50|0"
check "progress: ... then finishes, and its row is gone" "$HELD_RC|$GONE|$(q "SELECT count(*) FROM prog2 WHERE extra = 7")" "0|0|100"

held lt_pt "SELECT lt_alter_column_type('prog2', 'extra', 'bigint')" "$lt_row"
check "progress: lt_alter_column_type shows fragments and rows of total, held after the first fragment's rows" \
	"$(cut -d'|' -f1-9 <<<"$HELD")" "alter column type|writing data files|2|100|true|true|true|50|0"
check "progress: ... then finishes, and its row is gone" "$HELD_RC|$GONE|$(q "SELECT sum(extra) FROM prog2")" "0|0|700"

ix_row="SELECT c.command || '|' || c.phase || '|' || c.tuples_total || '|' || c.tuples_done || '|' || c.partitions_done || '/' || c.partitions_total
	FROM pg_stat_progress_create_index c WHERE c.pid = a.pid"
held lt_pi "SELECT index_name FROM lt_create_index('prog2', 'id', 'btree')" "$ix_row"
check "progress: a btree build shows in pg_stat_progress_create_index (rows read of the live rows, step 1 of 3)" \
	"$HELD" "CREATE INDEX|building index|100|50|1/3"
check "progress: ... then finishes, and its row is gone" \
	"$HELD_RC|$(q "SELECT count(*) FROM pg_stat_progress_create_index")" "0|0"
q "INSERT INTO prog2 VALUES (3001, 'new', 1)" >/dev/null
held lt_po "SELECT lt_optimize_indexes('prog2')" "$ix_row"
# a merge (Lance's optimize) reads from the data only the rows its index misses: the one row appended
check "progress: lt_optimize_indexes' merge shows as REINDEX in pg_stat_progress_create_index (rows read of the appended rows only)" \
	"$HELD" "REINDEX|building index|1|1|1/3"
check "progress: ... then finishes, and its row is gone" \
	"$HELD_RC|$(q "SELECT count(*) FROM pg_stat_progress_create_index")|$(q "SELECT unindexed_rows FROM lt_table_stats('prog2')")" "0|0|0"
fi

# ---- fds: the backend's descriptors stay under max_files_per_process ----------------------------------
if want fds; then
# three datasets of 100 two-row fragments, btree-indexed: point lookups keep the files they read open, up
# to 32 per cached dataset version, 96 in all
for t in fds1 fds2 fds3; do
	copy $t
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE $t (id bigint, value text) SERVER lake OPTIONS (path '$t.lance', max_rows_per_file '2')" >/dev/null
	OUTER=600 sql "$t rows" "INSERT INTO $t SELECT g, 'v' || g FROM generate_series(1000, 1199) g"
	check "fds: 100 two-row fragments appended to $t" "$(q "SELECT count(*) FROM lt_fragments('$t')")" 102
	q "SELECT rows_indexed FROM lt_create_index('$t', 'id', 'btree')" >/dev/null
done
"${PSQL[@]}" >"$TMP/fn.out" 2>&1 <<'SQL' || { cat "$TMP/fn.out"; bad "fds: the lookup function created"; }
CREATE FUNCTION lookups(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint := 0; s bigint := 0; v bigint;
BEGIN
	FOR g IN 1000..1199 LOOP
		EXECUTE format('SELECT id FROM %s WHERE id = %s', t, g) INTO v;
		IF v IS NOT NULL THEN n := n + 1; s := s + v; END IF;
	END LOOP;
	RETURN n || '|' || s;
END $$;
SQL
check "fds: the lookups go through the btree" \
	"$(q "EXPLAIN (COSTS OFF) SELECT id FROM fds1 WHERE id = 1042" | grep -c 'id_idx')" 1
q1="SELECT lookups('fds1') || ',' || lookups('fds2') || ',' || lookups('fds3')"
q2="SELECT count(*) || '|' || sum(length(value)) FROM (SELECT * FROM fds1 UNION ALL SELECT * FROM fds2 UNION ALL SELECT * FROM fds3) u WHERE id > 1100"
want1=$(q "SELECT string_agg(x, ',') FROM (SELECT count(*) || '|' || sum(id) AS x FROM generate_series(1000, 1199) id, generate_series(1, 3)
	GROUP BY generate_series) s")
want2=$(q "$q2")
q "CHECKPOINT" >/dev/null	# the stop is immediate and commits asynchronous: keep the function
lt_cluster_stop
echo "max_files_per_process = 80" >>"$LT_PGDATA/postgresql.conf"
lt_cluster_start || finish "the cluster did not restart with max_files_per_process = 80"
# in one session: the scans, then the descriptors the backend holds (as the server sees them)
out=$(timeout -k 5 300 "$LT_PGBIN/psql" -X -At -d postgres -c "SHOW max_files_per_process" -c "$q1" -c "$q2" \
	-c "SELECT count(*) FROM pg_ls_dir('/proc/self/fd')" 2>&1)
check "fds: the server runs with max_files_per_process = 80" "$(sed -n 1p <<<"$out")" 80
check "fds: ... 600 point lookups in 306 fragments of three datasets find their rows" "$(sed -n 2p <<<"$out")" "$want1"
check "fds: ... and a scan of them answers as before" "$(sed -n 3p <<<"$out")" "$want2"
fds=$(sed -n 4p <<<"$out")
check "fds: ... the backend then holds fewer descriptors than the limit ($fds open)" \
	"$([ -n "$fds" ] && [ "$fds" -lt 80 ] && echo 1)" 1
fi

echo "robust: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
