#!/usr/bin/env bash
# test/interop/l12.sh — the interop matrix against the second reference engine, Lance 12 (@lancedb/lancedb 0.39.0,
# test/interop/lance12), in parts that reuse the Lance 8 steps' scripts with LT_REF=12 and a subset:
#
#   read     run.sh scan take pages: the spec matrix at storage 2.1 and 2.2 written by Lance 12 (and
#            l12/features.json at its default storage, its tags and its branch), read by lt-inspect
#   sql      pg.sh --only the 2.2 datasets and features: through PostgreSQL (latest, versions, tags, the branch,
#            filtered scans vs the engine's own, which plans with its indexes)
#   write    pgwrite.sh (types, stable_row_ids at 2.1 / 2.2): INSERT / COPY / UPDATE / DELETE through lt_fdw,
#            read back by Lance 12, which appends on top
#   index    index-build.sh (index-build/mixed.json): btree / bitmap / label_list / zonemap indexes lt_fdw
#            builds, listed, planned and used by Lance 12 with the answers of lt_fdw's filtered scan
#   keys     keys.sh: Lance 12's unenforced primary key read as lt_fdw's keyed tables read it, its mergeInsert's
#            inserted-keys filter rebuilt bit for bit
#   merge    merge.sh (4 of its variants, the race, TRUNCATE): lt_merge_insert against Lance 12's mergeInsert
#   txn      txn.sh: our Append / Delete / Update commits (rebase, conflicts, stable row ids, storage 2.0 with V1
#            manifest names) read by Lance 12, which commits on top
#   latest   latest.sh: the latest version from the hint and by listing, racing Lance 12's commits
#   overwrite overwrite.sh: INSERT OVERWRITE … WHERE replaces read by Lance 12, its indexes, races, crashes
#   vector   vector.sh with LT_REF=12: IVF_FLAT / IVF_PQ indexes Lance 12 builds, searched by lt-inspect and SQL vs
#            its vectorSearch (vector.sh's parts that name both engines themselves, HNSW / RQ / lt_fdw's builds, run
#            in interop-vector)
#   s3       test/s3/run.sh (all but the fsl_struct spec): the S3 store's reads, commits and SQL, Lance 12 writing and
#            reading over the test S3 server
#   features l12/features.sh: what only Lance 12 writes (default storage 2.2, the primary key it records, branches,
#            FTS / FM / IVF_PQ / IVF_HNSW_SQ / IVF_RQ / MemWAL / label_list indexes beside btree / bitmap) listed,
#            read and filtered through SQL, and datasets each engine writes, written on by lt_fdw, read by the other
#
#   test/interop/l12.sh [PART...]      every part, or the named ones
#
# Each part prints its own checks and time; the step ends with "N passed, M failed" (all parts together).
# Environment: LT_INTEROP_DIR (default build/interop; Lance 12's datasets go to <it>-l12), PG_CONFIG, MAKE.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
export LT_REF=12
export LT_INTEROP_DIR=${LT_INTEROP_DIR:-$ROOT/build/interop}-l12
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
ALL_PARTS=(read sql write index keys merge txn latest overwrite vector s3 features)
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=("${ALL_PARTS[@]}")

passed=0 failed=0 times=()
# the closing line has no "interop-l12:" prefix: test/run-all.sh reads a prefix of letters, '-' and '_' only
summary_fail() { echo "$passed passed, $((failed + 1)) failed"; exit 1; }
[ -d "$HERE/lance12/node_modules/@lancedb/lancedb" ] ||
	{ echo "test/interop/lance12/node_modules is missing (run scripts/setup.sh)" >&2; summary_fail; }
mkdir -p build
[ -x build/lt-inspect ] || ${MAKE:-make} build/lt-inspect >/dev/null 2>&1 || { echo "building build/lt-inspect failed" >&2; summary_fail; }

# part NAME COMMAND...: run one part, add its "[…: ]N passed, M failed" line to the total (no such line: 1 failure)
part() {
	local name=$1 start=$SECONDS log line p f rc
	shift
	log=$(mktemp)
	echo "======== l12 $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^([A-Za-z0-9_-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	rm -f "$log"
	if [ -n "$line" ]; then
		p=$(sed -E 's/^([^:]+: )?([0-9]+) passed.*/\2/' <<<"$line")
		f=$(sed -E 's/^([^:]+: )?[0-9]+ passed, ([0-9]+) failed.*/\2/' <<<"$line")
	else
		p=0 f=1
	fi
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	passed=$((passed + p)) failed=$((failed + f))
	times+=("$(printf '%-9s %4s passed %3s failed %4ss' "$name" "$p" "$f" $((SECONDS - start)))")
}

# The matrix Lance 12 writes: every spec but fsl_struct (Lance 12 cannot scan the struct<k, fixed_size_list<struct>>
# column it writes itself: "its children have differing lengths"), at 2.1 and 2.2, plus what only Lance 12 writes
# (l12/features.json: default storage, primary key, branches, index kinds). In place: a branch records the path
# its root was opened by (ref.mjs, LT_REF_IN_PLACE).
MATRIX="all_deleted bigvalues compaction deletions empty encodings fragments map multipage nulls packed"
MATRIX+=" schema_evolution stable_row_ids timetravel types v1_manifests l12/features.json"
matrix() { env LT_INTEROP_SPECS="$MATRIX" LT_INTEROP_STORAGE=2.1,2.2 LT_REF_IN_PLACE=1 "$@"; }

for name in "${parts[@]}"; do
	case $name in
		read) part read matrix "$HERE/run.sh" scan take pages ;;
		sql) part sql matrix "$HERE/pg.sh" --only '(_v2_2|^features)$' ;;
		write) part write env LT_INTEROP_SPECS="types stable_row_ids" LT_INTEROP_STORAGE="2.1 2.2" \
			"$HERE/pgwrite.sh" ;;
		index) part index env LT_INDEX_BUILD_SPECS=mixed "$HERE/index-build.sh" ;;
		keys) part keys "$HERE/keys.sh" ;;
		merge) part merge env LT_MERGE_VARIANTS="upsert upsert_delete stable indexed_delete" "$HERE/merge.sh" ;;
		txn) part txn "$HERE/txn.sh" ;;
		latest) part latest "$HERE/latest.sh" ;;
		overwrite) part overwrite "$HERE/overwrite.sh" ;;
		vector) part vector "$HERE/vector.sh" ;;
		s3) part s3 env LT_S3_SKIP_SPECS=fsl_struct "$ROOT/test/s3/run.sh" ;;
		features) part features "$HERE/l12/features.sh" ;;
		*) echo "test/interop/l12.sh: unknown part '$name' (parts: ${ALL_PARTS[*]})" >&2; exit 2 ;;
	esac
done

echo
echo "======== l12 parts (Lance 12 = @lancedb/lancedb 0.39.0)"
printf '%s\n' "${times[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
