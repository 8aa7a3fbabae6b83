#!/usr/bin/env bash
# test/pg/run.sh — install lt_fdw and run the pg_regress suites (sql/*.sql vs expected/*.out) against a
# throwaway PostgreSQL 15 cluster that lives in a private directory under /tmp and is always removed.
#
#   test/pg/run.sh                  install into a private PostgreSQL copy (cluster.sh), then every suite
#   test/pg/run.sh lt_fdw_load ...  only the named suites
#   test/pg/run.sh --no-install     use the system's PostgreSQL, where lt_fdw is already installed
#
# Environment:
#   PG_CONFIG      pg_config of the target server (default /usr/lib/postgresql/15/bin/pg_config)
#   LT_FIXTURES    a directory of Lance fixtures to copy for the tests (default: ../shared/lance-fixtures
#                  beside the repository, when it exists)
# The suites see (read them in SQL with \getenv):
#   LT_TEST_TMP    a directory owned by the server's OS user: datasets the server writes go here; it
#                  holds lake/, the datasets generated for the suites (below)
#   LT_ROOT        the checkout (test/interop/ref.mjs, test/pg/ops/*.json for \! commands)
#   LT_FIXTURES    a server-readable copy of the fixtures (only when a fixture directory was found)
#
# Datasets: before the suites run, lake/ under LT_TEST_TMP is filled with datasets that the reference
# harness (node test/interop/ref.mjs make) writes from test/pg/specs/*.json: <spec>.lance for each spec
# (and write/<spec>.lance for test/pg/specs/write/*.json, the datasets the write suites change;
# index/<spec>.lance for three specs of test/interop/index/, the indexed datasets of lt_fdw_index),
# plus damaged copies (corrupt.lance: a truncated data file; flags.lance: an unknown reader feature flag),
# sub/events.lance (a copy of versions.lance) and not_a_dataset/ (an empty directory).
# They are cached in build/pg-lake/<hash of the inputs>/ so that unchanged inputs are not regenerated.
#
# Runs as root (initdb and postgres then run as user postgres through runuser) or as an ordinary user
# (who then owns the cluster).
# Output of the last run: build/regress/ (regression.diffs, results/). Ends with the line
# "N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
MAKE=${MAKE:-make}

install=1
suites=()
for a in "$@"; do
	case $a in
		--no-install) install=0 ;;
		-h|--help) sed -n '2,22p' "$0"; exit 0 ;;
		-*) echo "test/pg/run.sh: unknown option $a" >&2; exit 2 ;;
		*) suites+=("$a") ;;
	esac
done

finish() {	# passed failed [message]
	[ -n "${3:-}" ] && echo "test/pg/run.sh: $3" >&2
	echo "$1 passed, $2 failed"
	[ "$2" -eq 0 ]
	exit $?
}

[ -x "$PG_CONFIG" ] || finish 0 1 "no pg_config at $PG_CONFIG (install postgresql-server-dev-15)"
. "$ROOT/test/pg/cluster.sh"

# --- install ---------------------------------------------------------------------------------------
if [ "$install" -eq 1 ]; then
	mkdir -p build
	lt_pg_install "$ROOT" build/pg-install.log || finish 0 1 "installing into the private PostgreSQL copy failed"
fi

# --- a throwaway cluster ---------------------------------------------------------------------------
TMP=$(mktemp -d /tmp/lt_fdw_pg.XXXXXX) || finish 0 1 "mktemp failed"
trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

lt_cluster_create "$TMP" || finish 0 1 "could not create the test cluster"

mkdir -p "$TMP/scratch"
[ "$(id -u)" -eq 0 ] && chown "$LT_PG_OSUSER": "$TMP/scratch"
export LT_TEST_TMP=$TMP/scratch
export LT_ROOT=$ROOT	# suites that run the reference engine with \! (lt_fdw_snapshots)
if [ -z "${LT_FIXTURES:-}" ] && [ -d "$ROOT/../shared/lance-fixtures" ]; then
	LT_FIXTURES=$ROOT/../shared/lance-fixtures
fi
if [ -n "${LT_FIXTURES:-}" ]; then
	[ -d "$LT_FIXTURES" ] || finish 0 1 "LT_FIXTURES=$LT_FIXTURES is not a directory"
	cp -R "$LT_FIXTURES" "$TMP/fixtures" && chmod -R u+w,a+rX "$TMP/fixtures" || finish 0 1 "copying fixtures failed"
	[ "$(id -u)" -eq 0 ] && chown -R "$LT_PG_OSUSER": "$TMP/fixtures"
	export LT_FIXTURES=$TMP/fixtures
fi

# --- datasets for the suites ----------------------------------------------------------------------
gen_lake() {	# outdir
	local out=$1 spec name manifest
	if [ ! -d test/interop/node_modules ]; then
		(cd test/interop && npm ci --no-audit --no-fund >/dev/null 2>&1) || return 1
	fi
	rm -rf "$out.tmp" && mkdir -p "$out.tmp" || return 1
	for spec in test/pg/specs/*.json; do
		name=$(basename "$spec" .json)
		node test/interop/ref.mjs make "$out.tmp/$name.lance" "$spec" >/dev/null || return 1
	done
	# the write suites' datasets, in a directory of their own (IMPORT of the root does not see them)
	mkdir -p "$out.tmp/write" || return 1
	for spec in test/pg/specs/write/*.json; do
		name=$(basename "$spec" .json)
		node test/interop/ref.mjs make "$out.tmp/write/$name.lance" "$spec" >/dev/null || return 1
	done
	# indexed datasets of the interop index suite (appended, compacted, stable row ids), for lt_fdw_index
	mkdir -p "$out.tmp/index" || return 1
	for spec in test/interop/index/appended.json test/interop/index/compacted.json test/interop/index/stable.json; do
		name=$(basename "$spec" .json)
		node test/interop/ref.mjs make "$out.tmp/index/$name.lance" "$spec" >/dev/null || return 1
	done
	# a truncated data file
	cp -R "$out.tmp/scalars.lance" "$out.tmp/corrupt.lance" || return 1
	for f in "$out.tmp/corrupt.lance/data/"*.lance; do truncate -s 100 "$f"; done
	# an unknown reader feature flag in the latest manifest (V2 naming: the smallest name is the latest)
	cp -R "$out.tmp/scalars.lance" "$out.tmp/flags.lance" || return 1
	manifest=$(ls "$out.tmp/flags.lance/_versions/"*.manifest | sort | head -n 1)
	node test/pg/set-reader-flags.mjs "$manifest" 1025 || return 1
	# a sub-directory holding a dataset (IMPORT FOREIGN SCHEMA "sub"), and a directory that is no dataset
	mkdir -p "$out.tmp/sub" "$out.tmp/not_a_dataset" && cp -R "$out.tmp/versions.lance" "$out.tmp/sub/events.lance" || return 1
	mv "$out.tmp" "$out"
}
lake_hash=$(cat test/pg/specs/*.json test/pg/specs/write/*.json test/interop/index/*.json test/pg/set-reader-flags.mjs test/interop/ref.mjs test/interop/package-lock.json \
	test/pg/run.sh 2>/dev/null | sha256sum | cut -c1-16)
lake_cache=build/pg-lake/$lake_hash
if [ ! -d "$lake_cache" ]; then
	rm -rf build/pg-lake
	gen_lake "$lake_cache" || finish 0 1 "generating the test datasets failed (node test/interop/ref.mjs make)"
fi
cp -R "$lake_cache" "$LT_TEST_TMP/lake" && chmod -R u+w,a+rX "$LT_TEST_TMP/lake" || finish 0 1 "copying the test datasets failed"
[ "$(id -u)" -eq 0 ] && chown -R "$LT_PG_OSUSER": "$LT_TEST_TMP/lake"

lt_cluster_start || finish 0 1 "the test cluster did not start"

# --- pg_regress ------------------------------------------------------------------------------------
rm -rf build/regress
mkdir -p build/regress
args=(installcheck PG_CONFIG="$PG_CONFIG")
[ ${#suites[@]} -gt 0 ] && args+=(REGRESS="${suites[*]}")
$MAKE "${args[@]}" 2>&1 | tee "$TMP/regress.out"
rc=${PIPESTATUS[0]}

passed=$(grep -cE '^(test | +)?[[:alnum:]_.-]+ +\.\.\. ok' "$TMP/regress.out")
failed=$(grep -cE '^(test | +)?[[:alnum:]_.-]+ +\.\.\. (FAILED|failed)' "$TMP/regress.out")
if [ "$rc" -ne 0 ] || [ "$failed" -gt 0 ]; then
	if [ -s build/regress/regression.diffs ]; then
		echo "---- build/regress/regression.diffs (first 200 lines)"
		head -n 200 build/regress/regression.diffs
	fi
	echo "---- server log (last 40 lines)"
	tail -n 40 "$LT_PGLOG"
fi
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	finish "$passed" 1 "make installcheck failed (exit $rc) before any test failed"
fi
[ $((passed + failed)) -gt 0 ] || finish 0 1 "no regression test ran"
finish "$passed" "$failed"
