#!/usr/bin/env bash
# test/interop/index.sh — scalar indexes built by the real Lance engine, read by lt_fdw's C library.
#
#   test/interop/index.sh            generate (or reuse) the datasets of index/*.json, then check them
#
# For every dataset the reference builds from a spec in index/ (create_index ops, appends, deletes,
# optimize), it checks:
#   index    `lt-inspect index` lists each expected index with its kind and covered / unindexed fragments;
#   query    for each query of the spec, `lt-inspect index-query` (the index for the fragments it covers,
#            a filtered scan for the rest, minus deleted rows) returns exactly the row ids of the engine's
#            own filtered scan (`ref.mjs scan --filter`), and the same rows as `--no-index` (a filtered scan
#            of everything with lt_fdw's filter). Queries marked "ref": false are compared with --no-index
#            only (where the engine's SQL semantics differ from Postgres's; the spec says why);
#            A query's "max_bytes_read" bounds what the lookup reads (index pages are read chunk by chunk);
#   san      the same lookups under ASan/UBSan (build/lt-inspect-san) for one query per index;
#   corrupt  truncated and bit-flipped copies of every index file: a clean error naming the file (or a
#            result, when the damage is harmless), never a crash or a sanitizer report;
#   fixture  the shared fixture corpus's filtered queries on one indexed column vs its expected rows.
# Prints ok/FAIL per check and ends with "interop-index: N passed, M failed".
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
INSPECT_SAN=${LT_INSPECT_SAN:-$ROOT/build/lt-inspect-san}
BASE=${LT_INTEROP_DIR:-$ROOT/build/interop}-index
CASE_TIMEOUT=${LT_CASE_TIMEOUT:-120}

. "$HERE/checks.sh"
lt_checks interop-index

# ------------------------------------------------------------------------------------------- generate
hash=$(cat "$HERE/ref.mjs" "$HERE"/index/*.json "$HERE/package-lock.json" <(node --version) | sha256sum | cut -c1-16)
WORK=$BASE/$hash
if [ ! -f "$WORK/.done" ]; then
	rm -rf "$BASE"
	mkdir -p "$WORK"
	for spec in "$HERE"/index/*.json; do
		name=$(basename "$spec" .json)
		echo "== generating $name"
		if ! node "$HERE/ref.mjs" make "$WORK/$name.lance" "$spec" >"$TMP/gen.log" 2>&1; then
			ko "generate: $name" "$(tail -n 3 "$TMP/gen.log")"
		fi
	done
	touch "$WORK/.done"
fi

# spec_field SPEC JS-EXPR: evaluate an expression over the spec (as `s`), one output line per array item
spec_lines() { node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); const v=('"$2"'); for (const x of (Array.isArray(v)?v:[v])) console.log(typeof x==="string"?x:JSON.stringify(x));' "$1"; }
# rowids of a reference scan (one per line, ascending) from its JSON lines
ref_rowids() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n")) if(l) console.log(JSON.parse(l)._rowid)})'; }
# the single column a WHERE expression names
where_column() { node -e 'const kw=new Set(["and","or","not","between","in","is","null","true","false","date","array_has_all","array_has_any"]); const t=process.argv[1].replace(/'"'"'(?:[^'"'"']|'"'"''"'"')*'"'"'/g,"").match(/[A-Za-z_][A-Za-z0-9_]*/g)||[]; console.log(t.find(x=>!kw.has(x.toLowerCase())))' "$1"; }

for spec in "$HERE"/index/*.json; do
	name=$(basename "$spec" .json)
	ds=$WORK/$name.lance
	[ -d "$ds" ] || { ko "$name: dataset missing"; continue; }

	# ---------------------------------------------------------------------------------------- index
	if timeout "$CASE_TIMEOUT" "$INSPECT" index "$ds" >"$TMP/index.jsonl" 2>"$TMP/err"; then
		while IFS= read -r exp; do
			res=$(node -e '
				const e=JSON.parse(process.argv[1]);
				const got=require("fs").readFileSync(process.argv[2],"utf8").split("\n").filter(Boolean).map(JSON.parse).find(x=>x.name===e.name);
				if(!got) { console.log("no index "+e.name); process.exit(); }
				const bad=[];
				if(got.kind!==e.kind) bad.push(`kind ${got.kind}, expected ${e.kind}`);
				if(!got.usable) bad.push(`unusable: ${got.unusable_reason}`);
				if(e.covered!==undefined && got.covered.length!==e.covered) bad.push(`${got.covered.length} covered fragments, expected ${e.covered}`);
				if(e.unindexed!==undefined && got.unindexed.length!==e.unindexed) bad.push(`${got.unindexed.length} unindexed fragments, expected ${e.unindexed}`);
				console.log(bad.join("; "));' "$exp" "$TMP/index.jsonl")
			label="$name: index $(node -e 'console.log(JSON.parse(process.argv[1]).name)' "$exp")"
			if [ -z "$res" ]; then ok "$label"; else ko "$label" "$res"; fi
		done < <(spec_lines "$spec" 's.expect_indexes || []')
	else
		ko "$name: lt-inspect index" "$(head -n 3 "$TMP/err")"
	fi

	# ---------------------------------------------------------------------------------------- query
	stable=$(spec_lines "$spec" 's.stable_row_ids ? 1 : 0')
	declare -A san_done=()
	while IFS= read -r q; do
		where=$(node -e 'console.log(JSON.parse(process.argv[1]).where)' "$q")
		use_ref=$(node -e 'console.log(JSON.parse(process.argv[1]).ref === false ? 0 : 1)' "$q")
		col=$(where_column "$where")
		label="$name: $where"
		if ! timeout "$CASE_TIMEOUT" "$INSPECT" index-query "$ds" --where "$where" --stats >"$TMP/got" 2>"$TMP/stats"; then
			ko "$label" "lt-inspect index-query failed: $(head -n 3 "$TMP/stats")"
			continue
		fi
		stats=$(tail -n 1 "$TMP/stats")
		if ! grep -q '"index":"[^"]' <<<"$stats"; then
			ko "$label" "no index was used: $stats"
			continue
		fi
		timeout "$CASE_TIMEOUT" "$INSPECT" index-query "$ds" --where "$where" --no-index >"$TMP/scan" 2>"$TMP/err" ||
			{ ko "$label" "--no-index failed: $(head -n 3 "$TMP/err")"; continue; }
		if ! cmp -s "$TMP/got" "$TMP/scan"; then
			ko "$label" "index: $(wc -l <"$TMP/got") rows, filtered scan: $(wc -l <"$TMP/scan") rows" \
				"$(diff "$TMP/scan" "$TMP/got" | head -n 4 | tr '\n' ' ')"
			continue
		fi
		if [ "$use_ref" = 1 ]; then
			if ! (cd "$HERE" && node ref.mjs scan "$ds" --columns "$col" --with-rowid --filter "$where") >"$TMP/ref.jsonl" 2>"$TMP/err"; then
				ko "$label" "ref.mjs scan failed: $(head -n 2 "$TMP/err")"
				continue
			fi
			ref_rowids <"$TMP/ref.jsonl" >"$TMP/ref"
			# with stable row ids the engine reports row ids: map our addresses to theirs
			cp "$TMP/got" "$TMP/mine"
			if [ "$stable" = 1 ]; then
				: >"$TMP/mine"
				if [ -s "$TMP/got" ] && ! timeout "$CASE_TIMEOUT" "$INSPECT" take "$ds" --rowaddrs "$(paste -sd, "$TMP/got")" \
					--columns "$col" --with-rowid 2>"$TMP/err" | ref_rowids >"$TMP/mine"; then
					ko "$label" "lt-inspect take failed: $(head -n 2 "$TMP/err")"
					continue
				fi
			fi
			if ! cmp -s "$TMP/mine" "$TMP/ref"; then
				ko "$label" "lt_fdw: $(wc -l <"$TMP/mine") rows, reference: $(wc -l <"$TMP/ref") rows" \
					"$(diff "$TMP/ref" "$TMP/mine" | head -n 4 | tr '\n' ' ')"
				continue
			fi
		fi
		max_bytes=$(node -e 'console.log(JSON.parse(process.argv[1]).max_bytes_read ?? "")' "$q")
		bytes=$(sed -E 's/.*"bytes_read":([0-9]+).*/\1/' <<<"$stats")
		if [ -n "$max_bytes" ] && [ "$bytes" -gt "$max_bytes" ]; then
			ko "$label" "read $bytes bytes, at most $max_bytes expected (only the index pages and rows needed)"
			continue
		fi
		ok "$label ($(wc -l <"$TMP/got") rows, $bytes bytes read; $(sed -E 's/.*"kind":"([a-z_]+)".*"pages_total":([0-9]+),"pages_read":([0-9]+).*"scanned_fragments":([0-9]+).*/\1, \3 of \2 pages or keys, \4 fragment(s) scanned/' <<<"$stats"))"

		# the same lookup under the sanitizers, once per column
		if [ -x "$INSPECT_SAN" ] && [ -z "${san_done[$col]:-}" ]; then
			san_done[$col]=1
			if timeout "$CASE_TIMEOUT" "$INSPECT_SAN" index-query "$ds" --where "$where" >"$TMP/san" 2>"$TMP/err" &&
				cmp -s "$TMP/san" "$TMP/got"; then
				ok "$name: san: $where"
			else
				ko "$name: san: $where" "$(grep -m 3 -E 'ERROR|runtime error|lt-inspect' "$TMP/err")"
			fi
		fi
	done < <(spec_lines "$spec" 's.queries || []')
	unset san_done

	# -------------------------------------------------------------------------------------- corrupt
	# damage one index file at a time in a copy of the dataset; query through that index
	[ -x "$INSPECT_SAN" ] || continue
	while IFS= read -r line; do
		iname=$(cut -f1 <<<"$line") icol=$(cut -f2 <<<"$line") uuid=$(cut -f3 <<<"$line")
		case $(cut -f4 <<<"$line") in
			label_list) where="array_has_any($icol, ['lance'])" ;;
			*) where="$icol IS NOT NULL" ;;
		esac
		for f in "$ds/_indices/$uuid"/*; do
			fname=$(basename "$f")
			size=$(stat -c %s "$f")
			for how in truncate flip-middle flip-tail zero-tail; do
				rm -rf "$TMP/c.lance"
				cp -r "$ds" "$TMP/c.lance"
				t="$TMP/c.lance/_indices/$uuid/$fname"
				case $how in
					truncate) truncate -s $((size / 2)) "$t" ;;
					flip-middle) printf '\xff\x00\xa5\x5a' | dd of="$t" bs=1 seek=$((size / 2)) conv=notrunc status=none ;;
					flip-tail) printf '\x7f\xff\xff\xff\xff\xff' | dd of="$t" bs=1 seek=$((size - 60)) conv=notrunc status=none ;;
					zero-tail) dd if=/dev/zero of="$t" bs=1 seek=$((size - 200 > 0 ? size - 200 : 0)) count=150 conv=notrunc status=none ;;
				esac
				label="$name: corrupt $iname/$fname ($how)"
				timeout "$CASE_TIMEOUT" "$INSPECT_SAN" index-query "$TMP/c.lance" --index "$iname" --where "$where" >/dev/null 2>"$TMP/err"
				rc=$?
				if grep -qE 'Sanitizer|runtime error' "$TMP/err" || [ "$rc" -gt 1 ]; then
					ko "$label" "exit $rc: $(grep -m 2 -E 'ERROR|runtime error|lt-inspect' "$TMP/err")"
				elif [ "$rc" -eq 1 ] && ! grep -q "$fname" "$TMP/err"; then
					ko "$label" "the error does not name the file: $(head -n 1 "$TMP/err")"
				elif [ "$rc" -eq 1 ] && ! grep -q "LT_ECORRUPT\|corrupt" "$TMP/err"; then
					ko "$label" "not a corruption error: $(head -n 1 "$TMP/err")"
				else
					ok "$label (exit $rc)"
				fi
			done
		done
	done < <(node -e 'for (const l of require("fs").readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean)) { const x=JSON.parse(l); for (const s of x.segments.slice(0,1)) console.log([x.name,x.columns[0],s.uuid,x.kind].join("\t")); }' "$TMP/index.jsonl")
done
# ------------------------------------------------------------------------------------------- fixtures
# the shared fixture corpus (when present): its filtered queries on one column with an index, against the
# engine's expected rows recorded there (q<N>.expected.jsonl)
if [ -z "${LT_FIXTURES:-}" ]; then
	for d in "$ROOT/../shared/lance-fixtures" /work/shared/lance-fixtures; do
		[ -d "$d" ] && { LT_FIXTURES=$(cd "$d" && pwd); break; }
	done
fi
if [ -n "${LT_FIXTURES:-}" ] && [ -d "$LT_FIXTURES" ]; then
	for spec in "$LT_FIXTURES"/*.spec.json; do
		name=$(basename "$spec" .spec.json)
		[ -d "$LT_FIXTURES/$name.lance" ] && [ -d "$LT_FIXTURES/$name.lance/_indices" ] || continue
		"$INSPECT" index "$LT_FIXTURES/$name.lance" >"$TMP/fx-index.jsonl" 2>/dev/null || continue
		n=0
		while IFS= read -r where; do
			exp="$LT_FIXTURES/$name.q$n.expected.jsonl"
			n=$((n + 1))
			[ -f "$exp" ] || continue
			col=$(where_column "$where")
			# one column only, and it has a usable index
			[ "$(node -e 'const kw=new Set(["and","or","not","between","in","is","null","true","false","date","array_has_all","array_has_any"]); const t=process.argv[1].replace(/'"'"'(?:[^'"'"']|'"'"''"'"')*'"'"'/g,"").match(/[A-Za-z_][A-Za-z0-9_]*/g)||[]; console.log(new Set(t.filter(x=>!kw.has(x.toLowerCase()))).size)' "$where")" = 1 ] || continue
			grep -q "\"columns\":\[\"$col\"\],\"usable\":true" "$TMP/fx-index.jsonl" || continue
			label="fixture $name: $where"
			if ! timeout "$CASE_TIMEOUT" "$INSPECT" index-query "$LT_FIXTURES/$name.lance" --where "$where" >"$TMP/got" 2>"$TMP/err"; then
				ko "$label" "$(head -n 2 "$TMP/err")"
				continue
			fi
			ref_rowids <"$exp" >"$TMP/ref"
			if cmp -s "$TMP/got" "$TMP/ref"; then ok "$label ($(wc -l <"$TMP/got") rows)"; else ko "$label" "lt_fdw: $(wc -l <"$TMP/got") rows, fixture: $(wc -l <"$TMP/ref") rows"; fi
		done < <(spec_lines "$spec" '(s.queries || []).map(q => q.filter)')
	done
else
	echo "(no shared fixture corpus: fixture queries skipped)"
fi
finish
