#!/usr/bin/env bash
# test/interop/l12/features.sh — what only Lance 12 writes, through lt_fdw, and the two engines on each other's
# datasets after lt_fdw wrote on them (part "features" of test/interop/l12.sh):
#   - l12/features.json made by Lance 12 (default storage: 2.2): the unenforced primary key it records is the
#     table's key (lt_primary_key; INSERT of a duplicate into a dataset Lance 12 keyed is 23505); lt_indexes lists every
#     index it built (btree, bitmap, label_list, FTS, FM, IVF_PQ; l12/memwal.json: IVF_HNSW_SQ, IVF_RQ and the
#     MemWAL index of its LSM write path) and filters on their columns equal the engine's;
#   - its branch through the `branch` table option: rows, lt_versions (the branch's own line), a tag of the
#     branch; writes, lt_create_index, lt_set_primary_key on a branch table and lt_cleanup of a dataset with
#     branches are refused (0A000); unknown / invalid branch names are errors;
#   - a dataset Lance 12 writes (2.2) and one Lance 8 writes (2.1): INSERT / UPDATE / DELETE and lt_merge_insert
#     through lt_fdw, then both engines read exactly the rows PostgreSQL reads.
# Ends with "l12-features: N passed, M failed".
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step l12-features 13 "$@"
lt_step_prepare
lt_step_cluster
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
export PGOPTIONS="-c timezone=UTC -c client_min_messages=warning"
ref12() { lt_as_pg env LT_REF=12 LT_REF_IN_PLACE=1 node "$HERE/ref.mjs" "$@"; }
ref8() { lt_as_pg env LT_REF=8 node "$HERE/ref.mjs" "$@"; }
q() { "${PSQL[@]}" -At -c "$1" 2>&1; }
# sqlstate LABEL WANT SQL: the statement fails with that SQLSTATE
sqlstate() {
	local got
	got=$("${PSQL[@]}" -At -v VERBOSITY=verbose -c "$3" 2>&1 | sed -nE 's/^ERROR:  ([0-9A-Z]{5}): .*/\1/p' | head -n 1)
	check "$1" "${got:-(no error)}" "$2"
}

"${PSQL[@]}" -c "CREATE EXTENSION lt_fdw; CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');" \
	|| finish "creating the extension failed"

# ---------------------------------------------------------------- the Lance 12 dataset: key, indexes, branch
ref12 make "$LAKE/features.lance" "$HERE/l12/features.json" >/dev/null 2>"$TMP/make.err" ||
	finish "Lance 12 could not make l12/features.json: $(head -c 300 "$TMP/make.err")"
"${PSQL[@]}" -c "IMPORT FOREIGN SCHEMA \".\" LIMIT TO (features) FROM SERVER lake INTO public OPTIONS (import_row_id 'true')" \
	|| finish "IMPORT of features failed"
check "Lance 12's default storage is 2.2" "$(build/lt-inspect info "$LAKE/features.lance" | jq -r .storage_version)" 2.2
check "the primary key Lance 12 records is the table's key" "$(q "SELECT lt_primary_key('features')")" "{id}"
check "lt_indexes lists every index Lance 12 built, by kind" \
	"$(q "SELECT string_agg(name || ':' || kind, ' ' ORDER BY name) FROM lt_indexes('features')")" \
	"grp_bitmap:bitmap id_btree:btree tags_labels:label_list txt_fm:unknown txt_fts:unknown vec_ivfpq:ivf_pq"
check "count(*) is the engine's" "$(q "SELECT count(*) FROM features")" "$(ref12 scan "$LAKE/features.lance" --columns id | wc -l)"

# filters on the indexed columns: PostgreSQL's rows (ids) are the engine's, which plans with its indexes
filters=("id = 17 OR id BETWEEN 100 AND 130" "grp = 3 AND f > 0" "grp IN (1, 4) OR id > 5050" "txt LIKE '%lance%'"
	"txt IS NULL OR grp IS NULL")
for w in "${filters[@]}"; do
	want=$(ref12 scan "$LAKE/features.lance" --columns id --filter "$w" | jq -r .id | sort -n | paste -sd,)
	got=$(q "SELECT string_agg(id::text, ',' ORDER BY id) FROM features WHERE $w")
	check "filter [$w]: the rows Lance 12 returns" "$got" "$want"
done
# the array column under a label_list index: PostgreSQL's && against the engine's array_has_any
want=$(ref12 scan "$LAKE/features.lance" --columns id --filter "array_has_any(tags, ['a', 'héllo wörld'])" | jq -r .id | sort -n | paste -sd,)
check "filter [tags && ...]: the rows Lance 12 returns" \
	"$(q "SELECT string_agg(id::text, ',' ORDER BY id) FROM features WHERE tags && ARRAY['a', 'héllo wörld']")" "$want"

# the branch: a table option; versions, a tag within it; refused writes
cols=$(q "SELECT string_agg(format('%I %s', attname, format_type(atttypid, atttypmod)), ', ' ORDER BY attnum)
          FROM pg_attribute WHERE attrelid = 'features'::regclass AND attnum > 0 AND NOT attisdropped")
"${PSQL[@]}" -c "CREATE FOREIGN TABLE dev ($cols) SERVER lake OPTIONS (path 'features.lance', branch 'dev');
                 CREATE FOREIGN TABLE dev11 ($cols) SERVER lake OPTIONS (path 'features.lance', branch 'dev', version '11');
                 CREATE FOREIGN TABLE dev_tag ($cols) SERVER lake OPTIONS (path 'features.lance', branch 'dev', tag 'on_dev');
                 CREATE FOREIGN TABLE main_tag ($cols) SERVER lake OPTIONS (path 'features.lance', tag 'on_dev');
                 CREATE FOREIGN TABLE nobranch ($cols) SERVER lake OPTIONS (path 'features.lance', branch 'nope');" ||
	finish "creating the branch tables failed"
for t in "dev|--branch dev" "dev11|--branch dev --version 11" "dev_tag|--branch dev --version on_dev"; do
	# shellcheck disable=SC2086
	want=$(ref12 scan "$LAKE/features.lance" --columns id ${t#*|} | jq -r .id | sort -n | md5sum | cut -c1-12)
	got=$(q "SELECT id FROM ${t%%|*} ORDER BY id" | md5sum | cut -c1-12)
	check "branch table ${t%%|*}: the ids Lance 12 reads on [${t#*|}]" "$got" "$want"
done
check "lt_versions of a branch table: the branch's own versions" "$(q "SELECT string_agg(version::text, ',' ORDER BY version) FROM lt_versions('dev')")" \
	"$(ls "$LAKE/features.lance/tree/dev/_versions" | grep -c manifest | xargs -I{} sh -c 'seq 10 $((9 + {}))' | paste -sd,)"
check "a branch table filters as the engine does on the branch, with main's indexes (no warning)" \
	"$(q "SELECT string_agg(id::text, ',' ORDER BY id) FROM dev WHERE id >= 9000 AND grp = 2")" \
	"$(ref12 scan "$LAKE/features.lance" --branch dev --columns id --filter "id >= 9000 AND grp = 2" | jq -r .id | sort -n | paste -sd,)"
explain=$(q "EXPLAIN SELECT id FROM dev WHERE id = 17")
case $explain in
	*"Lance Index: id_btree"*) ok "a branch table plans with the btree main built (EXPLAIN: Lance Index)" ;;
	*) bad "a branch table does not plan with id_btree: $explain" ;;
esac
sqlstate "a tag of a branch read as main" 58P01 "SELECT count(*) FROM main_tag"
sqlstate "a branch that does not exist" 58P01 "SELECT count(*) FROM nobranch"
sqlstate "INSERT into a branch table" 0A000 "INSERT INTO dev (id, vec) VALUES (123456, array_fill(0.5::real, ARRAY[16]))"
sqlstate "DELETE from a branch table" 0A000 "DELETE FROM dev WHERE id = 1"
sqlstate "lt_create_index on a branch table" 0A000 "SELECT lt_create_index('dev', 'f', 'zonemap')"
sqlstate "lt_set_primary_key on a branch table" 0A000 "SELECT lt_set_primary_key('dev', ARRAY['id'])"
sqlstate "an invalid branch name" HV024 "CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'features.lance', branch '../x')"
sqlstate "lt_cleanup of a dataset with branches" 0A000 "SELECT old_versions FROM lt_cleanup('features', '0 seconds')"
check "the branch is untouched" "$(q "SELECT count(*) FROM dev")" "$(ref12 scan "$LAKE/features.lance" --branch dev --columns id | wc -l)"

# more index kinds: HNSW / RQ vector indexes and the MemWAL index of the LSM write path (the engine's listIndices
# hides that one; lt_fdw lists it as unknown and reads the base table, as the engine does with use_lsm false)
ref12 make "$LAKE/memwal.lance" "$HERE/l12/memwal.json" >/dev/null 2>"$TMP/make.err" ||
	finish "Lance 12 could not make l12/memwal.json: $(head -c 300 "$TMP/make.err")"
"${PSQL[@]}" -c "IMPORT FOREIGN SCHEMA \".\" LIMIT TO (memwal) FROM SERVER lake INTO public" || finish "IMPORT of memwal failed"
check "lt_indexes lists the vector and MemWAL indexes" \
	"$(q "SELECT string_agg(name || ':' || kind, ' ' ORDER BY name) FROM lt_indexes('memwal')")" \
	"__lance_mem_wal:unknown vec_hnsw:ivf_hnsw_sq vec_rq:ivf_rq"
want=$(lt_as_pg env LT_REF=12 node --input-type=module -e '
const { lancedb } = await import(process.argv[1] + "/engine.mjs");
const t = await (await lancedb.connect(process.argv[2])).openTable("memwal");
const ids = (await t.query().select(["id"]).where("id % 3 = 1").toArray()).map((r) => Number(r.id));
console.log(ids.length + " " + ids.reduce((a, b) => a + b, 0));' "$HERE" "$LAKE")
check "a filter on the MemWAL dataset: Lance 12's rows (count, sum)" "$(q "SELECT count(*) || ' ' || sum(id) FROM memwal WHERE id % 3 = 1")" "$want"
# the HNSW index answers (approximately, as the engine: vector.sh compares it with the engine's search); with the
# index off the answer is exact
explain=$(q "EXPLAIN SELECT id FROM memwal ORDER BY vec <-> array_fill(0.5::real, ARRAY[16]) LIMIT 3")
[[ $explain == *"Vector Search: IVF_HNSW_SQ index vec_hnsw on vec"* ]] && ok "a kNN query over a column with HNSW / RQ indexes plans through the IVF_HNSW_SQ index" ||
	bad "kNN over memwal: $explain"
check "the kNN query with lt_fdw.vector_index off answers as PostgreSQL's own sort" \
	"$(q "SET lt_fdw.vector_index = off; SELECT string_agg(id::text, ',') FROM (SELECT id FROM memwal ORDER BY vec <-> array_fill(0.5::real, ARRAY[16]), id LIMIT 5) s")" \
	"$(q "CREATE TEMP TABLE h AS SELECT id, vec FROM memwal; SELECT string_agg(id::text, ',') FROM (SELECT id FROM h ORDER BY vec <-> array_fill(0.5::real, ARRAY[16]), id LIMIT 5) s" | tail -n 1)"

# ---------------------------------------------------- each engine's dataset, written by lt_fdw, read by both
cat >"$TMP/x12.json" <<'JSON'
{"schema": [{"name": "id", "type": "int64", "nullable": false, "gen": "seq"}, {"name": "s", "type": "utf8"},
            {"name": "f", "type": "float64"}, {"name": "l", "type": "list<int32>"}, {"name": "ts", "type": "timestamp[us]"}],
 "generate": {"n": 500}, "fragments": 2, "ops": [{"op": "primary_key", "columns": ["id"]}, {"op": "delete", "where": "id % 9 = 4"}]}
JSON
jq '.storage = "2.1" | .ops = [.ops[1]]' "$TMP/x12.json" >"$TMP/x8.json"
chmod a+r "$TMP"/x*.json
ref12 make "$LAKE/x12.lance" "$TMP/x12.json" >/dev/null 2>"$TMP/make.err" || finish "Lance 12: make x12: $(head -c 300 "$TMP/make.err")"
ref8 make "$LAKE/x8.lance" "$TMP/x8.json" >/dev/null 2>"$TMP/make.err" || finish "Lance 8: make x8: $(head -c 300 "$TMP/make.err")"
"${PSQL[@]}" -c "IMPORT FOREIGN SCHEMA \".\" LIMIT TO (x12, x8) FROM SERVER lake INTO public" || finish "IMPORT of x12, x8 failed"
sqlstate "x12: a duplicate of Lance 12's key is refused" 23505 "INSERT INTO x12 (id, s) VALUES (7, 'dup')"
for t in x12 x8; do
	if "${PSQL[@]}" >"$TMP/w.out" 2>&1 <<SQL
BEGIN;
INSERT INTO $t (id, s, f, l, ts) SELECT g, 'new ' || g, g / 3.0, ARRAY[g, -g]::int[], TIMESTAMP '2001-02-03 04:05:06' + g * INTERVAL '1 hour'
  FROM generate_series(1000, 1199) g;
COMMIT;
UPDATE $t SET s = 'updated', f = -f WHERE id % 7 = 1;
DELETE FROM $t WHERE id % 5 = 0;
SELECT lt_merge_insert('$t', \$\$SELECT g::bigint AS id, 'merged' AS s, 0.5::float8 AS f, NULL::int[] AS l,
  NULL::timestamp AS ts FROM generate_series(1190, 1210) g\$\$, ARRAY['id']);
SQL
	then
		ok "$t: INSERT, UPDATE, DELETE and lt_merge_insert through lt_fdw"
	else
		bad "$t: writes through lt_fdw: $(head -c 400 "$TMP/w.out")"; continue
	fi
	pg=$(q "SELECT count(*) || ' ' || sum(id) || ' ' || count(*) FILTER (WHERE s = 'updated') || ' ' || count(*) FILTER (WHERE s = 'merged') FROM $t")
	for eng in 8 12; do
		"ref$eng" scan "$LAKE/$t.lance" >"$TMP/$t.$eng.jsonl" 2>"$TMP/scan.err" || { bad "$t: Lance $eng cannot read it: $(head -c 300 "$TMP/scan.err")"; continue; }
		got=$(jq -rs '[length, (map(.id | tonumber) | add), (map(select(.s == "updated")) | length), (map(select(.s == "merged")) | length)] | map(tostring) | join(" ")' "$TMP/$t.$eng.jsonl")
		check "$t: Lance $eng reads the rows PostgreSQL reads (count, sum of ids, updated, merged)" "$got" "$pg"
	done
	if [ -s "$TMP/$t.8.jsonl" ] && cmp -s <(sort "$TMP/$t.8.jsonl") <(sort "$TMP/$t.12.jsonl"); then
		ok "$t: Lance 8 and Lance 12 read identical rows"
	else
		bad "$t: Lance 8 and Lance 12 read different rows"
	fi
done

# the key lt_fdw marks (as Lance 8 marks it) is the key Lance 12 reads
if "${PSQL[@]}" -c "SELECT lt_set_primary_key('x8', ARRAY['id'])" >"$TMP/pk.out" 2>&1; then
	check "x8: Lance 12 reads the primary key lt_set_primary_key marked" \
		"$(ref12 schema "$LAKE/x8.lance" | jq -r 'select(.metadata["lance-schema:unenforced-primary-key:position"] == "1") | .name')" id
else
	bad "x8: lt_set_primary_key: $(head -c 300 "$TMP/pk.out")"
fi

if [ "$failed" -gt 0 ] && grep -q 'TRAP\|terminated by signal\|PANIC' "$LT_PGLOG"; then
	echo "---- server log (last 30 lines)"; tail -n 30 "$LT_PGLOG"
fi
echo "l12-features: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
