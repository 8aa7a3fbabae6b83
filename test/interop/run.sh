#!/usr/bin/env bash
# test/interop/run.sh — lt-inspect (lt_fdw's C reader) against the real Lance engine (@lancedb/lancedb 0.31.0,
# or 0.39.0 with LT_REF=12).
#
#   test/interop/run.sh                 everything: generated matrix, encodings, fixtures, corrupted files
#   test/interop/run.sh scan pages      only some parts (scan take pages fixtures corrupt)
#   test/interop/run.sh gen             only generate the datasets (for test/interop/pg.sh)
#
# Datasets are generated from specs/*.json by ref.mjs into build/interop/<hash of the inputs>/ and reused while
# ref.mjs, the specs and package-lock.json are unchanged. Every check prints "ok" or "FAIL" with a label; the last
# line is "N passed, M failed" and the exit code is non-zero when anything failed. See README.md.
#
# Environment:
#   LT_INSPECT        the binary under test (default build/lt-inspect; built with make when missing)
#   LT_INSPECT_SAN    a sanitizer build also run on the corrupted files (default build/lt-inspect-san if present)
#   LT_FIXTURES       the shared fixture corpus (default ../shared/lance-fixtures beside the repo, if present)
#   LT_INTEROP_DIR    where to generate (default build/interop)
#   LT_INTEROP_JOBS   parallel generator processes (default 2)
#   LT_CASE_TIMEOUT   seconds per lt-inspect run (default 120)
#   LT_REF            the reference engine: 8 (default, lance 8.0) or 12 (lance 12.0; test/interop/l12.sh)
#   LT_INTEROP_SPECS  only these specs (names, e.g. "types nulls"); LT_INTEROP_STORAGE only these storage variants
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
INSPECT_SAN=${LT_INSPECT_SAN:-$ROOT/build/lt-inspect-san}
WORK=${LT_INTEROP_DIR:-$ROOT/build/interop}
JOBS=${LT_INTEROP_JOBS:-2}
CASE_TIMEOUT=${LT_CASE_TIMEOUT:-120}
if [ -z "${LT_FIXTURES:-}" ]; then
	for d in "$ROOT/../shared/lance-fixtures" /work/shared/lance-fixtures; do
		[ -d "$d" ] && { LT_FIXTURES=$(cd "$d" && pwd); break; }
	done
fi
FIXTURES=${LT_FIXTURES:-}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(scan take pages fixtures corrupt)
want() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }


# ---------------------------------------------------------------------------------------------- setup
. "$HERE/checks.sh"
lt_checks interop

# run_inspect OUT ERR ARGS...: lt-inspect with a timeout; sets rc
run_inspect() {
	local out=$1 err=$2; shift 2
	timeout -k 5 "$CASE_TIMEOUT" "$INSPECT" "$@" >"$out" 2>"$err"
	rc=$?
}
# describe_rc: why an exit code is not a clean one
describe_rc() {
	case $1 in
		124|137) echo "timed out after ${CASE_TIMEOUT}s" ;;
		*) if [ "$1" -gt 128 ]; then echo "crashed: killed by signal $(($1 - 128))"; else echo "exit code $1"; fi ;;
	esac
}

# ------------------------------------------------------------------------------------------ generation
# the specs: all of specs/*.json, or those named in LT_INTEROP_SPECS (e.g. "types nulls l12/features.json")
spec_files() {
	local n
	if [ -z "${LT_INTEROP_SPECS:-}" ]; then ls "$HERE"/specs/*.json; return; fi
	for n in ${LT_INTEROP_SPECS//,/ }; do
		case $n in */*) echo "$HERE/$n" ;; *) echo "$HERE/specs/$n.json" ;; esac	# a path: relative to test/interop
	done
}
DATA=""
if want gen || want scan || want take || want pages || want corrupt; then
	mapfile -t specs < <(spec_files)
	key=$( (cat "$HERE/ref.mjs" "$HERE/engine.mjs" "$HERE/package-lock.json" "$HERE/lance12/package-lock.json"
		echo "${LT_REF:-8} ${LT_INTEROP_STORAGE:-}"; for f in "${specs[@]}"; do echo "$f"; cat "$f"; done; node --version) | sha256sum | cut -c1-16)
	DATA=$WORK/$key
	if [ ! -f "$DATA/.complete" ]; then
		mkdir -p "$WORK"
		for old in "$WORK"/*; do [ "$old" != "$DATA" ] && rm -rf "$old"; done # keep one generation only
		rm -rf "$DATA"; mkdir -p "$DATA"
		echo "== generating datasets into $DATA ($JOBS jobs)"
		start=$SECONDS
		pids=()
		for ((j = 0; j < JOBS; j++)); do
			group=()
			for ((k = j; k < ${#specs[@]}; k += JOBS)); do group+=("${specs[k]}"); done
			[ ${#group[@]} -gt 0 ] || continue
			REF build "$DATA" "${group[@]}" >"$TMP/gen$j.log" 2>&1 &
			pids+=($!)
		done
		genfail=0
		for ((j = 0; j < ${#pids[@]}; j++)); do
			wait "${pids[j]}" || { genfail=1; ko "generate: ref.mjs build failed" "$(tail -n 5 "$TMP/gen$j.log")"; }
		done
		cat "$TMP"/gen*.log | sed 's/^/   /'
		chmod -R a+rX "$WORK" # a postgres backend reads these datasets in later suites
		[ "$genfail" -eq 0 ] && touch "$DATA/.complete"
		echo "== generation took $((SECONDS - start)) s"
	else
		echo "== reusing datasets in $DATA"
	fi
fi

# report_checks PREFIX: turn ref.mjs check output ("ok<TAB>label", "FAIL<TAB>label", "...<TAB>detail") into results
report_checks() {
	local status text
	while IFS=$'\t' read -r status text; do
		case $status in
			ok) ok "$1$text" ;;
			FAIL) ko "$1$text" ;;
			*) printf '       %s\n' "$text" ;;
		esac
	done
}

# -------------------------------------------------------------------------------------- scan cases
if want scan && [ -n "$DATA" ]; then
	echo "== scans: lt-inspect vs. the reference engine"
	mkdir -p "$TMP/info"
	for cases in "$DATA"/*.cases; do
		[ -e "$cases" ] || continue
		name=$(basename "$cases" .cases)
		while IFS=$'\t' read -r label expected args; do
			# shellcheck disable=SC2086 # args is a space-separated list without spaces inside arguments
			run_inspect "$TMP/out" "$TMP/err" scan "$DATA/$name.lance" $args
			if [ "$rc" -ne 0 ]; then
				ko "scan $name $label [$args]" "$(describe_rc $rc): $(head -c 400 "$TMP/err")"
			elif cmp -s "$DATA/$expected" "$TMP/out"; then
				ok "scan $name $label"
			else
				mapfile -t d < <(REF diff "$DATA/$expected" "$TMP/out")
				ko "scan $name $label [$args]" "${d[@]}"
			fi
			if [[ $args != *--columns* ]]; then
				# shellcheck disable=SC2086
				run_inspect "$TMP/info/$name.$label.json" "$TMP/err" info "$DATA/$name.lance" ${args//--with-rowid/}
				[ "$rc" -eq 0 ] || { ko "info $name $label" "$(describe_rc $rc): $(head -c 300 "$TMP/err")"; rm -f "$TMP/info/$name.$label.json"; }
			fi
		done <"$cases"
	done
	echo "== info: version, rows, columns, storage version, manifest naming"
	report_checks "" < <(REF check-info "$DATA" "$TMP/info" 2>&1 || printf 'FAIL\tref.mjs check-info failed\n')
fi

# ------------------------------------------------------------------------------------- random access
# lt-inspect take reads single rows by address through the random-access path (only the pages holding them).
# Pick every 37th live row plus the first and last, and a few addresses that hold no live row (deleted rows,
# offsets past a fragment's end, fragments that do not exist); the result must be exactly those rows of the
# engine's scan. Datasets with stable row ids are skipped: there _rowid is not the address.
if want take && [ -n "$DATA" ]; then
	echo "== random access: lt-inspect take vs. rows of the reference scan"
	for cases in "$DATA"/*.cases; do
		[ -e "$cases" ] || continue
		name=$(basename "$cases" .cases)
		expected=$DATA/$name.latest.expected.jsonl
		[ -s "$expected" ] || continue
		run_inspect "$TMP/info.json" "$TMP/err" info "$DATA/$name.lance"
		[ "$rc" -eq 0 ] || { ko "take $name: info failed" "$(head -c 300 "$TMP/err")"; continue; }
		node -e 'process.exit(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).reader_feature_flags & 2 ? 0 : 1)' \
			"$TMP/info.json" && continue
		node -e '
			const fs = require("fs");
			const rows = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
			const ids = rows.map((l) => BigInt(JSON.parse(l)._rowid));
			const pick = new Set();
			rows.forEach((l, k) => { if (k % 37 === 0 || k === rows.length - 1) pick.add(k); });
			const want = [...pick].map((k) => ids[k]);
			const live = new Set(ids.map(String));
			// addresses with no live row: a gap before a picked row, past the end, an absent fragment
			const extra = [ids.at(-1) + 1n, (ids.at(-1) >> 32n) + 1n << 32n, 4000n << 32n];
			for (const id of ids) if (id > 0n && !live.has(String(id - 1n))) { extra.push(id - 1n); break; }
			fs.writeFileSync(process.argv[2], [...want, ...extra].join(","));
			fs.writeFileSync(process.argv[3], [...pick].sort((a, b) => a - b).map((k) => rows[k] + "\n").join(""));
		' "$expected" "$TMP/addrs" "$TMP/take.expected"
		run_inspect "$TMP/out" "$TMP/err" take "$DATA/$name.lance" --with-rowid --rowaddrs "$(cat "$TMP/addrs")"
		if [ "$rc" -ne 0 ]; then
			ko "take $name" "$(describe_rc $rc): $(head -c 400 "$TMP/err")"
		elif cmp -s "$TMP/take.expected" "$TMP/out"; then
			ok "take $name ($(wc -l <"$TMP/out") rows)"
		else
			mapfile -t d < <(REF diff "$TMP/take.expected" "$TMP/out")
			ko "take $name" "${d[@]}"
		fi
	done
	# one row from datasets with several pages per column: only the pages holding it may be decoded
	for lance in "$DATA"/multipage_*.lance; do
		[ -d "$lance" ] || continue
		name=$(basename "$lance" .lance)
		run_inspect "$TMP/pages" "$TMP/err" pages "$lance"
		[ "$rc" -eq 0 ] || { ko "take $name: pages failed" "$(head -c 300 "$TMP/err")"; continue; }
		read -r columns total < <(node -e '
			const p = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
			console.log(new Set(p.map((x) => x.column_index)).size, p.length)' "$TMP/pages")
		run_inspect "$TMP/out" "$TMP/err" take "$lance" --rowaddrs 20000 --stats
		decoded=$(grep -o '"pages_decoded":[0-9]*' "$TMP/err" | cut -d: -f2)
		if [ "$rc" -eq 0 ] && [ -n "$decoded" ] && [ "$decoded" -le "$columns" ] && [ "$total" -gt "$columns" ]; then
			ok "take $name: one row decodes $decoded of $total pages"
		else
			ko "take $name: one row decoded ${decoded:-?} pages ($columns columns, $total pages)" "$(head -c 300 "$TMP/err")"
		fi
	done
fi

# ---------------------------------------------------------------------------------------- encodings
if want pages && [ -n "$DATA" ]; then
	echo "== pages: encodings that must occur, and lt-inspect pages vs. the harness's own decoder"
	for spec in "$DATA"/*.spec.json; do
		[ -e "$spec" ] || continue
		name=$(basename "$spec" .spec.json)
		lt=-
		run_inspect "$TMP/pages" "$TMP/err" pages "$DATA/$name.lance"
		if [ "$rc" -eq 0 ]; then lt=$TMP/pages; else ko "pages $name: lt-inspect pages failed" "$(describe_rc $rc): $(head -c 300 "$TMP/err")"; fi
		report_checks "pages $name " < <(REF check-pages "$spec" "$DATA/$name.pages.jsonl" "$lt" 2>&1 || printf 'FAIL\tref.mjs check-pages failed\n')
	done
fi

# ----------------------------------------------------------------------------------------- fixtures
if want fixtures; then
	if [ -n "$FIXTURES" ] && [ -d "$FIXTURES" ]; then
		echo "== fixtures in $FIXTURES"
		for spec in "$FIXTURES"/*.spec.json; do
			[ -e "$spec" ] || continue
			name=$(basename "$spec" .spec.json)
			mapfile -t extra < <(node -e 'for (const a of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).scan_args || []) console.log(a)' "$spec")
			for exp in "$FIXTURES/$name.expected.jsonl" "$FIXTURES/$name".v*.expected.jsonl; do
				[ -e "$exp" ] || continue
				label=${exp#"$FIXTURES/$name"}; label=${label%.expected.jsonl}; label=${label#.}; label=${label:-latest}
				args=(--with-rowid "${extra[@]}")
				[[ $label == v* ]] && args+=(--version "${label#v}")
				run_inspect "$TMP/out" "$TMP/err" scan "$FIXTURES/$name.lance" "${args[@]}"
				if [ "$rc" -ne 0 ]; then
					ko "fixture $name $label [${args[*]}]" "$(describe_rc $rc): $(head -c 400 "$TMP/err")"
				elif cmp -s "$exp" "$TMP/out"; then
					ok "fixture $name $label"
				else
					mapfile -t d < <(REF diff "$exp" "$TMP/out")
					ko "fixture $name $label [${args[*]}]" "${d[@]}"
				fi
			done
		done
	else
		echo "== fixtures: no fixture corpus here (set LT_FIXTURES); skipped"
	fi
fi

# -------------------------------------------------------------------------------------- corruption
# Each corrupted copy must make the reference engine fail too (else the corruption is not a real one and the
# check would prove nothing), and lt-inspect must exit with an error (1-123; no signal, no timeout, no sanitizer
# report) whose message names the damaged file.
corrupt_case() { # corrupt_case LABEL SOURCE-DATASET MUTATOR SCAN-ARGS...
	local label=$1 src=$2 mutate=$3; shift 3
	local dir=$TMP/corrupt/$label victim
	rm -rf "$dir"; mkdir -p "$TMP/corrupt"; cp -r "$src" "$dir"; chmod -R u+w "$dir"
	victim=$($mutate "$dir") || { ko "corrupt $label: cannot prepare ($victim)"; return; }
	local base; base=$(basename "$victim")
	if REF scan "$dir" "$@" >/dev/null 2>"$TMP/referr"; then
		ko "corrupt $label: the reference engine reads the damaged copy without error; the corruption proves nothing"
		return
	fi
	local bin tag
	for bin in "$INSPECT" "$INSPECT_SAN"; do
		[ -x "$bin" ] || continue
		tag=""; [ "$bin" = "$INSPECT_SAN" ] && tag=" (sanitizer build)"
		ASAN_OPTIONS=exitcode=86:detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:exitcode=86:print_stacktrace=1 \
			timeout -k 5 "$CASE_TIMEOUT" "$bin" scan "$dir" "$@" >/dev/null 2>"$TMP/err"
		rc=$?
		if [ "$rc" -eq 0 ]; then
			ko "corrupt $label$tag: lt-inspect exited 0 on a damaged $base"
		elif [ "$rc" -eq 86 ] || grep -q 'Sanitizer\|runtime error:' "$TMP/err"; then
			ko "corrupt $label$tag: sanitizer report" "$(grep -m3 'ERROR\|runtime error\|SUMMARY' "$TMP/err")"
		elif [ "$rc" -ge 124 ]; then
			ko "corrupt $label$tag: $(describe_rc $rc)" "$(head -c 300 "$TMP/err")"
		elif ! grep -qF "$base" "$TMP/err"; then
			ko "corrupt $label$tag: the error does not name $base" "$(head -c 300 "$TMP/err")"
		else
			ok "corrupt $label$tag"
		fi
	done
}
first_data_file() { ls "$1"/data/*.lance | head -n 1; }
latest_manifest() { # the newest version's manifest, V1 or V2 naming
	node -e '
		const fs = require("fs"), p = require("path"), d = p.join(process.argv[1], "_versions"), M = (1n << 64n) - 1n;
		let best = null;
		for (const f of fs.readdirSync(d).filter((f) => /^\d+\.manifest$/.test(f))) {
			const n = BigInt(f.split(".")[0]), v = f.length === 29 && n > M / 2n ? M - n : n;
			if (!best || v > best[0]) best = [v, f];
		}
		console.log(p.join(d, best[1]));' "$1"
}
mut_truncate_data() { local f; f=$(first_data_file "$1"); truncate -s $(($(stat -c %s "$f") / 2)) "$f" && echo "$f"; }
mut_data_magic() { local f; f=$(first_data_file "$1"); printf 'LANX' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") - 4)) conv=notrunc status=none && echo "$f"; }
mut_missing_data() { local f; f=$(first_data_file "$1"); rm -f "$f" && echo "$f"; }
mut_manifest_pos() { # manifest_pos (footer) now points far beyond the end of the file
	local f; f=$(latest_manifest "$1"); printf '\x40' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") - 12)) conv=notrunc status=none && echo "$f"
}
mut_manifest_len() { # set the top bit of the protobuf length prefix at manifest_pos: it now runs past the file
	local f pos; f=$(latest_manifest "$1")
	pos=$(od -An -t u8 -j $(($(stat -c %s "$f") - 16)) -N 8 "$f" | tr -d ' ')
	printf '\x80' | dd of="$f" bs=1 seek=$((pos + 3)) conv=notrunc status=none && echo "$f"
}
mut_manifest_short() { local f; f=$(latest_manifest "$1"); truncate -s 20 "$f" && echo "$f"; }
mut_garbage() { # mut_garbage DIR GLOB: overwrite the newest matching file (highest read version) with garbage
	local f; f=$(cd "$1" && ls $2 2>/dev/null | sort -t- -k2,2n | tail -n 1); [ -n "$f" ] || { echo "no $2"; return 1; }
	f=$1/$f
	head -c "$(stat -c %s "$f")" /dev/zero | tr '\0' '\253' >"$f" && echo "$f"
}
mut_garbage_bin() { mut_garbage "$1" "_deletions/*.bin"; }
mut_garbage_arrow() { mut_garbage "$1" "_deletions/*.arrow"; }
mut_truncate_bin() { local f; f=$(cd "$1" && ls _deletions/*.bin | sort -t- -k2,2n | tail -n 1); truncate -s 7 "$1/$f" && echo "$1/$f"; }

if want corrupt && [ -n "$DATA" ]; then
	echo "== corrupted copies"
	corrupt_case truncated-data-v2_1 "$DATA/types_v2_1.lance" mut_truncate_data
	corrupt_case truncated-data-v2_0 "$DATA/types_v2_0.lance" mut_truncate_data
	corrupt_case truncated-data-legacy "$DATA/types_legacy.lance" mut_truncate_data
	corrupt_case data-bad-magic-v2_2 "$DATA/types_v2_2.lance" mut_data_magic
	corrupt_case missing-data-file "$DATA/types_v2_1.lance" mut_missing_data
	corrupt_case manifest-bad-position "$DATA/types_v2_1.lance" mut_manifest_pos
	corrupt_case manifest-bad-length "$DATA/deletions_v2_1.lance" mut_manifest_len
	corrupt_case manifest-truncated "$DATA/v1_manifests_v2_1.lance" mut_manifest_short
	corrupt_case garbage-deletion-bin "$DATA/deletions_v2_1.lance" mut_garbage_bin
	corrupt_case garbage-deletion-arrow "$DATA/deletions_v2_1.lance" mut_garbage_arrow
	corrupt_case truncated-deletion-bin "$DATA/deletions_legacy.lance" mut_truncate_bin
fi

finish
