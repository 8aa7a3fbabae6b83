#!/usr/bin/env bash
# test/interop/lifecycle.sh — datasets created, compacted, evolved, tagged and restored through PostgreSQL
# (lt_create_dataset, lt_compact, lt_*_column, tags, lt_restore), read by the real Lance engines, which write on top.
#
#   create    for storage 2.0, 2.1 and 2.2: lt_create_dataset from a query (bigint NOT NULL, integer, double,
#             text with NULLs, date, boolean, text[]): the engine (Lance 8) reads exactly the rows PostgreSQL
#             holds, the field id non-nullable, the files in that storage version; Lance 12 counts the same;
#             the engine appends, deletes and compacts on top, lt_fdw reads the same count and sum
#   empty     lt_create_dataset without a query, then INSERTs: the engine reads them
#   compact   N single-row INSERT transactions (N fragments), DELETEs, the engine's btree / bitmap / label_list
#             indexes; lt_compact: one Rewrite version, a handful of fragments, the same rows through lt_fdw,
#             Lance 8 and Lance 12; the indexes remapped: lt_fdw, Lance 8 and Lance 12 list them with no
#             unindexed rows and plan the filters with them, every filter answered by lt_fdw as by the engines;
#             UPDATE and DELETE work; the engine appends and compacts on top
#   optimize  rows appended through lt_fdw after those indexes were remapped; lt_optimize_indexes merges them
#             (Lance's optimize): lt_fdw, Lance 8 and Lance 12 list the indexes with no unindexed rows, plan
#             with them and answer the filters as lt_fdw's scan; the engine appends and optimizes on top
#   vector    the engine's IVF_FLAT index over 3 fragments with deleted rows; lt_compact remaps it: it covers the
#             new fragment for lt_fdw, and Lance 8 and Lance 12 plan their search with it and answer (every
#             partition probed) what lt_fdw's exact search answers
#   vector pq/sq  the same with the engine's IVF_PQ and lt_fdw's IVF_SQ (lifecycle-vq.sh): remapped codes, so
#             lt_fdw's and the engines' indexed answers are those before the compaction and equal each other
#   vector hnsw   Lance 12's and lt_fdw's IVF_HNSW_SQ / IVF_HNSW_PQ (lt_fdw's IVF_HNSW_SQ also over float16 / float64), Lance 8's and 12's IVF_RQ (lifecycle-vq.sh): remapped codes, graphs built
#             again; lt_fdw's answer equals Lance 12's, lt-inspect's Lance 8 walk Lance 8's; no unindexed row
#   evolve    lt_add_column / lt_drop_column / lt_rename_column on a created dataset: the engine's schema, its
#             filters on the new and renamed columns, Lance 12's; the engine appends with the new schema; a
#             column's type cast (lt_alter_column_type) read by Lance 8 and 12; a column added with a value (storage 2.0) read by Lance 8 and 12 in every row, then dropped; a column
#             added tracked as unassigned: both engines read the same rows and refuse to write, until it is dropped
#   tags      lt_create_tag / lt_tags / lt_delete_tag: the engine reads the tagged version; lt_restore: Lance 8
#             and 12 read the restored rows, the engine appends on top
#
#   test/interop/lifecycle.sh [--no-install]
# Ends with "interop-lifecycle: N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step interop-lifecycle 20 "$@"
lt_step_prepare
lt_step_cluster
N=${LT_LIFECYCLE_INSERTS:-400}
PSQL=("$LT_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres)
export PGOPTIONS="-c timezone=UTC -c client_min_messages=warning -c extra_float_digits=0"
ref() { lt_as_pg node "$HERE/ref.mjs" "$@"; }
l12() { if [ -d "$HERE/lance12/node_modules/@lancedb/lancedb" ]; then lt_as_pg node "$HERE/lifecycle12.mjs" "$@"; else echo skip; fi; }
sql() { "${PSQL[@]}" -c "$1"; }
# the engine's count and sum of id, as "N S"
ref_count_sum() { ref scan "$1" --columns id ${2:+--filter "$2"} | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let n=0,t=0n;for(const l of s.split("\n")) if(l){n++;t+=BigInt(JSON.parse(l).id)}console.log(n+" "+t)})'; }
l12_count_sum() { l12 "$@" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{if(s.trim()==="skip"){console.log("skip");return}const o=JSON.parse(s);console.log(o.rows+" "+o.sum_id)})'; }
check12() { local got; got=$(l12_count_sum "$2" "${4:-}"); if [ "$got" = skip ]; then echo "skip $1 (no Lance 12 modules)"; else check "$1" "$got" "$3"; fi; }

sql "CREATE EXTENSION lt_fdw; CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');" >/dev/null \
	|| finish "creating the extension failed"

# ---- create from a query, each storage version ------------------------------------------------------
Q="SELECT g::bigint, (g % 1000)::int, g / 4.0::float8, CASE WHEN g % 9 = 0 THEN NULL ELSE 'text ' || (g % 300) END,
          DATE '2024-01-01' + (g % 400), g % 3 = 0, CASE WHEN g % 11 = 0 THEN NULL ELSE ARRAY['a' || (g % 5), 'b'] END
     FROM generate_series(1, 20000) g"
# the rows as JSON lines in the engine's spelling (int64 as a string), keys in one order
PGJSON="SELECT json_build_object('id', id::text, 'n', n, 'v', v, 's', s, 'd', d, 'ok', ok, 'tags', tags)::text FROM"
canon() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n")) if(l){const o=JSON.parse(l);console.log(JSON.stringify(Object.fromEntries(Object.keys(o).sort().map(k=>[k,o[k]]))))}})' | LC_ALL=C sort; }
for sv in 2.0 2.1 2.2; do
	t=c${sv/./}
	sql "CREATE FOREIGN TABLE $t (id bigint NOT NULL, n integer, v double precision, s text, d date, ok boolean, tags text[])
	     SERVER lake OPTIONS (path '$t.lance')" >/dev/null || finish "CREATE FOREIGN TABLE $t failed"
	got=$(sql "SELECT rows_written || ' ' || storage_version_written FROM lt_create_dataset('$t', '$sv', \$q\$$Q\$q\$)")
	check "create $sv: rows written" "$got" "20000 $sv"
	"${PSQL[@]}" -c "$PGJSON $t" | canon >"$TMP/$t.pg"
	ref scan "$LAKE/$t.lance" | canon >"$TMP/$t.ref"
	if cmp -s "$TMP/$t.pg" "$TMP/$t.ref" && [ -s "$TMP/$t.ref" ]; then ok "create $sv: the engine reads the rows PostgreSQL holds"
	else bad "create $sv: the engine reads other rows: $(diff "$TMP/$t.pg" "$TMP/$t.ref" | head -n 4 | tr '\n' ' ')"; fi
	check "create $sv: id is not nullable for the engine" "$(ref schema "$LAKE/$t.lance" | head -n 1)" '{"name":"id","nullable":false,"metadata":{}}'
	check "create $sv: file version" "$(ref pages "$LAKE/$t.lance" | head -n 1 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).file_version))')" "$sv"
	check12 "create $sv: Lance 12 reads the rows" "$LAKE/$t.lance" "20000 200010000"
	printf '{"ops":[{"op":"append","rows":[{"id":"900001","n":1,"v":0.5,"s":"eng","d":"2025-01-01","ok":true,"tags":["x"]}]},{"op":"delete","where":"id %% 2 = 0"},{"op":"optimize"}]}' >"$TMP/ops.json"
	ref apply "$LAKE/$t.lance" "$TMP/ops.json" >/dev/null || bad "create $sv: the engine could not write on top"
	check "create $sv: lt_fdw reads the engine's writes" "$(sql "SELECT count(*) || ' ' || sum(id) FROM $t")" "$(ref_count_sum "$LAKE/$t.lance")"
done

# ---- empty, then INSERT ------------------------------------------------------------------------------
sql "CREATE FOREIGN TABLE e (id bigint NOT NULL, price numeric(12,3), ts timestamptz) SERVER lake OPTIONS (path 'e.lance')" >/dev/null
sql "SELECT lt_create_dataset('e')" >/dev/null || bad "empty: lt_create_dataset failed"
sql "INSERT INTO e VALUES (1, 12.345, '2024-05-06 07:08:09.123456+00'), (2, NULL, NULL)" >/dev/null
check "empty: the engine reads the INSERTs" "$(ref scan "$LAKE/e.lance" | tr '\n' ' ')" \
	'{"id":"1","price":"12.345","ts":"2024-05-06T07:08:09.123456Z"} {"id":"2","price":null,"ts":null} '

# ---- compaction after many single-row transactions ----------------------------------------------------
sql "CREATE FOREIGN TABLE k (id bigint NOT NULL, cat integer, tags text[], s text) SERVER lake OPTIONS (path 'k.lance')" >/dev/null
sql "SELECT lt_create_dataset('k')" >/dev/null
for i in $(seq 1 "$N"); do echo "INSERT INTO k VALUES ($i, $((i % 7)), ARRAY['t$((i % 4))'], 'row $i');"; done >"$TMP/ins.sql"
"${PSQL[@]}" -f "$TMP/ins.sql" >/dev/null || bad "compact: the single-row INSERTs failed"
check "compact: one fragment per INSERT" "$(sql "SELECT count(*) FROM lt_fragments('k')")" "$N"
sql "DELETE FROM k WHERE id % 10 = 3" >/dev/null
printf '{"ops":[{"op":"create_index","column":"id","kind":"btree"},{"op":"create_index","column":"cat","kind":"bitmap"},{"op":"create_index","column":"tags","kind":"label_list"}]}' >"$TMP/ix.json"
ref apply "$LAKE/k.lance" "$TMP/ix.json" >/dev/null || bad "compact: the engine could not build its indexes"
before=$(sql "SELECT count(*) || ' ' || sum(id) FROM k")
frags=$(sql "SELECT count(*) FROM lt_fragments('k')")
versions=$(sql "SELECT count(*) FROM lt_versions('k')")
got=$(sql "SELECT fragments_removed || ' ' || fragments_added || ' ' || rows_rewritten FROM lt_compact('k')")
check "compact: every fragment rewritten into one" "$got" "$frags 1 $(cut -d' ' -f1 <<<"$before")"
check "compact: one Rewrite version" "$(sql "SELECT count(*) || ' ' || (SELECT operation FROM lt_versions('k') ORDER BY version DESC LIMIT 1) FROM lt_versions('k')")" "$((versions + 1)) Rewrite"
check "compact: lt_fdw reads the same rows" "$(sql "SELECT count(*) || ' ' || sum(id) FROM k")" "$before"
check "compact: the engine reads the same rows" "$(ref_count_sum "$LAKE/k.lance")" "$before"
check12 "compact: Lance 12 reads the same rows" "$LAKE/k.lance" "$before"
for f in "id = 77" "id < 50" "cat = 3" "array_has_any(tags, ['t1'])"; do
	case $f in
		array_has_any*) pgf="tags && ARRAY['t1']" ;;
		*) pgf=$f ;;
	esac
	check "compact: filter $f as the engine answers it" "$(sql "SELECT count(*) || ' ' || coalesce(sum(id), 0) FROM k WHERE $pgf")" "$(ref_count_sum "$LAKE/k.lance" "$f")"
done
check12 "compact: Lance 12 filter cat = 3" "$LAKE/k.lance" "$(sql "SELECT count(*) || ' ' || sum(id) FROM k WHERE cat = 3")" "cat = 3"
# the indexes moved with the rows: each covers every fragment (the rewritten ones' rows at their new addresses),
# for lt_fdw, Lance 8 and Lance 12, and every engine plans the filters with them
check "compact: lt_fdw's indexes cover every fragment" "$(sql "SELECT string_agg(name || ' ' || cardinality(unindexed_fragments), ', ' ORDER BY name) FROM lt_indexes('k')")" "cat_idx 0, id_idx 0, tags_idx 0"
check "compact: lt_fdw plans id = 77 with the index" "$(sql "EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM k WHERE id = 77" | grep -c 'Lance Index: id_idx')" "1"
ix_unindexed='let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=[];for(const l of s.split("\n")) if(l){const o=JSON.parse(l);r.push(o.name+" "+o.stats.numUnindexedRows)}console.log(r.sort().join(", "))})'
check "compact: Lance 8 lists the indexes, none with unindexed rows" "$(ref indexes "$LAKE/k.lance" | node -e "$ix_unindexed")" "cat_idx 0, id_idx 0, tags_idx 0"
if [ -d "$HERE/lance12/node_modules/@lancedb/lancedb" ]; then
	check "compact: Lance 12 lists the indexes, none with unindexed rows" "$(lt_as_pg env LT_REF=12 node "$HERE/ref.mjs" indexes "$LAKE/k.lance" | node -e "$ix_unindexed")" "cat_idx 0, id_idx 0, tags_idx 0"
fi
for f in "id = 77" "cat = 3" "array_has_any(tags, ['t1'])"; do
	check "compact: Lance 8 plans $f with its index" "$(ref plan "$LAKE/k.lance" --filter "$f" | grep -q ScalarIndexQuery && echo index)" "index"
	if [ -d "$HERE/lance12/node_modules/@lancedb/lancedb" ]; then
		check "compact: Lance 12 plans $f with its index" "$(lt_as_pg env LT_REF=12 node "$HERE/ref.mjs" plan "$LAKE/k.lance" --filter "$f" | grep -q ScalarIndexQuery && echo index)" "index"
	fi
done
check12 "compact: Lance 12 filter id = 77" "$LAKE/k.lance" "$(sql "SELECT count(*) || ' ' || coalesce(sum(id), 0) FROM k WHERE id = 77")" "id = 77"
check12 "compact: Lance 12 filter id < 50" "$LAKE/k.lance" "$(sql "SELECT count(*) || ' ' || coalesce(sum(id), 0) FROM k WHERE id < 50")" "id < 50"
check12 "compact: Lance 12 filter tags" "$LAKE/k.lance" "$(sql "SELECT count(*) || ' ' || coalesce(sum(id), 0) FROM k WHERE tags && ARRAY['t1']")" "array_has_any(tags, ['t1'])"
sql "UPDATE k SET s = 'updated' WHERE id <= 20" >/dev/null && sql "DELETE FROM k WHERE id > $((N - 20))" >/dev/null \
	&& ok "compact: UPDATE and DELETE work after it" || bad "compact: UPDATE or DELETE failed after it"
check "compact: the engine reads the UPDATE and DELETE" "$(ref_count_sum "$LAKE/k.lance" "s = 'updated'")" "$(sql "SELECT count(*) || ' ' || sum(id) FROM k WHERE s = 'updated'")"
printf '{"ops":[{"op":"append","rows":[{"id":"5000","cat":1,"tags":["t9"],"s":"eng"}]},{"op":"optimize"}]}' >"$TMP/ops2.json"
ref apply "$LAKE/k.lance" "$TMP/ops2.json" >/dev/null || bad "compact: the engine could not append and compact on top"
check "compact: lt_fdw reads the engine's compaction" "$(sql "SELECT count(*) || ' ' || sum(id) FROM k")" "$(ref_count_sum "$LAKE/k.lance")"
for i in $(seq 1 30); do echo "INSERT INTO k VALUES ($((10000 + i)), 1, ARRAY['t1'], 'again');"; done | "${PSQL[@]}" >/dev/null
sql "SELECT lt_compact('k')" >/dev/null || bad "compact: a second compaction failed"
check "compact: after the second, the engine reads what lt_fdw reads" "$(ref_count_sum "$LAKE/k.lance")" "$(sql "SELECT count(*) || ' ' || sum(id) FROM k")"
check "compact: the engine's filter after the second" "$(ref_count_sum "$LAKE/k.lance" "cat = 1")" "$(sql "SELECT count(*) || ' ' || sum(id) FROM k WHERE cat = 1")"

# ---- lt_optimize_indexes: rows appended since the build merged into each index, as Lance's optimize ------
# the engine's btree / bitmap / label_list (remapped twice above); 3 appends through lt_fdw, a delete; one
# CreateIndex replacing each segment with a merged one; both engines list them with no unindexed rows, plan
# with them and answer the filters as lt_fdw does; the engine appends and optimizes on top, lt_fdw reads that
for i in 1 2 3; do sql "INSERT INTO k SELECT g, g % 7, ARRAY['t' || (g % 4), 'o$i'], 'opt' FROM generate_series($((20000 + i * 100)), $((20000 + i * 100 + 49))) g" >/dev/null; done
sql "DELETE FROM k WHERE id % 10 = 3" >/dev/null
check "optimize: the appended fragments unindexed before" "$(sql "SELECT string_agg(name || ' ' || (cardinality(unindexed_fragments) >= 3), ', ' ORDER BY name) FROM lt_indexes('k')")" "cat_idx true, id_idx true, tags_idx true"
check "optimize: every index merged" "$(sql "SELECT lt_optimize_indexes('k')")" "3"
check "optimize: one CreateIndex version" "$(sql "SELECT operation FROM lt_versions('k') ORDER BY version DESC LIMIT 1")" "CreateIndex"
check "optimize: lt_fdw's indexes cover every fragment" "$(sql "SELECT string_agg(name || ' ' || cardinality(unindexed_fragments), ', ' ORDER BY name) FROM lt_indexes('k')")" "cat_idx 0, id_idx 0, tags_idx 0"
check "optimize: Lance 8 lists the indexes, none with unindexed rows" "$(ref indexes "$LAKE/k.lance" | node -e "$ix_unindexed")" "cat_idx 0, id_idx 0, tags_idx 0"
if [ -d "$HERE/lance12/node_modules/@lancedb/lancedb" ]; then
	check "optimize: Lance 12 lists the indexes, none with unindexed rows" "$(lt_as_pg env LT_REF=12 node "$HERE/ref.mjs" indexes "$LAKE/k.lance" | node -e "$ix_unindexed")" "cat_idx 0, id_idx 0, tags_idx 0"
fi
for f in "id = 20205" "id > 20290" "cat = 3" "array_has_any(tags, ['o2'])" "array_has_any(tags, ['t1'])"; do
	case $f in
		"array_has_any(tags, ['o2'])") pgf="tags && ARRAY['o2']" ;;
		"array_has_any(tags, ['t1'])") pgf="tags && ARRAY['t1']" ;;
		*) pgf=$f ;;
	esac
	want=$(sql "SET lt_fdw.enable_index_scan = off; SELECT count(*) || ' ' || coalesce(sum(id), 0) FROM k WHERE $pgf" | tail -n 1)
	check "optimize: lt_fdw's indexed $f equals its scan" "$(sql "SELECT count(*) || ' ' || coalesce(sum(id), 0) FROM k WHERE $pgf")" "$want"
	check "optimize: Lance 8 answers $f as lt_fdw's scan" "$(ref_count_sum "$LAKE/k.lance" "$f")" "$want"
	check "optimize: Lance 8 plans $f with its index" "$(ref plan "$LAKE/k.lance" --filter "$f" | grep -q ScalarIndexQuery && echo index)" "index"
	check12 "optimize: Lance 12 answers $f as lt_fdw's scan" "$LAKE/k.lance" "$want" "$f"
	if [ -d "$HERE/lance12/node_modules/@lancedb/lancedb" ]; then
		check "optimize: Lance 12 plans $f with its index" "$(lt_as_pg env LT_REF=12 node "$HERE/ref.mjs" plan "$LAKE/k.lance" --filter "$f" | grep -q ScalarIndexQuery && echo index)" "index"
	fi
done
check "optimize: lt_fdw plans id = 20205 with the merged index" "$(sql "EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM k WHERE id = 20205" | grep -c 'Lance Index: id_idx')" "1"
printf '{"ops":[{"op":"append","rows":[{"id":"30001","cat":3,"tags":["o9"],"s":"eng"}]},{"op":"optimize"}]}' >"$TMP/ops_opt.json"
ref apply "$LAKE/k.lance" "$TMP/ops_opt.json" >/dev/null || bad "optimize: the engine could not append and optimize on top"
check "optimize: lt_fdw reads the engine's optimize on top" "$(sql "SELECT count(*) || ' ' || sum(id) FROM k WHERE cat = 3")" "$(ref_count_sum "$LAKE/k.lance" "cat = 3")"
check "optimize: lt_fdw's indexes after the engine's optimize" "$(sql "SELECT string_agg(name || ' ' || cardinality(unindexed_fragments), ', ' ORDER BY name) FROM lt_indexes('k')")" "cat_idx 0, id_idx 0, tags_idx 0"
check "optimize: lt_fdw's id = 30001 after the engine's optimize" "$(sql "SELECT count(*) FROM k WHERE id = 30001")" "1"

# ---- compaction with the engine's IVF_FLAT index --------------------------------------------------------
# (the pg suites' vectors dataset: 3 fragments, rows deleted after the index was built, 2 partitions)
ref make "$LAKE/vx.lance" "$ROOT/test/pg/specs/vectors.json" >/dev/null || bad "vector: the engine could not make the dataset"
sql "CREATE FOREIGN TABLE vx (id bigint, vec real[]) SERVER lake OPTIONS (path 'vx.lance')" >/dev/null
VQ="3,1,4,1,5,9,2,6"
got=$(sql "SELECT fragments_removed || ' ' || fragments_added FROM lt_compact('vx')")
check "vector: the three fragments compacted into one" "$got" "3 1"
check "vector: lt_fdw's IVF_FLAT covers the new fragment" "$(sql "SELECT kind || ' ' || cardinality(covered_fragments) || ' ' || cardinality(unindexed_fragments) FROM lt_indexes('vx')")" "ivf_flat 1 0"
pg_exact=$(sql "SET lt_fdw.vector_index = off; SELECT string_agg(id::text, ',' ORDER BY id) FROM (SELECT id FROM vx ORDER BY vec <-> '{$VQ}' LIMIT 10) x" | tail -n 1)
check "vector: lt_fdw's indexed search equals its exact one" "$(sql "SET lt_fdw.nprobes = 2; SELECT string_agg(id::text, ',' ORDER BY id) FROM (SELECT id FROM vx ORDER BY vec <-> '{$VQ}' LIMIT 10) x" | tail -n 1)" "$pg_exact"
for e in 8 12; do
	dir=$HERE; [ "$e" = 12 ] && dir=$HERE/lance12
	[ -d "$dir/node_modules/@lancedb/lancedb" ] || { echo "skip vector: Lance $e (no modules)"; continue; }
	check "vector: Lance $e lists the index with no unindexed rows" "$(lt_as_pg env LT_REF=$e node "$HERE/ref.mjs" indexes "$LAKE/vx.lance" | node -e "$ix_unindexed")" "vec_idx 0"
	out=$(lt_as_pg node "$HERE/lifecycle-knn.mjs" "$dir" "$LAKE/vx.lance" vec "$VQ" 10 2)
	check "vector: Lance $e plans the search with the remapped index" "$(sed -n 's/^plan: //p' <<<"$out")" "ann"
	check "vector: Lance $e's indexed search equals lt_fdw's exact answer" "$(sed -n 's/^index: //p' <<<"$out")" "$pg_exact"
	check "vector: Lance $e's exact search equals lt_fdw's" "$(sed -n 's/^exact: //p' <<<"$out")" "$pg_exact"
done

# ---- compaction with IVF_PQ and IVF_SQ indexes (remapped) -----------------------------------------------
. "$HERE/lifecycle-vq.sh"

# ---- schema evolution -----------------------------------------------------------------------------------
sql "SELECT lt_add_column('c22', 'extra', 'integer')" >/dev/null || bad "evolve: lt_add_column failed"
sql "UPDATE c22 SET extra = 7 WHERE id < 100" >/dev/null
sql "SELECT lt_drop_column('c22', 'v')" >/dev/null || bad "evolve: lt_drop_column failed"
sql "SELECT lt_rename_column('c22', 's', 'label')" >/dev/null || bad "evolve: lt_rename_column failed"
check "evolve: the engine's schema" "$(ref schema "$LAKE/c22.lance" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(s.split("\n").filter(Boolean).map(l=>JSON.parse(l).name).join(",")))')" "id,n,label,d,ok,tags,extra"
check "evolve: the engine reads the new column" "$(ref_count_sum "$LAKE/c22.lance" "extra = 7")" "$(sql "SELECT count(*) || ' ' || sum(id) FROM c22 WHERE extra = 7")"
check "evolve: the engine reads the renamed column" "$(ref_count_sum "$LAKE/c22.lance" "label IS NULL")" "$(sql "SELECT count(*) || ' ' || sum(id) FROM c22 WHERE label IS NULL")"
check12 "evolve: Lance 12 reads the new column" "$LAKE/c22.lance" "$(sql "SELECT count(*) || ' ' || sum(id) FROM c22 WHERE extra IS NULL")" "extra IS NULL"
printf '{"ops":[{"op":"append","rows":[{"id":"990001","n":1,"label":"eng","d":"2025-01-01","ok":true,"tags":["x"],"extra":9}]},{"op":"optimize"}]}' >"$TMP/ops3.json"
ref apply "$LAKE/c22.lance" "$TMP/ops3.json" >/dev/null || bad "evolve: the engine could not write on top"
check "evolve: lt_fdw reads the engine's append" "$(sql "SELECT label || ' ' || extra FROM c22 WHERE id = 990001")" "eng 9"

# a column's type changed (Lance's alter_columns cast: new data files, a new field id): both engines read the cast values
sql "SELECT lt_alter_column_type('c22', 'n', 'bigint')" >/dev/null || bad "evolve: lt_alter_column_type failed"
check "evolve: the engine reads the cast column" "$(ref_count_sum "$LAKE/c22.lance" "n >= 500")" "$(sql "SELECT count(*) || ' ' || sum(id) FROM c22 WHERE n >= 500")"
check12 "evolve: Lance 12 reads the cast column" "$LAKE/c22.lance" "$(sql "SELECT count(*) || ' ' || sum(id) FROM c22 WHERE n >= 500")" "n >= 500"
check "evolve: the cast column is int64 for the engine" "$(ref scan "$LAKE/c22.lance" --columns n --filter "id = 990001")" '{"n":"1"}'
# a column with a value in every row (one data file per fragment, here storage 2.0 over the engine's compaction)
sql "SELECT lt_add_column('c20', 'filled', 'integer', '42')" >/dev/null || bad "evolve: lt_add_column with a value failed"
sql "SELECT lt_add_column('c20', 'note', 'text', 'hello')" >/dev/null || bad "evolve: lt_add_column with a text value failed"
all20=$(sql "SELECT count(*) || ' ' || sum(id) FROM c20")
check "evolve: lt_fdw reads the value in every row" "$(sql "SELECT count(*) || ' ' || sum(id) FROM c20 WHERE filled = 42 AND note = 'hello'")" "$all20"
check "evolve: the engine reads the value in every row" "$(ref_count_sum "$LAKE/c20.lance" "filled = 42 AND note = 'hello'")" "$all20"
check12 "evolve: Lance 12 reads the value in every row" "$LAKE/c20.lance" "$all20" "filled = 42 AND note = 'hello'"
sql "SELECT lt_drop_column('c20', 'note')" >/dev/null || bad "evolve: lt_drop_column of a column with values failed"
check "evolve: the engine's schema after the drop" "$(ref schema "$LAKE/c20.lance" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(s.split("\n").filter(Boolean).map(l=>JSON.parse(l).name).join(",")))')" "id,n,v,s,d,ok,tags,filled"
check12 "evolve: Lance 12 reads the column after the drop" "$LAKE/c20.lance" "$all20" "filled = 42"
printf '{"ops":[{"op":"append","rows":[{"id":"990002","n":1,"v":0.5,"s":"eng","d":"2025-01-01","ok":true,"tags":["x"],"filled":5}]},{"op":"optimize"}]}' >"$TMP/ops4.json"
ref apply "$LAKE/c20.lance" "$TMP/ops4.json" >/dev/null || bad "evolve: the engine could not write on top of the added values"
check "evolve: lt_fdw reads the engine's append and compaction" "$(sql "SELECT count(*) FILTER (WHERE filled = 42) || ' ' || count(*) FILTER (WHERE filled = 5) FROM c20")" "$(cut -d' ' -f1 <<<"$all20") 1"
# a column added tracked as unassigned, some rows written: both engines read the same rows and refuse to write;
# once the tracked field is dropped (its state with it) they write again
sql "SELECT lt_add_column('c20', 'emb', 'integer', NULL, 'unassigned')" >/dev/null || bad "evolve: lt_add_column tracked failed"
sql "UPDATE c20 SET emb = 1 WHERE id < 1000" >/dev/null || bad "evolve: UPDATE of the tracked column failed"
check "evolve: is_assigned of the new column" "$(sql "SELECT count(*) FILTER (WHERE emb_is_assigned) || ' ' || count(*) FILTER (WHERE NOT emb_is_assigned) FROM c20")" \
	"$(sql "SELECT count(*) FILTER (WHERE id < 1000) || ' ' || count(*) FILTER (WHERE id >= 1000) FROM c20")"
e8=$(cd "$HERE" && lt_as_pg node assign-engines.mjs . "$LAKE/c20.lance" id,filled,emb 2>/dev/null | tail -n 2 | tr '\n' ' ')
if [ -d "$HERE/lance12/node_modules/@lancedb/lancedb" ]; then
	e12=$(cd "$HERE" && lt_as_pg node assign-engines.mjs lance12 "$LAKE/c20.lance" id,filled,emb 2>/dev/null | tail -n 2 | tr '\n' ' ')
	check "evolve: Lance 8 and 12 read the tracked dataset identically and refuse to write it" "$e12" "$e8"
fi
check "evolve: the engine refuses to write the tracked dataset" "$(sed 's/.*write: //' <<<"$e8")" "refused (unknown writer feature flag) "
sql "SELECT lt_drop_column('c20', 'emb')" >/dev/null || bad "evolve: lt_drop_column of the tracked column failed"
check "evolve: the engine writes again once no field is tracked" "$(cd "$HERE" && lt_as_pg node assign-engines.mjs . "$LAKE/c20.lance" id 2>/dev/null | tail -n 1)" "write: accepted"

# ---- tags and restore ----------------------------------------------------------------------------------
before=$(sql "SELECT count(*) || ' ' || sum(id) FROM c21")
v=$(sql "SELECT max(version) FROM lt_versions('c21')")
check "tags: lt_create_tag tags the version read" "$(sql "SELECT lt_create_tag('c21', 'before')")" "$v"
sql "DELETE FROM c21 WHERE id < 5000" >/dev/null
sql "CREATE FOREIGN TABLE c21_before (id bigint, s text) SERVER lake OPTIONS (path 'c21.lance', tag 'before')" >/dev/null
check "tags: lt_fdw reads the tagged version" "$(sql "SELECT count(*) || ' ' || sum(id) FROM c21_before")" "$before"
check "tags: the engine reads the tagged version" "$(ref scan "$LAKE/c21.lance" --version before --columns id | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let n=0,t=0n;for(const l of s.split("\n")) if(l){n++;t+=BigInt(JSON.parse(l).id)}console.log(n+" "+t)})')" "$before"
check "tags: lt_tags" "$(sql "SELECT string_agg(tag || '=' || version, ',') FROM lt_tags('c21')")" "before=$v"
check "restore: lt_restore commits the next version" "$(sql "SELECT lt_restore('c21', $v)")" "$((v + 2))"
check "restore: the engine reads the restored rows" "$(ref_count_sum "$LAKE/c21.lance")" "$before"
check12 "restore: Lance 12 reads the restored rows" "$LAKE/c21.lance" "$before"
printf '{"ops":[{"op":"append","rows":[{"id":"880001","n":1,"v":0.5,"s":"eng","d":"2025-01-01","ok":true,"tags":["x"]}]}]}' >"$TMP/ops4.json"
ref apply "$LAKE/c21.lance" "$TMP/ops4.json" >/dev/null || bad "restore: the engine could not append on top"
check "restore: lt_fdw reads the engine's append" "$(sql "SELECT count(*) FROM c21 WHERE id = 880001")" "1"
sql "SELECT lt_delete_tag('c21', 'before')" >/dev/null
check "tags: the engine no longer finds a deleted tag" "$(ref scan "$LAKE/c21.lance" --version before --columns id >/dev/null 2>&1 && echo found || echo gone)" "gone"

echo "interop-lifecycle: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
