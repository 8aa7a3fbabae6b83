#!/usr/bin/env bash
# test/interop/index-build.sh — scalar indexes built by lt_fdw (lt-inspect create-index), used by the real
# Lance engine.
#
#   test/interop/index-build.sh      generate the datasets of index-build/*.json, build, check
#
# For every spec the reference writes the data twice: "ours" (lt-inspect create-index builds the spec's
# indexes and zone maps) and "ref" (the reference builds the same btree / bitmap / label_list indexes).
# Checks:
#   build    every create-index commits a new version;
#   list     the engine lists each index (listIndices / indexStats) with its type and every live row indexed;
#   plan     for each query the engine's plan (explainPlan) has ScalarIndexQuery on the query's index
#            (zone maps too: Lance 8 plans with them);
#   rows     the engine's filtered scan on ours returns exactly the row ids of lt-inspect's filtered scan
#            (--no-index), and lt-inspect's index lookup on ours returns the same as on ref;
#   files    the rows, schema and metadata of our index files equal the reference's (rows compared as a set:
#            the order of equal btree keys is the reference's choice);
#   writes   after lt-inspect appends (re-encoded rows: an unindexed fragment) and deletes, the engine
#            counts unindexed rows and still answers every query as lt-inspect's filtered scan;
#   commit   a build on an older version rebases over a concurrent append (the new fragment stays
#            unindexed); a concurrent index of the same name is a conflict (exit 3); building an index
#            again under its name replaces it (one index listed).
#   nan      float64 / float32 columns with NaN of both signs, -0 and 0, +-Infinity, nulls, all-NaN and
#            all-null zones (index-nan/floats.json): lt_fdw's zone map and btree on each; every comparison
#            (= <> < <= > >= IN BETWEEN NOT IS [NOT] NULL, literals 0, -0.0, finite, +-Infinity, NaN) gives the
#            engine the same rows with the index as without (its scan of the version before the index), and
#            it plans with the index; lt-inspect's lookups through each index (PostgreSQL's semantics) equal
#            its scan; the btree files equal the engine's own btree on the same data; a bitmap on a float
#            column is refused.  One filter is the engine's own limit, checked as such: `x < -Infinity`
#            (its filter puts negative NaNs below -Infinity, but it prunes zones for that bound whatever their
#            statistics, so only the rows that are not NaN are required).
# Prints ok/FAIL per check and ends with "interop-index-build: N passed, M failed".
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BASE=${LT_INTEROP_DIR:-$ROOT/build/interop}-index-build
CASE_TIMEOUT=${LT_CASE_TIMEOUT:-120}

. "$HERE/checks.sh"
lt_checks interop-index-build
# the specs: index-build/*.json, or those named in LT_INDEX_BUILD_SPECS (test/interop/l12.sh)
index_specs() {
	local n
	if [ -z "${LT_INDEX_BUILD_SPECS:-}" ]; then ls "$HERE"/index-build/*.json; return; fi
	for n in ${LT_INDEX_BUILD_SPECS//,/ }; do echo "$HERE/index-build/$n.json"; done
}

ref() { (cd "$HERE" && timeout "$CASE_TIMEOUT" node ref.mjs "$@"); }
lines() { node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); const v=('"$2"'); for (const x of (Array.isArray(v)?v:[v])) console.log(typeof x==="string"?x:JSON.stringify(x));' "$1"; }
field() { node -e 'const o=JSON.parse(process.argv[1]); const v=o[process.argv[2]]; console.log(v===undefined?"":v)' "$1" "$2"; }
ref_rowids() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=[];for(const l of s.split("\n")) if(l) r.push(BigInt(JSON.parse(l)._rowid)); r.sort((a,b)=>a<b?-1:a>b?1:0); for(const x of r) console.log(String(x))})'; }
# the index dirs of a dataset, "name uuid" per line
index_dirs() { "$INSPECT" index "$1" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n").filter(Boolean)){const o=JSON.parse(l);for(const g of o.segments)console.log(o.name+" "+g.uuid)}})'; }
# lt-inspect's filtered scan / index lookup as row ids (addresses mapped to ids with stable row ids)
our_rows() { # DIR WHERE MODE(--no-index|--index NAME) STABLE
	local out
	out=$(timeout "$CASE_TIMEOUT" "$INSPECT" index-query "$1" --where "$2" $3) || return 1
	if [ "$4" = 1 ] && [ -n "$out" ]; then
		timeout "$CASE_TIMEOUT" "$INSPECT" take "$1" --rowaddrs "$(paste -sd, <<<"$out")" --columns id --with-rowid | ref_rowids
	else
		printf '%s\n' "$out" | sed '/^$/d'
	fi
}

check_queries() { # LABEL DIR SPEC STABLE
	local label=$1 ds=$2 spec=$3 stable=$4 q where
	while IFS= read -r q; do
		where=$(field "$q" where)
		if ! ref scan "$ds" --columns id --with-rowid --filter "$where" 2>"$TMP/err" | ref_rowids >"$TMP/ref"; then
			ko "$label: $where" "ref.mjs scan: $(head -n 2 "$TMP/err")"; continue
		fi
		if ! our_rows "$ds" "$where" --no-index "$stable" >"$TMP/scan" 2>"$TMP/err"; then
			ko "$label: $where" "lt-inspect: $(head -n 2 "$TMP/err")"; continue
		fi
		if cmp -s "$TMP/ref" "$TMP/scan"; then ok "$label: $where ($(wc -l <"$TMP/ref") rows)"
		else ko "$label: $where" "reference: $(wc -l <"$TMP/ref") rows, lt-inspect: $(wc -l <"$TMP/scan") rows" \
			"$(diff "$TMP/ref" "$TMP/scan" | head -n 4 | tr '\n' ' ')"; fi
	done < <(lines "$spec" 's.queries')
}

# ------------------------------------------------------------------------------------------- generate
hash=$(cat "$HERE/ref.mjs" "$HERE/index-build.sh" "$HERE"/index-build/*.json "$HERE"/index-nan/*.json "$HERE/package-lock.json" <(node --version; echo "${LT_REF:-8} ${LT_INDEX_BUILD_SPECS:-}") | sha256sum | cut -c1-16)
WORK=$BASE/$hash
if [ ! -f "$WORK/.done" ]; then
	rm -rf "$BASE"
	mkdir -p "$WORK"
	for spec in $(index_specs); do
		name=$(basename "$spec" .json)
		echo "== generating $name"
		# the reference's twin: the same data and ops, then its own create_index for every index of the spec
		node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); s.ops=[...(s.ops||[]), ...s.indexes.map(i=>({op:"create_index",column:i.column,kind:i.kind,...(i.name?{name:i.name}:{})}))]; console.log(JSON.stringify(s))' "$spec" >"$WORK/$name.ref.json"
		ref make "$WORK/$name.ours.lance" "$spec" >"$TMP/gen.log" 2>&1 || ko "generate: $name" "$(tail -n 3 "$TMP/gen.log")"
		ref make "$WORK/$name.ref.lance" "$WORK/$name.ref.json" >"$TMP/gen.log" 2>&1 || ko "generate: $name (reference indexes)" "$(tail -n 3 "$TMP/gen.log")"
	done
	echo "== generating index-nan/floats"
	ref make "$WORK/floats.lance" "$HERE/index-nan/floats.json" >"$TMP/gen.log" 2>&1 || ko "generate: floats" "$(tail -n 3 "$TMP/gen.log")"
	# the engine's btrees on a copy of the same data (a spec passed through JSON.stringify would turn -0 into 0)
	echo '{"ops":[{"op":"create_index","column":"g","kind":"btree"},{"op":"create_index","column":"h","kind":"btree"}]}' >"$WORK/floats.ref.json"
	cp -r "$WORK/floats.lance" "$WORK/floats.ref.lance"
	ref apply "$WORK/floats.ref.lance" "$WORK/floats.ref.json" >"$TMP/gen.log" 2>&1 || ko "generate: floats (reference btrees)" "$(tail -n 3 "$TMP/gen.log")"
	touch "$WORK/.done"
fi

for spec in $(index_specs); do
	name=$(basename "$spec" .json)
	src=$WORK/$name.ours.lance
	refds=$WORK/$name.ref.lance
	[ -d "$src" ] && [ -d "$refds" ] || { ko "$name: dataset missing"; continue; }
	stable=$(lines "$spec" 's.stable_row_ids ? 1 : 0')
	ds=$TMP/$name.lance
	rm -rf "$ds"; cp -r "$src" "$ds"

	# ---------------------------------------------------------------------------------------- build
	while IFS= read -r ix; do
		col=$(field "$ix" column) kind=$(field "$ix" kind) iname=$(field "$ix" name)
		[ -n "$kind" ] || kind=zonemap
		if "$INSPECT" create-index "$ds" --column "$col" --kind "$kind" ${iname:+--name "$iname"} >"$TMP/out" 2>"$TMP/err"; then
			ok "$name: build $kind on $col ($(node -e 'const o=JSON.parse(process.argv[1]);console.log(`${o.rows} rows, ${o.bytes} bytes, version ${o.version}`)' "$(cat "$TMP/out")"))"
		else
			ko "$name: build $kind on $col" "$(head -n 3 "$TMP/err")"
		fi
	done < <(lines "$spec" '[...s.indexes, ...s.zonemaps]')
	live=$("$INSPECT" info "$ds" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const o=JSON.parse(s);console.log(o.fragments.reduce((a,f)=>a+f.live_rows,0))})')

	# ---------------------------------------------------------------------------------------- list
	if ref indexes "$ds" >"$TMP/list" 2>"$TMP/err"; then
		while IFS= read -r ix; do
			iname=$(node -e 'const i=JSON.parse(process.argv[1]); console.log(i.name||i.column+"_idx")' "$ix")
			res=$(node -e '
				const e=JSON.parse(process.argv[1]), name=process.argv[2], live=Number(process.argv[3]);
				const want={btree:"BTree",bitmap:"Bitmap",label_list:"LabelList"}[e.kind];
				const got=require("fs").readFileSync(process.argv[4],"utf8").split("\n").filter(Boolean).map(JSON.parse).find(x=>x.name===name);
				if(!got) { console.log("the engine does not list it"); process.exit(); }
				const bad=[];
				if(got.indexType!==want) bad.push(`type ${got.indexType}, expected ${want}`);
				if(got.stats?.numIndexedRows!==live) bad.push(`${got.stats?.numIndexedRows} rows indexed, ${live} live`);
				if(got.stats?.numUnindexedRows!==0) bad.push(`${got.stats?.numUnindexedRows} rows unindexed`);
				console.log(bad.join("; "));' "$ix" "$iname" "$live" "$TMP/list")
			if [ -z "$res" ]; then ok "$name: the engine lists $iname"; else ko "$name: the engine lists $iname" "$res"; fi
		done < <(lines "$spec" 's.indexes')
	else
		ko "$name: ref.mjs indexes" "$(head -n 2 "$TMP/err")"
	fi

	# ---------------------------------------------------------------------------------------- plan
	while IFS= read -r q; do
		where=$(field "$q" where) iname=$(field "$q" index)
		if ! ref plan "$ds" --filter "$where" >"$TMP/plan" 2>"$TMP/err"; then
			ko "$name: plan $where" "$(head -n 2 "$TMP/err")"; continue
		fi
		if grep -q "ScalarIndexQuery: .*@$iname(" "$TMP/plan"; then ok "$name: the engine plans $where with $iname"
		else ko "$name: the engine plans $where with $iname" "$(tr '\n' ' ' <"$TMP/plan" | cut -c1-400)"; fi
	done < <(lines "$spec" 's.queries')

	# ---------------------------------------------------------------------------------------- rows
	check_queries "$name: rows" "$ds" "$spec" "$stable"
	while IFS= read -r q; do
		where=$(field "$q" where) iname=$(field "$q" index)
		# the reference has no zone maps: compare our lookups with its indexes where it has one
		grep -q "\"name\":\"$iname\"" <("$INSPECT" index "$refds") || continue
		if our_rows "$ds" "$where" "--index $iname" 0 >"$TMP/a" 2>"$TMP/err" && our_rows "$refds" "$where" "--index $iname" 0 >"$TMP/b" 2>>"$TMP/err"; then
			if cmp -s "$TMP/a" "$TMP/b"; then ok "$name: lookup $where: our index = the reference's"
			else ko "$name: lookup $where: our index = the reference's" "ours $(wc -l <"$TMP/a"), reference's $(wc -l <"$TMP/b") rows"; fi
		else
			ko "$name: lookup $where" "$(head -n 2 "$TMP/err")"
		fi
	done < <(lines "$spec" 's.queries')

	# ---------------------------------------------------------------------------------------- files
	index_dirs "$ds" >"$TMP/ours.dirs"
	index_dirs "$refds" >"$TMP/ref.dirs"
	while read -r iname ruuid; do
		ouuid=$(awk -v n="$iname" '$1 == n {print $2}' "$TMP/ours.dirs")
		[ -n "$ouuid" ] || { ko "$name: files of $iname" "lt_fdw built no $iname"; continue; }
		for f in "$refds/_indices/$ruuid"/*.lance; do
			base=$(basename "$f")
			mine=$ds/_indices/$ouuid/$base
			[ -f "$mine" ] || { ko "$name: $iname/$base" "lt_fdw wrote no $base"; continue; }
			"$INSPECT" index-file "$f" >"$TMP/r" 2>"$TMP/err" && "$INSPECT" index-file "$mine" >"$TMP/m" 2>>"$TMP/err" ||
				{ ko "$name: $iname/$base" "index-file: $(head -n 2 "$TMP/err")"; continue; }
			hdr=$(node -e '
				const fs=require("fs"), h=f=>{const o=JSON.parse(fs.readFileSync(f,"utf8").split("\n")[0]); o.metadata=Object.fromEntries(Object.entries(o.metadata).sort());
				  if (process.env.LT_REF === "12") delete o.version; // Lance 12 writes index files as 2.2, lt_fdw as Lance 8 (2.1): both read both
				  return JSON.stringify(o)};
				const a=h(process.argv[1]), b=h(process.argv[2]); if(a!==b) console.log("reference: "+a+" | ours: "+b)' "$TMP/r" "$TMP/m")
			if [ -n "$hdr" ]; then ko "$name: $iname/$base schema and metadata" "$hdr"; continue; fi
			if cmp -s <(tail -n +2 "$TMP/r" | sort) <(tail -n +2 "$TMP/m" | sort); then
				ok "$name: $iname/$base: $(($(wc -l <"$TMP/r") - 1)) rows as the reference's ($(stat -c %s "$f") / $(stat -c %s "$mine") bytes)"
			else
				ko "$name: $iname/$base rows" "$(diff <(tail -n +2 "$TMP/r" | sort) <(tail -n +2 "$TMP/m" | sort) | head -n 4 | cut -c1-200 | tr '\n' ' ')"
			fi
		done
	done <"$TMP/ref.dirs"

	# ---------------------------------------------------------------------------------------- writes
	if "$INSPECT" append "$ds" --rewrite >/dev/null 2>"$TMP/err"; then
		addrs=$("$INSPECT" scan "$ds" --columns id --rowaddr | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const a=s.split("\n").filter(Boolean).map(l=>JSON.parse(l)._rowaddr); console.log(a.filter((_,i)=>i%9===2).join(","))})')
		if "$INSPECT" delete "$ds" --rowaddrs "$addrs" >/dev/null 2>"$TMP/err"; then
			unidx=$(ref indexes "$ds" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const a=s.split("\n").filter(Boolean).map(JSON.parse); console.log(Math.min(...a.map(x=>x.stats?.numUnindexedRows??0)))})')
			if [ "${unidx:-0}" -gt 0 ]; then ok "$name: after our append the engine counts $unidx unindexed rows"
			else ko "$name: after our append the engine counts unindexed rows" "got ${unidx:-nothing}"; fi
			check_queries "$name: after writes" "$ds" "$spec" "$stable"
		else
			ko "$name: lt-inspect delete" "$(head -n 2 "$TMP/err")"
		fi
	else
		ko "$name: lt-inspect append --rewrite" "$(head -n 2 "$TMP/err")"
	fi
done

# -------------------------------------------------------------------------------------------- commit
spec=$HERE/index-build/mixed.json
ds=$TMP/commit.lance
cp -r "$WORK/mixed.ours.lance" "$ds"
v0=$("$INSPECT" info "$ds" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
"$INSPECT" append "$ds" --rewrite >/dev/null 2>&1
if "$INSPECT" create-index "$ds" --column id --kind btree --read-version "$v0" >"$TMP/out" 2>"$TMP/err"; then
	got=$("$INSPECT" index "$ds" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const o=JSON.parse(s.split("\n")[0]);console.log(o.covered.length+" "+o.unindexed.length)})')
	att=$(field "$(cat "$TMP/out")" attempts)
	if [ "$got" = "3 1" ]; then ok "commit: a build on version $v0 rebased over a concurrent append (3 fragments indexed, 1 not; attempt $att)"
	else ko "commit: rebase over a concurrent append" "covered/unindexed: $got"; fi
	unidx=$(ref indexes "$ds" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const a=s.split("\n").filter(Boolean).map(JSON.parse); console.log(a[0]?.stats?.numUnindexedRows)})')
	[ "${unidx:-0}" -gt 0 ] && ok "commit: the engine counts $unidx unindexed rows" || ko "commit: the engine counts unindexed rows" "got ${unidx:-nothing}"
	check_queries "commit: rebased" "$ds" "$spec" 0
else
	ko "commit: rebase over a concurrent append" "$(head -n 2 "$TMP/err")"
fi
"$INSPECT" create-index "$ds" --column k --kind bitmap >/dev/null 2>&1
"$INSPECT" create-index "$ds" --column k --kind bitmap --read-version "$v0" >/dev/null 2>"$TMP/err"
rc=$?
if [ "$rc" = 3 ] && grep -q "k_idx" "$TMP/err"; then ok "commit: a concurrent index of the same name conflicts"
else ko "commit: a concurrent index of the same name conflicts" "exit $rc: $(head -n 2 "$TMP/err")"; fi
if "$INSPECT" create-index "$ds" --column k --kind btree --name k_idx >/dev/null 2>"$TMP/err"; then
	n=$(ref indexes "$ds" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const a=s.split("\n").filter(Boolean).map(JSON.parse).filter(x=>x.name==="k_idx"); console.log(a.length+" "+(a[0]?.indexType))})')
	[ "$n" = "1 BTree" ] && ok "commit: building k_idx again replaces it (the engine lists one, a BTree)" || ko "commit: replacing k_idx" "the engine lists: $n"
	ref plan "$ds" --filter "k = 5" | grep -q "ScalarIndexQuery: .*@k_idx(BTree)" && ok "commit: the engine plans with the replacement" || ko "commit: the engine plans with the replacement" "$(ref plan "$ds" --filter "k = 5" | tr '\n' ' ' | cut -c1-300)"
else
	ko "commit: replacing k_idx" "$(head -n 2 "$TMP/err")"
fi
"$INSPECT" create-index "$ds" --column s --kind bitmap --name k_idx >/dev/null 2>"$TMP/err"
rc=$?
[ "$rc" = 1 ] && grep -q "another column" "$TMP/err" && ok "commit: a name taken by an index of another column is refused" || ko "commit: a name taken by another column" "exit $rc: $(head -n 2 "$TMP/err")"
"$INSPECT" create-index "$ds" --column id --kind label_list >/dev/null 2>"$TMP/err"
rc=$?
[ "$rc" = 1 ] && grep -q "needs a list column" "$TMP/err" && ok "commit: label_list on a non-list column is refused" || ko "commit: label_list on a non-list" "exit $rc: $(head -n 2 "$TMP/err")"

# -------------------------------------------------------------------------------------------- nan
# the engine's filters (its SQL) and lt-inspect's (PostgreSQL's semantics) over column $1
engine_filters() { # COLUMN SQLTYPE (the special values are cast to the column's type, so the engine plans with its index)
	local c=$1 t=$2
	printf '%s\n' "$c = 0" "$c = -0.0" "$c <> 0" "$c < 0" "$c <= 0" "$c > 0" "$c >= 0" "$c < -0.0" "$c <= -0.0" "$c > -0.0" \
		"$c >= -0.0" "$c = 3" "$c > 5" "$c < -5" "$c >= 1e30" "$c <= -1e30" "$c > CAST('Infinity' AS $t)" \
		"$c >= CAST('Infinity' AS $t)" "$c <= CAST('-Infinity' AS $t)" "$c = CAST('NaN' AS $t)" \
		"$c < CAST('NaN' AS $t)" "$c >= CAST('NaN' AS $t)" "$c > CAST('NaN' AS $t)" "$c IS NULL" "$c IS NOT NULL" \
		"$c IN (0, 3, -12)" "$c BETWEEN -1 AND 1" "NOT ($c > 0)" "NOT ($c <= 5)" "$c = 30" "$c = -29"
}
pg_filters() {
	local c=$1
	printf '%s\n' "$c = 0" "$c = -0.0" "$c <> 0" "$c < 0" "$c <= 0" "$c > 0" "$c >= 0" "$c < -0.0" "$c > -0.0" "$c = 3" \
		"$c > 5" "$c < -5" "$c >= 1e30" "$c <= -1e30" "$c > 'Infinity'" "$c >= 'Infinity'" "$c < '-Infinity'" \
		"$c <= '-Infinity'" "$c = 'NaN'" "$c < 'NaN'" "$c >= 'NaN'" "$c > 'NaN'" "$c <= 'NaN'" "$c IS NULL" "$c IS NOT NULL" \
		"$c IN (0, 3, -12)" "$c IN (0, 'NaN')" "$c BETWEEN -1 AND 1" "NOT ($c > 0)" "NOT ($c < 5)" "$c = 30" "$c = -29"
}
for kind in zonemap btree; do
	ds=$TMP/floats-$kind.lance
	rm -rf "$ds"; cp -r "$WORK/floats.lance" "$ds"
	base=$("$INSPECT" info "$ds" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
	built=1
	for c in g h; do
		"$INSPECT" create-index "$ds" --column "$c" --kind "$kind" >/dev/null 2>"$TMP/err" || { built=0; ko "nan: build $kind on $c" "$(head -n 2 "$TMP/err")"; }
	done
	[ "$built" = 1 ] || continue
	for c in g h; do
		# the engine with lt_fdw's index, against itself without it
		t=DOUBLE; [ "$c" = h ] && t=FLOAT
		engine_filters "$c" "$t" >"$TMP/filters"
		if ref filters "$ds" "$TMP/filters" --version "$base" >"$TMP/res" 2>"$TMP/err"; then
			res=$(node -e '
				const r=require("fs").readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean).map(JSON.parse);
				const bad=r.filter(x=>!x.same).map(x=>`${x.where}: ${x.base_rows} rows without the index, ${x.rows} with (missing ${x.missing.join(",")}; extra ${x.extra.join(",")})`);
				const unused=r.filter(x=>!x.index_used && !/^NOT|IS NOT NULL|<>/.test(x.where)).map(x=>x.where);
				console.log(JSON.stringify({n:r.length, bad, unused}))' "$TMP/res")
			n=$(field "$res" n)
			bad=$(node -e 'const o=JSON.parse(process.argv[1]);console.log(o.bad.join(" | "))' "$res")
			unused=$(node -e 'const o=JSON.parse(process.argv[1]);console.log(o.unused.join(" | "))' "$res")
			if [ -z "$bad" ]; then ok "nan: $kind on $c: the engine returns the same rows with the index as without ($n filters)"
			else ko "nan: $kind on $c: the engine returns the same rows with the index as without" "$bad"; fi
			if [ -z "$unused" ]; then ok "nan: $kind on $c: the engine plans with the index"
			else ko "nan: $kind on $c: the engine plans with the index" "not for: $unused"; fi
		else
			ko "nan: $kind on $c: ref.mjs filters" "$(head -n 2 "$TMP/err")"
		fi
		# its own limit: below -Infinity only negative NaNs, which its zone pruning drops whatever the statistics
		printf '%s\n' "$c < CAST('-Infinity' AS $t)" "$c < CAST('-Infinity' AS $t) AND NOT isnan($c)" >"$TMP/filters"
		if ref filters "$ds" "$TMP/filters" --version "$base" >"$TMP/res" 2>"$TMP/err"; then
			got=$(node -e '
				const [a,b]=require("fs").readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean).map(JSON.parse);
				console.log(a.same ? "same" : a.rows >= b.base_rows ? "ok "+a.base_rows+" "+a.rows : "LOST "+a.base_rows+" "+a.rows+" "+b.base_rows)' "$TMP/res")
			case $got in
				same) ok "nan: $kind on $c: $c < -Infinity gives the same rows with the index as without" ;;
				ok*) ok "nan: $kind on $c: $c < -Infinity: every non-NaN row (the engine's zone pruning drops its negative NaNs: $(cut -d' ' -f3 <<<"$got") of $(cut -d' ' -f2 <<<"$got") rows)" ;;
				*) ko "nan: $kind on $c: $c < -Infinity" "$got" ;;
			esac
		else
			ko "nan: $kind on $c: ref.mjs filters" "$(head -n 2 "$TMP/err")"
		fi
		# lt_fdw's own use of the index: PostgreSQL's answer (NaN equal to NaN and above every number, -0 = 0)
		bad=
		while IFS= read -r w; do
			"$INSPECT" index-query "$ds" --where "$w" --no-index >"$TMP/a" 2>"$TMP/err" &&
				"$INSPECT" index-query "$ds" --where "$w" --index "${c}_idx" >"$TMP/b" 2>>"$TMP/err" ||
				{ bad="$bad | $w: $(head -n 1 "$TMP/err")"; continue; }
			cmp -s "$TMP/a" "$TMP/b" || bad="$bad | $w: $(wc -l <"$TMP/a") rows scanned, $(wc -l <"$TMP/b") through the index"
		done < <(pg_filters "$c")
		if [ -z "$bad" ]; then ok "nan: $kind on $c: lt-inspect's lookups equal its scan ($(pg_filters "$c" | wc -l) filters)"
		else ko "nan: $kind on $c: lt-inspect's lookups equal its scan" "${bad# | }"; fi
	done
done
# the same lookups through the engine's own btree (it writes negative NaNs first)
for c in g h; do
	bad=
	while IFS= read -r w; do
		"$INSPECT" index-query "$WORK/floats.ref.lance" --where "$w" --no-index >"$TMP/a" 2>"$TMP/err" &&
			"$INSPECT" index-query "$WORK/floats.ref.lance" --where "$w" --index "${c}_idx" >"$TMP/b" 2>>"$TMP/err" ||
			{ bad="$bad | $w: $(head -n 1 "$TMP/err")"; continue; }
		cmp -s "$TMP/a" "$TMP/b" || bad="$bad | $w: $(wc -l <"$TMP/a") rows scanned, $(wc -l <"$TMP/b") through the index"
	done < <(pg_filters "$c")
	if [ -z "$bad" ]; then ok "nan: the engine's btree on $c: lt-inspect's lookups equal its scan"
	else ko "nan: the engine's btree on $c: lt-inspect's lookups equal its scan" "${bad# | }"; fi
done
# our btree files = the engine's (values in its order: negative NaNs first, -0 before 0)
index_dirs "$WORK/floats.ref.lance" >"$TMP/ref.dirs"
index_dirs "$TMP/floats-btree.lance" >"$TMP/ours.dirs"
while read -r iname ruuid; do
	ouuid=$(awk -v n="$iname" '$1 == n {print $2}' "$TMP/ours.dirs")
	[ -n "$ouuid" ] || { ko "nan: files of $iname" "lt_fdw built no $iname"; continue; }
	for base in page_lookup page_data; do
		"$INSPECT" index-file "$WORK/floats.ref.lance/_indices/$ruuid/$base.lance" --bits >"$TMP/r" 2>"$TMP/err" &&
			"$INSPECT" index-file "$TMP/floats-btree.lance/_indices/$ouuid/$base.lance" --bits >"$TMP/m" 2>>"$TMP/err" ||
			{ ko "nan: $iname/$base" "$(head -n 2 "$TMP/err")"; continue; }
		# as a set: the order of equal keys is the engine's choice (the value order is checked by page_lookup)
		if cmp -s <(tail -n +2 "$TMP/r" | sort) <(tail -n +2 "$TMP/m" | sort); then ok "nan: $iname/$base: $(($(wc -l <"$TMP/r") - 1)) rows as the engine's, bit for bit"
		else ko "nan: $iname/$base rows" "$(diff <(tail -n +2 "$TMP/r" | sort) <(tail -n +2 "$TMP/m" | sort) | head -n 4 | cut -c1-200 | tr '\n' ' ')"; fi
	done
done <"$TMP/ref.dirs"
ds=$TMP/floats-zonemap.lance
"$INSPECT" create-index "$ds" --column g --kind bitmap >/dev/null 2>"$TMP/err"
rc=$?
[ "$rc" = 1 ] && grep -q "floating-point" "$TMP/err" && ok "nan: a bitmap on a float column is refused" || ko "nan: a bitmap on a float column is refused" "exit $rc: $(head -n 2 "$TMP/err")"

finish
