#!/usr/bin/env bash
# test/interop/txn.sh — lt_fdw's commits (src/lance/txn/lt_txn.c via lt-inspect append/delete/update) against the real
# Lance engine (ref.mjs), both directions:
#   - after each of our Append / Delete / Update the engine reads exactly the expected rows, at one new version;
#   - deletion files of both kinds (.arrow up to 5000 rows, .bin above);
#   - the engine appends, deletes, builds an index and compacts on top of what we wrote, and we read what it did,
#     then commit again on top of that;
#   - concurrency: commits from an older read version rebase over the engine's commits or fail with a conflict
#     naming the version; the engine and lt-inspect commit at the same time without lost or duplicated rows.
#   - crash safety: build/unit/test_crash kills a committing process at every commit point; both readers then see the
#     old or the new version.
# Expected rows are computed from the engine's own scans before the change. Prints ok/FAIL per check and
# "interop-txn: N passed, M failed"; exit code 1 on any failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CRASH=${LT_CRASH_TXN:-$ROOT/build/unit/test_crash}
SPECS=$HERE/txn

. "$HERE/checks.sh"
lt_checks interop-txn jq
check() { # check LABEL CMD...: ok when CMD succeeds
	local label=$1; shift
	if "$@" >"$TMP/check.out" 2>&1; then ok "$label"; else ko "$label" "$(head -n 5 "$TMP/check.out")"; fi
}

# --------------------------------------------------------------------------------------------- helpers
# rows D FILE: the engine's scan, sorted (content only, in jq's canonical form like the filters below), into FILE
rows() { REF scan "$1" | jq -c . | sort >"$2"; }
# version D: the engine's current version of D
version() { echo '{"ops":[]}' >"$TMP/noop.json"; REF apply "$1" "$TMP/noop.json" | jq -r .version; }
# same_scans LABEL D: lt-inspect and the engine return the same rows in the same order
same_scans() {
	REF scan "$1" >"$TMP/ref.jsonl" 2>"$TMP/ref.err" || { ko "$2" "engine: $(head -n 3 "$TMP/ref.err")"; return; }
	"$INSPECT" scan "$1" >"$TMP/lt.jsonl" 2>"$TMP/lt.err" || { ko "$2" "lt-inspect: $(head -n 3 "$TMP/lt.err")"; return; }
	if cmp -s "$TMP/ref.jsonl" "$TMP/lt.jsonl"; then ok "$2"; else
		ko "$2" "$(REF diff "$TMP/ref.jsonl" "$TMP/lt.jsonl" | head -n 5)"; fi
}
# expect_rows LABEL D EXPECTED_SORTED_FILE
expect_rows() {
	rows "$2" "$TMP/got.jsonl"
	if cmp -s "$3" "$TMP/got.jsonl"; then ok "$1"; else
		ko "$1" "expected $(wc -l <"$3") rows, the engine reads $(wc -l <"$TMP/got.jsonl")" \
			"$(diff "$3" "$TMP/got.jsonl" | head -n 4)"; fi
}
# rowaddrs D FILTER: row addresses (the engine's _rowid, non-stable datasets) of rows matching a jq filter
rowaddrs() { REF scan "$1" --with-rowid | jq -r "select($2) | ._rowid" | paste -sd, -; }
# without D FILTER: the sorted rows of D that do NOT match a jq filter
without() { REF scan "$1" | jq -c "select(($2) | not)" | sort; }
only() { REF scan "$1" | jq -c "select($2)" | sort; }
commit() { # commit ARGS...: lt-inspect append/delete/update; JSON result in $TMP/commit.json; sets rc
	"$INSPECT" "$@" >"$TMP/commit.json" 2>"$TMP/commit.err"
	rc=$?
}

make_ds() { # make_ds NAME SPEC: a fresh engine-written dataset
	rm -rf "$TMP/$1"
	REF make "$TMP/$1" "$SPECS/$2" >/dev/null 2>"$TMP/make.err" || { ko "setup: make $1" "$(cat "$TMP/make.err")"; return 1; }
}

# ------------------------------------------------------------------------------------------ append
echo "== append, delete, update (the engine reads our commits)"
if make_ds base base.spec.json; then
	cp -r "$TMP/base" "$TMP/src"		# untouched source of copied fragments
	D=$TMP/base
	v0=$(version "$D")
	{ rows "$D" /dev/stdout; only "$D" '(.id|tonumber) >= 1000 and (.id|tonumber) < 2000'; } | sort >"$TMP/exp.jsonl"
	commit append "$D" --copy-fragment "$TMP/src:1"
	if [ $rc -eq 0 ]; then
		ok "append: committed ($(jq -c '{op,version,rows_added}' "$TMP/commit.json"))"
		expect_rows "append: the engine reads the old rows and the appended fragment's" "$D" "$TMP/exp.jsonl"
		check "append: the engine sees one new version ($v0 -> $((v0 + 1)))" test "$(version "$D")" = $((v0 + 1))
		# an Append writes no transaction file (issue 20): the manifest carries it inline, where the engine's
		# conflict checks read it (the rebase and conflict checks below commit on top of such Appends)
		check "append: no transaction file of read version $v0, the manifest's inline transaction is the Append" \
			test -z "$(ls "$D/_transactions" 2>/dev/null | grep -E "^$v0-[0-9a-f-]{36}\.txn$")" -a \
			"$("$INSPECT" info "$D" | jq -r .operation)" = Append
		same_scans "$D" "append: lt-inspect scan = engine scan"
	else
		ko "append: lt-inspect append failed" "$(cat "$TMP/commit.err")"
	fi

	# delete rows of two fragments (one of them the new one): .arrow deletion files
	v1=$(version "$D")
	addrs=$(rowaddrs "$D" '(.id|tonumber) % 97 == 3 or ._rowid == "12884901890"')
	without "$D" '(.id|tonumber) % 97 == 3' >"$TMP/exp.jsonl"
	# the copy of id 1002 at fragment 3 offset 2 (address 3<<32|2) is gone too: drop one of its two lines
	line=$(REF scan "$D" --with-rowid | jq -c 'select(._rowid == "12884901890") | del(._rowid)')
	awk -v l="$line" '$0 == l && !done { done = 1; next } { print }' "$TMP/exp.jsonl" >"$TMP/exp2.jsonl"
	commit delete "$D" --rowaddrs "$addrs" --predicate "id % 97 = 3"
	if [ $rc -eq 0 ]; then
		ok "delete: committed ($(jq -c '{op,version,rows_deleted,fragments_updated}' "$TMP/commit.json"))"
		expect_rows "delete: the engine reads every row but the deleted ones" "$D" "$TMP/exp2.jsonl"
		check "delete: one new version" test "$(version "$D")" = $((v1 + 1))
		check "delete: .arrow deletion files named {frag}-{read_version}-{id}.arrow" \
			test "$(ls "$D/_deletions" | grep -cE "^[0-3]-$v1-[0-9]+\.arrow$")" -eq 4
		same_scans "$D" "delete: lt-inspect scan = engine scan"
	else
		ko "delete: lt-inspect delete failed" "$(cat "$TMP/commit.err")"
	fi

	# update: delete rows of fragment 0 and add a copied fragment in one commit
	v2=$(version "$D")
	addrs=$(rowaddrs "$D" '(.id|tonumber) < 50')
	{ without "$D" '(.id|tonumber) < 50'; only "$TMP/src" '(.id|tonumber) >= 2000'; } | sort >"$TMP/exp.jsonl"
	commit update "$D" --rowaddrs "$addrs" --copy-fragment "$TMP/src:2"
	if [ $rc -eq 0 ]; then
		ok "update: committed ($(jq -c '{op,version,rows_added,rows_deleted}' "$TMP/commit.json"))"
		expect_rows "update: the engine reads the rows left plus the new fragment" "$D" "$TMP/exp.jsonl"
		check "update: one new version" test "$(version "$D")" = $((v2 + 1))
		same_scans "$D" "update: lt-inspect scan = engine scan"
	else
		ko "update: lt-inspect update failed" "$(cat "$TMP/commit.err")"
	fi

	# rows of a new fragment deleted in the same transaction (INSERT, then DELETE): an Append with a deletion file
	v3=$(version "$D")
	{ rows "$D" /dev/stdout; only "$TMP/src" '(.id|tonumber) >= 2000 and (.id|tonumber) != 2000 and (.id|tonumber) != 2007 and (.id|tonumber) != 2999'; } |
		sort >"$TMP/exp.jsonl"
	commit append "$D" --copy-fragment "$TMP/src:2" --delete-copied 0,7,999
	if [ $rc -eq 0 ] && [ "$(jq -r .op "$TMP/commit.json")" = append ] && [ "$(jq -r .rows_added "$TMP/commit.json")" = 997 ]; then
		expect_rows "append with own deletes: the engine reads the new fragment minus the deleted rows" "$D" "$TMP/exp.jsonl"
		check "append with own deletes: one new version" test "$(version "$D")" = $((v3 + 1))
	else
		ko "append with own deletes" "$(cat "$TMP/commit.err" "$TMP/commit.json")"
	fi

	# a whole fragment deleted: removed by id, no deletion file
	addrs=$(REF scan "$D" --with-rowid | jq -r 'select(((._rowid|tonumber) / 4294967296 | floor) == 1) | ._rowid' | paste -sd, -)
	REF scan "$D" --with-rowid | jq -c 'select(((._rowid|tonumber) / 4294967296 | floor) != 1) | del(._rowid)' | sort >"$TMP/exp.jsonl"
	commit delete "$D" --rowaddrs "$addrs"
	if [ $rc -eq 0 ] && [ "$(jq -r .fragments_removed "$TMP/commit.json")" = 1 ]; then
		ok "delete all rows of fragment 1: it is removed"
		expect_rows "delete all rows of fragment 1: the engine reads the rest" "$D" "$TMP/exp.jsonl"
		check "delete all rows of fragment 1: gone from the manifest" \
			test "$("$INSPECT" info "$D" | jq '[.fragments[].id] | index(1)')" = null
	else
		ko "delete all rows of fragment 1" "$(cat "$TMP/commit.err" "$TMP/commit.json")"
	fi

	# ----------------------------------------------------------------------------- the engine on top of ours
	echo "== the engine writes on top of our commits, we read it, and commit again"
	cat >"$TMP/ops.json" <<'EOF'
{"ops": [
  {"op": "delete", "where": "id >= 2500 AND id < 2600"},
  {"op": "append", "rows": [{"id": 900001, "v": 1, "s": "engine"}, {"id": 900002, "v": null, "s": null}]},
  {"op": "create_index", "column": "id", "type": "btree"},
  {"op": "optimize"}
]}
EOF
	if REF apply "$D" "$TMP/ops.json" >"$TMP/apply.out" 2>"$TMP/apply.err"; then
		ok "engine: delete, append, create index, compact on top of our commits"
		same_scans "$D" "engine on top: lt-inspect scan = engine scan"
		check "engine on top: the index is in the manifest" test "$("$INSPECT" info "$D" | jq '.indexes | length')" -ge 1
		v3=$(version "$D")
		{ rows "$D" /dev/stdout; only "$TMP/src" '(.id|tonumber) < 1000'; } | sort >"$TMP/exp.jsonl"
		commit append "$D" --copy-fragment "$TMP/src:0"
		if [ $rc -eq 0 ]; then
			expect_rows "our append after the engine's compaction: the engine reads it" "$D" "$TMP/exp.jsonl"
			check "our append after the engine's compaction: one new version" test "$(version "$D")" = $((v3 + 1))
			check "our append keeps the engine's index" test "$("$INSPECT" info "$D" | jq '.indexes | length')" -ge 1
			check "the engine can query with its index after our append" \
				test "$(REF scan "$D" --filter "id = 900001" | wc -l)" = 1
		else
			ko "our append after the engine's compaction" "$(cat "$TMP/commit.err")"
		fi
		addrs=$(rowaddrs "$D" '.id == "900002" or .id == "5"')
		without "$D" '.id == "900002" or .id == "5"' >"$TMP/exp.jsonl"
		commit delete "$D" --rowaddrs "$addrs"
		if [ $rc -eq 0 ]; then
			expect_rows "our delete after the engine's compaction: the engine reads it" "$D" "$TMP/exp.jsonl"
			check "the engine's index query agrees after our delete" \
				test "$(REF scan "$D" --filter "id = 5" | wc -l)" = "$(grep -c '"id":"5",' "$TMP/exp.jsonl")"
		else
			ko "our delete after the engine's compaction" "$(cat "$TMP/commit.err")"
		fi
	else
		ko "engine: ops on top of our commits" "$(cat "$TMP/apply.err")"
	fi
fi

# ------------------------------------------------------------------------------ indexes over our commits
echo "== the engine's btree index stays right over our deletes, removed fragments and updates"
if make_ds idx base.spec.json; then
	D=$TMP/idx
	cp -r "$D" "$TMP/idx_src"
	echo '{"ops":[{"op":"create_index","column":"id","type":"btree"}]}' >"$TMP/ops.json"
	REF apply "$D" "$TMP/ops.json" >/dev/null
	commit delete "$D" --rowaddrs "$(rowaddrs "$D" '((.id|tonumber) >= 1000 and (.id|tonumber) < 2000) or ((.id|tonumber) >= 2000 and (.id|tonumber) < 2010)')"
	commit update "$D" --rowaddrs "$(rowaddrs "$D" '.id == "2500"')" --copy-fragment "$TMP/idx_src:1"
	"$INSPECT" scan "$D" >"$TMP/lt.jsonl"
	for q in "id = 1500" "id = 500" "id = 2005" "id = 2015" "id = 2500" "id >= 990 AND id < 1010" "id >= 1995 AND id < 2020"; do
		jqf=$(sed -E 's/id/(.id|tonumber)/g; s/ = / == /; s/AND/and/' <<<"$q")
		want=$(jq -c "select($jqf)" "$TMP/lt.jsonl" | wc -l)
		check "indexed query '$q' by the engine: $want rows, as a full scan" test "$(REF scan "$D" --filter "$q" | wc -l)" = "$want"
	done
	check "index still listed after our commits" test "$("$INSPECT" info "$D" | jq '.indexes | length')" -ge 1
fi

# ------------------------------------------------------------------------ storage 2.0, V1 manifest names
echo "== storage 2.0 and V1 manifest names (nested columns)"
# Lance 12 refuses to write a struct holding nulls at storage 2.0 (2.0 has no struct validity): its variant has none
b20_spec=base20.spec.json
[ "${LT_REF:-8}" = 12 ] && b20_spec=base20-l12.spec.json
if make_ds b20 "$b20_spec"; then
	D=$TMP/b20
	cp -r "$D" "$TMP/b20_src"
	v=$(version "$D")
	{ rows "$D" /dev/stdout; only "$TMP/b20_src" '(.id|tonumber) < 1000'; } | sort >"$TMP/exp.jsonl"
	commit append "$D" --copy-fragment "$TMP/b20_src:0"
	[ $rc -eq 0 ] || ko "2.0 append" "$(cat "$TMP/commit.err")"
	expect_rows "2.0 append: the engine reads it" "$D" "$TMP/exp.jsonl"
	check "V1 naming kept: _versions/$((v + 1)).manifest" test -f "$D/_versions/$((v + 1)).manifest"
	without "$D" '(.id|tonumber) % 7 == 1' >"$TMP/exp.jsonl"
	commit delete "$D" --rowaddrs "$(rowaddrs "$D" '(.id|tonumber) % 7 == 1')"
	[ $rc -eq 0 ] || ko "2.0 delete" "$(cat "$TMP/commit.err")"
	expect_rows "2.0 delete: the engine reads it" "$D" "$TMP/exp.jsonl"
	check "V1 naming kept: _versions/$((v + 2)).manifest" test -f "$D/_versions/$((v + 2)).manifest"
	same_scans "$D" "2.0: lt-inspect scan = engine scan"
fi

# ------------------------------------------------------------------------------------- empty dataset
echo "== an empty dataset (no fragments, no max_fragment_id)"
if make_ds empty empty.spec.json && make_ds empty_src base.spec.json; then
	D=$TMP/empty
	only "$TMP/empty_src" '(.id|tonumber) >= 1000 and (.id|tonumber) < 2000' >"$TMP/exp.jsonl"
	commit append "$D" --copy-fragment "$TMP/empty_src:1"
	if [ $rc -eq 0 ]; then
		expect_rows "empty: the engine reads our first fragment" "$D" "$TMP/exp.jsonl"
		check "empty: the first fragment gets id 0" test "$("$INSPECT" info "$D" | jq -c '[.fragments[].id]')" = "[0]"
		echo '{"ops":[{"op":"append","rows":[{"id":5,"v":5,"s":"e"}]}]}' >"$TMP/ops.json"
		REF apply "$D" "$TMP/ops.json" >/dev/null 2>&1
		check "empty: the engine appends fragment 1 after ours" test "$("$INSPECT" info "$D" | jq -c '[.fragments[].id]')" = "[0,1]"
	else
		ko "empty: append" "$(cat "$TMP/commit.err")"
	fi
fi

# -------------------------------------------------------------------------------- big deletions (.bin)
echo "== deletion bitmaps (more than 5000 rows)"
if make_ds big big.spec.json; then
	D=$TMP/big
	addrs=$(rowaddrs "$D" '(.id|tonumber) < 6000 and (.id|tonumber) % 10 != 7')
	without "$D" '(.id|tonumber) < 6000 and (.id|tonumber) % 10 != 7' >"$TMP/exp.jsonl"
	commit delete "$D" --rowaddrs "$addrs"
	if [ $rc -eq 0 ]; then
		check "5400 deleted rows: a .bin deletion file" test "$(ls "$D/_deletions" | grep -c '\.bin$')" -eq 1
		expect_rows "5400 deleted rows: the engine reads the rest" "$D" "$TMP/exp.jsonl"
		same_scans "$D" "5400 deleted rows: lt-inspect scan = engine scan"
		echo '{"ops":[{"op":"delete","where":"id = 7 OR id = 6001"}]}' >"$TMP/ops.json"
		if REF apply "$D" "$TMP/ops.json" >/dev/null 2>"$TMP/apply.err"; then
			without "$D" 'false' >"$TMP/exp.jsonl"
			same_scans "$D" "the engine deletes on top of our .bin: lt-inspect scan = engine scan"
		else
			ko "the engine deletes on top of our .bin" "$(cat "$TMP/apply.err")"
		fi
	else
		ko "5400 deleted rows" "$(cat "$TMP/commit.err")"
	fi
fi

# ------------------------------------------------------------------------------------ concurrency
echo "== concurrent commits: rebase over the engine's commits, conflicts named, no lost or duplicated rows"
# addrs_at D V FILTER: row addresses at version V
addrs_at() { REF scan "$1" --version "$2" --with-rowid | jq -r "select($3) | ._rowid" | paste -sd, -; }
if make_ds conc0 base.spec.json; then
	S=$TMP/conc0 v=$(version "$TMP/conc0")
	cp -r "$S" "$TMP/conc_src"
	# rebase: the engine deletes and appends after our read version; our update still lands on top
	D=$TMP/conc_rebase; cp -r "$S" "$D"
	echo '{"ops":[{"op":"delete","where":"id >= 2900"},{"op":"append","rows":[{"id":800001,"v":1,"s":"a"},{"id":800002,"v":2,"s":"b"}]}]}' >"$TMP/ops.json"
	REF apply "$D" "$TMP/ops.json" >/dev/null
	{ without "$D" '(.id|tonumber) >= 100 and (.id|tonumber) < 110'; only "$TMP/conc_src" '(.id|tonumber) >= 1000 and (.id|tonumber) < 2000'; } | sort >"$TMP/exp.jsonl"
	commit update "$D" --read-version "$v" --rowaddrs "$(addrs_at "$D" "$v" '(.id|tonumber) >= 100 and (.id|tonumber) < 110')" \
		--copy-fragment "$TMP/conc_src:1"
	if [ $rc -eq 0 ]; then
		ok "rebase: our update from version $v lands as version $(jq .version "$TMP/commit.json")"
		expect_rows "rebase: the engine's delete and append and our update all show" "$D" "$TMP/exp.jsonl"
		check "rebase: version $((v + 3)), its transaction file says it read version $((v + 2))" \
			test "$("$INSPECT" info "$D" | jq -r .version)" = $((v + 3)) -a -n "$(ls "$D/_transactions" | grep "^$((v + 2))-")"
		same_scans "$D" "rebase: lt-inspect scan = engine scan"
	else
		ko "rebase: our update from an older version" "$(cat "$TMP/commit.err")"
	fi
	# conflict_case NAME OPS OUR-COMMAND...: the engine runs OPS, then our commit from version v must fail naming
	# the version of the conflicting operation: the engine's last (compaction first reserves fragment ids)
	conflict_case() {
		local name=$1 ops=$2; shift 2
		D=$TMP/conc_$name; rm -rf "$D"; cp -r "$S" "$D"
		echo "$ops" >"$TMP/ops.json"
		REF apply "$D" "$TMP/ops.json" >/dev/null 2>"$TMP/apply.err" || { ko "conflict $name: engine ops" "$(cat "$TMP/apply.err")"; return; }
		rows "$D" "$TMP/before.jsonl"
		local last; last=$(version "$D")
		commit "$@"
		if [ $rc -eq 3 ] && grep -q "version $last " "$TMP/commit.err"; then
			ok "conflict $name: refused, naming version $last: $(sed 's/^lt-inspect: //' "$TMP/commit.err" | head -c 160)"
		else
			ko "conflict $name: expected a conflict naming version $last (exit $rc)" "$(cat "$TMP/commit.err" "$TMP/commit.json")"
		fi
		expect_rows "conflict $name: nothing of ours was committed" "$D" "$TMP/before.jsonl"
	}
	conflict_case same-rows '{"ops":[{"op":"delete","where":"id = 105"}]}' \
		delete "$TMP/conc_same-rows" --read-version "$v" --rowaddrs "$(addrs_at "$S" "$v" '(.id|tonumber) >= 100 and (.id|tonumber) < 110')"
	conflict_case overwrite '{"ops":[{"op":"overwrite","rows":[{"id":1,"v":1,"s":"x"}]}]}' \
		append "$TMP/conc_overwrite" --read-version "$v" --copy-fragment "$TMP/conc_src:0"
	conflict_case restore "{\"ops\":[{\"op\":\"restore\",\"version\":$((v - 1))}]}" \
		append "$TMP/conc_restore" --read-version "$v" --copy-fragment "$TMP/conc_src:0"
	conflict_case compacted '{"ops":[{"op":"optimize"}]}' \
		delete "$TMP/conc_compacted" --read-version "$v" --rowaddrs "$(addrs_at "$S" "$v" '.id == "7"')"
	# operations lt_fdw cannot lift faithfully fail closed: the engine's addColumns (a Merge), dropColumns (a Project)
	conflict_case add-columns '{"ops":[{"op":"add_columns","columns":{"w":"v * 2"}}]}' \
		append "$TMP/conc_add-columns" --read-version "$v" --copy-fragment "$TMP/conc_src:0"
	conflict_case drop-columns '{"ops":[{"op":"drop_columns","columns":["s"]}]}' \
		delete "$TMP/conc_drop-columns" --read-version "$v" --rowaddrs "$(addrs_at "$S" "$v" '.id == "7"')"
	# ... but an append rebases over the compaction, and a delete over an index build
	D=$TMP/conc_compacted
	{ rows "$D" /dev/stdout; only "$TMP/conc_src" '(.id|tonumber) < 1000'; } | sort >"$TMP/exp.jsonl"
	commit append "$D" --read-version "$v" --copy-fragment "$TMP/conc_src:0"
	[ $rc -eq 0 ] && expect_rows "compaction: our append from before it rebases" "$D" "$TMP/exp.jsonl" ||
		ko "compaction: our append from before it rebases" "$(cat "$TMP/commit.err")"
	D=$TMP/conc_index; cp -r "$S" "$D"
	echo '{"ops":[{"op":"create_index","column":"id","type":"btree"}]}' >"$TMP/ops.json"
	REF apply "$D" "$TMP/ops.json" >/dev/null
	without "$D" '.id == "42"' >"$TMP/exp.jsonl"
	commit delete "$D" --read-version "$v" --rowaddrs "$(addrs_at "$S" "$v" '.id == "42"')"
	if [ $rc -eq 0 ]; then
		expect_rows "index build: our delete from before it rebases" "$D" "$TMP/exp.jsonl"
		check "index build: the index survives our delete" test "$("$INSPECT" info "$D" | jq '.indexes | length')" -ge 1
		check "index build: the engine's indexed query skips our deleted row" test "$(REF scan "$D" --filter "id = 42" | wc -l)" = 0
	else
		ko "index build: our delete from before it rebases" "$(cat "$TMP/commit.err")"
	fi

	# at the same time: the engine appends and deletes while we append and delete (disjoint rows)
	D=$TMP/conc_live; cp -r "$S" "$D"
	node -e 'const ops = [];
		for (let i = 0; i < 16; i++) ops.push({op: "append", rows: [{id: 500000 + i, v: i, s: "engine"}]});
		for (let i = 0; i < 4; i++) ops.push({op: "delete", where: `id = ${2000 + i}`});
		process.stdout.write(JSON.stringify({ops}));' >"$TMP/live.json"
	REF apply "$D" "$TMP/live.json" >"$TMP/live.out" 2>"$TMP/live.err" &
	engine=$!
	# two of our writers besides the engine: each appends 3 copies and deletes 3 rows of its own
	for w in 0 1; do
		(
			for i in 1 2 3; do
				"$INSPECT" append "$D" --copy-fragment "$TMP/conc_src:0" || echo "FAILED append" >&2
				a=$(( 501 + 3 * w + i - 1 + 2 * 4294967296 ))
				"$INSPECT" delete "$D" --rowaddrs "$a" || echo "FAILED delete" >&2
			done
		) >"$TMP/live.ours.$w" 2>"$TMP/live.ours.err.$w" &
	done
	wait $engine; erc=$?
	wait
	cat "$TMP"/live.ours.[01] >"$TMP/live.ours"
	ours_ok=$(grep -c '"op"' "$TMP/live.ours")
	[ -s "$TMP/live.ours.err.0" ] || [ -s "$TMP/live.ours.err.1" ] && cat "$TMP"/live.ours.err.*
	check "concurrent: the engine's 20 commits succeeded" test $erc -eq 0
	check "concurrent: our 12 commits succeeded" test $ours_ok -eq 12
	check "concurrent: one version per commit ($v + 32)" test "$(version "$D")" = $((v + 32))
	REF scan "$D" | jq -c . >"$TMP/live.jsonl"
	check "concurrent: each engine row exactly once" test "$(jq -r 'select((.id|tonumber) >= 500000) | .id' "$TMP/live.jsonl" | sort -u | wc -l)" = 16 -a \
		"$(jq -r 'select((.id|tonumber) >= 500000) | .id' "$TMP/live.jsonl" | wc -l)" = 16
	check "concurrent: our 6 appended copies (id 0 seen 7 times)" test "$(grep -c '"id":"0",' "$TMP/live.jsonl")" = 7
	check "concurrent: every deleted row is gone" test "$(jq -r 'select((.id|tonumber) >= 2000 and (.id|tonumber) < 2004 or (.id|tonumber) > 2500 and (.id|tonumber) < 2507) | .id' "$TMP/live.jsonl" | wc -l)" = 0
	check "concurrent: row count" test "$(wc -l <"$TMP/live.jsonl")" = $((3000 + 16 - 4 + 6000 - 6))
	same_scans "$D" "concurrent: lt-inspect scan = engine scan"
	attempts=$(jq -s 'map(.attempts) | max' "$TMP/live.ours")
	echo "     (our commits needed up to $attempts attempts)"
fi

# ------------------------------------------------------------------------------------ TRUNCATE
echo "== TRUNCATE: one Overwrite the engine reads, indexes kept (covering nothing) or dropped; any concurrent commit conflicts"
if make_ds trunc0 base.spec.json; then
	S=$TMP/trunc0
	cp -r "$S" "$TMP/trunc_src"
	echo '{"ops":[{"op":"create_index","column":"id","type":"btree"}]}' >"$TMP/ops.json"
	REF apply "$S" "$TMP/ops.json" >/dev/null
	v=$(version "$S")
	# truncate, then a copy of fragment 0, in one transaction; the index's definition stays
	D=$TMP/trunc_keep; cp -r "$S" "$D"
	only "$TMP/trunc_src" '(.id|tonumber) < 1000' >"$TMP/exp.jsonl"
	commit append "$D" --truncate=keep-indexes --copy-fragment "$TMP/trunc_src:0"
	if [ $rc -eq 0 ]; then
		check "truncate: one Overwrite ($(jq -c '{op,version,rows_added,fragments_removed}' "$TMP/commit.json"))" \
			test "$(jq -r .op "$TMP/commit.json")" = overwrite -a "$(version "$D")" = $((v + 1))
		expect_rows "truncate: the engine reads only the rows added after it" "$D" "$TMP/exp.jsonl"
		same_scans "$D" "truncate: lt-inspect scan = engine scan"
		check "truncate: the index is still listed" test "$("$INSPECT" info "$D" | jq '.indexes | length')" -ge 1
		check "truncate: the engine's query on the indexed column is right" \
			test "$(REF scan "$D" --filter "id = 42" | wc -l)" = 1 -a "$(REF scan "$D" --filter "id = 1042" | wc -l)" = 0
		echo '{"ops":[{"op":"append","rows":[{"id":900001,"v":1,"s":"after"}]},{"op":"delete","where":"id = 7"}]}' >"$TMP/ops.json"
		if REF apply "$D" "$TMP/ops.json" >/dev/null 2>"$TMP/apply.err"; then
			check "truncate: the engine writes on top" test "$(REF scan "$D" | wc -l)" = 1000
			same_scans "$D" "truncate: lt-inspect scan = engine scan after the engine's writes"
		else
			ko "truncate: the engine writes on top" "$(cat "$TMP/apply.err")"
		fi
	else
		ko "truncate (keep indexes)" "$(cat "$TMP/commit.err")"
	fi
	# truncate alone, indexes dropped (as Lance's own Overwrite)
	D=$TMP/trunc_drop; cp -r "$S" "$D"
	commit append "$D" --truncate
	if [ $rc -eq 0 ]; then
		check "truncate alone: the engine reads no row" test "$(REF scan "$D" | wc -l)" = 0
		check "truncate alone: no index left" test "$("$INSPECT" info "$D" | jq '.indexes | length')" = 0
	else
		ko "truncate alone" "$(cat "$TMP/commit.err")"
	fi
	# a concurrent commit of the engine (an append) fails the truncate, naming its version
	D=$TMP/trunc_conc; cp -r "$S" "$D"
	echo '{"ops":[{"op":"append","rows":[{"id":900002,"v":1,"s":"concurrent"}]}]}' >"$TMP/ops.json"
	REF apply "$D" "$TMP/ops.json" >/dev/null
	commit append "$D" --truncate --read-version "$v"
	if [ $rc -eq 3 ] && grep -q "version $((v + 1)) " "$TMP/commit.err"; then
		ok "truncate: a concurrent append conflicts: $(sed 's/^lt-inspect: //' "$TMP/commit.err" | head -c 160)"
	else
		ko "truncate: a concurrent append conflicts (exit $rc)" "$(cat "$TMP/commit.err" "$TMP/commit.json")"
	fi
	check "truncate: nothing of ours was committed" test "$(REF scan "$D" | wc -l)" = 3001
fi

# ------------------------------------------------------------------------------------ crash safety
echo "== a commit killed at each point: the engine reads the old or the new version, never in between"
if [ ! -x "$CRASH" ]; then
	ko "crash: $CRASH is missing (make unit-build)"
elif make_ds crash0 base.spec.json; then
	rows "$TMP/crash0" "$TMP/old.jsonl"
	v=$(version "$TMP/crash0")
	cp -r "$TMP/crash0" "$TMP/crash_none"
	if "$CRASH" "$TMP/crash_none" none 2>"$TMP/crash.err"; then
		rows "$TMP/crash_none" "$TMP/new.jsonl"
		for point in start deletions txn manifest-torn manifest; do
			D=$TMP/crash_$point
			cp -r "$TMP/crash0" "$D"
			if ! "$CRASH" "$D" "$point" 2>"$TMP/crash.err"; then
				ko "crash at $point: the child did not die there" "$(cat "$TMP/crash.err")"; continue
			fi
			want=$TMP/old.jsonl wantv=$v
			[ "$point" = manifest ] && want=$TMP/new.jsonl wantv=$((v + 1))
			expect_rows "crash at $point: the engine reads version $wantv's rows exactly" "$D" "$want"
			check "crash at $point: the engine is at version $wantv" test "$(version "$D")" = "$wantv"
			same_scans "$D" "crash at $point: lt-inspect scan = engine scan"
			[ "$point" = manifest-torn ] && check "crash at manifest-torn: a torn manifest copy is left (and ignored)" \
				test -n "$(ls "$D/_versions" | grep tmp-torn)"
			echo '{"ops":[{"op":"append","rows":[{"id":777777,"v":1,"s":"after crash"}]}]}' >"$TMP/ops.json"
			check "crash at $point: the engine commits on top" REF apply "$D" "$TMP/ops.json"
		done
	else
		ko "crash: the uninterrupted commit failed" "$(cat "$TMP/crash.err")"
	fi
fi

# ------------------------------------------------------------------------------------ stable row ids
echo "== stable row ids: moved rows keep their ids, new rows get fresh ones"
if make_ds stable stable.spec.json; then
	cp -r "$TMP/stable" "$TMP/stable_src"
	D=$TMP/stable
	sel='(.id|tonumber) < 200 and (.id|tonumber) % 10 == 5'
	"$INSPECT" scan "$D" --with-rowid --rowaddr >"$TMP/st.jsonl"
	addrs=$(jq -r "select($sel) | ._rowaddr" "$TMP/st.jsonl" | paste -sd, -)
	ids=$(jq -r "select($sel) | ._rowid" "$TMP/st.jsonl" | paste -sd, -)
	# expected: the other rows with their ids, and fragment 2's rows (in order) under the deleted rows' ids
	{
		REF scan "$D" --with-rowid | jq -c "select(($sel) | not)"
		paste -d' ' <(jq -r "select($sel) | ._rowid" "$TMP/st.jsonl") \
			<(REF scan "$TMP/stable_src" | jq -c 'select((.id|tonumber) >= 200)') |
			while read -r rid row; do jq -c --arg r "$rid" '{_rowid: $r} + .' <<<"$row"; done
	} | sort >"$TMP/exp.jsonl"
	commit update "$D" --rowaddrs "$addrs" --copy-fragment "$TMP/stable_src:2" --row-ids "$ids"
	if [ $rc -eq 0 ]; then
		REF scan "$D" --with-rowid | jq -c . | sort >"$TMP/got.jsonl"
		if cmp -s "$TMP/exp.jsonl" "$TMP/got.jsonl"; then ok "stable update: the engine reads the moved rows under their old ids"
		else ko "stable update: the engine reads the moved rows under their old ids" "$(diff "$TMP/exp.jsonl" "$TMP/got.jsonl" | head -n 4)"; fi
		check "stable update: next_row_id unchanged (no new ids)" test "$("$INSPECT" info "$D" | jq .next_row_id)" = 220
		next=$("$INSPECT" info "$D" | jq .next_row_id)
		commit append "$D" --copy-fragment "$TMP/stable_src:0"
		got=$(REF scan "$D" --with-rowid | jq -r "select((._rowid|tonumber) >= $next) | ._rowid" | sort -n | paste -sd, -)
		check "stable append: 100 fresh ids from next_row_id $next" test "$got" = "$(seq -s, "$next" $((next + 99)))"
		check "stable append: next_row_id advanced by 100" test "$("$INSPECT" info "$D" | jq .next_row_id)" = $((next + 100))
		same_scans "$D" "stable: lt-inspect scan = engine scan"
		echo '{"ops":[{"op":"update","where":"id = 201","set":{"v":"7"}},{"op":"delete","where":"id = 202"}]}' >"$TMP/ops.json"
		if REF apply "$D" "$TMP/ops.json" >/dev/null 2>"$TMP/apply.err"; then
			REF scan "$D" --with-rowid >"$TMP/ref.jsonl"; "$INSPECT" scan "$D" --with-rowid >"$TMP/lt.jsonl"
			check "stable: the engine updates a moved row; lt-inspect reads the same ids" cmp "$TMP/ref.jsonl" "$TMP/lt.jsonl"
		else
			ko "stable: the engine updates on top" "$(cat "$TMP/apply.err")"
		fi
	else
		ko "stable update" "$(cat "$TMP/commit.err")"
	fi
fi

finish
