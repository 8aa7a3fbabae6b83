#!/usr/bin/env bash
# test/interop/vector.sh — vector search against the real Lance engine.
#
#   test/interop/vector.sh
#
# vector.mjs builds, for each distance type (l2, cosine, dot), a dataset of clustered float32 vectors in three
# fragments with the engine's own IVF_FLAT index (8 partitions), then a fragment the index does not cover and
# deletions; for queries between clusters, k = 10 and nprobes 1, 3, 8 and exact, `lt-inspect vector-search`
# (lt_fdw's C reader of the index files: centroids, partition routing, the flat storage, deleted rows and
# unindexed fragments) must return the engine's vectorSearch row ids in the same order with the same distances.
# Ends with "interop-vector: N passed, M failed".
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

. "$HERE/checks.sh"
lt_checks interop-vector

if node "$HERE/vector.mjs" "$TMP" "$INSPECT" >"$TMP/vector.log" 2>&1; then
	ok "ivf_flat: lt-inspect vector-search equals the engine's vectorSearch ($(tail -n 1 "$TMP/vector.log"))"
else
	ko "ivf_flat: lt-inspect vector-search differs from the engine's vectorSearch" "$(grep -v '^ok' "$TMP/vector.log" | tail -n 20)"
fi
grep -E '^(l2|cosine|dot):' "$TMP/vector.log" | sed 's/^/     /'

# the index reader under ASan/UBSan, one query through the index and one exact
if [ -x "$ROOT/build/lt-inspect-san" ] && [ -d "$TMP/l2/v.lance" ]; then
	q=$(seq -s, 1 16)
	if "$ROOT/build/lt-inspect-san" vector-search "$TMP/l2/v.lance" --column vec --query "$q" --nprobes 3 >"$TMP/san.out" 2>&1 &&
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/l2/v.lance" --column vec --query "$q" --exact >>"$TMP/san.out" 2>&1; then
		ok "san: IVF search and exact search under ASan/UBSan"
	else
		ko "san: IVF search under ASan/UBSan" "$(tail -n 5 "$TMP/san.out")"
	fi
	# damaged index files: an error naming the file, never a crash
	for f in "$TMP"/l2/v.lance/_indices/*/*.idx; do
		cp "$f" "$f.orig"
		head -c $(( $(stat -c %s "$f.orig") / 2 )) "$f.orig" >"$f"
		"$ROOT/build/lt-inspect-san" vector-search "$TMP/l2/v.lance" --column vec --query "$q" --nprobes 3 >"$TMP/bad.out" 2>&1
		rc=$?
		if [ "$rc" -eq 1 ] && grep -q "$(basename "$f")" "$TMP/bad.out"; then
			ok "corrupt: truncated $(basename "$f") is an error naming it"
		else
			ko "corrupt: truncated $(basename "$f") (exit $rc)" "$(tail -n 3 "$TMP/bad.out")"
		fi
		mv "$f.orig" "$f"
	done
fi
finish
