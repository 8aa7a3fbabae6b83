#!/usr/bin/env bash
# scripts/setup.sh — make a Debian 12 machine ready to build, test and demo lt_fdw, then build it.
# Idempotent: installed packages are not fetched again, npm modules are installed once, the build is
# incremental. Run as root (package installs); as another user it only checks that packages are there.
#
#   scripts/setup.sh              packages + reference-library npm modules + build (make all tools)
#   scripts/setup.sh --no-build   packages + npm modules only
#
# Environment: LT_CI_APT=always  run apt-get update + install even when every package is installed;
#              PG_CONFIG (default /usr/lib/postgresql/15/bin/pg_config).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
build=1
[ "${1:-}" = --no-build ] && build=0

PACKAGES=(
	make gcc clang libclang-rt-14-dev          # build; clang + compiler-rt for ASan/UBSan and libFuzzer
	postgresql-15 postgresql-server-dev-15     # the server, PGXS, pg_regress
	libroaring-dev libzstd-dev liblz4-dev      # deletion vectors, compression
	libprotobuf-c-dev protobuf-c-compiler      # manifests and file metadata (protoc-c)
	libcurl4-openssl-dev curl                  # S3 (curl: the S3 tests' control requests)
	hyperfine                                  # bench/
)

echo "== packages"
missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# node 20 + npm run the reference Lance library (test/interop): keep the machine's own node when present
node_pkgs=()
command -v node >/dev/null 2>&1 || node_pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || node_pkgs+=(npm)
if [ ${#missing[@]} -eq 0 ] && [ ${#node_pkgs[@]} -eq 0 ] && [ "${LT_CI_APT:-}" != always ]; then
	echo "all ${#PACKAGES[@]} packages are installed; node $(node --version)"
elif [ "$(id -u)" -ne 0 ]; then
	echo "scripts/setup.sh: missing packages, install them as root: ${missing[*]} ${node_pkgs[*]}" >&2
	exit 1
else
	echo "installing: ${missing[*]} ${node_pkgs[*]}"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${PACKAGES[@]}" "${node_pkgs[@]}"
fi

# npm modules of the reference harness (@lancedb/lancedb 0.31.0 = Lance 8 with @20minutes/s3rver as the test S3
# server, and in lance12/ @lancedb/lancedb 0.39.0 = Lance 12), pinned by
# the lockfile; installed again when the lockfile's content differs from the one installed (a stamp file)
for dir in test/interop test/interop/lance12; do
	lock_sum=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
	if [ "$(cat "$dir/node_modules/.lt-lockfile.sha256" 2>/dev/null)" != "$lock_sum" ]; then
		echo "== npm ci in $dir (about 190 MB, once)"
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
		echo "$lock_sum" >"$dir/node_modules/.lt-lockfile.sha256"
	fi
done

if [ "$build" -eq 1 ]; then
	echo "== build (warnings are errors)"
	make -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" all tools
fi
