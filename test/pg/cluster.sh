# test/pg/cluster.sh — a throwaway PostgreSQL cluster for tests and the demo. Source it (bash).
#
#   lt_cluster_create DIR   initdb in DIR/data (DIR must exist; it becomes the server user's), socket in DIR/sock
#   lt_cluster_start        start on a free loopback port; exports PGHOST (the socket dir), PGPORT, PGUSER=postgres
#   lt_cluster_stop         stop it (immediate); safe to call more than once or when it never started
#   lt_as_pg CMD...         run CMD as the server's OS user (postgres when root, else the current user)
#   lt_pg_install ROOT LOG  build and install lt_fdw (checkout ROOT) into a private copy of the PostgreSQL
#                           installation, and use that copy's binaries (LT_PGBIN) from then on; under a lock
#                           (TREE.lock), and only when the built files differ from those installed there
#
# The private copy (/tmp/lt_fdw_pgtree.<hash of ROOT>, LT_PGTREE to choose) keeps the system's PostgreSQL
# untouched, and keeps two checkouts that test at the same time from replacing each other's lt_fdw.so.
# It works because PostgreSQL finds its share and lib directories relative to its own executable.
#
# The cluster: UTF8, locale C.UTF-8, trust auth, fsync off (LT_PG_FSYNC=on for a durable one: fsync and
# synchronous_commit on, as benchmarks of commits want), listens on 127.0.0.1 and DIR/sock only.
# As root, initdb and postgres run as user postgres (they refuse to run as root) through runuser.
# Callers remove DIR themselves (in an EXIT trap, after lt_cluster_stop).

: "${PG_CONFIG:=/usr/lib/postgresql/15/bin/pg_config}"
LT_PGBIN=$("$PG_CONFIG" --bindir)
LT_PG_STARTED=0

if [ "$(id -u)" -eq 0 ]; then
	LT_PG_OSUSER=postgres
	lt_as_pg() { runuser -u postgres -- "$@"; }
else
	LT_PG_OSUSER=$(id -un)
	lt_as_pg() { "$@"; }
fi

lt_pg_install() {
	local root=$1 log=$2 tree lockfd rc
	tree=${LT_PGTREE:-/tmp/lt_fdw_pgtree.$(printf '%s' "$root" | sha256sum | cut -c1-12)}
	# test steps may run at once (test/run-all.sh's lanes): one installs while the others wait, and nothing is
	# installed again over files a running server may be loading when the build is the one installed
	exec {lockfd}>"$tree.lock" || return 1
	flock "$lockfd"
	lt_pg_install_locked "$root" "$log" "$tree"
	rc=$?
	exec {lockfd}>&-
	return $rc
}

lt_pg_install_locked() {
	local root=$1 log=$2 tree=$3 bindir sharedir libdir d stamp
	bindir=$("$PG_CONFIG" --bindir) sharedir=$("$PG_CONFIG" --sharedir) libdir=$("$PG_CONFIG" --pkglibdir)
	if [ ! -x "$tree$bindir/postgres" ] || [ "$bindir/postgres" -nt "$tree$bindir/postgres" ]; then
		rm -rf "$tree" || return 1
		for d in "$bindir" "$sharedir" "$libdir"; do
			mkdir -p "$tree$(dirname "$d")" && cp -a "$d" "$tree$d" || { echo "cluster.sh: copying $d failed" >&2; return 1; }
		done
		chmod 0755 "$tree"
	fi
	if [ "$("$tree$bindir/pg_config" --sharedir)" != "$tree$sharedir" ]; then
		echo "cluster.sh: the PostgreSQL copy in $tree is not relocatable" >&2
		return 1
	fi
	if ! ${MAKE:-make} -C "$root" all PG_CONFIG="$PG_CONFIG" >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		echo "cluster.sh: make all failed (log: $log)" >&2
		return 1
	fi
	# what `make install` copies comes from these files: the same bytes are installed already
	stamp=$(cat "$root/lt_fdw.so" "$root/lt_fdw.control" "$root"/lt_fdw--*.sql | sha256sum | cut -c1-32)
	if [ "$(cat "$tree/.lt_fdw_installed" 2>/dev/null)" != "$stamp" ]; then
		rm -f "$tree/.lt_fdw_installed"
		if ! ${MAKE:-make} -C "$root" install PG_CONFIG="$PG_CONFIG" DESTDIR="$tree" >>"$log" 2>&1; then
			tail -n 40 "$log" >&2
			echo "cluster.sh: make install failed (log: $log)" >&2
			return 1
		fi
		echo "$stamp" >"$tree/.lt_fdw_installed"
	fi
	LT_PGBIN=$tree$bindir
}

lt_cluster_create() {
	LT_PG_DIR=$1
	LT_PGDATA=$1/data LT_PGSOCK=$1/sock LT_PGLOG=$1/server.log
	if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
		echo "cluster.sh: running as root needs a 'postgres' OS user (package postgresql-15)" >&2
		return 1
	fi
	mkdir -p "$LT_PGSOCK" || return 1
	chmod 0755 "$LT_PG_DIR"
	[ "$(id -u)" -eq 0 ] && chown postgres: "$LT_PG_DIR" "$LT_PGSOCK"
	if ! lt_as_pg "$LT_PGBIN/initdb" -D "$LT_PGDATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
		>"$LT_PG_DIR/initdb.log" 2>&1; then
		cat "$LT_PG_DIR/initdb.log" >&2
		echo "cluster.sh: initdb failed" >&2
		return 1
	fi
	cat >>"$LT_PGDATA/postgresql.conf" <<CONF
# lt_fdw throwaway cluster
listen_addresses = '127.0.0.1'
unix_socket_directories = '$LT_PGSOCK'
fsync = ${LT_PG_FSYNC:-off}
synchronous_commit = ${LT_PG_FSYNC:-off}
full_page_writes = off
max_prepared_transactions = 4
lc_messages = 'C'
log_line_prefix = '%m [%p] '
CONF
}

lt_cluster_start() {
	local p _
	for _ in 1 2 3 4 5 6 7 8; do
		p=$((50000 + RANDOM % 10000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue	# somebody listens there
		LT_PG_STARTED=1
		if lt_as_pg "$LT_PGBIN/pg_ctl" -D "$LT_PGDATA" -l "$LT_PGLOG" -w -t 60 -o "-p $p" start >/dev/null 2>&1; then
			export PGHOST=$LT_PGSOCK PGPORT=$p PGUSER=postgres
			unset PGDATABASE PGSERVICE PGOPTIONS PGPASSWORD
			return 0
		fi
		lt_cluster_stop
	done
	tail -n 30 "$LT_PGLOG" >&2 2>/dev/null
	echo "cluster.sh: the cluster did not start" >&2
	return 1
}

lt_cluster_stop() {
	if [ "$LT_PG_STARTED" -eq 1 ] && [ -f "$LT_PGDATA/postmaster.pid" ]; then
		lt_as_pg "$LT_PGBIN/pg_ctl" -D "$LT_PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	LT_PG_STARTED=0
}
