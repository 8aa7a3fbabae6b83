# test/interop/checks.sh — what the interop steps driving lt-inspect share (sourced with HERE and ROOT set):
#
#   lt_checks NAME [jq]   the counters and ok / ko / finish (finish prints the failed labels and the summary
#                         line "NAME: N passed, M failed", and exits with its verdict); $TMP, removed at exit;
#                         REF, the reference harness; $INSPECT, built when missing. The prerequisites (node,
#                         the npm modules, jq when asked) missing are a failed "setup" check.
lt_checks() {
	LT_CHECKS=$1
	pass=0 fail=0
	failures=()
	INSPECT=${LT_INSPECT:-$ROOT/build/lt-inspect}
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/lt-$1.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	command -v node >/dev/null || { ko "setup: node is not installed"; finish; }
	[ -d "$HERE/node_modules/@lancedb/lancedb" ] ||
		{ ko "setup: test/interop/node_modules is missing (run scripts/setup.sh)"; finish; }
	if [ "${2:-}" = jq ]; then
		command -v jq >/dev/null || { ko "setup: jq is not installed"; finish; }
	fi
	[ -x "$INSPECT" ] || make -C "$ROOT" build/lt-inspect >"$TMP/make.log" 2>&1
	[ -x "$INSPECT" ] || { ko "setup: $INSPECT is missing" "$(tail -n 3 "$TMP/make.log" 2>/dev/null)"; finish; }
}

ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { # ko LABEL [DETAIL...]
	fail=$((fail + 1)); failures+=("$1"); echo "FAIL $1"
	shift; local l; for l in "$@"; do [ -n "$l" ] && printf '       %s\n' "$l"; done
}
finish() {
	if [ "$fail" -gt 0 ]; then
		echo; echo "failed checks:"; printf '  %s\n' "${failures[@]}"
	fi
	echo "$LT_CHECKS: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}
REF() { node "$HERE/ref.mjs" "$@"; }
