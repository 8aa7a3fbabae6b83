#!/usr/bin/env bash
# test/interop/namespace.sh — Lance directory namespaces: what the Lance 12 engine creates, lt_fdw imports, reads
# and writes by identifier, and the engine reads back.
#
# The engine (test/interop/namespace/engine.mjs, @lancedb/lancedb 0.39.0) makes a namespace with root tables of
# the directory listing (V1), a deregistered one, child namespaces "sales" and "sales$eu" with tables in
# __manifest (V2), and a root table only __manifest lists. Checked:
#   - IMPORT FOREIGN SCHEMA of the root and of each child namespace imports exactly the tables the engine lists,
#     under the engine's rules for each server mode (Lance's defaults, dir_listing_to_manifest_migration_enabled,
#     dir_listing_enabled false, manifest_enabled false), each with its identifier as table option;
#   - every imported table reads the engine's rows; a table created by hand with an identifier reads the same;
#   - INSERT / UPDATE / DELETE through lt_fdw on namespace tables, read back by the engine by identifier; the
#     engine's append seen by lt_fdw;
#   - EXPLAIN and lt_versions show the identifier and the resolved location;
#   - lt_create_dataset by identifier: a root table as <name>.lance, a child (or manifest-only root) table as
#     <hex>_<identifier> with a __manifest row; the engine lists and reads them, IMPORT sees them; ROLLBACK
#     registers nothing; the engine registering the same identifier meanwhile fails the commit (42P07), another
#     identifier is rebased over;
#   - errors: unknown namespace (HV00Q), unknown or deregistered table (HV00R), child namespaces without the
#     manifest (0A000), identifier on a server that is no namespace (HV00J), identifier with path, a malformed
#     identifier (HV024), reading a local namespace without pg_read_server_files (42501), a __manifest naming a
#     location outside the root (XX001).
# Then a REST namespace (namespace/rest-server.mjs on loopback, following the namespace spec) in front of the
# S3 test server (test/s3/server.mjs, requiring the vended session token), and a directory namespace on S3:
#   - IMPORT (paginated ListTables, DescribeTable) equals what the engine lists through the same service; rows
#     equal the engine's reads through it, before and after lt_fdw's writes with the vended credentials;
#   - credentials: one DescribeTable per table per transaction, a rotation seen by the next transaction (and
#     failing mid-transaction, 42501), short-lived ones renewed mid-transaction, expired ones refused (28000);
#   - auth only in user mappings: API key, bearer token, missing / wrong ones (28000, never echoed), refused in
#     server options; no secret in EXPLAIN or lt_versions; unreachable (HV00N) and slow (cancel, 57014) services;
#   - lt_create_dataset of a new identifier: DeclareTable, the engine lists and reads it; ROLLBACK deregisters it;
#   - a namespace that manages versions: the commit goes through CreateTableVersion (the engine reads it), a
#     refused one is 40001 with nothing committed and no staged file left.
#   test/interop/namespace.sh               install (private PostgreSQL copy), run
#   test/interop/namespace.sh --no-install  the extension is already installed
# Ends with "namespace: N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step namespace 31 "$@"
lt_step_prepare
[ -d "$ROOT/test/interop/lance12/node_modules/@lancedb/lancedb" ] || finish "test/interop/lance12/node_modules is missing (run scripts/setup.sh)"

lt_step_cluster
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
q() { "${PSQL[@]}" -At -c "$1" 2>&1; }
engine() { node "$HERE/namespace/engine.mjs" "$@" 2>/dev/null; }
# the SQLSTATE a statement fails with ("ok" when it does not fail)
sqlstate() {
	"${PSQL[@]}" -At -c "DO \$do\$ BEGIN EXECUTE \$s\$$1\$s\$; RAISE NOTICE 'state ok'; EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'state %', SQLSTATE; END \$do\$" 2>&1 |
		sed -n 's/.*NOTICE:  state //p'
}
# lt_fdw's rows of a table as the engine prints them
rows() { q "SELECT id || '|' || coalesce(name, '') || '|' || coalesce(amount::text, '') FROM $1 ORDER BY id"; }
tables_of() { q "SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$1' AND c.relkind = 'f'"; }

NS=$LAKE/ns
mkdir -p "$NS"
out=$(engine make "$NS") && [ -z "$out" ] || finish "the engine could not make the namespace: $out"
chown -R "$LT_PG_OSUSER" "$LAKE" 2>/dev/null

"${PSQL[@]}" >"$TMP/setup.out" 2>&1 <<SQL || { cat "$TMP/setup.out"; finish "setup failed"; }
CREATE EXTENSION lt_fdw;
CREATE SERVER ns FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$NS', namespace 'directory');
CREATE SERVER ns_migrate FOREIGN DATA WRAPPER lt_fdw
  OPTIONS (root '$NS', namespace 'directory', dir_listing_to_manifest_migration_enabled 'true');
CREATE SERVER ns_v2 FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$NS', namespace 'directory', dir_listing_enabled 'false');
CREATE SERVER ns_v1 FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 'file://$NS', namespace 'directory', manifest_enabled 'false');
CREATE SERVER plain FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$NS');
SQL

# ---- IMPORT: the tables the engine lists, per mode -----------------------------------------------------------
imp() {	# label server remote-schema local-schema engine-props
	q "CREATE SCHEMA $4" >/dev/null
	local got
	got=$(q "IMPORT FOREIGN SCHEMA \"$3\" FROM SERVER $2 INTO $4")
	[ -z "$got" ] || echo "  ($1: $got)"
	check "$1: IMPORT of \"$3\" imports the tables the engine lists" "$(tables_of "$4")" "$(engine list "$NS" "$5" "$3")"
}
imp "defaults, root" ns . r '{}'
imp "defaults, child" ns sales s '{}'
imp "defaults, grandchild" ns 'sales$eu' seu '{}'
imp "migration, root" ns_migrate . rm '{"dir_listing_to_manifest_migration_enabled":"true"}'
imp "manifest only, root" ns_v2 . r2 '{"dir_listing_enabled":"false"}'
imp "manifest only, grandchild" ns_v2 'sales$eu' s2 '{"dir_listing_enabled":"false"}'
imp "listing only, root" ns_v1 . r1 '{"manifest_enabled":"false"}'
check "the exact lists (root, root merged, grandchild)" "$(tables_of r)/$(tables_of rm)/$(tables_of seu)" "events,top/events,mtop,top/customers,orders"
check "listing only: a child namespace is refused, as by the engine (0A000)" \
	"$(sqlstate 'IMPORT FOREIGN SCHEMA "sales" FROM SERVER ns_v1 INTO public')/$(engine list "$NS" '{"manifest_enabled":"false"}' sales | cut -c1-5)" "0A000/ERROR"
check "an unknown namespace: HV00Q" "$(sqlstate 'IMPORT FOREIGN SCHEMA "nope" FROM SERVER ns INTO public')" "HV00Q"
check "a malformed namespace name: HV00Q" "$(sqlstate 'IMPORT FOREIGN SCHEMA "sales$$" FROM SERVER ns INTO public')" "HV00Q"
check "the identifier is the table option" \
	"$(q "SELECT array_to_string(ftoptions, ',') FROM pg_foreign_table WHERE ftrelid = 'seu.orders'::regclass")" 'identifier=sales$eu$orders'
check "a root table's identifier is its name" \
	"$(q "SELECT array_to_string(ftoptions, ',') FROM pg_foreign_table WHERE ftrelid = 'r.top'::regclass")" 'identifier=top'
check "LIMIT TO in a namespace" "$(q "CREATE SCHEMA lim; IMPORT FOREIGN SCHEMA \"sales\$eu\" LIMIT TO (customers) FROM SERVER ns INTO lim"; tables_of lim)" "customers"

# ---- reads: every imported table holds the engine's rows -------------------------------------------------------
for t in r.top r.events s.orders seu.orders seu.customers rm.mtop r2.mtop s2.orders r1.top; do
	schema=${t%%.*} name=${t#*.}
	case $schema in
		r|r1) id=$name ;; rm|r2) id=$name ;; s) id="sales\$$name" ;; seu|s2) id="sales\$eu\$$name" ;;
	esac
	got=$(rows "$t") want=$(engine scan "$NS" '{"dir_listing_to_manifest_migration_enabled":"true"}' "$id")
	if [ -z "$want" ]; then bad "rows of $t: the engine read nothing"; else check "rows of $t (identifier $id)" "$got" "$want"; fi
done
check "same table name, two namespaces: different tables" "$(rows s.orders | wc -l)/$(rows seu.orders | wc -l)" "4/6"
q "CREATE FOREIGN TABLE by_hand (id bigint, name text, amount double precision) SERVER ns OPTIONS (identifier 'sales\$eu\$customers')" >/dev/null
check "a table created by hand with an identifier" "$(rows by_hand)" "$(engine scan "$NS" '{}' 'sales$eu$customers')"

# ---- writes through lt_fdw, read back by the engine by identifier ------------------------------------------------
"${PSQL[@]}" >"$TMP/write.out" 2>&1 <<'SQL' || { cat "$TMP/write.out"; bad "writes through lt_fdw"; }
INSERT INTO seu.orders VALUES (100, 'pg-100', 1.25), (101, 'pg-101', NULL);
DELETE FROM seu.orders WHERE id = 2;
UPDATE seu.orders SET name = 'pg-updated' WHERE id = 3;
BEGIN;
INSERT INTO r.top VALUES (50, 'pg-top', 2.5);
DELETE FROM r.top WHERE id <= 2;
COMMIT;
SQL
check "the engine reads what lt_fdw wrote to sales\$eu\$orders" "$(engine scan "$NS" '{}' 'sales$eu$orders')" "$(rows seu.orders)"
check "... the rows expected" "$(engine scan "$NS" '{}' 'sales$eu$orders' | tr '\n' ' ')" \
	"1|eu-1|1.5 3|pg-updated|4.5 4|eu-4|6 5|eu-5|7.5 6|eu-6|9 100|pg-100|1.25 101|pg-101| "
check "the engine reads what lt_fdw wrote to the root table top" "$(engine scan "$NS" '{}' top)" "$(rows r.top)"
check "... top: ids 3,4,5,50" "$(engine scan "$NS" '{}' top | cut -d'|' -f1 | tr '\n' ',')" "3,4,5,50,"
check "the other table of that name is untouched" "$(rows s.orders | wc -l)" "4"
out=$(engine append "$NS" '{}' 'sales$eu$customers' 3)
check "the engine's append (by identifier) is seen by lt_fdw" "$out/$(q 'SELECT count(*) FROM seu.customers')/$(q 'SELECT count(*) FROM by_hand')" "/5/5"

# ---- EXPLAIN and lt_versions -----------------------------------------------------------------------------------
loc=$(ls -d "$NS"/*'_sales$eu$orders')
plan=$(q "EXPLAIN (COSTS OFF) SELECT * FROM seu.orders")
check "EXPLAIN shows the identifier" "$(grep -c 'Lance Table Identifier: sales\$eu\$orders' <<<"$plan")" "1"
check "EXPLAIN shows the resolved location" "$(grep -c "Lance Dataset: file://$loc" <<<"$plan")" "1"
check "EXPLAIN of a pushed aggregate and of a write (VERBOSE): the identifier too" \
	"$(q "EXPLAIN (COSTS OFF) SELECT count(*) FROM seu.orders" | grep -c 'Lance Table Identifier: sales\$eu\$orders')/$(q "EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO seu.orders VALUES (1, 'x', 1)" | grep -c 'Lance Table Identifier: sales\$eu\$orders')" "1/1"
check "lt_versions: identifier and location on every version" \
	"$(q "SELECT count(DISTINCT identifier || ' ' || location) || ' ' || min(identifier) || ' ' || min(location) FROM lt_versions('seu.orders')")" \
	"1 sales\$eu\$orders file://$loc"
check "lt_versions: as many versions as the engine's dataset has" \
	"$(q "SELECT count(*) FROM lt_versions('seu.orders')")" "$(ls "$loc/_versions" | grep -c '\.manifest$')"
check "lt_versions of a table named by path: no identifier" \
	"$(q "CREATE FOREIGN TABLE p_top (id bigint) SERVER plain OPTIONS (path 'top.lance'); SELECT DISTINCT coalesce(identifier, 'null') || ' ' || location FROM lt_versions('p_top')")" \
	"null file://$NS/top.lance"

# ---- errors ----------------------------------------------------------------------------------------------------
mk() { q "CREATE FOREIGN TABLE $1 (id bigint) SERVER $2 OPTIONS (identifier '$3')" >/dev/null; }
mk e_missing ns 'sales$nope'
mk e_gone ns gone
mk e_mtop ns mtop
mk e_plain plain top
mk e_v1 ns_v1 'sales$orders'
check "an unknown table: HV00R" "$(sqlstate 'SELECT * FROM e_missing')" "HV00R"
check "a deregistered table: HV00R, as the engine" "$(sqlstate 'SELECT * FROM e_gone')/$(engine scan "$NS" '{}' gone | cut -c1-5)" "HV00R/ERROR"
check "a manifest-only root table under Lance's defaults: HV00R, as the engine" "$(sqlstate 'SELECT * FROM e_mtop')/$(engine scan "$NS" '{}' mtop | cut -c1-5)" "HV00R/ERROR"
check "identifier on a server that is no namespace: HV00J" "$(sqlstate 'SELECT * FROM e_plain')" "HV00J"
check "a child table without the manifest: 0A000" "$(sqlstate 'SELECT * FROM e_v1')" "0A000"
check "identifier with path: HV00D" "$(sqlstate "CREATE FOREIGN TABLE e_both (id bigint) SERVER ns OPTIONS (identifier 'top', path 'top.lance')")" "HV00D"
check "a malformed identifier: HV024" "$(sqlstate "CREATE FOREIGN TABLE e_bad (id bigint) SERVER ns OPTIONS (identifier 'a\$\$b')")/$(sqlstate "CREATE FOREIGN TABLE e_bad (id bigint) SERVER ns OPTIONS (identifier 'a\$..')")" "HV024/HV024"
check "an unknown namespace kind: HV024" "$(sqlstate "CREATE SERVER e_kind FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '/x', namespace 'hive')")" "HV024"
# a manifest naming a location outside the root (written here with lt-inspect's append): refused, XX001
EVIL=$LAKE/evil
cp -a "$NS" "$EVIL"
printf '%s\n' '{"object_id":"sales$evil","object_type":"table","location":"../ns/top.lance","metadata":null,"base_objects":null}' \
	'{"object_id":"abs","object_type":"table","location":"/etc","metadata":null,"base_objects":null}' >"$TMP/evil.jsonl"
if "$ROOT/build/lt-inspect" append "$EVIL/__manifest" --jsonl "$TMP/evil.jsonl" >/dev/null 2>"$TMP/evil.err"; then
	chown -R "$LT_PG_OSUSER" "$EVIL" 2>/dev/null
	q "CREATE SERVER evil FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$EVIL', namespace 'directory', dir_listing_enabled 'false')" >/dev/null
	mk e_evil evil 'sales$evil'
	mk e_abs evil abs
	check "a manifest location outside the root: XX001 (by identifier, absolute, IMPORT)" \
		"$(sqlstate 'SELECT * FROM e_evil')/$(sqlstate 'SELECT * FROM e_abs')/$(sqlstate 'IMPORT FOREIGN SCHEMA "sales" FROM SERVER evil INTO public')" "XX001/XX001/XX001"
	check "... the other tables of that namespace still resolve" "$(q "CREATE FOREIGN TABLE e_ok (id bigint) SERVER evil OPTIONS (identifier 'sales\$eu\$orders'); SELECT count(*) FROM e_ok")" "7"
else
	bad "lt-inspect could not append to the copied __manifest: $(cat "$TMP/evil.err")"
fi

# ---- tables created from SQL (lt_create_dataset by identifier), registered as Lance 12 registers them -----------
cre() {	# foreign-table server identifier: lt_create_dataset of 4 rows through a new foreign table
	q "CREATE FOREIGN TABLE $1 (id bigint NOT NULL, name text, amount double precision) SERVER $2 OPTIONS (identifier '$3');
	   SELECT rows_written FROM lt_create_dataset('$1', query => \$\$SELECT i::bigint, 'pg-' || i, (i * 1.5)::float8 FROM generate_series(1, 4) i\$\$)"
}
check "create a root table by identifier" "$(cre c_root ns made)" "4"
check "... at <name>.lance (the listing registers it), the engine lists and reads it" \
	"$([ -d "$NS/made.lance/_versions" ] && echo dir)/$(engine list "$NS" '{}' . | tr ',' '\n' | grep -cx made)/$(engine scan "$NS" '{}' made | tr '\n' ' ')" \
	"dir/1/1|pg-1|1.5 2|pg-2|3 3|pg-3|4.5 4|pg-4|6 "
check "create a child-namespace table by identifier" "$(cre c_child ns 'sales$made')" "4"
made_loc=$(cd "$NS" && ls -d *'_sales$made' 2>/dev/null)
check "... at <8 hex>_<identifier>, as Lance places it" "$(grep -cE '^[0-9a-f]{8}_sales\$made$' <<<"$made_loc")" "1"
check "... the engine lists it in \"sales\" and reads it by identifier" \
	"$(engine list "$NS" '{}' sales)/$(engine scan "$NS" '{}' 'sales$made' | tr '\n' ' ')" \
	"made,orders/1|pg-1|1.5 2|pg-2|3 3|pg-3|4.5 4|pg-4|6 "
check "... IMPORT of the root and of \"sales\" sees the new tables" \
	"$(q "CREATE SCHEMA cr; CREATE SCHEMA cs; IMPORT FOREIGN SCHEMA \".\" FROM SERVER ns INTO cr; IMPORT FOREIGN SCHEMA \"sales\" FROM SERVER ns INTO cs"; tables_of cr)/$(tables_of cs)/$(rows cs.made | tr '\n' ' ')" \
	"events,made,top/made,orders/$(rows c_child | tr '\n' ' ')"
out=$(q "INSERT INTO cs.made VALUES (9, 'pg-9', 0)")
check "... written through lt_fdw afterwards, read back by the engine" "$out/$(engine scan "$NS" '{}' 'sales$made' | wc -l)" "/5"
check "creating it again: 42P07; with overwrite it is replaced, still one manifest row" \
	"$(sqlstate "SELECT lt_create_dataset('c_child', query => 'SELECT 1::bigint, null::text, null::float8')")/$(q "SELECT rows_written FROM lt_create_dataset('c_child', query => 'SELECT 1::bigint, null::text, null::float8', overwrite => true)")/$(engine list "$NS" '{}' sales)" \
	"42P07/1/made,orders"
q "CREATE FOREIGN TABLE c_rb (id bigint NOT NULL, name text, amount double precision) SERVER ns OPTIONS (identifier 'sales\$rb')" >/dev/null
out=$(q "BEGIN; SELECT rows_written FROM lt_create_dataset('c_rb', query => 'SELECT 1::bigint, null::text, null::float8'); ROLLBACK")
check "ROLLBACK registers nothing: the engine does not list it, lt_fdw does not find it (HV00R)" \
	"$out/$(engine list "$NS" '{}' sales)/$(sqlstate 'SELECT * FROM c_rb')/$(cd "$NS" && ls -d *'_sales$rb'/data/* 2>/dev/null | wc -l)" \
	"1/made,orders/HV00R/0"
# lt_fdw creates a table in "sales" while the engine creates one there in the middle of lt_fdw's transaction
race() {	# foreign-table identifier engine-identifier engine-rows: lt_fdw's session output
	q "CREATE FOREIGN TABLE $1 (id bigint NOT NULL, name text, amount double precision) SERVER ns OPTIONS (identifier '$2')" >/dev/null
	"${PSQL[@]}" -At 2>&1 <<SQL
BEGIN;
SELECT rows_written FROM lt_create_dataset('$1', query => 'SELECT 7::bigint, null::text, null::float8');
\! node "$HERE/namespace/engine.mjs" create "$NS" '{}' '$3' $4
COMMIT;
SQL
}
out=$(race c_dup 'sales$dup' 'sales$dup' 2)
check "a concurrent registration of the same identifier: lt_fdw's commit fails (42P07), the engine's table stands" \
	"$(grep -c 'already registered in the namespace' <<<"$out")/$(engine scan "$NS" '{}' 'sales$dup' | cut -d'|' -f1 | tr '\n' ',')/$(engine list "$NS" '{}' sales)" \
	"1/1,2,/dup,made,orders"
check "... and lt_fdw reads the engine's table by that identifier" "$(q 'SELECT count(*) FROM c_dup')" "2"
out=$(race c_mine 'sales$mine' 'sales$other' 3)
check "a concurrent registration of another identifier: rebased over, both registered, each readable by the engine" \
	"$out/$(engine list "$NS" '{}' sales)/$(engine scan "$NS" '{}' 'sales$mine' | cut -d'|' -f1)/$(engine scan "$NS" '{}' 'sales$other' | wc -l)" \
	"1/dup,made,mine,orders,other/7/3"
check "manifest-only server: a root table gets a hashed directory and a __manifest row" \
	"$(cre c_v2 ns_v2 vmade)/$(cd "$NS" && ls -d *_vmade | grep -cE '^[0-9a-f]{8}_vmade$')/$(engine list "$NS" '{"dir_listing_enabled":"false"}' . | tr ',' '\n' | grep -cx vmade)/$(engine scan "$NS" '{"dir_listing_enabled":"false"}' vmade | wc -l)" \
	"4/1/1/4"
q "CREATE FOREIGN TABLE c_nons (id bigint) SERVER ns OPTIONS (identifier 'nope\$t'); CREATE FOREIGN TABLE c_v1 (id bigint) SERVER ns_v1 OPTIONS (identifier 'sales\$t')" >/dev/null
check "create in an unknown namespace: HV00Q; a child table without the manifest: 0A000" \
	"$(sqlstate "SELECT lt_create_dataset('c_nons')")/$(sqlstate "SELECT lt_create_dataset('c_v1')")" "HV00Q/0A000"

q "CREATE ROLE ns_reader LOGIN; GRANT USAGE ON SCHEMA seu TO ns_reader; GRANT SELECT ON seu.orders TO ns_reader; CREATE USER MAPPING FOR ns_reader SERVER ns" >/dev/null
check "reading a local namespace needs pg_read_server_files: 42501" \
	"$("${PSQL[@]}" -At -U ns_reader -c "DO \$do\$ BEGIN PERFORM * FROM seu.orders; EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'state %', SQLSTATE; END \$do\$" 2>&1 | sed -n 's/.*NOTICE:  state //p')" "42501"
q "GRANT pg_read_server_files TO ns_reader" >/dev/null
check "... and with it, the role reads" "$("${PSQL[@]}" -At -U ns_reader -c 'SELECT count(*) FROM seu.orders' 2>&1)" "7"

# ---- the REST namespace: a test service (namespace/rest-server.mjs) vending credentials for the test S3 server ----
[ -d "$ROOT/test/interop/node_modules/@20minutes/s3rver" ] || finish "the npm module @20minutes/s3rver is missing (scripts/setup.sh)"
mkfifo "$TMP/s3ctl" "$TMP/restctl" || finish "mkfifo"
NODE_OPTIONS=--openssl-legacy-provider node "$ROOT/test/s3/server.mjs" "$TMP/objects" lake <"$TMP/s3ctl" >"$TMP/s3port" 2>"$TMP/s3.log" &
S3_PID=$!
exec 7>"$TMP/s3ctl"
for _ in $(seq 100); do [ -s "$TMP/s3port" ] && break; sleep 0.1; done
S3PORT=$(sed -nE 's/.*"port": *([0-9]+).*/\1/p' "$TMP/s3port")
[ -n "$S3PORT" ] || finish "the test S3 server did not start: $(cat "$TMP/s3.log")"
stop_servers() { exec 7>&- 8>&- 2>/dev/null; wait "$S3_PID" ${REST_PID:-} 2>/dev/null; }
trap 'stop_servers; lt_cluster_stop; rm -rf "$TMP"' EXIT
out=$(engine make-s3 s3://lake/rest "http://127.0.0.1:$S3PORT") && [ -z "$out" ] || finish "the engine could not write to S3: $out"
MANAGED=$LAKE/managed
mkdir -p "$MANAGED"
out=$(engine make "$MANAGED") && [ -z "$out" ] || finish "the engine could not make the managed tables: $out"
chown -R "$LT_PG_OSUSER" "$LAKE" 2>/dev/null
cat >"$TMP/rest.json" <<JSON
{"api_key": "k-secret-1", "bearer": null, "page_size": 1, "namespaces": ["sales", "local"],
 "tables": {"sales\$orders": {"location": "s3://lake/rest/orders.lance"},
            "sales\$events": {"location": "s3://lake/rest/events.lance"},
            "sales\$ghost": {"location": "s3://lake/rest/ghost.lance"},
            "local\$top": {"location": "file://$MANAGED/top.lance", "managed_versioning": true},
            "events": {"location": "s3://lake/rest/events.lance"}},
 "credentials": {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_session_token": "T1",
                 "expires_in_ms": 3600000},
 "storage": {"aws_endpoint": "http://127.0.0.1:$S3PORT", "allow_http": "true", "aws_region": "us-east-1"}}
JSON
node "$HERE/namespace/rest-server.mjs" "$TMP/rest.json" <"$TMP/restctl" >"$TMP/restport" 2>"$TMP/rest.log" &
REST_PID=$!
exec 8>"$TMP/restctl"
for _ in $(seq 100); do [ -s "$TMP/restport" ] && break; sleep 0.1; done
RPORT=$(sed -nE 's/.*"port": *([0-9]+).*/\1/p' "$TMP/restport")
[ -n "$RPORT" ] || finish "the test REST namespace did not start: $(cat "$TMP/rest.log")"
REST=http://127.0.0.1:$RPORT
s3mode() { curl -s -o /dev/null "http://127.0.0.1:$S3PORT/__admin/mode?$1"; }
restconf() { curl -s -o /dev/null -X POST -H 'content-type: application/json' --data "$1" "$REST/__test/config"; }
describes() { curl -s "$REST/__test/stats" | sed -nE 's/.*"POST table\/describe":([0-9]+).*/\1/p'; }
HDR='{"x-api-key":"k-secret-1"}'
s3mode session_token=T1	# from here on the S3 server takes only the vended token

"${PSQL[@]}" >"$TMP/rest-setup.out" 2>&1 <<SQL || { cat "$TMP/rest-setup.out"; finish "REST setup failed"; }
CREATE SERVER rest FOREIGN DATA WRAPPER lt_fdw OPTIONS (namespace_uri '$REST', allow_http 'true',
  endpoint 'http://127.0.0.1:$S3PORT', path_style 'true', region 'us-east-1');
CREATE USER MAPPING FOR CURRENT_USER SERVER rest OPTIONS (namespace_api_key 'k-secret-1');
CREATE SCHEMA rs; CREATE SCHEMA rl;
SQL
got=$(q "IMPORT FOREIGN SCHEMA \"sales\" FROM SERVER rest INTO rs")
check "REST: IMPORT of \"sales\" (ListTables in pages of one, DescribeTable each)" "$(tables_of rs)" "events,orders"
restconf '{"page_size": 1000}'	# the engine reads the first page only
check "... the tables the engine lists through the same service (less ghost, no dataset)" \
	"$(tables_of rs)" "$(engine rest-list "$REST" "$HDR" sales | tr , '\n' | grep -vx ghost | paste -sd,)"
restconf '{"page_size": 1}'
check "... the table with no dataset is skipped with a NOTICE" "$(grep -c 'skips table "ghost"' <<<"$got")" "1"
check "REST: identifier option" "$(q "SELECT array_to_string(ftoptions, ',') FROM pg_foreign_table WHERE ftrelid = 'rs.orders'::regclass")" 'identifier=sales$orders'
check "REST: rows over S3 with the vended session token equal the engine's through the service" \
	"$(rows rs.orders)" "$(engine rest-scan "$REST" "$HDR" 'sales$orders')"
check "... and not empty" "$(rows rs.orders | wc -l)" "6"
plan=$(q "EXPLAIN (COSTS OFF) SELECT * FROM rs.orders")
check "REST: EXPLAIN shows identifier and location" \
	"$(grep -c -e 'Lance Table Identifier: sales\$orders' -e 'Lance Dataset: s3://lake/rest/orders.lance' <<<"$plan")" "2"
check "REST: no secret in EXPLAIN or lt_versions" \
	"$(q "SELECT string_agg(location || coalesce(identifier, ''), ' ') FROM lt_versions('rs.orders')" | grep -c -e T1 -e k-secret -e S3RVER)$(grep -c -e T1 -e k-secret -e S3RVER <<<"$plan")" "00"

# credentials: kept for the transaction, renewed before they expire, refused once expired
d0=$(describes)
q "BEGIN; SELECT count(*) FROM rs.orders; SELECT count(*) FROM rs.events; SELECT count(*) FROM rs.orders; COMMIT" >/dev/null
d1=$(describes)
check "REST: one DescribeTable per table per transaction while the credentials last" "$((d1 - d0))" "2"
restconf '{"credentials": {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_session_token": "T2", "expires_in_ms": 3600000}}'
s3mode session_token=T2
check "REST: a rotated token is fetched by the next transaction" "$(q 'SELECT count(*) FROM rs.orders')" "6"
restconf '{"credentials": {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_session_token": "T3", "expires_in_ms": 3600000}}'
s3mode session_token=T3
rot=$("${PSQL[@]}" -At 2>&1 <<SQL
\set VERBOSITY verbose
BEGIN;
SELECT count(*) FROM rs.orders;
\! curl -s -o /dev/null -X POST -H 'content-type: application/json' --data '{"credentials": {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_session_token": "T4", "expires_in_ms": 3600000}}' $REST/__test/config; curl -s -o /dev/null "http://127.0.0.1:$S3PORT/__admin/mode?session_token=T4"
SELECT count(*) FROM rs.orders;
ROLLBACK;
SQL
)
check "REST: credentials kept for the transaction (a mid-transaction rotation fails the next read: 42501)" \
	"$(grep -c 'ERROR:  42501' <<<"$rot")" "1"
restconf '{"credentials": {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_session_token": "T5", "expires_in_ms": 30000}}'
s3mode session_token=T5
ren=$("${PSQL[@]}" -At 2>&1 <<SQL
BEGIN;
SELECT count(*) FROM rs.orders;
\! curl -s -o /dev/null -X POST -H 'content-type: application/json' --data '{"credentials": {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_session_token": "T6", "expires_in_ms": 30000}}' $REST/__test/config; curl -s -o /dev/null "http://127.0.0.1:$S3PORT/__admin/mode?session_token=T6"
SELECT count(*) FROM rs.orders;
COMMIT;
SQL
)
check "REST: credentials that expire within a minute are renewed before the next use, mid-transaction" "$(tr '\n' ' ' <<<"$ren")" "6 6 "
restconf '{"credentials": {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_session_token": "T6", "expires_in_ms": -1000}}'
d0=$(describes)
check "REST: credentials vended already expired: 28000" "$(sqlstate 'SELECT count(*) FROM rs.orders')" "28000"
check "... after asking twice" "$(( $(describes) - d0 ))" "2"
restconf '{"credentials": {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_session_token": "T6", "expires_in_ms": 3600000}}'

# writes with vended credentials, read back by the engine through the service
"${PSQL[@]}" >"$TMP/rest-write.out" 2>&1 <<'SQL' || { cat "$TMP/rest-write.out"; bad "REST: writes"; }
INSERT INTO rs.orders VALUES (70, 'pg-rest', 7.5);
DELETE FROM rs.orders WHERE id = 1;
SQL
s3mode session_token=	# the engine reads with the storage options the service vends, which carry the token: either way
check "REST: the engine reads what lt_fdw wrote, through the service" "$(engine rest-scan "$REST" "$HDR" 'sales$orders')" "$(rows rs.orders)"
check "... ids" "$(rows rs.orders | cut -d'|' -f1 | tr '\n' ,)" "2,3,4,5,6,70,"
s3mode session_token=T6

# a directory namespace whose root is on S3 (the engine's tables under s3://lake/rest: the V1 listing there)
"${PSQL[@]}" >"$TMP/s3ns.out" 2>&1 <<SQL || { cat "$TMP/s3ns.out"; bad "S3 directory namespace: setup"; }
CREATE SERVER s3ns FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 's3://lake/rest', namespace 'directory',
  endpoint 'http://127.0.0.1:$S3PORT', path_style 'true', allow_http 'true', region 'us-east-1');
CREATE USER MAPPING FOR CURRENT_USER SERVER s3ns
  OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER', aws_session_token 'T6');
CREATE SCHEMA s3r;
IMPORT FOREIGN SCHEMA "." FROM SERVER s3ns INTO s3r;
SQL
check "S3 directory namespace: IMPORT of the root lists its <name>.lance tables" "$(tables_of s3r)" "events,orders"
check "... by identifier, the rows lt_fdw wrote through the REST namespace" "$(rows s3r.orders)" "$(rows rs.orders)"
check "... a child namespace without __manifest: HV00Q" "$(sqlstate 'IMPORT FOREIGN SCHEMA "sales" FROM SERVER s3ns INTO public')" "HV00Q"

# errors of the service
mk rest_missing rest 'sales$nope'
mk rest_nons rest 'nope$t'
check "REST: an unknown table: HV00R" "$(sqlstate 'SELECT * FROM rest_missing')" "HV00R"
check "REST: a table of an unknown namespace: HV00R" "$(sqlstate 'SELECT * FROM rest_nons')" "HV00R"
check "REST: IMPORT of an unknown namespace: HV00Q" "$(sqlstate 'IMPORT FOREIGN SCHEMA "nope" FROM SERVER rest INTO public')" "HV00Q"
q "CREATE ROLE rest_user LOGIN; GRANT USAGE ON SCHEMA rs TO rest_user; GRANT SELECT ON rs.orders TO rest_user" >/dev/null
as_user() { "${PSQL[@]}" -At -U "$1" -c "DO \$do\$ BEGIN PERFORM * FROM rs.orders; RAISE NOTICE 'state ok'; EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'state % %', SQLSTATE, SQLERRM; END \$do\$" 2>&1 | sed -n 's/.*NOTICE:  state //p'; }
check "REST: no user mapping, no API key: 28000 (401)" "$(as_user rest_user | cut -c1-5)" "28000"
q "CREATE USER MAPPING FOR rest_user SERVER rest OPTIONS (namespace_api_key 'wrong-key')" >/dev/null
e=$(as_user rest_user)
check "REST: a wrong API key: 28000, the key not in the message" "$(cut -c1-5 <<<"$e")/$(grep -c wrong-key <<<"$e")" "28000/0"
restconf '{"bearer": "b-token-1"}'
q "ALTER USER MAPPING FOR rest_user SERVER rest OPTIONS (DROP namespace_api_key, ADD namespace_bearer_token 'b-token-1')" >/dev/null
check "REST: a bearer token in the user mapping" "$(as_user rest_user)" "ok"
check "REST: the API key is refused in server options (they are public)" \
	"$(sqlstate "CREATE SERVER e_key FOREIGN DATA WRAPPER lt_fdw OPTIONS (namespace_uri 'https://x', namespace_api_key 'k')")" "HV00D"
check "REST: http:// needs allow_http" "$(sqlstate "CREATE SERVER e_http FOREIGN DATA WRAPPER lt_fdw OPTIONS (namespace_uri 'http://127.0.0.1:1')")" "HV024"
check "REST: namespace_uri with root" "$(sqlstate "CREATE SERVER e_root FOREIGN DATA WRAPPER lt_fdw OPTIONS (namespace_uri 'https://x', root '/x')")" "HV00D"
q "CREATE SERVER rest_down FOREIGN DATA WRAPPER lt_fdw OPTIONS (namespace_uri 'http://127.0.0.1:1', allow_http 'true'); CREATE USER MAPPING FOR CURRENT_USER SERVER rest_down" >/dev/null
mk rest_down_t rest_down 'a$b'
check "REST: a service that cannot be reached: HV00N" "$(sqlstate 'SELECT * FROM rest_down_t')" "HV00N"

# a slow service: a statement timeout cancels the wait (57014), the root namespace is listed too
restconf '{"delay_ms": 20000}'
check "REST: a request answers cancel (statement_timeout): 57014" \
	"$("${PSQL[@]}" -At -c '\set VERBOSITY verbose' -c "SET statement_timeout = '300ms'" -c 'SELECT * FROM rest_missing' 2>&1 | grep -c 'ERROR:  57014')" "1"
restconf '{"delay_ms": 0}'
out=$(q 'CREATE SCHEMA rr; IMPORT FOREIGN SCHEMA "." FROM SERVER rest INTO rr')
check "REST: IMPORT of the root namespace, as the engine lists it" "$(tables_of rr)$out" "$(engine rest-list "$REST" "$HDR" .)"
check "... events" "$(tables_of rr)" "events"

# a namespace that manages versions: commits go through CreateTableVersion
q "IMPORT FOREIGN SCHEMA \"local\" FROM SERVER rest INTO rl" >/dev/null
check "REST: a local table of the namespace (managed versions)" "$(rows rl.top)" "$(engine scan "$MANAGED" '{}' top)"
v0=$(ls "$MANAGED/top.lance/_versions" | grep -c '\.manifest$')
c0=$(curl -s "$REST/__test/stats" | sed -nE 's/.*"POST table\/version\/create":([0-9]+).*/\1/p')
check "REST: a commit through the namespace" "$(q "INSERT INTO rl.top VALUES (90, 'managed', 9.0)" && echo done)" "done"
c1=$(curl -s "$REST/__test/stats" | sed -nE 's/.*"POST table\/version\/create":([0-9]+).*/\1/p')
check "... one CreateTableVersion, one new version, no staged manifest left" \
	"$((${c1:-0} - ${c0:-0}))/$(( $(ls "$MANAGED/top.lance/_versions" | grep -c '\.manifest$') - v0 ))/$(ls -a "$MANAGED/top.lance/_versions" | grep -c staged)" "1/1/0"
check "... read back by the engine" "$(engine scan "$MANAGED" '{}' top | grep -c '^90|managed|9$')" "1"
restconf '{"refuse_commits": true}'
refused=$("${PSQL[@]}" -At -v VERBOSITY=verbose -c '\set VERBOSITY verbose' -c "INSERT INTO rl.top VALUES (91, 'refused', 1.0)" 2>&1)
check "REST: a commit the namespace refuses: 40001 with the service's words" \
	"$(grep -c 'ERROR:  40001: .*answered 409 to CreateTableVersion' <<<"$refused")/$(grep -c 'refused by the namespace' <<<"$refused")" "1/1"
check "... nothing committed, no staged manifest left" \
	"$(( $(ls "$MANAGED/top.lance/_versions" | grep -c '\.manifest$') - v0 ))/$(ls -a "$MANAGED/top.lance/_versions" | grep -c staged)/$(q 'SELECT count(*) FROM rl.top WHERE id = 91')" "1/0/0"

check "REST: lt_create_dataset over a table whose versions the namespace manages: 0A000" \
	"$(sqlstate "SELECT lt_create_dataset('rl.top', overwrite => true)")" "0A000"
restconf '{"refuse_commits": false}'
q "CREATE FOREIGN TABLE rs_ghost (id bigint NOT NULL, name text, amount double precision) SERVER rest OPTIONS (identifier 'sales\$ghost')" >/dev/null
check "REST: a table the service knows without a dataset is created at its location, read by the engine through the service" \
	"$(q "SELECT rows_written FROM lt_create_dataset('rs_ghost', query => 'SELECT 1::bigint, ''g''::text, 2.5::float8')")/$(engine rest-scan "$REST" "$HDR" 'sales$ghost')" "1/1|g|2.5"

# tables created from SQL in a REST namespace: DeclareTable before anything is written, DeregisterTable on ROLLBACK
restconf '{"declare_root": "s3://lake/rest/declared", "page_size": 1000}'
q "CREATE FOREIGN TABLE rs_new (id bigint NOT NULL, name text, amount double precision) SERVER rest OPTIONS (identifier 'sales\$fresh');
   CREATE FOREIGN TABLE rs_rb (id bigint NOT NULL, name text, amount double precision) SERVER rest OPTIONS (identifier 'sales\$rolled')" >/dev/null
check "REST: lt_create_dataset of a new identifier declares it; the engine lists it and reads its rows through the service" \
	"$(q "SELECT rows_written FROM lt_create_dataset('rs_new', query => 'SELECT 5::bigint, ''f''::text, 0.5::float8')")/$(engine rest-list "$REST" "$HDR" sales | tr , '\n' | grep -cx fresh)/$(engine rest-scan "$REST" "$HDR" 'sales$fresh')" \
	"1/1/5|f|0.5"
dr0=$(curl -s "$REST/__test/stats" | sed -nE 's/.*"POST table\/deregister":([0-9]+).*/\1/p')
out=$(q "BEGIN; SELECT rows_written FROM lt_create_dataset('rs_rb', query => 'SELECT 1::bigint, null::text, null::float8'); ROLLBACK")
dr1=$(curl -s "$REST/__test/stats" | sed -nE 's/.*"POST table\/deregister":([0-9]+).*/\1/p')
check "REST: ROLLBACK deregisters what it declared: the engine does not list it" \
	"$out/$(( ${dr1:-0} - ${dr0:-0} ))/$(engine rest-list "$REST" "$HDR" sales | tr , '\n' | grep -cx rolled)" "1/1/0"

echo "namespace: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
