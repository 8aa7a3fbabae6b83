#!/usr/bin/env bash
# test/s3/run.sh — lt_fdw on S3: the test S3 server (test/s3/server.mjs: @20minutes/s3rver, which checks SigV4
# signatures, plus conditional PUT and a fault mode) on 127.0.0.1 and an ephemeral port, stopped at the end.
#
#   test/s3/run.sh                 every part: store cond read inspect pg race faults vhost token blob
#   test/s3/run.sh store pg        only some parts
#
#   store   build/s3/test_s3_store: the S3 backend itself (reads, listings, conditional create, multipart,
#           credentials, retries through faults, bounded retries, the interrupt check)
#   cond    the server answers 412 to a conditional create of an existing key (and 200 without the condition)
#   read    datasets the reference engine writes to S3 (test/interop/specs/*.json) read by lt-inspect over S3
#           and compared with the reference engine's own scan over S3
#   inspect lt-inspect's index commands on s3:// (index, index-query, index-file, create-index) against the same
#           dataset on a local disk
#   pg      pg_regress test/s3/sql/*.sql on a throwaway cluster (options, credentials, IMPORT, scans, index
#           lookups, writes read back by the reference engine over S3)
#   race    two sessions appending to the same S3 dataset at once: every commit lands or fails with 40001
#   faults  the server fails a quarter of all requests (500, 503, dropped connections before and after they
#           took effect): lt_fdw's writes and reads through it lose nothing
#   vhost   a server with virtual-hosted addressing (http://s3.localhost:PORT: lake.s3.localhost, which curl
#           resolves to the loopback address): scans and a commit, read back by the reference (path style)
#   token   the server requires a session token: the user mapping's aws_session_token works; a wrong or
#           missing one is 42501 naming S3's error code, never showing the token
#   blob    (LT_REF=12 only: Lance 8 has no blob v2) a blob v2 table of Lance 12 on S3: INSERT (inline, packed and
#           dedicated sizes, empty, NULL), UPDATE and DELETE write its data files and sidecars over S3, then lt_compact;
#           Lance 12 reads every blob's bytes over S3 as a heap table mirroring the statements holds them
# LT_REF=12 runs it against Lance 12 (with LT_S3_SKIP_SPECS="fsl_struct": specs left out of the read part).
# Ends with "N passed, M failed"; exits non-zero when anything failed. Leaves nothing running.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
MAKE=${MAKE:-make}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(store cond read inspect pg race faults vhost token blob)
want() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; shift; local l; for l in "$@"; do [ -n "$l" ] && printf '       %s\n' "$l"; done; }
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}

TMP=$(mktemp -d /tmp/lt_fdw_s3.XXXXXX) || { echo "mktemp failed"; echo "0 passed, 1 failed"; exit 1; }
chmod 0755 "$TMP"
SERVER_PID=
PG_UP=0
cleanup() {
	[ "$PG_UP" -eq 1 ] && lt_cluster_stop
	if [ -n "$SERVER_PID" ]; then
		exec 9>&- 2>/dev/null	# closing its stdin stops the server
		for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
		kill "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the server ---------------------------------------------------------------------------------------
[ -d test/interop/node_modules/@20minutes/s3rver ] || { ko "setup: npm module @20minutes/s3rver is missing (scripts/setup.sh)"; finish; }
mkfifo "$TMP/ctl" || { ko "setup: mkfifo"; finish; }
NODE_OPTIONS=--openssl-legacy-provider node test/s3/server.mjs "$TMP/objects" lake <"$TMP/ctl" >"$TMP/port" 2>"$TMP/server.log" &
SERVER_PID=$!
exec 9>"$TMP/ctl"
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT=$(sed -nE 's/.*"port": *([0-9]+).*/\1/p' "$TMP/port")
[ -n "$PORT" ] || { ko "setup: the test S3 server did not start" "$(cat "$TMP/server.log")"; finish; }
export LT_S3_ENDPOINT=http://127.0.0.1:$PORT
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
echo "test S3 server on $LT_S3_ENDPOINT"
SIGN=(--aws-sigv4 "aws:amz:us-east-1:s3" --user S3RVER:S3RVER -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
REF() { NODE_OPTIONS=--openssl-legacy-provider node test/interop/ref.mjs "$@"; }

# ---- store --------------------------------------------------------------------------------------------
if want store; then
	[ -x build/s3/test_s3_store ] || $MAKE build/s3/test_s3_store >/dev/null 2>&1
	if out=$(LT_S3_PORT=$PORT timeout 600 build/s3/test_s3_store 2>&1); then
		ok "store: $(echo "$out" | tail -n 1)"
	else
		ko "store: the S3 backend's tests failed" "$(echo "$out" | tail -n 30)"
	fi
fi

# ---- cond ---------------------------------------------------------------------------------------------
if want cond; then
	u="$LT_S3_ENDPOINT/lake/cond-check/obj"
	a=$(curl -s -o /dev/null -w '%{http_code}' "${SIGN[@]}" -H 'If-None-Match: *' -X PUT --data-binary one "$u")
	b=$(curl -s -o /dev/null -w '%{http_code}' "${SIGN[@]}" -H 'If-None-Match: *' -X PUT --data-binary two "$u")
	c=$(curl -s "${SIGN[@]}" "$u")
	d=$(curl -s -o /dev/null -w '%{http_code}' "${SIGN[@]}" -X PUT --data-binary three "$u")
	e=$(curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" --user S3RVER:wrong \
		-H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -X PUT --data-binary four "$u")
	if [ "$a" = 200 ] && [ "$b" = 412 ] && [ "$c" = one ] && [ "$d" = 200 ] && [ "$e" = 403 ]; then
		ok "cond: conditional create 200 then 412 (object kept), plain PUT 200, a wrong signature 403"
	else
		ko "cond: the test server's conditional PUT" "first $a, second $b (want 412), content '$c', plain $d, bad signature $e"
	fi
fi

# ---- read ---------------------------------------------------------------------------------------------
if want read; then
	[ -x build/lt-inspect ] || $MAKE all >/dev/null 2>&1
	# one storage variant of every spec (the first it lists): the store is under test here, not the encodings
	mkdir -p "$TMP/specs"
	for spec in test/interop/specs/*.json; do
		# LT_S3_SKIP_SPECS: specs the engine cannot read back itself (Lance 12: fsl_struct)
		[[ " ${LT_S3_SKIP_SPECS:-} " == *" $(basename "$spec" .json) "* ]] && continue
		REF expand "$TMP/variants" "$spec" && cp "$(ls "$TMP/variants"/*.json | head -n 1)" "$TMP/specs/" && rm -rf "$TMP/variants"
	done
	for spec in "$TMP/specs"/*.json; do
		name=$(basename "$spec" .json)
		uri=s3://lake/read/$name.lance
		if ! err=$(REF make "$uri" "$spec" 2>&1 >/dev/null); then
			ko "read $name: the reference engine could not write it to S3" "$err"
			continue
		fi
		REF scan "$uri" >"$TMP/ref.jsonl" 2>"$TMP/ref.err" || { ko "read $name: reference scan over S3" "$(head -c 400 "$TMP/ref.err")"; continue; }
		if ! build/lt-inspect scan "$uri" >"$TMP/lt.jsonl" 2>"$TMP/lt.err"; then
			ko "read $name: lt-inspect scan over S3" "$(head -c 400 "$TMP/lt.err")"
			continue
		fi
		if diff=$(REF diff "$TMP/ref.jsonl" "$TMP/lt.jsonl" 2>&1); then
			ok "read $name: $(wc -l <"$TMP/ref.jsonl") rows identical"
		else
			ko "read $name: lt-inspect and the reference differ over S3" "$(echo "$diff" | head -n 8)"
		fi
	done
fi

# ---- inspect ------------------------------------------------------------------------------------------
# lt-inspect's index commands on s3:// (index, index-query, index-file, create-index), against the same dataset
# on a local disk (the reference engine makes both from one spec: the same rows, the same index contents)
if want inspect; then
	[ -x build/lt-inspect ] || $MAKE all >/dev/null 2>&1
	LOCAL=$TMP/inspect/ix.lance URI=s3://lake/inspect/ix.lance
	mkdir -p "$TMP/inspect"
	if REF make "$URI" test/interop/index/stable.json >/dev/null 2>"$TMP/ix.err" &&
		REF make "$LOCAL" test/interop/index/stable.json >/dev/null 2>>"$TMP/ix.err"; then
		# the index list (names, kinds, columns, fragments; the uuids differ between the two copies)
		norm() { jq -c 'del(.. | .uuid?) | del(.. | .dir?)' 2>/dev/null; }
		a=$(build/lt-inspect index "$URI" 2>&1 | norm) b=$(build/lt-inspect index "$LOCAL" 2>&1 | norm)
		[ -n "$a" ] && [ "$a" = "$b" ] && ok "inspect: index lists the same indexes over S3" ||
			ko "inspect: index over S3" "s3: $(echo "$a" | head -c 300)" "local: $(echo "$b" | head -c 300)"
		same=0 total=0
		for where in "id = 4321" "id >= 100 AND id < 900" "k = 3" "k IN (1, 5) OR k > 8"; do
			total=$((total + 1))
			# each must succeed: three copies of one error message would otherwise agree
			a=$(build/lt-inspect index-query "$URI" --where "$where" 2>&1) &&
				b=$(build/lt-inspect index-query "$LOCAL" --where "$where" 2>&1) &&
				c=$(build/lt-inspect index-query "$URI" --where "$where" --no-index 2>&1) &&
				[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] && same=$((same + 1)) ||
				echo "index-query '$where': s3 $(echo "$a" | head -c 200) / local $(echo "$b" | head -c 200) / scan $(echo "$c" | head -c 200)"
		done
		[ "$same" = "$total" ] && ok "inspect: index-query over S3 answers as on disk and as the scan ($total filters)" ||
			ko "inspect: index-query over S3" "$same of $total agree"
		# one index file by its s3:// path
		uuid=$(build/lt-inspect index "$LOCAL" | jq -r 'select(.kind == "btree" or .type == "btree") | .. | .uuid? // empty' 2>/dev/null | head -n 1)
		s3uuid=$(build/lt-inspect index "$URI" | jq -r 'select(.kind == "btree" or .type == "btree") | .. | .uuid? // empty' 2>/dev/null | head -n 1)
		# keys sorted: the engine writes a file's metadata map in hash order, which differs between the two copies
		a=$(build/lt-inspect index-file "$URI/_indices/$s3uuid/page_lookup.lance" 2>&1 | jq -S -c . 2>&1)
		b=$(build/lt-inspect index-file "$LOCAL/_indices/$uuid/page_lookup.lance" 2>&1 | jq -S -c . 2>&1)
		[ -n "$uuid" ] && [ -n "$s3uuid" ] && echo "$a" | head -n 1 | jq -e '.fields | length > 0' >/dev/null 2>&1 && [ "$a" = "$b" ] && ok "inspect: index-file reads a btree's page_lookup.lance by its s3:// path" ||
			ko "inspect: index-file over S3" "uuids '$s3uuid' / '$uuid'" "s3: $(echo "$a" | head -c 300)" "local: $(echo "$b" | head -c 300)"
		# an index built over S3, which the reference lists and lt-inspect then uses
		if build/lt-inspect create-index "$URI" --column k --kind btree --name k_btree >"$TMP/ci.out" 2>&1; then
			listed=$(REF indexes "$URI" 2>/dev/null | grep -c '"k_btree"')
			a=$(build/lt-inspect index-query "$URI" --where "k = 3 OR k = 99" --index k_btree 2>&1) &&
				c=$(build/lt-inspect index-query "$URI" --where "k = 3 OR k = 99" --no-index 2>&1) &&
				[ "$listed" -ge 1 ] && [ -n "$a" ] && [ "$a" = "$c" ] && ok "inspect: create-index over S3 (a btree the reference lists, lookups right)" ||
				ko "inspect: create-index over S3" "listed $listed" "$(head -c 300 "$TMP/ci.out")" "index: $(echo "$a" | head -c 200)" "scan: $(echo "$c" | head -c 200)"
		else
			ko "inspect: create-index over S3" "$(head -c 400 "$TMP/ci.out")"
		fi
	else
		ko "inspect: setup" "$(head -c 400 "$TMP/ix.err")"
	fi
fi

# ---- a cluster for pg, race and faults -------------------------------------------------------------------
if want pg || want race || want faults || want vhost || want token || want blob; then
	. test/pg/cluster.sh
	mkdir -p build
	if ! lt_pg_install "$ROOT" "build/s3${LT_REF:+-l$LT_REF}-pg-install.log"; then
		ko "setup: installing into the private PostgreSQL copy failed"; finish
	fi
	mkdir -p "$TMP/pg" && lt_cluster_create "$TMP/pg" || { ko "setup: could not create the test cluster"; finish; }
	lt_cluster_start || { ko "setup: the test cluster did not start"; finish; }
	PG_UP=1
	# the server's own environment has no AWS credentials (the suite tests the ambient fallback)
	PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
fi

if want pg; then
	export LT_ROOT=$ROOT
	for spec in test/pg/specs/*.json; do
		REF make "s3://lake/pg/$(basename "$spec" .json).lance" "$spec" >/dev/null 2>"$TMP/mk.err" ||
			ko "pg: the reference engine could not write $(basename "$spec")" "$(head -c 300 "$TMP/mk.err")"
	done
	REF make s3://lake/pg/write/w_events.lance test/pg/specs/write/w_events.json >/dev/null 2>"$TMP/mk.err" ||
		ko "pg: the reference engine could not write w_events" "$(head -c 300 "$TMP/mk.err")"
	REF make s3://lake/pg/idx.lance test/interop/index/stable.json >/dev/null 2>"$TMP/mk.err" ||
		ko "pg: the reference engine could not write idx" "$(head -c 300 "$TMP/mk.err")"
	REGRESS_DIR=build/s3${LT_REF:+-l$LT_REF}-regress	# one per engine: the two may run at once
	rm -rf "$REGRESS_DIR" && mkdir -p "$REGRESS_DIR"
	# the cluster runs as postgres: the reference engine (\!) needs a writable HOME for its caches
	$MAKE installcheck PG_CONFIG="$PG_CONFIG" REGRESS="$(cd test/s3/sql && ls *.sql | sed 's/\.sql$//' | tr '\n' ' ')" \
		REGRESS_OPTS="--inputdir=test/s3 --outputdir=$REGRESS_DIR --bindir=$LT_PGBIN" >"$TMP/regress.out" 2>&1
	cat "$TMP/regress.out"
	n_ok=$(grep -cE '^(test | +)?[[:alnum:]_.-]+ +\.\.\. ok' "$TMP/regress.out")
	n_bad=$(grep -cE '^(test | +)?[[:alnum:]_.-]+ +\.\.\. (FAILED|failed)' "$TMP/regress.out")
	pass=$((pass + n_ok)) fail=$((fail + n_bad))
	if [ "$n_bad" -gt 0 ] || [ "$n_ok" -eq 0 ]; then
		[ "$n_ok" -eq 0 ] && [ "$n_bad" -eq 0 ] && fail=$((fail + 1))
		[ -s "$REGRESS_DIR/regression.diffs" ] && head -n 150 "$REGRESS_DIR/regression.diffs"
		tail -n 30 "$LT_PGLOG"
	fi
fi

# setup SQL for race and faults: a fresh dataset on S3 written by the reference engine
s3_table() {	# NAME
	REF make "s3://lake/sql/$1.lance" test/pg/specs/write/w_events.json >/dev/null 2>"$TMP/mk.err" || { cat "$TMP/mk.err"; return 1; }
	"${PSQL[@]}" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
CREATE SERVER IF NOT EXISTS s3sql FOREIGN DATA WRAPPER lt_fdw
  OPTIONS (root 's3://lake/sql', endpoint '$LT_S3_ENDPOINT', path_style 'true', allow_http 'true');
DO \$\$ BEGIN
  CREATE USER MAPPING FOR CURRENT_USER SERVER s3sql OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER');
EXCEPTION WHEN duplicate_object THEN NULL; END \$\$;
CREATE FOREIGN TABLE $1 (id bigint NOT NULL, dt date, value text, score double precision) SERVER s3sql OPTIONS (path '$1.lance');
SQL
}

# ---- race ---------------------------------------------------------------------------------------------
if want race; then
	if s3_table race >"$TMP/race.setup" 2>&1; then
		for w in 1 2; do
			(
				for i in $(seq 1 8); do
					if "${PSQL[@]}" -c "INSERT INTO race VALUES ($((w * 1000 + i)), '2026-01-01', 'w$w', $i)" >/dev/null 2>"$TMP/race.$w.$i.err"; then
						echo "$((w * 1000 + i)) committed"
					elif grep -q "40001\|could not serialize\|concurrently" "$TMP/race.$w.$i.err"; then
						echo "$((w * 1000 + i)) conflict"
					else
						echo "$((w * 1000 + i)) error $(head -c 300 "$TMP/race.$w.$i.err")"
					fi
				done >"$TMP/race.$w"
			) &
		done
		wait_pids=$(jobs -p | grep -v "^$SERVER_PID\$")
		for p in $wait_pids; do wait "$p"; done
		committed=$(cat "$TMP/race.1" "$TMP/race.2" | awk '$2 == "committed" {print $1}' | sort -n)
		errors=$(cat "$TMP/race.1" "$TMP/race.2" | grep -c " error ")
		present=$("${PSQL[@]}" -At -c "SELECT id FROM race WHERE id >= 1000 ORDER BY id")
		refids=$(REF scan s3://lake/sql/race.lance --columns id 2>/dev/null | sed -nE 's/.*"id":"?([0-9]+)"?.*/\1/p' | awk '$1 >= 1000' | sort -n)
		nc=$(echo "$committed" | grep -c .)
		if [ "$errors" -eq 0 ] && [ "$committed" = "$present" ] && [ "$committed" = "$refids" ] && [ "$nc" -gt 0 ]; then
			ok "race: two writers, $nc commits all present (lt_fdw and the reference agree), $((16 - nc)) serialization failures, none lost"
		else
			ko "race: commits and contents disagree" "committed: $(echo $committed)" "present: $(echo $present)" \
				"reference: $(echo $refids)" "$(grep " error " "$TMP/race.1" "$TMP/race.2" | head -n 3)"
		fi
	else
		ko "race: setup" "$(head -c 500 "$TMP/race.setup")"
	fi
fi

# ---- faults -------------------------------------------------------------------------------------------
if want faults; then
	if s3_table faulty >"$TMP/faults.setup" 2>&1; then
		curl -s "$LT_S3_ENDPOINT/__admin/reset-stats" >/dev/null
		curl -s "$LT_S3_ENDPOINT/__admin/mode?faults=0.25" >/dev/null
		good=0 bad=0
		for i in $(seq 1 10); do
			if "${PSQL[@]}" -c "INSERT INTO faulty SELECT $((100 + i * 10)) + g, '2026-02-01', 'f', g FROM generate_series(0, 9) g" \
				>/dev/null 2>"$TMP/faults.err"; then
				good=$((good + 1))
			else
				bad=$((bad + 1)); echo "insert $i: $(head -c 300 "$TMP/faults.err")"
			fi
		done
		n=$("${PSQL[@]}" -At -c "SELECT count(*) FROM faulty WHERE id >= 100" 2>&1)
		s=$("${PSQL[@]}" -At -c "SELECT sum(id) FROM faulty WHERE id >= 100" 2>&1)
		curl -s "$LT_S3_ENDPOINT/__admin/mode?faults=0" >/dev/null
		stats=$(curl -s "$LT_S3_ENDPOINT/__admin/stats")
		want_sum=$(seq 110 10 200 | awk '{for (g = 0; g < 10; g++) s += $1 + g} END {print s}')
		refn=$(REF scan s3://lake/sql/faulty.lance --columns id 2>/dev/null | sed -nE 's/.*"id":"?([0-9]+)"?.*/\1/p' | awk '$1 >= 100' | wc -l)
		faults=$(echo "$stats" | sed -nE 's/.*"faults":([0-9]+).*/\1/p')
		if [ "$good" -eq 10 ] && [ "$n" = 100 ] && [ "$s" = "$want_sum" ] && [ "$refn" -eq 100 ] && [ "${faults:-0}" -gt 0 ]; then
			ok "faults: 10 commits through $faults injected faults, 100 rows read back by lt_fdw and the reference"
		else
			ko "faults: writes through a faulty store" "commits $good/10, rows $n (want 100), sum $s (want $want_sum), reference $refn, server $stats"
		fi
	else
		ko "faults: setup" "$(head -c 500 "$TMP/faults.setup")"
	fi
fi

# ---- vhost --------------------------------------------------------------------------------------------
if want vhost; then
	VH_ENDPOINT=http://s3.localhost:${LT_S3_ENDPOINT##*:}
	curl -s "$LT_S3_ENDPOINT/__admin/reset-stats" >/dev/null
	if REF make s3://lake/vh/vh.lance test/pg/specs/write/w_events.json >/dev/null 2>"$TMP/vh.err" &&
		"${PSQL[@]}" >"$TMP/vh.out" 2>&1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
CREATE SERVER s3vh FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 's3://lake/vh', endpoint '$VH_ENDPOINT', allow_http 'true');
CREATE USER MAPPING FOR CURRENT_USER SERVER s3vh OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER');
CREATE FOREIGN TABLE vh (id bigint NOT NULL, dt date, value text, score double precision) SERVER s3vh OPTIONS (path 'vh.lance');
INSERT INTO vh VALUES (900001, '2026-03-01', 'vhost', 1.5);
SQL
	then
		n=$("${PSQL[@]}" -At -c "SELECT count(*) FROM vh" 2>&1)
		mine=$("${PSQL[@]}" -At -c "SELECT value FROM vh WHERE id = 900001" 2>&1)
		refn=$(REF scan s3://lake/vh/vh.lance --columns id 2>/dev/null | wc -l)
		vh=$(curl -s "$LT_S3_ENDPOINT/__admin/stats" | sed -nE 's/.*"vhost":([0-9]+).*/\1/p')
		if [ "$mine" = vhost ] && [ "$n" = "$refn" ] && [ "${vh:-0}" -gt 0 ]; then
			ok "vhost: a server on $VH_ENDPOINT (virtual-hosted: lake.s3.localhost): scans and a commit ($vh requests), the reference reads the row ($n rows)"
		else
			ko "vhost: virtual-hosted addressing" "row: $mine, rows $n vs reference $refn, vhost requests ${vh:-0}"
		fi
	else
		ko "vhost: setup" "$(head -c 500 "$TMP/vh.err" "$TMP/vh.out")"
	fi
fi

# ---- token --------------------------------------------------------------------------------------------
if want token; then
	TOKEN='IQoJb3JpZ2luX2VjEXAMPLE/session+token='
	REF make s3://lake/tok/tok.lance test/pg/specs/write/w_events.json >/dev/null 2>"$TMP/tok.out"
	"${PSQL[@]}" >>"$TMP/tok.out" 2>&1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
DO \$\$ DECLARE t text; BEGIN
  FOREACH t IN ARRAY ARRAY['good', 'bad', 'none'] LOOP
    EXECUTE format('CREATE SERVER s3tok_%s FOREIGN DATA WRAPPER lt_fdw OPTIONS (root %L, endpoint %L, path_style %L, allow_http %L)',
                   t, 's3://lake/tok', '$LT_S3_ENDPOINT', 'true', 'true');
    EXECUTE format('CREATE FOREIGN TABLE tok_%s (id bigint NOT NULL, dt date, value text, score double precision) SERVER s3tok_%s OPTIONS (path %L)',
                   t, t, 'tok.lance');
  END LOOP;
END \$\$;
CREATE USER MAPPING FOR CURRENT_USER SERVER s3tok_good
  OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER', aws_session_token '$TOKEN');
CREATE USER MAPPING FOR CURRENT_USER SERVER s3tok_bad
  OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER', aws_session_token 'not-$TOKEN');
CREATE USER MAPPING FOR CURRENT_USER SERVER s3tok_none OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER');
SQL
	curl -s "$LT_S3_ENDPOINT/__admin/mode?session_token=$(node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "$TOKEN")" >/dev/null
	good=$("${PSQL[@]}" -At -c "INSERT INTO tok_good VALUES (900002, '2026-03-02', 'token', 2.5)" -c "SELECT value FROM tok_good WHERE id = 900002" 2>&1)
	for t in bad none; do
		"${PSQL[@]}" -At -c "\\set VERBOSITY verbose" -c "SELECT count(*) FROM tok_$t" >"$TMP/tok.$t" 2>&1
	done
	curl -s "$LT_S3_ENDPOINT/__admin/mode?session_token=" >/dev/null
	if [ "$good" = token ]; then ok "token: the server requires a session token; the mapping's aws_session_token works (a commit and a read)"; else
		ko "token: the right session token" "$good" "$(head -c 300 "$TMP/tok.out")"; fi
	for t in bad none; do
		code=InvalidToken; [ "$t" = none ] && code=InvalidAccessKeyId
		if grep -q "42501" "$TMP/tok.$t" && grep -q "access denied" "$TMP/tok.$t" && grep -q "$code" "$TMP/tok.$t" &&
			! grep -q "EXAMPLE/session" "$TMP/tok.$t"; then
			ok "token: a $([ "$t" = bad ] && echo wrong || echo missing) session token is 42501 ($code), the token not shown"
		else
			ko "token: a $t session token" "$(head -c 400 "$TMP/tok.$t")"
		fi
	done
fi

# ---- blob ---------------------------------------------------------------------------------------------
if want blob && [ "${LT_REF:-8}" != 12 ]; then
	echo "skip blob: blob v2 is read back by Lance 12 (LT_REF=12); Lance 8 has none"
elif want blob; then
	BLOB() { NODE_OPTIONS=--openssl-legacy-provider node test/interop/blob.mjs "$@" 2> >(grep -v -e '^npm WARN' -e 'EBADENGINE' >&2); }
	blobs_on_s3() { curl -sf "${SIGN[@]}" "$LT_S3_ENDPOINT/lake?prefix=blob%2Fv2s3.lance%2Fdata%2F" | grep -o '<Key>[^<]*\.blob</Key>' | sort -u | wc -l; }
	rows_of() { "${PSQL[@]}" -At -c "SELECT format('{\"id\":%s,\"len\":%s,\"md5\":%s}', id, coalesce(length(payload)::text, 'null'),
		coalesce('\"' || md5(payload) || '\"', 'null')) FROM $1 ORDER BY id" 2>&1; }
	# Lance 12's blob v2 table (inline up to 200 bytes, packed up to 100000, dedicated above), uploaded
	up=0
	if BLOB make 12 "$TMP/v2s3.lance" v2 >/dev/null 2>"$TMP/blob.err"; then
		(cd "$TMP/v2s3.lance" && find . -type f | sed 's|^\./||') >"$TMP/blob.files"
		while read -r f; do
			curl -sf "${SIGN[@]}" -X PUT --data-binary "@$TMP/v2s3.lance/$f" "$LT_S3_ENDPOINT/lake/blob/v2s3.lance/$f" >/dev/null || up=1
		done <"$TMP/blob.files"
	else
		up=1
	fi
	before=$(blobs_on_s3)
	big="decode(repeat(md5('s3 blob'), 131072), 'hex')"	# 2 MiB: a dedicated sidecar
	if [ "$up" = 0 ] && "${PSQL[@]}" >"$TMP/blob.out" 2>&1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
CREATE SERVER s3blob FOREIGN DATA WRAPPER lt_fdw
  OPTIONS (root 's3://lake/blob', endpoint '$LT_S3_ENDPOINT', path_style 'true', allow_http 'true');
CREATE USER MAPPING FOR CURRENT_USER SERVER s3blob OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER');
CREATE FOREIGN TABLE v2s3 (id bigint, note text, payload bytea) SERVER s3blob OPTIONS (path 'v2s3.lance');
CREATE TABLE h_v2s3 AS SELECT * FROM v2s3;
INSERT INTO v2s3 VALUES (100, 'empty', '\\x'), (101, 'null', NULL), (102, 'big', $big), (103, 'inline', '\\xdeadbeef'),
  (104, 'packed', decode(repeat('ab', 5000), 'hex')), (105, 'packed', decode(repeat('cd', 20000), 'hex'));
INSERT INTO h_v2s3 VALUES (100, 'empty', '\\x'), (101, 'null', NULL), (102, 'big', $big), (103, 'inline', '\\xdeadbeef'),
  (104, 'packed', decode(repeat('ab', 5000), 'hex')), (105, 'packed', decode(repeat('cd', 20000), 'hex'));
UPDATE v2s3 SET payload = decode(repeat('ef', 150000), 'hex') WHERE id = 2;
UPDATE h_v2s3 SET payload = decode(repeat('ef', 150000), 'hex') WHERE id = 2;
DELETE FROM v2s3 WHERE id IN (4, 104);
DELETE FROM h_v2s3 WHERE id IN (4, 104);
SQL
	then
		after=$(blobs_on_s3)
		rows_of h_v2s3 >"$TMP/blob.want"
		rows_of v2s3 >"$TMP/blob.sql"
		BLOB bytes s3://lake/blob/v2s3.lance 12 >"$TMP/blob.got" 2>"$TMP/blob.err"
		n=$(wc -l <"$TMP/blob.want")
		if [ "$after" -gt "$before" ] && [ "$n" -gt 12 ] && cmp -s "$TMP/blob.got" "$TMP/blob.want" && cmp -s "$TMP/blob.sql" "$TMP/blob.want"; then
			ok "blob: INSERT, UPDATE and DELETE of a blob v2 table on S3 ($((after - before)) new sidecars); Lance 12 reads all $n rows' bytes over S3"
		else
			ko "blob: blob v2 writes over S3" "sidecars $before -> $after; $(head -c 300 "$TMP/blob.err")" \
				"$(diff "$TMP/blob.want" "$TMP/blob.got" | head -n 6)" "$(diff "$TMP/blob.want" "$TMP/blob.sql" | head -n 4)"
		fi
		got=$("${PSQL[@]}" -At -c "SELECT fragments_removed || ' ' || fragments_added FROM lt_compact('v2s3')" 2>&1)
		BLOB bytes s3://lake/blob/v2s3.lance 12 >"$TMP/blob.got" 2>"$TMP/blob.err"
		if [[ $got == *" 1" ]] && cmp -s "$TMP/blob.got" "$TMP/blob.want"; then
			ok "blob: lt_compact over S3 ($got fragments); Lance 12 reads every blob's bytes after it"
		else
			ko "blob: lt_compact of a blob v2 table on S3" "$got" "$(head -c 300 "$TMP/blob.err")" "$(diff "$TMP/blob.want" "$TMP/blob.got" | head -n 6)"
		fi
	else
		ko "blob: setup or the writes" "$(head -c 500 "$TMP/blob.err" "$TMP/blob.out")"
	fi
fi

finish
