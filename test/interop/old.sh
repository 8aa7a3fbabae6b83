#!/usr/bin/env bash
# test/interop/old.sh — datasets written by old Lance releases (lance 0.5.9 … 0.36, manifest footer 0.1, legacy
# data files, fragments without physical_rows, old index layouts): the Lance repository's test_data/ fixtures,
# copied into test/data/lance-test-data/ (see its ORIGIN), read by lt-inspect and through PostgreSQL and compared
# with the reference engine's scan of each — or with its refusal. The reference is Lance 12 (LT_REF=12, the
# default here; LT_REF=8 runs the same checks against Lance 8). A LargeList column, which apache-arrow JS cannot
# decode, is scanned by the engine as arrow_cast to a List (old/exprs.json; v0.8.19/list_columns).
#
#   test/interop/old.sh                 every check below (installs into the private PostgreSQL copy first)
#   test/interop/old.sh --no-install    the extension is already installed
#   test/interop/old.sh --no-pg         lt-inspect only
#
# Checks, per dataset (a directory with _versions/):
#   scan     lt-inspect scan --with-rowid equals the engine's scan (rows, row ids, values; float32 values as
#            float32), or both refuse it: the engine's "Not found" for a data file missing from the fixture
#            is lt-inspect's "not found"; lt-inspect info counts the engine's rows;
#   decided  v0.16.0/wrong_data_version_no_fix lists fragment 1 twice; the engine reads it with two rows
#            under one row id, lt_fdw refuses it as corrupt (XX001): row addresses would be ambiguous, so an
#            UPDATE or DELETE could hit the other row. Counted apart, never as read identically;
#   index    the old index layouts (lance 0.18's index without details, 0.20's legacy btree page files and
#            bitmap, 0.36's /lance.index.pb.BTreeIndexDetails) are listed as the kind Lance takes them for,
#            and lt-inspect's lookups through them equal the engine's filtered scan (old/queries.json);
#   sql      every dataset read identically above, read through PostgreSQL (IMPORT FOREIGN SCHEMA, SELECT ...
#            ORDER BY _rowid) and compared value for value with the engine's scan (pgcmp.mjs, as pg.sh).
# Prints ok/FAIL per check, then "N of M test_data datasets read identically", and ends with
# "interop-old: N passed, M failed".
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FIX=$ROOT/test/data/lance-test-data
CASE_TIMEOUT=${LT_CASE_TIMEOUT:-120}
install=1 pg=1
for a in "$@"; do
	case $a in
		--no-install) install=0 ;;
		--no-pg) pg=0 ;;
		-h|--help) sed -n '2,28p' "$0"; exit 0 ;;
		*) echo "test/interop/old.sh: unknown argument $a" >&2; exit 2 ;;
	esac
done

. "$HERE/checks.sh"
lt_checks interop-old

# the reference is Lance 12 (LT_REF=8 still picks Lance 8)
export LT_REF=${LT_REF:-12}
ref() { (cd "$HERE" && timeout "$CASE_TIMEOUT" node ref.mjs "$@"); }
# the engine's projection of a dataset whose columns apache-arrow JS cannot decode (LargeList), from old/exprs.json
exprs() { node -e 'const e=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"))[process.argv[2]]; if (e) console.log(JSON.stringify(e))' "$HERE/old/exprs.json" "$1"; }
# two scans in the scan format: same rows in the same order, values equal (float32 values compared as float32)
same_scan() {
	node -e '
		const fs=require("fs"), [a,b]=[1,2].map(i=>fs.readFileSync(process.argv[i],"utf8").split("\n").filter(Boolean).map(JSON.parse));
		const eq=(x,y)=>{
			if (typeof x==="number" && typeof y==="number") return x===y || Math.fround(x)===Math.fround(y) && Math.abs(x-y)<=Math.abs(x)*1e-7;
			if (Array.isArray(x)) return Array.isArray(y) && x.length===y.length && x.every((v,i)=>eq(v,y[i]));
			if (x && typeof x==="object") return y && typeof y==="object" && Object.keys(x).length===Object.keys(y).length && Object.keys(x).every(k=>eq(x[k],y[k]));
			return x===y;
		};
		if (a.length!==b.length) { console.log(`${a.length} rows vs ${b.length}`); process.exit(); }
		for (let i=0;i<a.length;i++) if (!eq(a[i],b[i])) { console.log(`row ${i}: ${JSON.stringify(a[i]).slice(0,160)} vs ${JSON.stringify(b[i]).slice(0,160)}`); process.exit(); }' "$1" "$2"
}

# -------------------------------------------------------------------------------------------- scans
# <name>.lance, <name>.cases and expected scans, as pgcmp.mjs reads them; with the cluster, in a directory the
# server's OS user can enter
PGTMP=$(mktemp -d /tmp/lt_fdw_interop_old.XXXXXX) || { ko "setup: mktemp failed"; finish; }
chmod 0755 "$PGTMP"
trap 'declare -F lt_cluster_stop >/dev/null && lt_cluster_stop; rm -rf "$TMP" "$PGTMP"' EXIT
DATA=$PGTMP/data
mkdir -p "$DATA"
total=0 same=0
readable=()
while IFS= read -r vdir; do
	d=${vdir%/_versions}
	rel=${d#"$FIX"/}
	name=$(tr -c 'A-Za-z0-9\n' '_' <<<"${rel%.lance}")
	ds=$DATA/$name.lance
	cp -r "$d" "$ds"
	chmod -R a+rX "$DATA"
	total=$((total + 1))
	ex=$(exprs "${rel%.lance}")
	ref scan "$ds" --with-rowid ${ex:+--exprs "$ex"} >"$TMP/ref" 2>"$TMP/ref.err"; rrc=$?
	"$INSPECT" scan "$ds" --with-rowid >"$TMP/ours" 2>"$TMP/ours.err"; orc=$?
	if [ "$rel" = v0.16.0/wrong_data_version_no_fix.lance ]; then
		if [ "$orc" = 1 ] && grep -q "corrupt data: .*fragment ids are not ascending (1 after 1)" "$TMP/ours.err"; then
			ok "$rel: refused as corrupt (decided: the engine reads $(wc -l <"$TMP/ref") rows, two of them under one row id)"
		else
			ko "$rel: refused as corrupt" "exit $orc: $(head -n 2 "$TMP/ours.err")"
		fi
		continue
	fi
	if [ "$rrc" != 0 ]; then
		if [ "$orc" != 0 ] && grep -q "Not found" "$TMP/ref.err" && grep -q "not found" "$TMP/ours.err"; then
			ok "$rel: refused as the engine refuses it (a data file is missing: $(grep -o 'data/[^:,]*' "$TMP/ours.err" | head -n 1))"
		else
			ko "$rel: the engine fails, lt-inspect must fail alike" "engine: $(head -c 200 "$TMP/ref.err")" "lt-inspect (exit $orc): $(head -c 200 "$TMP/ours.err")"
		fi
		continue
	fi
	if [ "$orc" != 0 ]; then ko "$rel: lt-inspect scan" "$(head -n 2 "$TMP/ours.err")"; continue; fi
	diff=$(same_scan "$TMP/ref" "$TMP/ours")
	rows=$("$INSPECT" info "$ds" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).rows)}catch(e){console.log("?")}})')
	if [ -z "$diff" ] && [ "$rows" = "$(wc -l <"$TMP/ref")" ]; then
		ok "$rel: read identically ($rows rows)"
		same=$((same + 1))
		readable+=("$name")
		cp "$TMP/ref" "$DATA/$name.latest.expected.jsonl"
		printf 'latest\t%s\t--with-rowid\n' "$name.latest.expected.jsonl" >"$DATA/$name.cases"
	else
		ko "$rel: read identically" "${diff:-info says $rows rows, the engine scans $(wc -l <"$TMP/ref")}"
	fi
done < <(find "$FIX" -type d -name _versions | sort)

# -------------------------------------------------------------------------------------------- index
while IFS= read -r q; do
	rel=$(node -e 'console.log(JSON.parse(process.argv[1]).dataset)' "$q")
	iname=$(node -e 'console.log(JSON.parse(process.argv[1]).index)' "$q")
	kind=$(node -e 'console.log(JSON.parse(process.argv[1]).kind)' "$q")
	where=$(node -e 'console.log(JSON.parse(process.argv[1]).where)' "$q")
	name=$(tr -c 'A-Za-z0-9\n' '_' <<<"${rel%.lance}")
	ds=$DATA/$name.lance
	got=$("$INSPECT" index "$ds" 2>&1 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const x=s.split("\n").filter(Boolean).map(l=>{try{return JSON.parse(l)}catch(e){return {}}}).find(o=>o.name===process.argv[1]); console.log(x?`${x.kind} ${x.usable}`:"missing")})' "$iname")
	if [ "$got" != "$kind true" ]; then ko "$rel: $iname is a usable $kind" "lt-inspect index: $got"; continue; fi
	ref scan "$ds" --columns "$(node -e 'console.log(JSON.parse(process.argv[1]).column)' "$q")" --with-rowid --filter "$where" 2>"$TMP/err" |
		node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n").filter(Boolean)) console.log(JSON.parse(l)._rowid)})' | sort >"$TMP/ref"
	"$INSPECT" index-query "$ds" --where "$where" --index "$iname" 2>>"$TMP/err" | sort >"$TMP/ours"
	if [ -s "$TMP/err" ]; then ko "$rel: lookup $where through $iname" "$(head -n 2 "$TMP/err")"
	elif cmp -s "$TMP/ref" "$TMP/ours"; then ok "$rel: lookup $where through the $kind $iname = the engine's scan ($(wc -l <"$TMP/ref") rows)"
	else ko "$rel: lookup $where through $iname" "engine $(wc -l <"$TMP/ref") rows, lt-inspect $(wc -l <"$TMP/ours")"; fi
	: >"$TMP/err"
done < <(node -e 'for (const q of JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"))) console.log(JSON.stringify(q))' "$HERE/old/queries.json")

echo "== $same of $total test_data datasets read identically by lt-inspect"

# -------------------------------------------------------------------------------------------- sql
if [ "$pg" = 1 ]; then
	export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
	. "$ROOT/test/pg/cluster.sh"
	if [ "$install" = 1 ] && ! lt_pg_install "$ROOT" "$TMP/pg-install.log"; then
		ko "sql: installing into the private PostgreSQL copy" "$(tail -n 3 "$TMP/pg-install.log")"
	elif ! lt_cluster_create "$PGTMP/pg" || ! lt_cluster_start; then
		ko "sql: the test cluster did not start"
	else
		export PSQL=$LT_PGBIN/psql LT_INSPECT=$INSPECT
		export PGOPTIONS="-c timezone=UTC -c datestyle=ISO,YMD -c extra_float_digits=1 -c client_min_messages=warning"
		node "$HERE/pgcmp.mjs" "$DATA" >"$TMP/pg.log" 2>&1
		sed -n '/^ok\|^FAIL\|^   /p' "$TMP/pg.log" | sed 's/^ok /ok   sql: /; s/^FAIL /FAIL sql: /'
		line=$(grep '^interop-pg:' "$TMP/pg.log")
		p=$(sed -n 's/^interop-pg: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' <<<"$line")
		f=$(sed -n 's/^interop-pg: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' <<<"$line")
		if [ -z "$p" ]; then ko "sql: pgcmp.mjs" "$(tail -n 5 "$TMP/pg.log")"
		else
			pass=$((pass + p)); fail=$((fail + f))
			[ "$f" = 0 ] || failures+=("sql: $f dataset(s) read differently through PostgreSQL")
			echo "== $p of ${#readable[@]} of them read identically through PostgreSQL"
		fi
	fi
fi
finish
