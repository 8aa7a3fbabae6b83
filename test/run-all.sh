#!/usr/bin/env bash
# test/run-all.sh — everything a change must pass, in order, with a summary at the end.
#
#   test/run-all.sh                 build, then every step below
#   test/run-all.sh unit pg         only the named steps (the build step always runs)
#
#   build    make all tools unit-build fuzz-build      (extension, lt-inspect, test binaries)
#   layering test/layering.sh                          includes and calls run one way (docs/architecture.md)
#   unit     make unit                                 unit tests of src/lance under ASan/UBSan
#   fuzz     test/fuzz/run.sh smoke                    a short run of every fuzz target
#   interop  test/interop/run.sh                       lt-inspect / lt_fdw against the reference Lance library
#   interop-pg test/interop/pg.sh                      the same datasets through PostgreSQL (SELECT ... ORDER BY _rowid)
#   interop-txn test/interop/txn.sh                    our commits (Append/Delete/Update, rebase, crashes) vs the reference
#   interop-latest test/interop/latest.sh              the latest version from the hint and by listing, vs the reference's commits
#   interop-l12 test/interop/l12.sh                    the interop matrix against Lance 12 (reads, SQL, writes, indexes, keys, merge, branches)
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
# step, default 1500), MAKE.
# Ends with the line "N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
MAKE=${MAKE:-make}
STEP_TIMEOUT=${LT_STEP_TIMEOUT:-1500}
LOGS=$ROOT/build/test-logs
mkdir -p "$LOGS"

# The steps, in order: name, then the script that runs it and its arguments ("make unit" for unit).
# One line per step, so that branches adding steps touch different lines.
step_table=(
	"layering            test/layering.sh"
	"unit                make unit"
	"fuzz                test/fuzz/run.sh smoke"
	"interop             test/interop/run.sh"
	"interop-pg          test/interop/pg.sh"
	"interop-txn         test/interop/txn.sh"
	"interop-latest      test/interop/latest.sh"
	"interop-l12         test/interop/l12.sh"
	"interop-index       test/interop/index.sh"
	"interop-index-build test/interop/index-build.sh"
	"interop-old         test/interop/old.sh"
	"interop-write       test/interop/write.sh"
	"interop-blob        test/interop/blob.sh"
	"interop-pgwrite     test/interop/pgwrite.sh"
	"interop-overwrite   test/interop/overwrite.sh"
	"interop-keys        test/interop/keys.sh"
	"interop-keys-race   test/interop/keys-race.sh"
	"interop-lifecycle   test/interop/lifecycle.sh"
	"interop-merge       test/interop/merge.sh"
	"interop-vector      test/interop/vector.sh"
	"pg                  test/pg/run.sh"
	"pg-crash            test/pg/crash.sh"
	"pg-cleanup          test/pg/cleanup.sh"
	"interop-namespace   test/interop/namespace.sh"
	"pg-robust           test/pg/robust.sh"
	"s3                  test/s3/run.sh"
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

total_pass=0 total_fail=0
summary=()

# record STEP STATUS PASSED FAILED SECONDS NOTE
record() {
	total_pass=$((total_pass + $3)) total_fail=$((total_fail + $4))
	summary+=("$(printf '%-8s %-4s %5s passed %4s failed %5ss  %s' "$1" "$2" "$3" "$4" "$5" "$6")")
}

# run_step NAME SCRIPT-OR-EMPTY COMMAND...
run_step() {
	local name=$1 script=$2; shift 2
	local log=$LOGS/$name.log start=$SECONDS rc p f line note
	echo
	echo "======== $name: $*"
	if [ -n "$script" ] && [ ! -f "$script" ]; then
		echo "$name: $script is missing" | tee "$log"
		record "$name" FAIL 0 1 0 "$script is missing"
		return
	fi
	if [ -n "$script" ] && [ ! -x "$script" ]; then
		echo "$name: $script is not executable" | tee "$log"
		record "$name" FAIL 0 1 0 "$script is not executable"
		return
	fi
	timeout -k 30 "$STEP_TIMEOUT" "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
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
		record "$name" PASS "$p" 0 $((SECONDS - start)) "$note"
	else
		record "$name" FAIL "$p" "$f" $((SECONDS - start)) "${note:-log: build/test-logs/$name.log}"
	fi
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

for s in "${steps[@]}"; do
	for line in "${step_table[@]}"; do
		[ "${line%% *}" = "$s" ] || continue
		read -r -a cmd <<<"${line#* }"
		if [ "$s" = unit ]; then
			run_step unit "" $MAKE unit PG_CONFIG="$PG_CONFIG"
		else
			run_step "$s" "${cmd[0]}" "${cmd[@]}"
		fi
	done
done

echo
echo "======== summary"
printf '%s\n' "${summary[@]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
