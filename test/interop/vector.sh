#!/usr/bin/env bash
# test/interop/vector.sh — vector search against the real Lance engine.
#
#   test/interop/vector.sh
#
# vector.mjs builds, for each distance type (l2, cosine, dot), datasets of clustered float32 vectors in three
# fragments with the engine's own IVF_FLAT and IVF_PQ (8- and 4-bit codes) indexes (8 partitions), then a fragment
# the index does not cover and deletions; for queries between clusters, k = 10, nprobes 1, 3, 8 (PQ: also refine 2)
# and exact, `lt-inspect vector-search` (lt_fdw's C reader of the index files: centroids, partition routing, the
# flat and PQ storage, distance tables, deleted rows and unindexed fragments) must return the engine's vectorSearch
# row ids in the same order with the same distances (4-bit codes: rows at tied distances in any order; answers
# re-ranked from a candidate cut through tied rows, a bounded share, may differ in a row; pq4q, every fragment
# indexed, checks the engine's quantized 4-bit scoring strictly).
# Then the same datasets through PostgreSQL (vector-sql.mjs, a throwaway cluster with lt_fdw installed in a private
# copy): ORDER BY vec <op> q LIMIT k searched through the index with lt_fdw.nprobes, exactly with
# lt_fdw.vector_index off, with a prefilter of half the rows and with a selective one (k rows when k exist), against
# the engine's vectorSearch with the same settings; EXPLAIN naming the index.
# HNSW (vector-hnsw.mjs, vector-hnsw-sql.mjs; once with Lance 8, once with Lance 12): the engine's IVF_HNSW_SQ and
# IVF_HNSW_PQ over the same kind of data, searched by lt-inspect and by SQL with nprobes, lt_fdw.ef, refine and
# prefilters, must give the engine's vectorSearch answer on the same files (ids in order, distances).
# IVF_RQ (vector-rq.mjs, vector-rq-sql.mjs; once with Lance 8, once with Lance 12): the engine's RaBitQ indexes over
# the same kind of data, float32, float16 and float64 vectors, searched by lt-inspect and SQL with nprobes, refine and
# prefilters: the engine's answer on the same files (ids in order, distances; float16 cosine queries normalized as the
# engine that built the index does); the RaBitQ reader under ASan, damaged RQ files an error
# naming the file (SQL: XX001), codes of a form not read searched exactly with EXPLAIN saying why.
# Index building (vector-build.mjs): on copies of those datasets lt_fdw builds IVF_FLAT (8 partitions, the dataset's
# metric), once with `lt-inspect create-index --kind ivf_flat` and once with lt_create_index(..., 'ivf_flat', ...)
# in SQL; the engine lists it, searches it (every partition probed = its exact answer; one probe = true distances),
# lt_fdw's search and SQL ANN over it equal the engine's / lt_fdw's exact answer, Lance 12 searches it, two builds
# are byte-identical, and the engine appends and optimizes on top.
# IVF_PQ and IVF_SQ building (vector-pq-build.mjs): the same on copies of the pq8 datasets with IVF_PQ (8 partitions, 4 sub-vectors,
# 8-bit codes; one 4-bit build; then IVF_SQ): the engine (Lance 8 and 12) lists it and its vectorSearch over lt_fdw's index equals
# lt_fdw's search over that same index (nprobes 1/3/8, refine 2), through lt-inspect and through SQL.
# float16 / float64 / uint8 vectors (vector-types.mjs; once with Lance 8, once with Lance 12): the engine's IVF_FLAT,
# IVF_PQ and IVF_HNSW_SQ over float16 and float64 vectors and IVF_FLAT with metric hamming over uint8 ones, searched
# by lt-inspect and SQL (real[] / double precision[] / smallint[] with <~>) at nprobes 1/3/8, refine 2 and exactly:
# the engine's answer (ids in order, distances; Hamming rows tied at one distance in any order); IVF_PQ code scores
# equal to the last bit (float16: the arithmetic of the engine that committed the index), also of 8- and 16-item
# sub-vectors; float64 / float16 IVF_PQ searched under ASan/UBSan. A float16 IVF_PQ Lance 8 built, then Lance 12 committed
# on top (vector-f16-writer.mjs): lt-inspect's code scores still Lance 8's.
# IVF_HNSW_SQ / IVF_HNSW_PQ building (vector-hnsw-build.mjs): on clustered datasets of its own (l2, cosine, dot;
# deletions) lt_fdw builds both (4 partitions, m 20, ef_construction 150; PQ of 4 sub-vectors, 8-bit, and of 8
# sub-vectors, 4-bit) with lt-inspect and with lt_create_index; Lance 8 and 12 list them, Lance 12's vectorSearch over
# them equals lt-inspect's (and SQL's) search, Lance 8's equals lt-inspect --hnsw-engine 8 (the two engines walk the
# same graphs differently), nprobes 1/3/all, ef 40, refine 2; recall@10 (24 queries) not below Lance 12's own index of
# the same kind and data by more than 0.05 (SQ) / 0.08 (8-bit PQ; 4-bit: reported); byte-identical rebuilds; append + optimize.
# float16 / float64 / uint8 index builds (vector-types.mjs build, Lance 8 and 12; sqlbuild with Lance 12): lt_fdw builds IVF_FLAT,
# IVF_SQ, IVF_HNSW_SQ, IVF_PQ, IVF_RQ over float16 / float64 vectors and IVF_FLAT hamming over uint8 ones, the engine lists
# them and its vectorSearch over them equals lt-inspect's (SQL's). IVF_RQ building (vector-rq.mjs build, Lance 8 and 12;
# float32, float16, float64): the engine lists lt_fdw's IVF_RQ and its vectorSearch over it equals lt-inspect's; rebuilds
# byte-identical.
# With LT_REF=12 (l12.sh's vector part): vector.mjs and vector-sql.mjs only, against Lance 12 (see every_part).
# Ends with "interop-vector: N passed, M failed".
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

. "$HERE/checks.sh"
lt_checks interop-vector

# node_check LOG PATTERN GOOD BAD CMD...: runs CMD (a node script comparing with the engine) with its output in LOG:
# ok GOOD with LOG's last line (the script's summary), else ko BAD with what LOG holds besides ok lines; then LOG's
# lines matching PATTERN (per-case summaries; '' for none), indented
node_check() {
	local log=$1 pat=$2 good=$3 bad=$4
	shift 4
	if "$@" >"$log" 2>&1; then
		ok "$good ($(tail -n 1 "$log"))"
	else
		ko "$bad" "$(grep -v '^ok' "$log" | tail -n 20)"
	fi
	[ -z "$pat" ] || grep -E "$pat" "$log" | sed 's/^/     /'
}

if node "$HERE/vector.mjs" "$TMP" "$INSPECT" >"$TMP/vector.log" 2>&1; then
	ok "ivf_flat, ivf_pq: lt-inspect vector-search equals the engine's vectorSearch ($(tail -n 1 "$TMP/vector.log"))"
else
	ko "ivf_flat, ivf_pq: lt-inspect vector-search differs from the engine's vectorSearch" "$(grep '^FAIL' "$TMP/vector.log"; grep -v '^ok' "$TMP/vector.log" | grep -v '^FAIL' | tail -n 12)"
fi
grep -E "^(l2|cosine|dot|pq4|pq8|v):" "$TMP/vector.log" | sed 's/^/     /'

# With LT_REF=12 (test/interop/l12.sh's vector part) only what depends on the engine LT_REF names runs: vector.mjs
# and vector-sql.mjs against Lance 12. The rest names its engines itself (HNSW of Lance 8 and 12,
# lt_fdw's builds searched by both, RQ of both) or none (the readers under ASan) and runs, unchanged, in interop-vector.
every_part=$([ "${LT_REF:-8}" = 12 ] || echo 1)
if [ -n "$every_part" ]; then
# IVF_HNSW_SQ / IVF_HNSW_PQ built by each engine (Lance 8 and 12 search their graphs differently), searched by lt-inspect
for ref in 8 12; do
	sub=hnsw$([ "$ref" = 12 ] && echo 12)
	node_check "$TMP/$sub.log" "^(sq|pq)" "ivf_hnsw_sq, ivf_hnsw_pq (Lance $ref): lt-inspect vector-search equals the engine's vectorSearch" \
		"ivf_hnsw_sq, ivf_hnsw_pq (Lance $ref): lt-inspect vector-search differs from the engine's vectorSearch" env LT_REF=$ref node "$HERE/vector-hnsw.mjs" "$TMP/$sub" "$INSPECT"
done

# IVF_RQ built by each engine (both write 1-bit codes, fast rotation, the raw-query estimate) over float32, float16 and
# float64 vectors, searched by lt-inspect
for ref in 8 12; do
	node_check "$TMP/rq$ref.log" "^rq" "ivf_rq over float32 / float16 / float64 (Lance $ref): lt-inspect vector-search equals the engine's vectorSearch" \
		"ivf_rq (Lance $ref): lt-inspect vector-search differs from the engine's vectorSearch" env LT_REF=$ref node "$HERE/vector-rq.mjs" "$TMP/rq$ref" "$INSPECT"
done

# IVF_FLAT / IVF_PQ / IVF_HNSW_SQ over float16 and float64 vectors and IVF_FLAT hamming over uint8 ones, built by each
# engine, searched by lt-inspect
for ref in 8 12; do
	node_check "$TMP/types$ref.log" "^(f16|f64|u8) " "float16 / float64 / uint8 (hamming) vector indexes (Lance $ref): lt-inspect vector-search equals the engine's vectorSearch" \
		"float16 / float64 / uint8 vector indexes (Lance $ref): lt-inspect vector-search differs from the engine's vectorSearch" env LT_REF=$ref node "$HERE/vector-types.mjs" "$TMP/types$ref" "$INSPECT" inspect
done

# a float16 IVF_PQ Lance 8 built, then Lance 12 committed on top: lt-inspect still scores it in Lance 8's arithmetic
# (the writer of the version that added the index), its code scores Lance 8's to the last bit
if env LT_REF=8 node "$HERE/vector-f16-writer.mjs" "$TMP/f16writer" build >"$TMP/f16writer.log" 2>&1 &&
	env LT_REF=12 node "$HERE/vector-f16-writer.mjs" "$TMP/f16writer" delete >>"$TMP/f16writer.log" 2>&1 &&
	env LT_REF=8 node "$HERE/vector-f16-writer.mjs" "$TMP/f16writer" compare "$INSPECT" >>"$TMP/f16writer.log" 2>&1; then
	ok "float16 IVF_PQ of Lance 8 after a Lance 12 commit: lt-inspect's code scores equal Lance 8's ($(tail -n 1 "$TMP/f16writer.log"))"
else
	ko "float16 IVF_PQ of Lance 8 after a Lance 12 commit: lt-inspect's code scores differ from Lance 8's" "$(tail -n 12 "$TMP/f16writer.log")"
fi

# IVF_FLAT / IVF_SQ / IVF_HNSW_SQ / IVF_PQ / IVF_RQ over float16 and float64 vectors and IVF_FLAT hamming over uint8 ones built by lt-inspect
# (lt_ivf_build.h), listed and searched by each engine
for ref in 8 12; do
	node_check "$TMP/typesb$ref.log" "^(f16|f64|u8) " "float16 / float64 / uint8 (hamming) index builds (Lance $ref): the engine lists lt_fdw's indexes and its vectorSearch over them equals lt-inspect's" \
		"float16 / float64 / uint8 index builds (Lance $ref): the engine's search of lt_fdw's index" env LT_REF=$ref node "$HERE/vector-types.mjs" "$TMP/typesb$ref" "$INSPECT" build
done

# IVF_RQ built by lt-inspect (lt_rq_build.h) over float32, float16 and float64 vectors, listed and searched by each engine
for ref in 8 12; do
	node_check "$TMP/rqb$ref.log" "^rq" "ivf_rq build, float32 / float16 / float64 (Lance $ref): the engine lists lt_fdw's IVF_RQ and its vectorSearch over it equals lt-inspect's, rebuilds byte-identical" \
		"ivf_rq build (Lance $ref): the engine's search of lt_fdw's index" env LT_REF=$ref node "$HERE/vector-rq.mjs" "$TMP/rqb$ref" "$INSPECT" build
done

# IVF_FLAT built by lt-inspect (lt_ivf_build.h), searched by the engines
node_check "$TMP/build.log" '^(l2|cosine|dot):' "ivf_flat build: the engine lists and searches lt_fdw's index, Lance 12 too, appends and optimizes on top" \
	"ivf_flat build: the engine's search of lt_fdw's index" node "$HERE/vector-build.mjs" "$TMP" "$INSPECT" inspect

# IVF_PQ built by lt-inspect (lt_pq_build.h), searched by the engines
node_check "$TMP/pqbuild.log" '^(l2|cosine|dot):|^differs' "ivf_pq, ivf_sq build: the engine lists lt_fdw's IVF_PQ / IVF_SQ and its search over it equals lt_fdw's, Lance 12 too, 4-bit, optimize on top" \
	"ivf_pq, ivf_sq build: the engine's search of lt_fdw's index" node "$HERE/vector-pq-build.mjs" "$TMP" "$INSPECT" inspect

# IVF_HNSW_SQ built by lt-inspect (lt_hnsw_build.h), searched by both engines
node_check "$TMP/hnswbuild.log" '^ivf_hnsw|^Lance|^ties' "ivf_hnsw_sq, ivf_hnsw_pq build: Lance 8 and 12 list lt_fdw's IVF_HNSW_* and search them as lt-inspect does, recall as the engine's own, optimize on top" \
	"ivf_hnsw_sq, ivf_hnsw_pq build: the engines' search of lt_fdw's index" node "$HERE/vector-hnsw-build.mjs" "$TMP" "$INSPECT" inspect

# the index reader under ASan/UBSan, one query through the index and one exact
# truncated DS LABEL FILE: the first half of index file FILE of dataset DS is an error naming it (exit 1), never a crash
truncated() {
	local ds=$1 label=$2 f=$3 rc
	cp "$f" "$f.orig"
	head -c $(( $(stat -c %s "$f.orig") / 2 )) "$f.orig" >"$f"
	"$ROOT/build/lt-inspect-san" vector-search "$ds" --column vec --query "$q" --nprobes 3 >"$TMP/bad.out" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "$(basename "$f")" "$TMP/bad.out"; then
		ok "corrupt: $label: truncated $(basename "$f") is an error naming it"
	else
		ko "corrupt: $label: truncated $(basename "$f") (exit $rc)" "$(tail -n 3 "$TMP/bad.out")"
	fi
	mv "$f.orig" "$f"
}
if [ -x "$ROOT/build/lt-inspect-san" ] && [ -d "$TMP/l2/v.lance" ]; then
	q=$(seq -s, 1 16)
	if "$ROOT/build/lt-inspect-san" vector-search "$TMP/l2/v.lance" --column vec --query "$q" --nprobes 3 >"$TMP/san.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/l2/v.lance" --column vec --query "$q" --exact >>"$TMP/san.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/l2/pq8.lance" --column vec --query "$q" --nprobes 3 --refine 2 >>"$TMP/san.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/cosine/pq4.lance" --column vec --query "$q" --nprobes 3 --metric cosine >>"$TMP/san.out" 2>&1; then
		ok "san: IVF_FLAT / IVF_PQ (8- and 4-bit) search and exact search under ASan/UBSan"
	else
		ko "san: IVF search under ASan/UBSan" "$(tail -n 5 "$TMP/san.out")"
	fi
	# the IVF_FLAT build (k-means, the files, the commit) under ASan/UBSan, then a search of what it wrote
	rm -rf "$TMP/san-build" && mkdir -p "$TMP/san-build" && cp -r "$TMP/cosine/v.lance" "$TMP/san-build/"
	if "$ROOT/build/lt-inspect-san" create-index "$TMP/san-build/v.lance" --column vec --kind ivf_flat --num-partitions 8 \
		--metric cosine >"$TMP/san-build.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/san-build/v.lance" --column vec --query "$q" --metric cosine \
			--nprobes 2 >>"$TMP/san-build.out" 2>&1 && [ "$(grep -c _rowid "$TMP/san-build.out")" -eq 10 ]; then
		ok "san: building IVF_FLAT and searching it under ASan/UBSan"
	else
		ko "san: building IVF_FLAT under ASan/UBSan" "$(tail -n 5 "$TMP/san-build.out")"
	fi
	# IVF_PQ (8- and 4-bit) and IVF_SQ builds under ASan/UBSan, each searched with and without refine
	for spec in "ivf_pq:--num-sub-vectors 4" "ivf_pq:--num-sub-vectors 4 --num-bits 4" "ivf_hnsw_sq:--m 8 --ef-construction 40" \
		"ivf_hnsw_pq:--num-sub-vectors 4 --m 8" "ivf_rq:" "ivf_sq:"; do
		kind=${spec%%:*}
		rm -rf "$TMP/san-build" && mkdir -p "$TMP/san-build" && cp -r "$TMP/dot/pq8.lance" "$TMP/san-build/"
		# shellcheck disable=SC2086
		if "$ROOT/build/lt-inspect-san" create-index "$TMP/san-build/pq8.lance" --column vec --kind "$kind" --num-partitions 8 \
			--metric dot ${spec#*:} >"$TMP/san-build.out" 2>&1 &&
			"$ROOT/build/lt-inspect-san" vector-search "$TMP/san-build/pq8.lance" --column vec --query "$q" --metric dot \
				--nprobes 2 >>"$TMP/san-build.out" 2>&1 &&
			"$ROOT/build/lt-inspect-san" vector-search "$TMP/san-build/pq8.lance" --column vec --query "$q" --metric dot \
				--nprobes 8 --refine 2 >>"$TMP/san-build.out" 2>&1 && [ "$(grep -c _rowid "$TMP/san-build.out")" -eq 20 ]; then
			ok "san: building $kind ${spec#*:} and searching it under ASan/UBSan"
		else
			ko "san: building $kind ${spec#*:} under ASan/UBSan" "$(tail -n 5 "$TMP/san-build.out")"
		fi
	done
	# lt_fdw's IVF_SQ (the loop's last build) damaged: a truncated auxiliary.idx, SQ metadata of 4 bits: errors naming it
	f=$(grep -l __sq_code "$TMP"/san-build/pq8.lance/_indices/*/auxiliary.idx | head -n 1)
	for how in truncate bits; do
		cp "$f" "$f.orig"
		if [ "$how" = truncate ]; then head -c $(( $(stat -c %s "$f.orig") / 2 )) "$f.orig" >"$f"; else sed -i 's/num_bits\\":8/num_bits\\":4/' "$f"; fi
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/san-build/pq8.lance" --column vec --query "$q" --metric dot --nprobes 3 >"$TMP/bad.out" 2>&1
		rc=$?
		if ! cmp -s "$f" "$f.orig" && [ "$rc" -eq 1 ] && grep -q "auxiliary.idx" "$TMP/bad.out"; then
			ok "corrupt: ivf_sq: $how auxiliary.idx is an error naming it"
		else
			ko "corrupt: ivf_sq: $how auxiliary.idx (exit $rc)" "$(tail -n 3 "$TMP/bad.out")"
		fi
		mv "$f.orig" "$f"
	done
	# damaged index files: an error naming the file, never a crash
	for ds in v pq8; do
		for f in "$TMP"/l2/$ds.lance/_indices/*/*.idx; do truncated "$TMP/l2/$ds.lance" "$ds" "$f"; done
	done
	# PQ metadata that does not hold together (sub-vectors that do not divide the dimension): an error naming the file
	f=$(ls "$TMP"/l2/pq8.lance/_indices/*/auxiliary.idx)
	cp "$f" "$f.orig"
	sed -i 's/num_sub_vectors\\":4/num_sub_vectors\\":3/' "$f"
	"$ROOT/build/lt-inspect-san" vector-search "$TMP/l2/pq8.lance" --column vec --query "$q" --nprobes 3 >"$TMP/bad.out" 2>&1
	rc=$?
	if ! cmp -s "$f" "$f.orig" && [ "$rc" -eq 1 ] && grep -q "auxiliary.idx: PQ of 3 sub-vectors" "$TMP/bad.out"; then
		ok "corrupt: pq8: PQ metadata of 3 sub-vectors for 16 dimensions is an error naming the file"
	else
		ko "corrupt: pq8: PQ metadata of 3 sub-vectors (exit $rc)" "$(tail -n 3 "$TMP/bad.out")"
	fi
	mv "$f.orig" "$f"
	# the HNSW graph reader under ASan/UBSan: Lance 8's and Lance 12's graphs, SQ and PQ, with ef and refine
	if "$ROOT/build/lt-inspect-san" vector-search "$TMP/hnsw/l2/sq_more.lance" --column vec --query "$q" --nprobes 3 --ef 15 >"$TMP/san-hnsw.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/hnsw12/dot/sq.lance" --column vec --query "$q" --nprobes 2 --metric dot >>"$TMP/san-hnsw.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/hnsw12/cosine/pq_more.lance" --column vec --query "$q" --nprobes 4 --refine 2 --metric cosine >>"$TMP/san-hnsw.out" 2>&1 &&
		[ "$(grep -c _rowid "$TMP/san-hnsw.out")" -eq 30 ]; then
		ok "san: IVF_HNSW_SQ / IVF_HNSW_PQ search (both engines' graphs) under ASan/UBSan"
	else
		ko "san: IVF_HNSW search under ASan/UBSan" "$(tail -n 5 "$TMP/san-hnsw.out")"
	fi
	# the RaBitQ reader under ASan/UBSan (Lance 12's IVF_RQ: an unindexed fragment, deletions, refine; float16 and
	# float64 vectors, Lance 8's float16 norm), then damaged:
	# truncated files, no rotation signs, a code_dim that does not fit: an error naming the file;
	# multi-bit codes (not read): an error saying so
	if "$ROOT/build/lt-inspect-san" vector-search "$TMP/rq12/l2/rq_more.lance" --column vec --query "$q" --nprobes 2 >"$TMP/san-rq.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/rq12/dot/rq.lance" --column vec --query "$q" --nprobes 4 --metric dot >>"$TMP/san-rq.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/rq12/cosine/rq_more.lance" --column vec --query "$q" --nprobes 3 --refine 2 --metric cosine >>"$TMP/san-rq.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/rq8/f16/cosine/rq_more.lance" --column vec --query "$q" --nprobes 2 --refine 2 --metric cosine --hnsw-engine 8 >>"$TMP/san-rq.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/rq12/f64/l2/rq.lance" --column vec --query "$q" --nprobes 3 >>"$TMP/san-rq.out" 2>&1 &&
		[ "$(grep -c _rowid "$TMP/san-rq.out")" -eq 50 ]; then
		ok "san: IVF_RQ search under ASan/UBSan"
	else
		ko "san: IVF_RQ search under ASan/UBSan" "$(tail -n 5 "$TMP/san-rq.out")"
	fi
	rqds=$TMP/rq12/l2/rq.lance
	for f in "$rqds"/_indices/*/*.idx; do truncated "$rqds" rq "$f"; done
	f=$(ls "$rqds"/_indices/*/auxiliary.idx)
	# (edits of the same length: the file's metadata keeps its size)
	for how in 'signs:s/fast_rotation_signs\\"/fast_rotation_signx\\"/:fast_rotation_signs' \
		'code_dim:s/code_dim\\":16/code_dim\\":12/:code_dim 12' 'bits:s/num_bits\\":1/num_bits\\":2/:2 bits'; do
		what=${how%%:*} rest=${how#*:}
		cp "$f" "$f.orig"
		sed -i "${rest%:*}" "$f"
		"$ROOT/build/lt-inspect-san" vector-search "$rqds" --column vec --query "$q" --nprobes 3 >"$TMP/bad.out" 2>&1
		rc=$?
		if ! cmp -s "$f" "$f.orig" && [ "$rc" -eq 1 ] && grep -q "auxiliary.idx: RaBitQ.*${rest##*:}" "$TMP/bad.out"; then
			ok "corrupt: rq: storage metadata with a wrong $what is an error naming auxiliary.idx"
		else
			ko "corrupt: rq: storage metadata with a wrong $what (exit $rc)" "$(tail -n 3 "$TMP/bad.out")"
		fi
		mv "$f.orig" "$f"
	done
	# float16 / float64 / uint8 index readers under ASan/UBSan; damaged float16 / float64 index files an error naming them
	# (float64 IVF_PQ: the table in double; float16 IVF_PQ of 16-item sub-vectors: Lance 12's lane sums)
	for ds in "$TMP"/types8/f16/cosine/pq.lance "$TMP"/types8/f16/cosine/sq.lance "$TMP"/types8/f64/l2/flat.lance "$TMP"/types12/f16/dot/sq.lance \
		"$TMP"/types8/f64/dot/pq.lance "$TMP"/types12/f64/cosine/pq.lance "$TMP"/types12/f16/l2/pq_sub16.lance "$TMP"/types8/u8/hamming/flat.lance; do
		m=$(basename "$(dirname "$ds")")
		if [ -d "$ds" ] && "$ROOT/build/lt-inspect-san" vector-search "$ds" --column vec --query "$q" --metric "$m" --nprobes 3 >"$TMP/san.out" 2>&1 &&
			[ "$(grep -c '_rowid' "$TMP/san.out")" -eq 10 ]; then
			ok "asan: ${ds#"$TMP"/} searched through its index under ASan/UBSan"
		else
			ko "asan: ${ds#"$TMP"/} under ASan/UBSan" "$(tail -n 5 "$TMP/san.out")"
		fi
	done
	for f in "$TMP"/types8/f64/l2/flat.lance/_indices/*/auxiliary.idx "$TMP"/types8/f16/l2/pq.lance/_indices/*/index.idx; do
		ds=${f%%/_indices/*}
		truncated "$ds" "${ds#"$TMP"/}" "$f"
	done
	# damaged HNSW files (truncated; level offsets not starting at 0): an error naming the file, never a crash
	for f in "$TMP"/hnsw/l2/sq.lance/_indices/*/*.idx "$TMP"/hnsw12/l2/pq.lance/_indices/*/index.idx; do
		ds=${f%%/_indices/*}
		truncated "$ds" "$(basename "$ds")" "$f"
	done
	f=$(ls "$TMP"/hnsw/l2/sq.lance/_indices/*/index.idx)
	cp "$f" "$f.orig"
	sed -i 's/level_offsets\\":\[0,/level_offsets\\":[7,/' "$f"
	"$ROOT/build/lt-inspect-san" vector-search "$TMP/hnsw/l2/sq.lance" --column vec --query "$q" --nprobes 4 >"$TMP/bad.out" 2>&1
	rc=$?
	if ! cmp -s "$f" "$f.orig" && [ "$rc" -eq 1 ] && grep -q "index.idx: lance:hnsw level_offsets" "$TMP/bad.out"; then
		ok "corrupt: HNSW level offsets not starting at 0 are an error naming index.idx"
	else
		ko "corrupt: HNSW level offsets that do not fit (exit $rc)" "$(tail -n 3 "$TMP/bad.out")"
	fi
	mv "$f.orig" "$f"
fi
fi # every_part

# through PostgreSQL
. "$ROOT/test/pg/cluster.sh"
if ! lt_pg_install "$ROOT" "$TMP/pg-install.log"; then
	ko "sql: installing lt_fdw into the private PostgreSQL copy failed" "$(tail -n 5 "$TMP/pg-install.log")"
	finish
fi
chmod 0755 "$TMP" && chmod -R a+rX "$TMP"/l2 "$TMP"/cosine "$TMP"/dot 2>/dev/null
[ -n "$every_part" ] && chmod -R a+rX "$TMP"/hnsw "$TMP"/hnsw12 "$TMP"/rq8 "$TMP"/rq12 "$TMP"/types8 "$TMP"/types12 2>/dev/null
mkdir -p "$TMP/pg" && chmod 0777 "$TMP/pg"
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
if lt_cluster_create "$TMP/pg" && lt_cluster_start; then
	export PATH="$LT_PGBIN:$PATH"
	if psql -X -q -v ON_ERROR_STOP=1 -d postgres \
		-c "CREATE EXTENSION lt_fdw; CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$TMP')" >"$TMP/sql.log" 2>&1 &&
		node "$HERE/vector-sql.mjs" "$TMP" >"$TMP/sql.log" 2>&1; then
		ok "sql: ORDER BY vec <op> q LIMIT k through lt_fdw equals the engine's vectorSearch ($(tail -n 1 "$TMP/sql.log"))"
	else
		ko "sql: ORDER BY vec <op> q LIMIT k through lt_fdw differs from the engine's vectorSearch" "$(grep -v '^ok' "$TMP/sql.log" | tail -n 20)"
	fi
	grep -E '^(l2|cosine|dot):' "$TMP/sql.log" | sed 's/^/     /'
	# a damaged index file: the query fails with XX001 naming the file (no crash, no silent exact answer).
	# These checks change index files in place (Lance never does: segments are immutable), so they read them in
	# backends without the shared vector cache, which would answer from what earlier backends decoded (README).
	noshare="-c lt_fdw.vector_shared_cache_size=0"
	f=$(ls "$TMP"/l2/pq8.lance/_indices/*/auxiliary.idx)
	cp "$f" "$f.orig"
	head -c $(( $(stat -c %s "$f.orig") / 2 )) "$f.orig" >"$f"
	out=$(PGOPTIONS=$noshare psql -X -q -d postgres -v VERBOSITY=verbose -c "\set VERBOSITY verbose" -c "SELECT id FROM pq8_l2 ORDER BY vec <-> array_fill(1, ARRAY[16])::real[] LIMIT 3" 2>&1)
	if grep -q "XX001" <<<"$out" && grep -q "auxiliary.idx" <<<"$out"; then
		ok "sql: a truncated IVF_PQ auxiliary.idx fails the query with XX001 naming the file"
	else
		ko "sql: a truncated IVF_PQ auxiliary.idx" "$out"
	fi
	mv "$f.orig" "$f"
	if [ -n "$every_part" ]; then
	for ref in 8 12; do
		sub=hnsw$([ "$ref" = 12 ] && echo 12)
		node_check "$TMP/$sub-sql.log" '' "sql: ORDER BY vec <op> q LIMIT k through IVF_HNSW_SQ / IVF_HNSW_PQ (Lance $ref) equals the engine's vectorSearch" \
			"sql: IVF_HNSW_* (Lance $ref) differs from the engine's vectorSearch" env LT_REF=$ref node "$HERE/vector-hnsw-sql.mjs" "$TMP" "$sub"
		node_check "$TMP/types$ref-sql.log" "^(f16|f64|u8) " "sql: ORDER BY vec <op> q LIMIT k over float16 / float64 / uint8 (<~>) vectors through the engine's indexes (Lance $ref) equals its vectorSearch" \
			"sql: float16 / float64 / uint8 vector indexes (Lance $ref) differ from the engine's vectorSearch" env LT_REF=$ref node "$HERE/vector-types.mjs" "$TMP/types$ref" "$INSPECT" sql
		node_check "$TMP/rq$ref-sql.log" '^f16 cosine' "sql: ORDER BY vec <op> q LIMIT k through IVF_RQ over float32 / float16 / float64 (Lance $ref) equals the engine's vectorSearch" \
			"sql: IVF_RQ (Lance $ref) differs from the engine's vectorSearch" env LT_REF=$ref node "$HERE/vector-rq-sql.mjs" "$TMP" rq$ref
	done
	# a damaged RaBitQ file fails the query with XX001 naming it; codes of a form not read: exact, EXPLAIN says why
	f=$(ls "$TMP"/rq12/l2/rq.lance/_indices/*/auxiliary.idx)
	cp "$f" "$f.orig"
	head -c $(( $(stat -c %s "$f.orig") / 2 )) "$f.orig" >"$f"
	out=$(PGOPTIONS=$noshare psql -X -q -d postgres -c "\set VERBOSITY verbose" -c "SELECT id FROM r_rq12_rq_l2 ORDER BY vec <-> array_fill(1, ARRAY[16])::real[] LIMIT 3" 2>&1)
	if grep -q "XX001" <<<"$out" && grep -q "auxiliary.idx" <<<"$out"; then
		ok "sql: a truncated IVF_RQ auxiliary.idx fails the query with XX001 naming the file"
	else
		ko "sql: a truncated IVF_RQ auxiliary.idx" "$out"
	fi
	cp "$f.orig" "$f"
	sed -i 's/num_bits\\":1/num_bits\\":2/' "$f"
	out=$(PGOPTIONS=$noshare psql -X -q -At -d postgres -c "EXPLAIN SELECT id FROM r_rq12_rq_l2 ORDER BY vec <-> array_fill(1, ARRAY[16])::real[] LIMIT 3" 2>&1)
	if ! cmp -s "$f" "$f.orig" && grep -q "exact kNN on vec.*index vec_idx not used: .*auxiliary.idx: RaBitQ storage of 2 bits" <<<"$out"; then
		ok "sql: IVF_RQ codes of 2 bits (not read) are searched exactly, EXPLAIN saying why"
	else
		ko "sql: IVF_RQ codes of 2 bits" "$out"
	fi
	mv "$f.orig" "$f"
	node_check "$TMP/sqlbuild.log" '' "sql: lt_create_index(..., 'ivf_flat', ...) builds an index the engine searches and SQL ANN answers exactly at full nprobes" \
		"sql: lt_create_index(..., 'ivf_flat', ...)" node "$HERE/vector-build.mjs" "$TMP" "$INSPECT" sql
	node_check "$TMP/sqlhnswbuild.log" '^ivf_hnsw' "sql: lt_create_index(..., 'ivf_hnsw_sq' | 'ivf_hnsw_pq', ...) builds an index the engines search as SQL ANN does" \
		"sql: lt_create_index(..., 'ivf_hnsw_sq' | 'ivf_hnsw_pq', ...)" node "$HERE/vector-hnsw-build.mjs" "$TMP" "$INSPECT" sql
	# float16 / float64 / uint8 builds through lt_create_index (Lance 12: SQL walks lt_fdw's graphs as Lance 12 does)
	node_check "$TMP/typesbs.log" "^(f16|f64|u8) " "sql: lt_create_index over float16 / float64 / uint8 vectors (IVF_RQ too) builds indexes Lance 12 lists and searches as SQL ANN does" \
		"sql: lt_create_index over float16 / float64 / uint8 vectors" env LT_REF=12 node "$HERE/vector-types.mjs" "$TMP/typesbs" "$INSPECT" sqlbuild
	node_check "$TMP/sqlpqbuild.log" '' "sql: lt_create_index(..., 'ivf_pq' | 'ivf_sq', ...) builds an index the engine searches as SQL ANN does" \
		"sql: lt_create_index(..., 'ivf_pq', ...)" node "$HERE/vector-pq-build.mjs" "$TMP" "$INSPECT" sql
	fi # every_part
else
	ko "sql: the test cluster did not start"
fi
finish
