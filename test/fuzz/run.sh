#!/bin/bash
# run.sh — run the libFuzzer targets built in build/fuzz/.
#
#   test/fuzz/run.sh smoke                every target for a short time (default 10 s)
#   test/fuzz/run.sh long SECONDS [T...]  longer campaigns, all targets or the named ones
#
# Each target fuzz_X starts from the seeds in test/fuzz/corpus/fuzz_X/ (read
# only) plus what earlier runs found, kept in $FUZZ_WORK/corpus/fuzz_X/.  A
# crash, leak, timeout or out-of-memory leaves its input in
# $FUZZ_WORK/artifacts/fuzz_X/ and makes the script exit non-zero.
#
# Environment:
#   FUZZ_BIN        directory of fuzz binaries        (build/fuzz)
#   FUZZ_WORK       working corpora and artifacts     (build/fuzz-work)
#   FUZZ_SMOKE_SECS seconds per target in smoke mode  (10)
#   FUZZ_TIMEOUT    seconds one input may take        (10)
#   FUZZ_RSS_MB     memory limit per target           (2048)
#   FUZZ_ARGS       extra libFuzzer flags
set -u

cd "$(dirname "$0")/../.." || exit 2

BIN=${FUZZ_BIN:-build/fuzz}
WORK=${FUZZ_WORK:-build/fuzz-work}
SEEDS=test/fuzz/corpus

usage()
{
	sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

mode=${1:-}
case "$mode" in
	smoke)
		secs=${FUZZ_SMOKE_SECS:-10}
		shift
		;;
	long)
		[ $# -ge 2 ] || usage
		secs=$2
		shift 2
		;;
	*)
		usage
		;;
esac
case "$secs" in
	'' | *[!0-9]*) usage ;;
esac

if [ $# -gt 0 ]; then
	targets=("$@")
else
	targets=()
	for b in "$BIN"/fuzz_*; do
		[ -x "$b" ] && [ -f "$b" ] && targets+=("$(basename "$b")")
	done
fi
if [ ${#targets[@]} -eq 0 ]; then
	echo "run.sh: no fuzz targets in $BIN (make fuzz-build)" >&2
	exit 2
fi

passed=0
failed=0
summary=""
for t in "${targets[@]}"; do
	bin=$BIN/$t
	if [ ! -x "$bin" ]; then
		echo "run.sh: $bin is not built" >&2
		failed=$((failed + 1))
		summary+=$(printf '%-24s %14s  %s' "$t" "-" "NOT BUILT")$'\n'
		continue
	fi
	corpus=$WORK/corpus/$t
	art=$WORK/artifacts/$t
	log=$WORK/logs/$t.log
	mkdir -p "$corpus" "$art" "$WORK/logs"
	dirs=("$corpus")
	[ -d "$SEEDS/$t" ] && dirs+=("$SEEDS/$t")

	echo "== $t: ${secs}s"
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
		-print_final_stats=1 -artifact_prefix="$art/" ${FUZZ_ARGS:-} "${dirs[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	[ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		status=ok
	else
		failed=$((failed + 1))
		status="FAILED (exit $rc; log $log)"
		grep -m1 -E 'ERROR: |runtime error|==[0-9]+==' "$log" >&2
		grep -E '^artifact_prefix|Test unit written to' "$log" >&2
	fi
	echo "   executions: ${execs:-?}  (${rate:-?}/s)  $status"
	summary+=$(printf '%-24s %14s  %s' "$t" "${execs:-?}" "$status")$'\n'
done

echo
printf '%-24s %14s  %s\n' target executions result
printf '%s' "$summary"
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
