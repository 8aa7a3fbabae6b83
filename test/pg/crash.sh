#!/usr/bin/env bash
# test/pg/crash.sh — a backend killed with SIGKILL in the middle of a write leaves the dataset at the old
# version or at the new one, never in between, as lt_fdw and the real Lance engine both read it.
#
# A throwaway cluster (restart_after_crash on, PostgreSQL's default). For each case, a fresh copy of a
# dataset the engine made (2 fragments): one session sets lt_fdw.crash_at_commit_point (superuser only; the backend
# kills itself with SIGKILL at that point of the Lance commit) and runs an INSERT, DELETE or UPDATE;
# the postmaster restarts after the crash. The same statement, run to its end on a second copy, gives
# the new state. Then:
#   - the engine's scan (`ref.mjs scan`, sorted) equals the old rows (a crash before the manifest) or
#     the new rows (after it); so do lt_fdw's count and sum; the version count is old or old + 1;
#   - the next write through lt_fdw commits (nothing is left half-done), and lt_cleanup with
#     delete_unverified removes what the crash left (temp and torn files, the data, deletion and
#     transaction files no version names: data/ then holds exactly the files lt_fragments names)
#     while the engine still reads the same rows.
# The commits of lt_compact, lt_create_dataset, lt_add_column and lt_optimize_indexes are killed the same way
# at each of their points: the engine and lt_fdw read the old or the new state (rows, versions, fragments,
# indexes and their unindexed rows), the operation lost before its manifest runs again, the next write commits.
# One more case kills a backend from outside (kill -9 of its pid) while its big INSERT runs.
#
#   test/pg/crash.sh                install (private PostgreSQL copy), run
#   test/pg/crash.sh --no-install   the extension is already installed
# Ends with "crash: N passed, M failed"; exits non-zero when anything failed. Never asserts on time.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step crash 18 "$@"
lt_step_prepare

# the crash reinitializes shared memory: WAL not yet written out would be lost, and with it the DDL just
# before the crash (the test cluster runs with synchronous_commit off)
lt_step_cluster 'restart_after_crash = on' 'synchronous_commit = on'
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
export PGOPTIONS="-c client_min_messages=warning"
ref() { lt_as_pg node "$ROOT/test/interop/ref.mjs" "$@"; }


# after a crash the postmaster kills every backend and recovers: wait until it accepts queries again
wait_ready() {
	for _ in $(seq 1 240); do
		"${PSQL[@]}" -At -c "SELECT 1" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	return 1
}

cat >"$TMP/spec.json" <<'JSON'
{"storage": "2.1",
 "schema": [{"name": "id", "type": "int64", "nullable": false}, {"name": "value", "type": "utf8"}],
 "generate": {"n": 3000}, "fragment_sizes": [2000, 1000]}
JSON
chmod a+r "$TMP/spec.json"
ref make "$LAKE/base.lance" "$TMP/spec.json" >/dev/null 2>"$TMP/make.err" || { cat "$TMP/make.err" >&2; finish "ref make failed"; }
"${PSQL[@]}" -c "CREATE EXTENSION lt_fdw; CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');" \
	|| finish "creating the extension failed"

fresh() {	# name: a copy of base.lance and its foreign table
	rm -rf "$LAKE/$1.lance" && cp -a "$LAKE/base.lance" "$LAKE/$1.lance" && chown -R "$LT_PG_OSUSER" "$LAKE/$1.lance" 2>/dev/null
	"${PSQL[@]}" -c "DROP FOREIGN TABLE IF EXISTS $1; CREATE FOREIGN TABLE $1 (id bigint, value text) SERVER lake OPTIONS (path '$1.lance');"
}
rows_of() { ref scan "$LAKE/$1.lance" | LC_ALL=C sort; }
ref_count_where() { ref scan "$LAKE/$1.lance" --columns id --filter "$2" | wc -l; }
pg_sig() { "${PSQL[@]}" -At -c "SELECT count(*) || '/' || coalesce(sum(id), 0) || '/' || count(value) FROM $1"; }
versions() { ls "$LAKE/$1.lance/_versions" | grep -c '\.manifest$'; }

statement() {	# op table
	case $1 in
		insert) echo "INSERT INTO $2 SELECT id + 1000000, value FROM $2 WHERE id % 3 = 0" ;;
		delete) echo "DELETE FROM $2 WHERE id % 4 = 0" ;;
		update) echo "UPDATE $2 SET value = 'updated' WHERE id % 5 = 1" ;;
	esac
}

check_case() {	# label work-table new-table old-rows-file old-sig old-versions expect(old|new|either)
	local label=$1 w=$2 n=$3 oldrows=$4 oldsig=$5 v0=$6 expect=$7 got sig v
	rows_of "$w" >"$TMP/after.jsonl" 2>"$TMP/scan.err" || { cat "$TMP/scan.err"; bad "$label: the engine opens the dataset"; return; }
	rows_of "$n" >"$TMP/new.jsonl"
	sig=$(pg_sig "$w")
	v=$(versions "$w")
	if cmp -s "$TMP/after.jsonl" "$oldrows"; then got=old
	elif cmp -s "$TMP/after.jsonl" "$TMP/new.jsonl"; then got=new
	else got=between
	fi
	if [ "$got" = between ] || { [ "$expect" != either ] && [ "$got" != "$expect" ]; }; then
		bad "$label: the engine reads the $got state (expected $expect)"
		return
	fi
	ok "$label: the engine reads the $got state"
	if { [ "$got" = old ] && [ "$sig" = "$oldsig" ] && [ "$v" -eq "$v0" ]; } ||
		{ [ "$got" = new ] && [ "$sig" = "$(pg_sig "$n")" ] && [ "$v" -eq $((v0 + 1)) ]; }; then
		ok "$label: lt_fdw reads the same state ($sig, $v versions)"
	else
		bad "$label: lt_fdw reads $sig with $v versions (old $oldsig with $v0)"
	fi
	# the dataset takes the next write, and lt_cleanup removes the crash's leftovers only
	if "${PSQL[@]}" -c "INSERT INTO $w VALUES (-1, 'after the crash')" >"$TMP/next.out" 2>&1 &&
		[ "$(versions "$w")" -eq $((v + 1)) ]; then
		ok "$label: the next write commits"
	else
		cat "$TMP/next.out"; bad "$label: the next write commits"
	fi
	rows_of "$w" >"$TMP/before_cleanup.jsonl"
	"${PSQL[@]}" -At -c "SELECT unnest(data_files) FROM lt_fragments('$w')" | LC_ALL=C sort >"$TMP/referenced"
	if "${PSQL[@]}" -At -c "SELECT files_removed FROM lt_cleanup('$w', '0 seconds', delete_unverified => true)" >"$TMP/cleanup.out" 2>&1 &&
		rows_of "$w" | cmp -s - "$TMP/before_cleanup.jsonl" &&
		[ -z "$(find "$LAKE/$w.lance" -name '*.tmp-*')" ] &&
		(cd "$LAKE/$w.lance" && ls data | sed 's|^|data/|' | LC_ALL=C sort | cmp -s - "$TMP/referenced"); then
		ok "$label: lt_cleanup removes the leftovers ($(cat "$TMP/cleanup.out") files), the engine reads the same rows"
	else
		cat "$TMP/cleanup.out"; bad "$label: lt_cleanup after the crash"
	fi
}

k=0
for c in insert:start insert:after_txn_file insert:mid_manifest insert:after_manifest \
		delete:after_deletion_files delete:mid_manifest delete:after_manifest \
		update:start update:after_deletion_files update:after_txn_file update:after_manifest; do
	op=${c%%:*} point=${c#*:}
	k=$((k + 1))
	w=w$k n=n$k
	fresh "$w" >/dev/null && fresh "$n" >/dev/null || { bad "$op at $point: copies"; continue; }
	rows_of "$w" >"$TMP/old.jsonl"
	oldsig=$(pg_sig "$w") v0=$(versions "$w")
	"${PSQL[@]}" -c "$(statement "$op" "$n")" >/dev/null || { bad "$op at $point: the statement without a crash"; continue; }
	# the crash: the backend kills itself at the commit point; psql loses the connection
	if "${PSQL[@]}" -c "SET lt_fdw.crash_at_commit_point = '$point'" -c "$(statement "$op" "$w")" >"$TMP/crash.out" 2>&1; then
		bad "$op at $point: the backend did not die"; continue
	fi
	grep -q "server closed the connection\|terminated abnormally\|connection to server" "$TMP/crash.out" \
		|| { cat "$TMP/crash.out"; bad "$op at $point: the backend did not die"; continue; }
	wait_ready || finish "the server did not come back after the crash"
	expect=old
	[ "$point" = after_manifest ] && expect=new
	check_case "$op killed at $point" "$w" "$n" "$TMP/old.jsonl" "$oldsig" "$v0" "$expect"
done

# ---- the lifecycle commits: lt_compact (a Rewrite), lt_create_dataset (an Overwrite), lt_add_column (a Merge),
# lt_optimize_indexes (a CreateIndex), each killed at the points of the commit it makes (the commits made outside
# the write path have no start and deletion-file points). The state compared: the engine's rows, the versions,
# lt_fdw's fragments, count and sum, and the engine's indexes with their unindexed rows ("none": no dataset yet).
ix_unindexed='let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=[];for(const l of s.split("\n")) if(l){const o=JSON.parse(l);r.push(o.name+" "+o.stats.numUnindexedRows)}console.log(r.sort().join(", "))})'
state_of() {	# table
	ls "$LAKE/$1.lance/_versions" 2>/dev/null | grep -q '\.manifest$' || { echo none; return; }
	echo "rows $(rows_of "$1" | md5sum | cut -c1-16) versions $(versions "$1")" \
		"fragments $("${PSQL[@]}" -At -c "SELECT count(*) FROM lt_fragments('$1')") lt_fdw $(pg_sig "$1")" \
		"indexes [$(ref indexes "$LAKE/$1.lance" | node -e "$ix_unindexed")]"
}
prepare() {	# op table: the dataset before the operation
	case $1 in
		compact) fresh "$2" && for i in 1 2 3 4 5; do "${PSQL[@]}" -c "INSERT INTO $2 VALUES ($((5000 + i)), 'single $i')"; done ;;
		create) rm -rf "$LAKE/$2.lance" && "${PSQL[@]}" -c "DROP FOREIGN TABLE IF EXISTS $2; CREATE FOREIGN TABLE $2 (id bigint NOT NULL, value text) SERVER lake OPTIONS (path '$2.lance');" ;;
		add_column) fresh "$2" ;;
		optimize) fresh "$2" && "${PSQL[@]}" -c "SELECT index_name FROM lt_create_index('$2', 'id', 'btree')" \
			-c "INSERT INTO $2 SELECT g, 'new' FROM generate_series(7001, 7300) g" ;;
	esac
}
life_statement() {	# op table
	case $1 in
		compact) echo "SELECT lt_compact('$2')" ;;
		create) echo "SELECT lt_create_dataset('$2', query => 'SELECT g::bigint, ''v'' || g FROM generate_series(1, 500) g')" ;;
		add_column) echo "SELECT lt_add_column('$2', 'extra', 'integer', '7')" ;;
		optimize) echo "SELECT lt_optimize_indexes('$2')" ;;
	esac
}
for c in compact:start compact:after_txn_file compact:mid_manifest compact:after_manifest \
		create:after_txn_file create:mid_manifest create:after_manifest \
		add_column:after_txn_file add_column:mid_manifest add_column:after_manifest \
		optimize:after_txn_file optimize:mid_manifest optimize:after_manifest; do
	op=${c%%:*} point=${c#*:}
	k=$((k + 1))
	w=w$k n=n$k label="$op killed at $point"
	prepare "$op" "$w" >/dev/null 2>&1 && prepare "$op" "$n" >/dev/null 2>&1 || { bad "$label: preparing the copies"; continue; }
	old=$(state_of "$w")
	"${PSQL[@]}" -c "$(life_statement "$op" "$n")" >/dev/null || { bad "$label: the statement without a crash"; continue; }
	new=$(state_of "$n")
	[ "$old" != "$new" ] || { bad "$label: the operation changes nothing to compare"; continue; }
	if "${PSQL[@]}" -c "SET lt_fdw.crash_at_commit_point = '$point'" -c "$(life_statement "$op" "$w")" >"$TMP/crash.out" 2>&1; then
		bad "$label: the backend did not die"; continue
	fi
	grep -q "server closed the connection\|terminated abnormally\|connection to server" "$TMP/crash.out" \
		|| { cat "$TMP/crash.out"; bad "$label: the backend did not die"; continue; }
	wait_ready || finish "the server did not come back after the crash"
	got=$(state_of "$w")
	expect=old
	[ "$point" = after_manifest ] && expect=new
	if [ "$got" = "$old" ]; then got=old; elif [ "$got" = "$new" ]; then got=new; else echo "   old: $old"; echo "   new: $new"; echo "   got: $got"; got=between; fi
	if [ "$got" = "$expect" ]; then
		ok "$label: the engine and lt_fdw read the $got state"
	else
		bad "$label: the engine and lt_fdw read the $got state (expected $expect)"
	fi
	# what was killed before its manifest can be done again; then the dataset takes the next write
	if [ "$got" = old ] && ! "${PSQL[@]}" -c "$(life_statement "$op" "$w")" >"$TMP/again.out" 2>&1; then
		cat "$TMP/again.out"; bad "$label: the operation runs again after the crash"
	elif [ "$got" = old ] && [ "$(state_of "$w")" != "$new" ]; then
		bad "$label: run again, it reaches the new state"
	elif "${PSQL[@]}" -c "INSERT INTO $w VALUES (-1, 'after the crash')" >"$TMP/next.out" 2>&1 &&
		[ "$(ref_count_where "$w" "value = 'after the crash'")" = 1 ]; then
		ok "$label: run again if it was lost, then the next write commits and the engine reads it"
	else
		cat "$TMP/next.out"; bad "$label: the next write after the crash"
	fi
done

# kill -9 from outside, while a big INSERT writes its data files (or commits: either state is right)
w=wkill n=nkill
fresh "$w" >/dev/null && fresh "$n" >/dev/null
rows_of "$w" >"$TMP/old.jsonl"
oldsig=$(pg_sig "$w") v0=$(versions "$w")
big="INSERT INTO %s SELECT g, repeat('x', 40) FROM generate_series(1, 2000000) g"
# shellcheck disable=SC2059
"${PSQL[@]}" -c "$(printf "$big" "$n")" >/dev/null
# shellcheck disable=SC2059
PGAPPNAME=lt_crash_victim "${PSQL[@]}" -c "$(printf "$big" "$w")" >"$TMP/victim.out" 2>&1 &
victim=$!
pid=
for _ in $(seq 1 200); do
	pid=$("${PSQL[@]}" -At -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'lt_crash_victim' AND state = 'active'" 2>/dev/null)
	[ -n "$pid" ] && break
	sleep 0.05
done
if [ -n "$pid" ]; then
	sleep 0.5
	kill -9 "$pid" 2>/dev/null
	wait "$victim" 2>/dev/null
	wait_ready || finish "the server did not come back after kill -9"
	check_case "kill -9 of a backend during a big INSERT" "$w" "$n" "$TMP/old.jsonl" "$oldsig" "$v0" either
else
	wait "$victim" 2>/dev/null
	bad "kill -9: the INSERT's backend was not found"
fi

# the setting is for superusers only, and inert by default
wait_ready || finish "the server is not ready"
shown=$("${PSQL[@]}" -At -c "LOAD 'lt_fdw'" -c "SHOW lt_fdw.crash_at_commit_point" 2>&1)
"${PSQL[@]}" -c "LOAD 'lt_fdw'" -c "CREATE ROLE lt_crash_user" -c "SET ROLE lt_crash_user" \
	-c "SET lt_fdw.crash_at_commit_point = 'start'" >"$TMP/guc.out" 2>&1
if [ -z "$shown" ] && grep -q "permission denied" "$TMP/guc.out"; then
	ok "lt_fdw.crash_at_commit_point is empty by default and superuser only"
else
	echo "   SHOW: [$shown]"; cat "$TMP/guc.out"
	bad "lt_fdw.crash_at_commit_point is empty by default and superuser only"
fi

echo "crash: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
