# test/interop/lifecycle-vq.sh — sourced by lifecycle.sh (its helpers: sql, ref, check, lt_as_pg, $LAKE, $TMP,
# $ix_unindexed): lt_compact remaps IVF_PQ and IVF_SQ indexes (lt_ivf_remap keeps each row's partition and code,
# moves its address, drops deleted rows).  For each: the pg suites' vectors rows in 3 fragments, the index built
# before rows are deleted (IVF_PQ by the engine, 2 partitions, 4 sub-vectors; IVF_SQ by lt_create_index, which the
# node bindings cannot build), then lt_compact.  Every partition probed, so no answer depends on k-means:
#   - lt_fdw lists the index covering the new fragment, nothing unindexed, and its indexed answer (ids and
#     distances) is the one it gave before the compaction (the same codes);
#   - Lance 8 and 12 list it with 0 unindexed rows, plan with it, and their indexed answer equals lt_fdw's
#     and their own before the compaction.
vq_knn() { # $1 engine (8|12) $2 dataset: the engine's "index: ..." line
	local dir=$HERE; [ "$1" = 12 ] && dir=$HERE/lance12
	lt_as_pg node "$HERE/lifecycle-knn.mjs" "$dir" "$2" vec "$VQ" 10 2
}
vq_pg() { # $1 table: lt_fdw's indexed top 10, ids ascending, then their distances
	sql "SET lt_fdw.nprobes = 2; SELECT string_agg(id::text, ',' ORDER BY id) || ' ' || string_agg(round(d::numeric, 4)::text, ',' ORDER BY id)
	     FROM (SELECT id, vec <-> '{$VQ}' AS d FROM $1 ORDER BY vec <-> '{$VQ}' LIMIT 10) x" | tail -n 1
}
node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));s.ops=process.argv[2]==="pq"?[{op:"create_index",column:"vec",kind:"ivf_pq",partitions:2,sub_vectors:4},{op:"delete",where:"id % 7 = 3"}]:[];console.log(JSON.stringify(s))' \
	"$ROOT/test/pg/specs/vectors.json" pq >"$TMP/vq-pq.json"
node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));s.ops=[];console.log(JSON.stringify(s))' \
	"$ROOT/test/pg/specs/vectors.json" >"$TMP/vq-sq.json"
for kind in pq sq; do
	t=vq$kind
	ref make "$LAKE/$t.lance" "$TMP/vq-$kind.json" >/dev/null || bad "vector $kind: the engine could not make the dataset"
	sql "CREATE FOREIGN TABLE $t (id bigint, vec real[]) SERVER lake OPTIONS (path '$t.lance')" >/dev/null
	if [ "$kind" = sq ]; then
		sql "SELECT lt_create_index('$t', 'vec', 'ivf_sq', 'vec_idx', 'num_partitions=2')" >/dev/null || bad "vector sq: lt_create_index failed"
		sql "DELETE FROM $t WHERE id % 7 = 3" >/dev/null || bad "vector sq: DELETE failed"
	fi
	before_pg=$(vq_pg $t)
	declare -A before_eng=()
	for e in 8 12; do before_eng[$e]=$(vq_knn $e "$LAKE/$t.lance" 2>/dev/null | sed -n 's/^index: //p'); done
	check "vector $kind: the three fragments compacted into one" "$(sql "SELECT fragments_removed || ' ' || fragments_added FROM lt_compact('$t')")" "3 1"
	check "vector $kind: lt_fdw's index covers the new fragment" "$(sql "SELECT kind || ' ' || cardinality(covered_fragments) || ' ' || cardinality(unindexed_fragments) FROM lt_indexes('$t')")" "ivf_$kind 1 0"
	after_pg=$(vq_pg $t)
	check "vector $kind: lt_fdw's indexed answer (ids, distances) is the one before the compaction" "$after_pg" "$before_pg"
	check "vector $kind: no deleted row in it" "$(sql "SELECT count(*) FROM unnest(string_to_array('${after_pg%% *}', ',')::bigint[]) i WHERE i % 7 = 3")" "0"
	for e in 8 12; do
		dir=$HERE; [ "$e" = 12 ] && dir=$HERE/lance12
		[ -d "$dir/node_modules/@lancedb/lancedb" ] || { echo "skip vector $kind: Lance $e (no modules)"; continue; }
		check "vector $kind: Lance $e lists the remapped index with no unindexed rows" "$(lt_as_pg env LT_REF=$e node "$HERE/ref.mjs" indexes "$LAKE/$t.lance" | node -e "$ix_unindexed")" "vec_idx 0"
		out=$(vq_knn $e "$LAKE/$t.lance")
		check "vector $kind: Lance $e plans the search with the remapped index" "$(sed -n 's/^plan: //p' <<<"$out")" "ann"
		check "vector $kind: Lance $e's indexed answer equals lt_fdw's" "$(sed -n 's/^index: //p' <<<"$out")" "${after_pg%% *}"
		check "vector $kind: Lance $e's indexed answer is its own before the compaction" "$(sed -n 's/^index: //p' <<<"$out")" "${before_eng[$e]}"
	done
	unset before_eng
done
