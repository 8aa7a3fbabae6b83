#!/usr/bin/env bash
# test/interop/merge.sh — lt_merge_insert and TRUNCATE against the real Lance engine.
#
# Merge-insert: for each variant (key columns, when_matched, when_not_matched, delete_not_matched_by_source,
# storage version, stable row ids, a btree index on the key, a partial source of two of the four columns),
# the reference engine makes a target dataset
# (600 rows in 3 fragments, some NULL keys) and an identical copy. lt_merge_insert merges a source (150 rows
# matching, 150 new, NULL keys) into the target through PostgreSQL; the engine's own mergeInsert merges the
# same rows with the same options into the copy. Then
#   - the engine reads exactly the same rows from both (sorted JSON lines; stable row ids: every row that was
#     there before keeps the same _rowid in both);
#   - the counts lt_merge_insert returns are the engine's MergeResult (inserted, updated, deleted);
#   - each side made exactly one version;
#   - the engine appends to what lt_fdw merged, and lt_fdw reads that append.
# A race: two PostgreSQL sessions and the engine's mergeInsert upsert the same keys of a keyed dataset at once,
# then insert the same new keys: every id once, none lost; losers get 40001 or the engine's conflict error.
# TRUNCATE: of a dataset with a btree and a bitmap index, alone and with an INSERT in the same transaction: the
# engine reads zero rows (or exactly the inserted ones), still lists both indexes, appends, and finds the
# appended rows with a filter on the indexed column; lt_fdw reads the engine's append.
#
#   test/interop/merge.sh                 install (private PostgreSQL copy), then run
#   test/interop/merge.sh --no-install    the extension is already installed
#
# Ends with "interop-merge: N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step interop-merge 23 "$@"
lt_step_prepare

lt_step_cluster
mkdir -p "$TMP/specs" && chmod 0777 "$TMP/specs"
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
export PGOPTIONS="-c client_min_messages=warning"
ref() { lt_as_pg node "$HERE/ref.mjs" "$@"; }
rows_of() { ref scan "$1" | LC_ALL=C sort; }	# the rows as the engine reads them, sorted
version_of() { ls "$1/_versions" | grep -c '\.manifest$'; }

"${PSQL[@]}" -c "CREATE EXTENSION lt_fdw; CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
CREATE TYPE src_t AS (id bigint, k2 integer, v text, x double precision);" || finish "creating the extension failed"

# The target's rows (id NULL every 97th, k2 NULL every 11th) and the source's: ids 450..749 (150 of them in the
# target), three rows with a NULL id, and k2 as the target has it (NULL where the target's is, for id % 11 = 0).
node - "$TMP/specs" <<'JS' || finish "preparing the specs failed"
const fs = require("fs"), out = process.argv[2];
const target = [], source = [];
for (let i = 0; i < 600; i++)
  target.push({ id: i % 97 === 0 ? null : String(i), k2: i % 11 === 0 ? null : i % 7, v: `t${i}`, x: i * 1.5 });
for (let i = 450; i < 750; i++) source.push({ id: String(i), k2: i % 11 === 0 ? null : i % 7, v: `s${i}`, x: i * 2.5 });
for (let j = 0; j < 3; j++) source.push({ id: null, k2: j, v: `snull${j}`, x: -j });
const schema = [{ name: "id", type: "int64" }, { name: "k2", type: "int32" }, { name: "v", type: "utf8" }, { name: "x", type: "float64" }];
fs.writeFileSync(`${out}/source.json`, JSON.stringify(source));
fs.writeFileSync(`${out}/source_nonnull.json`, JSON.stringify(source.filter((r) => r.id !== null)));
for (const [name, extra] of [["t21", {}], ["t20", { storage: "2.0" }], ["stable", { stable_row_ids: true }],
                             ["indexed", { ops: [{ op: "create_index", column: "id", kind: "btree" }] }]])
  fs.writeFileSync(`${out}/${name}.json`, JSON.stringify({ storage: "2.1", schema, rows: target, fragment_sizes: [200, 200, 200], ...extra }));
JS
chmod -R a+rX "$TMP/specs"
"${PSQL[@]}" -c "CREATE TABLE source AS SELECT * FROM json_populate_recordset(NULL::src_t, pg_read_file('$TMP/specs/source.json')::json);
CREATE TABLE source_nonnull AS SELECT * FROM source WHERE id IS NOT NULL;" || finish "loading the source rows failed"

# variant: name, target spec, on (JSON), when_matched, when_not_matched, delete_not_matched_by_source, source,
# and the source's columns (default: all; fewer: a partial source, the other columns kept by matched rows)
VARIANTS=(
	"upsert t21 id update_all insert_all false source"
	"find_or_create t21 id do_nothing insert_all false source"
	"update_only t21 id update_all do_nothing false source"
	"upsert_delete t21 id update_all insert_all true source"
	"delete_only t21 id do_nothing do_nothing true source"
	"composite t21 id,k2 update_all insert_all true source"
	"upsert_v2_0 t20 id update_all insert_all false source"
	"stable stable id update_all insert_all true source"
	"indexed indexed id update_all insert_all false source_nonnull"
	"indexed_delete indexed id update_all insert_all true source"
	"partial_update t21 id update_all do_nothing false source id,v"
	"partial_upsert t21 id update_all insert_all false source id,v"
)
for line in "${VARIANTS[@]}"; do
	read -r v spec on wm wnm del srcname cols <<<"$line"
	cols=${cols:-id,k2,v,x}
	# LT_MERGE_VARIANTS: only the variants named (test/interop/l12.sh runs some against Lance 12)
	[ -z "${LT_MERGE_VARIANTS:-}" ] || [[ " ${LT_MERGE_VARIANTS//,/ } " == *" $v "* ]] || continue
	ref make "$LAKE/$v.lance" "$TMP/specs/$spec.json" >/dev/null 2>"$TMP/make.err" || { cat "$TMP/make.err" >&2; bad "$v: make"; continue; }
	lt_as_pg cp -a "$LAKE/$v.lance" "$LAKE/${v}_ref.lance"
	v0=$(version_of "$LAKE/$v.lance")
	# lt_fdw's merge
	got=$("${PSQL[@]}" -At -F ' ' <<SQL 2>"$TMP/merge.err"
CREATE FOREIGN TABLE "$v" (id bigint, k2 integer, v text, x double precision, _rowid bigint) SERVER lake OPTIONS (path '$v.lance');
SELECT * FROM lt_merge_insert('"$v"', 'SELECT $cols FROM $srcname', '{$on}', '$wm', '$wnm', $del);
SQL
	) || { cat "$TMP/merge.err"; bad "$v: lt_merge_insert"; continue; }
	# the engine's
	node -e '
const fs = require("fs"), [src, on, wm, wnm, del, out, cols] = process.argv.slice(1);
const columns = cols.split(",");
const rows = JSON.parse(fs.readFileSync(src, "utf8")).map((r) => Object.fromEntries(columns.map((c) => [c, r[c]])));
fs.writeFileSync(out, JSON.stringify({ report_merge: true, ops: [{ op: "merge_insert", on: on.split(","), when_matched: wm, when_not_matched: wnm,
                                                delete_not_matched_by_source: del === "true", rows,
                                                ...(columns.length < 4 ? { columns } : {}) }] }));' \
		"$TMP/specs/$srcname.json" "$on" "$wm" "$wnm" "$del" "$TMP/specs/$v.merge.json" "$cols" && chmod a+r "$TMP/specs/$v.merge.json"
	want=$(ref apply "$LAKE/${v}_ref.lance" "$TMP/specs/$v.merge.json" 2>"$TMP/ref.err" |
		node -e 'const r = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(`${r.inserted} ${r.updated} ${r.deleted}`)') \
		|| { cat "$TMP/ref.err"; bad "$v: the engine's mergeInsert"; continue; }
	check "$v: inserted, updated, deleted are the engine's" "$got" "$want"
	rows_of "$LAKE/${v}_ref.lance" >"$TMP/want.jsonl"
	rows_of "$LAKE/$v.lance" >"$TMP/got.jsonl"
	if [ -s "$TMP/want.jsonl" ] && cmp -s "$TMP/want.jsonl" "$TMP/got.jsonl"; then
		ok "$v: the engine reads the rows its own mergeInsert gives ($(wc -l <"$TMP/got.jsonl") rows)"
	else
		bad "$v: the rows differ from the engine's mergeInsert"; ref diff "$TMP/want.jsonl" "$TMP/got.jsonl" 2>&1 | head -n 12 | cut -c1-300
	fi
	check "$v: one version" "$(version_of "$LAKE/$v.lance")" "$((v0 + 1))"
	check "$v: one version (the engine)" "$(version_of "$LAKE/${v}_ref.lance")" "$((v0 + 1))"
	if [ "$v" = stable ]; then
		# the rows that were there before (keys 1..599, not NULL) keep their row ids, as the engine keeps them
		ids() { ref scan "$1" --with-rowid | node -e '
const rows = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean).map(JSON.parse);
console.log(rows.filter((r) => r.id !== null && Number(r.id) < 600).map((r) => `${r.id}:${r._rowid}`).sort().join(" "));'; }
		a=$(ids "$LAKE/$v.lance"); b=$(ids "$LAKE/${v}_ref.lance")
		[ -n "$a" ] && [ "$a" = "$b" ] && ok "$v: updated and untouched rows keep the row ids the engine keeps" \
			|| bad "$v: row ids differ from the engine's: ${a:0:200} / ${b:0:200}"
	fi
done

# the engine appends to what lt_fdw merged; lt_fdw reads it
echo '{"ops": [{"op": "append", "rows": [{"id": "9000", "k2": 1, "v": "ref", "x": 1.0}]}]}' >"$TMP/specs/append.json"
chmod a+r "$TMP/specs/append.json"
before=$("${PSQL[@]}" -At -c 'SELECT count(*) FROM upsert')
if ref apply "$LAKE/upsert.lance" "$TMP/specs/append.json" >/dev/null 2>"$TMP/ref.err"; then
	check "upsert: lt_fdw reads the engine's append on top of the merge" \
		"$("${PSQL[@]}" -At -c "SELECT count(*), count(*) FILTER (WHERE id = 9000) FROM upsert")" "$((before + 1))|1"
else
	cat "$TMP/ref.err"; bad "upsert: the engine could not append to the merged dataset"
fi

# ---- a race: two PostgreSQL sessions and the engine merge the same keys into one keyed dataset -------------
# ids 0..999 (the primary key); every writer upserts ids 900..1099 (100 there, 100 new). The sessions hold their
# merge open until all three are ready, then commit at once. At the end there must be exactly ids 0..1099 once
# each (no duplicate, no lost row), every id 900..1099 carrying one writer's value; a session either committed
# or got 40001; the engine either committed (after its own retries) or reported its conflict.
node - "$TMP/specs" <<'JS' || finish "preparing the race specs failed"
const fs = require("fs"), out = process.argv[2];
const rows = [];
for (let i = 0; i < 1000; i++) rows.push({ id: String(i), v: `t${i}` });
fs.writeFileSync(`${out}/race.json`, JSON.stringify({ storage: "2.1", fragment_sizes: [500, 500], rows,
  schema: [{ name: "id", type: "int64", nullable: false, metadata: { "lance-schema:unenforced-primary-key": "true" } },
           { name: "v", type: "utf8" }] }));
JS
chmod -R a+rX "$TMP/specs"
race_round() {	# name lo hi: two sessions and the engine upsert ids lo..hi at once
	local r=$1 lo=$2 hi=$3 go=$TMP/$1.go s committed=0 want_rows=$(($3 + 1))
	node -e '
const [lo, hi, out] = process.argv.slice(1).map((x, i) => (i < 2 ? Number(x) : x)), rows = [];
for (let i = lo; i <= hi; i++) rows.push({ id: String(i), v: `ref${i}` });
require("fs").writeFileSync(out, JSON.stringify({ report_merge: true, ops: [{ op: "merge_insert", on: ["id"], rows }] }));' \
		"$lo" "$hi" "$TMP/specs/$r.json" && chmod a+r "$TMP/specs/$r.json"
	for s in 1 2; do
		"${PSQL[@]}" >"$TMP/$r$s.out" 2>&1 <<SQL &
BEGIN;
SELECT * FROM lt_merge_insert('race', 'SELECT g AS id, ''pg$s-'' || g AS v FROM generate_series($lo, $hi) g', '{id}');
\! touch $TMP/$r$s.ready; while [ ! -e $go ]; do sleep 0.02; done
COMMIT;
SQL
	done
	for i in $(seq 1 500); do [ -e "$TMP/${r}1.ready" ] && [ -e "$TMP/${r}2.ready" ] && break; sleep 0.05; done
	touch "$go"
	ref apply "$LAKE/race.lance" "$TMP/specs/$r.json" >"$TMP/${r}_ref.out" 2>&1 &
	wait
	for s in 1 2; do
		if grep -q "ERROR" "$TMP/$r$s.out"; then
			grep -q "could not commit" "$TMP/$r$s.out" && grep -q "conflict" "$TMP/$r$s.out" \
				&& ok "$r: session $s lost with a serialization failure" \
				|| { bad "$r: session $s failed otherwise"; head -n 5 "$TMP/$r$s.out"; }
		else
			committed=$((committed + 1))
		fi
	done
	if grep -q '"version"' "$TMP/${r}_ref.out"; then
		committed=$((committed + 1))
	elif grep -qi "conflict\|retr" "$TMP/${r}_ref.out"; then
		ok "$r: the engine lost with its conflict error"
	else
		bad "$r: the engine failed otherwise"; head -n 3 "$TMP/${r}_ref.out"
	fi
	[ "$committed" -ge 1 ] && ok "$r: $committed of 3 writers committed" || bad "$r: no writer committed"
	check "$r: every id once, none lost (the engine reads)" \
		"$(ref scan "$LAKE/race.lance" | node -e '
const n = Number(process.argv[1]);
const ids = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean).map((l) => Number(JSON.parse(l).id));
const set = new Set(ids); let full = true; for (let i = 0; i < n; i++) full = full && set.has(i);
console.log(`${ids.length} ${set.size} ${full}`);' "$want_rows")" "$want_rows $want_rows true"
	check "$r: lt_fdw reads the same" "$("${PSQL[@]}" -At -c "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM race")" \
		"$want_rows|$want_rows|0|$hi"
	check "$r: every merged id carries one writer's value" \
		"$("${PSQL[@]}" -At -c "SELECT count(*) FROM race WHERE id BETWEEN $lo AND $hi AND (v LIKE 'pg1-%' OR v LIKE 'pg2-%' OR v LIKE 'ref%')")" \
		"$((hi - lo + 1))"
}
if ref make "$LAKE/race.lance" "$TMP/specs/race.json" >/dev/null 2>"$TMP/make.err"; then
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE race (id bigint, v text) SERVER lake OPTIONS (path 'race.lance');" || bad "race: foreign table"
	race_round race 900 1099
	# only new keys: the writers' inserted-keys filters overlap (keyed tables), whoever commits second loses
	race_round race_new 1100 1199
else
	cat "$TMP/make.err"; bad "race: make"
fi

# ---- TRUNCATE ---------------------------------------------------------------------------------------------
cat >"$TMP/specs/trunc.json" <<'JSON'
{"storage": "2.1", "schema": [{"name": "id", "type": "int64", "nullable": false, "gen": "seq"}, {"name": "s", "type": "utf8", "gen": {"card": 5}}],
 "generate": {"n": 300}, "fragments": 3,
 "ops": [{"op": "create_index", "column": "id", "kind": "btree"}, {"op": "create_index", "column": "s", "kind": "bitmap"}]}
JSON
echo '{"ops": [{"op": "append", "rows": [{"id": "7", "s": "after"}, {"id": "8", "s": "after"}]}]}' >"$TMP/specs/trunc_append.json"
chmod a+r "$TMP/specs/trunc.json" "$TMP/specs/trunc_append.json"
indexes_of() { ref indexes "$1" | node -e '
console.log(require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l).name).sort().join(","))'; }
for t in trunc trunc_insert; do
	ref make "$LAKE/$t.lance" "$TMP/specs/trunc.json" >/dev/null 2>"$TMP/make.err" || { cat "$TMP/make.err"; bad "$t: make"; continue; }
	v0=$(version_of "$LAKE/$t.lance")
	body="TRUNCATE $t;"
	[ $t = trunc_insert ] && body="TRUNCATE $t; INSERT INTO $t VALUES (1, 'new'), (2, 'new');"
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE $t (id bigint, s text) SERVER lake OPTIONS (path '$t.lance');" \
		-c "BEGIN; $body COMMIT;" >"$TMP/trunc.out" 2>&1 || { cat "$TMP/trunc.out"; bad "$t: TRUNCATE"; continue; }
	check "$t: one version" "$(version_of "$LAKE/$t.lance")" "$((v0 + 1))"
	want=""
	[ $t = trunc_insert ] && want='{"id":"1","s":"new"} {"id":"2","s":"new"}'
	check "$t: the engine reads the rows" "$(rows_of "$LAKE/$t.lance" | tr '\n' ' ' | sed 's/ $//')" "$want"
	check "$t: the engine still lists both indexes" "$(indexes_of "$LAKE/$t.lance")" "id_idx,s_idx"
	if ref apply "$LAKE/$t.lance" "$TMP/specs/trunc_append.json" >/dev/null 2>"$TMP/ref.err"; then
		check "$t: the engine appends and finds its rows through the indexed column" \
			"$(ref scan "$LAKE/$t.lance" --filter "id = 7" | tr -d '\n')" '{"id":"7","s":"after"}'
		check "$t: the engine's filter on the bitmap column" "$(ref scan "$LAKE/$t.lance" --filter "s = 'after'" | wc -l)" 2
		check "$t: lt_fdw reads the engine's append" "$("${PSQL[@]}" -At -c "SELECT count(*), sum(id) FROM $t")" \
			"$([ $t = trunc ] && echo '2|15' || echo '4|18')"
	else
		cat "$TMP/ref.err"; bad "$t: the engine could not append after TRUNCATE"
	fi
done

echo "interop-merge: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
