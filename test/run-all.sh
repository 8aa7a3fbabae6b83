#!/usr/bin/env bash
# test/run-all.sh — everything a change must pass, in order, with a summary at the end.
#
#   test/run-all.sh                 build, then every step below
#   test/run-all.sh unit pg         only the named steps (the build step always runs)
#
# After the build, the steps run in two lanes at once (the second column of step_table below), each lane one
# step after another: most steps wait on the reference engine, a PostgreSQL backend or a server, so two lanes
# keep both cores busy. Steps that share a directory under build/ (interop and interop-pg: build/interop) are
# in the same lane. A step's output is printed whole when it ends. LT_LANES=1 runs every step in one lane, in
# the table's order.
#
#   build    make all tools unit-build fuzz-build      (extension, lt-inspect, test binaries)
#   layering test/layering.sh                          includes and calls run one way (docs/architecture.md)
#   unit     make unit                                 unit tests of src/lance under ASan/UBSan
#   fuzz     test/fuzz/run.sh smoke                    a short run of every fuzz target
#   interop  test/interop/run.sh                       lt-inspect / lt_fdw against the reference Lance library
#   interop-pg test/interop/pg.sh                      the same datasets through PostgreSQL (SELECT ... ORDER BY _rowid)
#   interop-txn test/interop/txn.sh                    our commits (Append/Delete/Update, rebase, crashes) vs the reference
#   interop-latest test/interop/latest.sh              the latest version from the hint and by listing, vs the reference's commits
#   interop-l12 test/interop/l12.sh (first parts)      the interop matrix against Lance 12 (reads, SQL, writes, indexes, keys, merge, branches)
#   interop-l12-txn test/interop/l12.sh (the rest)     Lance 12 against our commits, the latest version, overwrites, vector indexes, S3
#   interop-index test/interop/index.sh                scalar indexes the reference builds, looked up by lt-inspect
#   interop-index-build test/interop/index-build.sh    indexes lt-inspect builds, listed, planned and used by the reference
#   interop-old    test/interop/old.sh                datasets of old Lance releases (the Lance repository's test_data/), read vs the reference
#   interop-write test/interop/write.sh                files of our writer read by the reference (every type), sizes
#   interop-blob test/interop/blob.sh                  blob columns of both engines: bytes read, legacy 2.0 / 2.1 and v2 written and compacted
#   interop-pgwrite test/interop/pgwrite.sh            what PostgreSQL writes through lt_fdw, read by the reference engine
#   interop-overwrite test/interop/overwrite.sh        INSERT OVERWRITE … WHERE: the engine reads the replaces, its indexes, races, crashes
#   interop-keys test/interop/keys.sh                  keyed tables: the engine's key marks and inserted-key filters, bit for bit
#   interop-keys-race test/interop/keys-race.sh        two PostgreSQL sessions and the engine inserting the same keys at once
#   interop-lifecycle test/interop/lifecycle.sh        datasets created and compacted from SQL, read by Lance 8 and 12, written on top
#   interop-merge   test/interop/merge.sh              lt_merge_insert vs the engine's own mergeInsert; TRUNCATE read by the engine
#   interop-vector  test/interop/vector.sh             IVF_FLAT indexes the engine builds, searched by lt-inspect vs its vectorSearch
#   pg       test/pg/run.sh                            pg_regress suites on a throwaway PostgreSQL 15 cluster
#   pg-crash test/pg/crash.sh                          backends SIGKILLed mid-commit: old or new version, read by both
#   pg-cleanup test/pg/cleanup.sh                      lt_cleanup removes what the reference engine's cleanup removes
#   interop-namespace test/interop/namespace.sh        directory namespaces (Lance 12): IMPORT, reads and writes by identifier
#   pg-robust test/pg/robust.sh                        no hang, no unbounded wait, no misleading state (FIFOs, commit lock, cancel)
#   s3       test/s3/run.sh                            the S3 store, interop and SQL over a test S3 server (s3rver)
#
# A missing step script is a failure, never a skip. Each step's closing "N passed, M failed" line is added
# into the total (unit counts the tests of each passing suite, and 1 failure per failing suite); a step
# that exits non-zero without reporting a failure counts as 1 failure. Logs: build/test-logs/<step>.log.
# Environment: PG_CONFIG (default /usr/lib/postgresql/15/bin/pg_config), LT_STEP_TIMEOUT (seconds per
# step, default 1500), LT_LANES (2, or 1), MAKE.
# Ends with the line "N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
MAKE=${MAKE:-make}
STEP_TIMEOUT=${LT_STEP_TIMEOUT:-1500}
LANES=${LT_LANES:-2}
LOGS=$ROOT/build/test-logs
mkdir -p "$LOGS"

# The steps, in order: name, lane (1 or 2), then the script that runs it and its arguments ("make unit" for
# unit). One line per step, so that branches adding steps touch different lines. The lanes are balanced by
# the steps' times on 2 cores (each about 22 minutes).
step_table=(
	"layering            1 test/layering.sh"
	"unit                1 make unit"
	"fuzz                2 test/fuzz/run.sh smoke"
	"interop             1 test/interop/run.sh"
	"interop-pg          1 test/interop/pg.sh"
	"interop-txn         1 test/interop/txn.sh"
	"interop-latest      1 test/interop/latest.sh"
	"interop-l12         2 test/interop/l12.sh read sql write index keys merge features"
	"interop-l12-txn     2 test/interop/l12.sh txn latest overwrite vector s3"
	"interop-index       1 test/interop/index.sh"
	"interop-index-build 1 test/interop/index-build.sh"
	"interop-old         1 test/interop/old.sh"
	"interop-write       1 test/interop/write.sh"
	"interop-blob        1 test/interop/blob.sh"
	"interop-pgwrite     1 test/interop/pgwrite.sh"
	"interop-overwrite   2 test/interop/overwrite.sh"
	"interop-keys        2 test/interop/keys.sh"
	"interop-keys-race   2 test/interop/keys-race.sh"
	"interop-lifecycle   2 test/interop/lifecycle.sh"
	"interop-merge       1 test/interop/merge.sh"
	"interop-vector      2 test/interop/vector.sh"
	"pg                  2 test/pg/run.sh"
	"pg-crash            2 test/pg/crash.sh"
	"pg-cleanup          1 test/pg/cleanup.sh"
	"interop-namespace   1 test/interop/namespace.sh"
	"pg-robust           1 test/pg/robust.sh"
	"s3                  1 test/s3/run.sh"
)
all_steps=()
for line in "${step_table[@]}"; do all_steps+=("${line%% *}"); done
steps=()
for a in "$@"; do
	case $a in
		-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
		*) [[ " ${all_steps[*]} " == *" $a "* ]] && steps+=("$a") && continue
			echo "test/run-all.sh: unknown step '$a' (steps: ${all_steps[*]})" >&2; exit 2 ;;
	esac
done
[ ${#steps[@]} -gt 0 ] || steps=("${all_steps[@]}")
case $LANES in 1|2) ;; *) echo "test/run-all.sh: LT_LANES must be 1 or 2" >&2; exit 2 ;; esac

total_pass=0 total_fail=0
summary=()

# record STEP STATUS PASSED FAILED SECONDS NOTE
record() {
	total_pass=$((total_pass + $3)) total_fail=$((total_fail + $4))
	summary+=("$(printf '%-8s %-4s %5s passed %4s failed %5ss  %s' "$1" "$2" "$3" "$4" "$5" "$6")")
}

# run_step NAME SCRIPT-OR-EMPTY COMMAND...: runs in a lane; the log is build/test-logs/NAME.log, printed whole
# when the step ends; the outcome goes to NAME.result ("STATUS PASSED FAILED SECONDS NOTE") for the summary
run_step() {
	local name=$1 script=$2; shift 2
	local log=$LOGS/$name.log res=$LOGS/$name.result start=$SECONDS rc p f line note
	rm -f "$res"
	if [ -n "$script" ] && [ ! -f "$script" ]; then
		echo "$name: $script is missing" >"$log"
		echo "FAIL 0 1 0 $script is missing" >"$res"
		print_log "$name" "$*"
		return
	fi
	if [ -n "$script" ] && [ ! -x "$script" ]; then
		echo "$name: $script is not executable" >"$log"
		echo "FAIL 0 1 0 $script is not executable" >"$res"
		print_log "$name" "$*"
		return
	fi
	timeout -k 30 "$STEP_TIMEOUT" "$@" >"$log" 2>&1 </dev/null &
	running=$!
	wait "$running"
	rc=$?
	running=
	p=0 f=0 note=""
	if [ "$name" = unit ]; then
		# unit.h: "<suite>: N tests, N checks, N failed"
		while read -r t c x; do
			if [ "$x" -eq 0 ]; then p=$((p + t)); else f=$((f + 1)); fi
		done < <(sed -nE 's/^[^:]+: ([0-9]+) tests, ([0-9]+) checks, ([0-9]+) failed$/\1 \2 \3/p' "$log")
		[ $((p + f)) -gt 0 ] || { note="no unit test ran"; [ "$rc" -eq 0 ] && rc=1; }
	else
		line=$(grep -E '^([A-Za-z_-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
		if [ -n "$line" ]; then
			p=$(sed -E 's/^([A-Za-z_-]+: )?([0-9]+) passed.*/\2/' <<<"$line")
			f=$(sed -E 's/^([A-Za-z_-]+: )?[0-9]+ passed, ([0-9]+) failed.*/\2/' <<<"$line")
		elif [ "$rc" -eq 0 ]; then
			note="no 'N passed, M failed' line"; p=1
		fi
		[ $((p + f)) -gt 0 ] || { note="no test ran"; [ "$rc" -eq 0 ] && rc=1; }
	fi
	[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && note="timed out after ${STEP_TIMEOUT}s"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		[ -n "$note" ] || note="exit $rc"
	fi
	if [ "$f" -eq 0 ]; then
		echo "PASS $p 0 $((SECONDS - start)) $note" >"$res"
	else
		echo "FAIL $p $f $((SECONDS - start)) ${note:-log: build/test-logs/$name.log}" >"$res"
	fi
	print_log "$name" "$*"
}

# print_log NAME COMMAND: the step's whole log, one step at a time (the lanes share the terminal)
print_log() {
	(
		flock 9
		echo
		echo "======== $1: $2"
		cat "$LOGS/$1.log"
		echo "-------- $1: $(cut -d' ' -f1-3 "$LOGS/$1.result" | sed -E 's/^([A-Z]+) ([0-9]+) ([0-9]+)/\1, \2 passed, \3 failed/'), $(cut -d' ' -f4 "$LOGS/$1.result")s"
	) 9>"$LOGS/.print.lock"
}

# run_lane N: the selected steps of lane N (every lane when LT_LANES=1), in the table's order
run_lane() {
	local lane=$1 s line rest cmd
	running=
	trap '[ -n "$running" ] && kill -TERM "$running" 2>/dev/null; exit 130' INT TERM
	for s in "${steps[@]}"; do
		for line in "${step_table[@]}"; do
			[ "${line%% *}" = "$s" ] || continue
			read -r -a cmd <<<"${line#* }"
			[ "$LANES" -eq 1 ] || [ "${cmd[0]}" = "$lane" ] || continue
			cmd=("${cmd[@]:1}")
			if [ "$s" = unit ]; then
				run_step unit "" $MAKE unit PG_CONFIG="$PG_CONFIG"
			else
				run_step "$s" "${cmd[0]}" "${cmd[@]}"
			fi
		done
	done
}

echo "======== build: $MAKE all tools unit-build fuzz-build"
start=$SECONDS
if $MAKE -j"$(nproc)" all tools unit-build fuzz-build PG_CONFIG="$PG_CONFIG" >"$LOGS/build.log" 2>&1; then
	echo "build ok"
	record build PASS 0 0 $((SECONDS - start)) ""
else
	tail -n 60 "$LOGS/build.log"
	record build FAIL 0 1 $((SECONDS - start)) "log: build/test-logs/build.log"
fi

start=$SECONDS
if [ "$LANES" -eq 1 ]; then
	run_lane 1
else
	echo "======== steps in two lanes; each step's output is printed when it ends"
	run_lane 1 & lane1=$!
	run_lane 2 & lane2=$!
	trap 'kill -TERM "$lane1" "$lane2" 2>/dev/null; wait; exit 130' INT TERM
	wait "$lane1" "$lane2"
	trap - INT TERM
fi
steps_time=$((SECONDS - start))

for s in "${steps[@]}"; do
	if [ -f "$LOGS/$s.result" ]; then
		read -r status p f secs note <"$LOGS/$s.result"
		record "$s" "$status" "$p" "$f" "$secs" "$note"
	else
		record "$s" FAIL 0 1 0 "no result (interrupted?)"
	fi
done

echo
echo "======== summary (the steps took ${steps_time} s in $LANES lane(s))"
printf '%s\n' "${summary[@]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
