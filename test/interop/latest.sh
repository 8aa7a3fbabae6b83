#!/usr/bin/env bash
# test/interop/latest.sh — finding the latest version without listing _versions/ (src/lance/table/lt_dataset.c), against
# datasets the real Lance engine writes (ref.mjs), both manifest namings:
#   - lt_fdw (lt-inspect info / append) and the engine agree on the latest version after each of them commits;
#   - the engine committing with its version hint turned off (LANCE_USE_VERSION_HINT=0) leaves lt_fdw's hint stale:
#     lt_fdw probes forward, and commits on the true latest version;
#   - a hint that is missing, points past the latest, does not parse, or names another naming's file;
#   - the engine's cleanup removing the versions just after a tagged one the stale hint names (a gap above the
#     hint), which probing alone would take for the end of the history;
#   - the engine and lt-inspect appending at the same time: both end at the same latest version, no commit lost.
# Prints ok/FAIL per check and "interop-latest: N passed, M failed"; exit code 1 on any failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

. "$HERE/checks.sh"
lt_checks interop-latest jq

echo '{"ops":[]}' >"$TMP/noop.json"
# ref_version D: the engine's latest version of D (it lists _versions/ itself on a local disk)
ref_version() { REF apply "$1" "$TMP/noop.json" | jq -r .version; }
# lt_version D: lt_fdw's latest version of D
lt_version() { "$INSPECT" info "$1" | jq -r .version; }
# manifests D: the number of manifests in D
manifests() { ls "$1/_versions" | grep -c '\.manifest$'; }
# ref_apply D OPS-JSON [env...]: the engine runs the ops on D
ref_apply() {
	local d=$1 ops=$2; shift 2
	echo "{\"schema\": $SCHEMA, \"ops\": $ops}" >"$TMP/ops.json"
	env "$@" node "$HERE/ref.mjs" apply "$d" "$TMP/ops.json" >"$TMP/apply.out" 2>&1 ||
		{ ko "engine: apply $ops" "$(head -n 3 "$TMP/apply.out")"; return 1; }
}
# lt_append D N: an Append of N rows by lt-inspect (our commit, which writes the hint)
lt_append() {
	local i
	: >"$TMP/rows.jsonl"
	for i in $(seq "$2"); do echo "{\"id\": $((RANDOM * 100 + i)), \"s\": \"lt\"}" >>"$TMP/rows.jsonl"; done
	"$INSPECT" append "$1" --jsonl "$TMP/rows.jsonl" >"$TMP/append.out" 2>&1 ||
		{ ko "lt-inspect append $1" "$(head -n 3 "$TMP/append.out")"; return 1; }
}
# agree LABEL D WANT: lt_fdw and the engine both report version WANT, and it is the highest manifest
agree() {
	local got ref
	got=$(lt_version "$2" 2>&1) ref=$(ref_version "$2" 2>&1)
	if [ "$got" = "$3" ] && [ "$ref" = "$3" ]; then ok "$1 (version $3)"; else
		ko "$1" "want version $3: lt_fdw says '$got', the engine '$ref'"; fi
}
# mname NAMING V: the manifest file name of version V
mname() {
	if [ "$1" = V1 ]; then echo "$2.manifest"; else
		node -e 'console.log((2n ** 64n - 1n - BigInt(process.argv[1])).toString().padStart(20, "0") + ".manifest")' "$2"; fi
}
hint() { cat "$1/_versions/latest_version_hint.json" 2>/dev/null || echo "(no hint)"; }
NOHINT=(LANCE_USE_VERSION_HINT=0)
SCHEMA='[{"name": "id", "type": "int64", "gen": "seq"}, {"name": "s", "type": "utf8", "gen": {"card": 5}}]'

for naming in V2 V1; do
	echo "== $naming manifest names"
	D=$TMP/$naming.lance
	v2=true; [ "$naming" = V1 ] && v2=false
	cat >"$TMP/spec.json" <<JSON
{"storage": "2.1", "v2_manifest_paths": $v2,
 "schema": $SCHEMA, "generate": {"n": 10}, "ops": [{"op": "append", "generate": {"n": 5}}]}
JSON
	REF make "$D" "$TMP/spec.json" >/dev/null 2>"$TMP/make.err" || { ko "$naming: make" "$(head -n 3 "$TMP/make.err")"; continue; }
	if [ "$naming" = V1 ]; then
		[ -f "$D/_versions/2.manifest" ] && ok "$naming: the engine wrote V1 names" || ko "$naming: the engine wrote V1 names" "$(ls "$D/_versions")"
	else
		[ -f "$D/_versions/18446744073709551613.manifest" ] && ok "$naming: the engine wrote V2 names" ||
			ko "$naming: the engine wrote V2 names" "$(ls "$D/_versions")"
	fi
	[ "$(hint "$D")" = '{"version":2}' ] && ok "$naming: the engine wrote the hint" || ko "$naming: the engine wrote the hint" "$(hint "$D")"
	agree "$naming: engine-made dataset" "$D" 2

	lt_append "$D" 3 && agree "$naming: after our append" "$D" 3
	[ "$(hint "$D")" = '{"version":3}' ] && ok "$naming: our hint names our commit" || ko "$naming: our hint names our commit" "$(hint "$D")"

	# the engine commits without touching the hint: ours (3) is stale by two versions
	ref_apply "$D" '[{"op": "append", "generate": {"n": 4}}, {"op": "delete", "where": "id < 3"}]' "${NOHINT[@]}" &&
		[ "$(hint "$D")" = '{"version":3}' ] && agree "$naming: stale hint (3), the engine at 5" "$D" 5
	before=$(REF scan "$D" | wc -l)
	lt_append "$D" 2 && agree "$naming: our commit on top of the true latest" "$D" 6
	rows=$("$INSPECT" info "$D" | jq -r .rows) refrows=$(REF scan "$D" | wc -l)
	[ "$rows" = "$refrows" ] && [ "$rows" = $((before + 2)) ] && ok "$naming: no commit lost ($rows rows)" ||
		ko "$naming: no commit lost" "lt_fdw counts $rows rows, the engine scans $refrows, want $((before + 2))"

	# broken hints: missing, past the end, not JSON, zero; each falls back to the listing
	rm -f "$D/_versions/latest_version_hint.json"
	agree "$naming: no hint" "$D" 6
	for bad in '{"version":60}' '{"version":' 'garbage' '{"version":0}' '{"version":99999999999999999999999}'; do
		printf '%s' "$bad" >"$D/_versions/latest_version_hint.json"
		agree "$naming: hint '$bad'" "$D" 6
	done
	printf '{"version":4}' >"$D/_versions/latest_version_hint.json"
	agree "$naming: hint behind by two" "$D" 6

	# a gap above a stale hint: tag 6, the engine appends 7, 8, 9 without hints, then 7 and 8 go as a cleanup with
	# error_if_tagged_old_versions=false removes them (it keeps the tagged 6 and the latest 9; the JavaScript
	# binding cannot pass that flag, so the files are removed here); probing up from the hint would stop at 7
	printf '{"version":6}' >"$D/_versions/latest_version_hint.json"
	ref_apply "$D" '[{"op": "tag", "tag": "keep", "version": 6}, {"op": "append", "generate": {"n": 1}},
		{"op": "append", "generate": {"n": 1}}, {"op": "append", "generate": {"n": 1}}]' "${NOHINT[@]}"
	rm -f "$D/_versions/$(mname "$naming" 7)" "$D/_versions/$(mname "$naming" 8)"
	if "$INSPECT" info "$D" --version 6 >/dev/null 2>&1 && ! "$INSPECT" info "$D" --version 7 >/dev/null 2>&1 &&
		[ "$(hint "$D")" = '{"version":6}' ]; then ok "$naming: gap: 6 tagged, 7 and 8 removed, the hint at 6"; else
		ko "$naming: gap: 6 tagged, 7 and 8 removed, the hint at 6" "$(ls "$D/_versions")"; fi
	agree "$naming: a gap above the stale hint" "$D" 9
	lt_append "$D" 1 && agree "$naming: our commit after the gap" "$D" 10

	# the engine's own cleanup (tag dropped first: it refuses to remove a tagged version) after its commit without
	# a hint: ours (10) names a removed version
	rm -f "$D/_refs/tags/keep.json"
	ref_apply "$D" '[{"op": "append", "generate": {"n": 1}}]' "${NOHINT[@]}" &&
		ref_apply "$D" '[{"op": "cleanup", "older_than_ms": 0}]' "${NOHINT[@]}"
	want=$(ref_version "$D")
	if ! "$INSPECT" info "$D" --version 10 >/dev/null 2>&1 && [ "$(hint "$D")" = '{"version":10}' ] && [ "$want" -ge 11 ]
	then ok "$naming: the engine's cleanup removed the hinted version 10 (latest $want)"; else
		ko "$naming: the engine's cleanup removed the hinted version 10" "$(ls "$D/_versions")"; fi
	agree "$naming: the hint names a removed version" "$D" "$want"
	want=$((want + 1))
	lt_append "$D" 1 && agree "$naming: our commit after the engine's cleanup" "$D" "$want"
	if [ "$naming" = V2 ]; then
		n=$(ls "$D/_versions" | grep -c '^[0-9]\{20\}\.manifest$')
		[ "$n" = "$(manifests "$D")" ] && ok "$naming: we kept the V2 names" || ko "$naming: we kept the V2 names" "$(ls "$D/_versions")"
	else
		[ -f "$D/_versions/$want.manifest" ] && ok "$naming: we kept the V1 names" || ko "$naming: we kept the V1 names" "$(ls "$D/_versions")"
	fi
done

echo "== the engine and lt-inspect appending at the same time"
D=$TMP/race.lance
cat >"$TMP/spec.json" <<'JSON'
{"storage": "2.1", "schema": [{"name": "id", "type": "int64", "gen": "seq"}, {"name": "s", "type": "utf8", "gen": {"card": 5}}],
 "generate": {"n": 1}}
JSON
if REF make "$D" "$TMP/spec.json" >/dev/null 2>&1; then
	echo "{\"schema\": $SCHEMA, \"ops\": [" >"$TMP/race_ops.json"
	for i in $(seq 8); do echo "{\"op\": \"append\", \"generate\": {\"n\": 1}}$([ "$i" -lt 8 ] && echo ,)" >>"$TMP/race_ops.json"; done
	echo ']}' >>"$TMP/race_ops.json"
	# the engine without hints half of the time: lt_fdw's hint goes stale while it commits
	LANCE_USE_VERSION_HINT=0 node "$HERE/ref.mjs" apply "$D" "$TMP/race_ops.json" >"$TMP/race_ref.out" 2>&1 &
	refpid=$!
	lt_fails=0
	for i in $(seq 8); do
		echo "{\"id\": $((1000 + i)), \"s\": \"lt\"}" >"$TMP/race_rows.jsonl"
		"$INSPECT" append "$D" --jsonl "$TMP/race_rows.jsonl" >>"$TMP/race_lt.out" 2>&1 || lt_fails=$((lt_fails + 1))
	done
	wait "$refpid"; refrc=$?
	[ "$refrc" = 0 ] && [ "$lt_fails" = 0 ] && ok "race: every commit of both writers succeeded" ||
		ko "race: every commit of both writers succeeded" "engine rc $refrc, lt-inspect failures $lt_fails" "$(tail -n 3 "$TMP/race_lt.out")"
	agree "race: both see the last commit" "$D" 17
	rows=$("$INSPECT" info "$D" | jq -r .rows) refrows=$(REF scan "$D" | wc -l)
	[ "$rows" = 17 ] && [ "$refrows" = 17 ] && ok "race: 17 rows, none lost" || ko "race: 17 rows, none lost" "lt_fdw $rows, engine $refrows"
else
	ko "race: make"
fi
finish
