# test/pg/step.sh — what the test-step scripts that run a throwaway cluster share (sourced after HERE/ROOT are set):
#
#   lt_step NAME HELP_LAST_LINE "$@"   the step's name (its summary line "NAME: N passed, M failed"), the
#                                      options (--no-install, -h/--help: the script's header lines 2..HELP_LAST_LINE)
#   lt_step_prepare                    pg_config, node and the reference harness's npm modules present; the
#                                      extension installed into the private PostgreSQL copy unless --no-install;
#                                      test/pg/cluster.sh sourced
#   lt_step_cluster [CONF_LINE...]     a throwaway cluster for the step, started: TMP (a new directory, removed
#                                      at exit with the cluster stopped), LAKE=$TMP/lake (the server may write
#                                      there), the cluster in $TMP/pg, CONF_LINEs appended to its postgresql.conf
#   ok / bad / check LABEL GOT WANT    count the checks; finish MESSAGE: a setup failure, ends the step
lt_step() {
	LT_STEP=$1
	local help=$2
	shift 2
	install=1
	for a in "$@"; do
		case $a in
			--no-install) install=0 ;;
			-h|--help) sed -n "2,${help}p" "$0"; exit 0 ;;
			*) echo "$0: unknown argument $a" >&2; exit 2 ;;
		esac
	done
	passed=0 failed=0
	export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
}

finish() {	# message: a setup failure
	echo "$0: $1" >&2
	echo "$LT_STEP: $passed passed, $((failed + 1)) failed"
	exit 1
}
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi; }

lt_step_prepare() {
	[ -x "$PG_CONFIG" ] || finish "no pg_config at $PG_CONFIG (install postgresql-server-dev-15)"
	command -v node >/dev/null || finish "node is not installed"
	[ -d "$ROOT/test/interop/node_modules" ] || finish "test/interop/node_modules is missing (run scripts/setup.sh)"
	. "$ROOT/test/pg/cluster.sh"
	mkdir -p "$ROOT/build"
	if [ "$install" -eq 1 ]; then
		lt_pg_install "$ROOT" "$ROOT/build/pg-install.log" || finish "installing into the private PostgreSQL copy failed"
	fi
}

lt_step_cluster() {
	TMP=$(mktemp -d "/tmp/lt_fdw_${LT_STEP//-/_}.XXXXXX") || finish "mktemp failed"
	trap 'lt_cluster_stop; rm -rf "$TMP"' EXIT
	trap 'exit 130' INT TERM
	LAKE=$TMP/lake
	mkdir -p "$TMP/pg" "$LAKE" && chmod 0777 "$TMP" "$LAKE" || finish "could not make $LAKE"
	lt_cluster_create "$TMP/pg" || finish "could not create the test cluster"
	[ $# -eq 0 ] || printf '%s\n' "$@" >>"$LT_PGDATA/postgresql.conf"
	lt_cluster_start || finish "the test cluster did not start"
}
