--
-- lt_fdw_security: PostgreSQL's privilege rules on every path that reaches a dataset, settings that
-- decide what a replace deletes only from the writing session's own transaction, read-only row
-- ids, IMPORT of untrusted names, and the rough edges of error messages and comments.
-- Dataset write/w_security.lance: ids 1..3 (08-01) in fragment 0, 4..6 (08-02) in fragment 1.
--
\getenv root LT_ROOT
\set ECHO none
\i :root/test/pg/lake.psql
SELECT current_user AS su, current_database() AS db \gset
CREATE SERVER seclake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE sec (id bigint, dt date, value text, zz_note text) SERVER seclake
  OPTIONS (path 'write/w_security.lance');
-- the roles may use the location (pg_*_server_files): what stops them is the table's privileges
CREATE ROLE regress_lt_ins;      -- INSERT only
CREATE ROLE regress_lt_insdel;   -- INSERT and DELETE, no SELECT
CREATE ROLE regress_lt_coldt;    -- INSERT, DELETE and SELECT (dt) only
CREATE ROLE regress_lt_reader;   -- SELECT only (not the owner)
CREATE ROLE regress_lt_none;     -- nothing on the table
CREATE ROLE regress_lt_mallory LOGIN;
GRANT pg_read_server_files, pg_write_server_files TO regress_lt_ins, regress_lt_insdel, regress_lt_coldt,
  regress_lt_reader, regress_lt_none, regress_lt_mallory;
GRANT INSERT ON sec TO regress_lt_ins, regress_lt_insdel, regress_lt_coldt;
GRANT DELETE ON sec TO regress_lt_insdel, regress_lt_coldt;
GRANT SELECT (dt) ON sec TO regress_lt_coldt;
GRANT SELECT ON sec TO regress_lt_reader;
GRANT SELECT, INSERT, DELETE ON sec TO regress_lt_mallory;   -- all a replace needs: only the setting stops it
GRANT INSERT, UPDATE ON sec TO regress_lt_none;   -- but no SELECT (lt_merge_insert below)
SELECT lt_test.versions('write/w_security.lance') AS v0 \gset

-- ---- 1. a replace needs INSERT, DELETE and SELECT on the predicate's columns ---------------------------
SET ROLE regress_lt_ins;
BEGIN;
SET LOCAL lt_fdw.overwrite_validate = off;
SET LOCAL lt_fdw.overwrite_where = 'true';
SELECT lt_test.try($$INSERT INTO sec VALUES (100, NULL, 'x', NULL)$$);
SELECT lt_test.try($$EXPLAIN (COSTS OFF) INSERT INTO sec VALUES (100, NULL, 'x', NULL)$$);
COMMIT;
SELECT lt_test.try($$SELECT * FROM lt_insert_overwrite('sec', 'true', 'SELECT 100::bigint, NULL::date, NULL, NULL', false)$$);
-- the DELETE + INSERT spelling: PostgreSQL's own DELETE check
SELECT lt_test.try($$DELETE FROM sec$$);
SET ROLE regress_lt_insdel;
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-01'$$;
SELECT lt_test.try($$INSERT INTO sec VALUES (100, DATE '2026-08-01', 'x', NULL)$$);
SELECT lt_test.try($$EXPLAIN (COSTS OFF) INSERT INTO sec VALUES (100, DATE '2026-08-01', 'x', NULL)$$);
COMMIT;
SELECT lt_test.try($$SELECT * FROM lt_insert_overwrite('sec', $p$dt = DATE '2026-08-01'$p$, $q$SELECT 100::bigint, DATE '2026-08-01', NULL, NULL$q$)$$);
SELECT lt_test.try($$DELETE FROM sec WHERE dt = DATE '2026-08-01'$$);
-- a predicate that reads no column is a DELETE without WHERE: allowed, but nothing about the rows is shown
BEGIN;
SET LOCAL lt_fdw.overwrite_validate = off;
SET LOCAL lt_fdw.overwrite_where = 'true';
EXPLAIN (COSTS OFF) INSERT INTO sec VALUES (100, NULL, 'x', NULL);
ROLLBACK;
BEGIN;
SELECT * FROM lt_insert_overwrite('sec', 'true', 'SELECT 100::bigint, NULL::date, NULL, NULL', false);
ROLLBACK;
-- SELECT on the predicate's column: the replace runs and shows its counts
SET ROLE regress_lt_coldt;
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-01'$$;
EXPLAIN (COSTS OFF) INSERT INTO sec VALUES (100, DATE '2026-08-01', 'x', NULL);
ROLLBACK;
BEGIN;
SELECT * FROM lt_insert_overwrite('sec', $$dt = DATE '2026-08-01'$$, $$SELECT 100::bigint, DATE '2026-08-01', NULL, NULL$$);
ROLLBACK;
SELECT lt_test.try($$SELECT * FROM lt_insert_overwrite('sec', 'value = ''a''', 'SELECT 100::bigint, NULL::date, ''a'', NULL')$$);
RESET ROLE;
SELECT lt_test.versions('write/w_security.lance') - :v0 AS new_versions, count(*) AS rows FROM sec;

-- ---- 2. settings planted by someone else decide nothing -----------------------------------------------
-- a misspelled setting of the reserved prefix is an error
SELECT lt_test.try($$SET lt_fdw.overwrite_wher = 'true'$$);
-- a session SET of an earlier transaction does not make a later INSERT a replace
SET lt_fdw.overwrite_where = 'true';
SELECT lt_test.try($$INSERT INTO sec VALUES (100, NULL, 'x', NULL)$$);
RESET lt_fdw.overwrite_where;
-- a database owner's ALTER DATABASE ... SET, then a superuser's plain INSERT: refused, nothing deleted
ALTER DATABASE :"db" SET lt_fdw.overwrite_where = 'true';
ALTER DATABASE :"db" SET lt_fdw.overwrite_validate = off;
\c - :su
SET lt_test.lake = :'lake';
SHOW lt_fdw.overwrite_where;
SELECT lt_test.try($$INSERT INTO sec VALUES (100, NULL, 'x', NULL)$$);
SELECT lt_test.try($$EXPLAIN (COSTS OFF) INSERT INTO sec VALUES (100, NULL, 'x', NULL)$$);
-- ... and a planted overwrite_validate = off is ignored: this replace still validates its rows
BEGIN;
SET LOCAL lt_fdw.overwrite_where = 'id = 100';
SELECT lt_test.try($$INSERT INTO sec VALUES (101, NULL, 'x', NULL)$$);
COMMIT;
ALTER DATABASE :"db" RESET lt_fdw.overwrite_where;
ALTER DATABASE :"db" RESET lt_fdw.overwrite_validate;
-- the same from ALTER ROLE ... SET
ALTER ROLE regress_lt_mallory SET lt_fdw.overwrite_where = 'true';
\c - regress_lt_mallory
SET lt_test.lake = :'lake';
SELECT lt_test.try($$INSERT INTO sec VALUES (100, NULL, 'x', NULL)$$);
\c - :su
SET lt_test.lake = :'lake';
ALTER ROLE regress_lt_mallory RESET lt_fdw.overwrite_where;
-- a SECURITY DEFINER function of another role sets it in the caller's transaction: refused
CREATE FUNCTION lt_sec_plant() RETURNS void LANGUAGE sql SECURITY DEFINER
  AS $$ SELECT set_config('lt_fdw.overwrite_where', 'true', true) $$;
ALTER FUNCTION lt_sec_plant() OWNER TO regress_lt_mallory;
BEGIN;
SELECT lt_sec_plant();
SELECT lt_test.try($$INSERT INTO sec VALUES (100, NULL, 'x', NULL)$$);
COMMIT;
-- set while another role was current: refused
BEGIN;
SET LOCAL ROLE regress_lt_coldt;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-01'$$;
RESET ROLE;
SELECT lt_test.try($$INSERT INTO sec VALUES (100, DATE '2026-08-01', 'x', NULL)$$);
COMMIT;
SELECT lt_test.versions('write/w_security.lance') - :v0 AS new_versions, count(*) AS rows FROM sec;
-- the predicate's functions run as the role that wrote it, also in the commit's check of concurrent appends
-- (made by whoever commits): a replace by regress_lt_mallory, committed after RESET ROLE
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE FUNCTION lt_sec_who(bigint) RETURNS boolean LANGUAGE plpgsql STABLE
  AS $$ BEGIN RAISE NOTICE 'the predicate runs as %', current_user; RETURN $1 = 300; END $$;
SELECT dblink_connect('sec2', format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
                                     split_part(current_setting('unix_socket_directories'), ',', 1))) AS connected;
BEGIN;
SET LOCAL ROLE regress_lt_mallory;
SET LOCAL lt_fdw.overwrite_where = 'lt_sec_who(id)';
INSERT INTO sec VALUES (300, NULL, 'replaced', NULL);
RESET ROLE;
SELECT dblink_exec('sec2', $$INSERT INTO sec VALUES (301, NULL, 'appended meanwhile', NULL)$$);
\echo the commit checks the appended row:
COMMIT;
SELECT id, value FROM sec WHERE id >= 300 ORDER BY id;
SELECT dblink_disconnect('sec2');
SELECT lt_test.versions('write/w_security.lance') AS v0 \gset

-- ---- 3. the functions check table privileges as PostgreSQL's own do ---------------------------------
ANALYZE sec;
SET ROLE regress_lt_none;
SELECT lt_test.try($$SELECT count(*) FROM lt_versions('sec')$$);
SELECT lt_test.try($$SELECT count(*) FROM lt_fragments('sec')$$);
SELECT lt_test.try($$SELECT count(*) FROM lt_indexes('sec')$$);
SELECT lt_test.try($$SELECT lt_primary_key('sec')$$);
SELECT lt_test.try($$SELECT * FROM lt_last_analyze()$$);
-- lt_merge_insert reads the key column of the target: SELECT on it, as MERGE
SELECT lt_test.try($$SELECT * FROM lt_merge_insert('sec', 'SELECT 1::bigint AS id, NULL::date AS dt, NULL AS value, NULL AS zz_note', '{id}')$$);
SET ROLE regress_lt_reader;
SELECT count(*) AS versions FROM lt_versions('sec');
SELECT count(*) AS fragments FROM lt_fragments('sec');
SELECT count(*) AS indexes FROM lt_indexes('sec');
SELECT lt_primary_key('sec');
SELECT relation, live_rows FROM lt_last_analyze();
-- maintenance needs the owner
SELECT lt_test.try($$SELECT * FROM lt_cleanup('sec', '1 day', dry_run => true)$$);
SELECT lt_test.try($$SELECT * FROM lt_cleanup_files('sec', '1 day', dry_run => true)$$);
SELECT lt_test.try($$SELECT * FROM lt_create_index('sec', 'id', 'btree')$$);
SELECT lt_test.try($$SELECT lt_set_primary_key('sec', '{id}')$$);
RESET ROLE;
SELECT old_versions, files_removed FROM lt_cleanup('sec', '1 day', dry_run => true);

-- ---- 5. _rowid and _rowaddr are read-only -----------------------------------------------------------------
CREATE FOREIGN TABLE secr (id bigint, dt date, value text, zz_note text, _rowid bigint, _rowaddr bigint)
  SERVER seclake OPTIONS (path 'write/w_security.lance');
SELECT lt_test.try($$INSERT INTO secr (id, _rowid) VALUES (200, 5) RETURNING id, _rowid$$);
SELECT lt_test.try($$INSERT INTO secr (id, _rowaddr) VALUES (200, 5)$$);
SELECT lt_test.try($$INSERT INTO secr SELECT * FROM secr WHERE id = 1$$);
SELECT lt_test.try($$UPDATE secr SET _rowid = 7 WHERE id = 1$$);
SELECT lt_test.try($$UPDATE secr SET _rowaddr = _rowaddr WHERE id = 1$$);
BEGIN;
SAVEPOINT s;
COPY secr (id, _rowid) FROM STDIN;
200	9
\.
ROLLBACK TO s;
-- a NULL is no value: such rows insert (and get their ids at commit)
INSERT INTO secr (id, value, _rowid, _rowaddr) VALUES (200, 'new', NULL, NULL) RETURNING id, _rowid;
ROLLBACK;
SELECT lt_test.versions('write/w_security.lance') - :v0 AS new_versions, count(*) AS rows FROM sec;

-- ---- 11. TRUNCATE with lt_fdw.overwrite_where set is refused, as UPDATE and DELETE ------------------------
BEGIN;
SET LOCAL lt_fdw.overwrite_where = 'true';
SELECT lt_test.try($$TRUNCATE sec$$);
COMMIT;
SELECT count(*) AS rows FROM sec;

-- ---- 16. messages: index kinds in any case, a bad predicate of lt_insert_overwrite shown as its argument ----
BEGIN;
SELECT index_name, index_kind FROM lt_create_index('sec', 'id', 'BTree');
ROLLBACK;
SELECT * FROM lt_insert_overwrite('sec', 'nosuch = 1', 'SELECT 1::bigint, NULL::date, NULL, NULL');
SELECT * FROM lt_insert_overwrite('sec', 'id + 1', 'SELECT 1::bigint, NULL::date, NULL, NULL');
-- a library message: the field named once, the data file's path in the detail, not in the message
CREATE FOREIGN TABLE sec20 (id bigint, st jsonb) SERVER seclake OPTIONS (path 'write/w_security20.lance');
DO $$
DECLARE d text;
BEGIN
  INSERT INTO sec20 VALUES (2, NULL);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%: %', SQLSTATE, SQLERRM;
  RAISE NOTICE 'detail: %', regexp_replace(d, 'data/[^ ]+[.]lance', 'data/<file>.lance');
END $$;

-- ---- 17. every function and the wrapper explain themselves (\df+, \dew+) ---------------------------------
SELECT p.proname, obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'lt_fdw'
 ORDER BY p.proname;
SELECT fdwname, obj_description(oid, 'pg_foreign_data_wrapper') IS NOT NULL AS has_comment
  FROM pg_foreign_data_wrapper WHERE fdwname = 'lt_fdw';

-- ---- 4. IMPORT FOREIGN SCHEMA never puts an invalid name into the catalog; it says what it skipped --------
\setenv LT_SEC_IMP :tmp/secimp
\setenv LT_SEC_DS :lake/write/w_security.lance
\! mkdir -p "$LT_SEC_IMP" && cp -R "$LT_SEC_DS" "$LT_SEC_IMP/good.lance" && cp -R "$LT_SEC_DS" "$LT_SEC_IMP/caf$(printf '\351').lance"
\! cp -R "$LT_SEC_DS" "$LT_SEC_IMP/badfield.lance" && for f in $(grep -rl zz_note "$LT_SEC_IMP/badfield.lance"); do perl -0777 -pi -e 's/zz_note/zz_not\xff/g' "$f"; done
\! mkdir -p "$LT_SEC_IMP/empty.lance" "$LT_SEC_IMP/plain_dir" && chmod -R a+rX "$LT_SEC_IMP"
\set secimp :tmp '/secimp'
CREATE SERVER secimp FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'secimp');
CREATE SCHEMA sec_imp;
IMPORT FOREIGN SCHEMA "." FROM SERVER secimp INTO sec_imp;
SELECT relname FROM pg_class WHERE relnamespace = 'sec_imp'::regnamespace ORDER BY relname;
SELECT count(*) AS rows FROM sec_imp.good;
CREATE SCHEMA sec_imp2;
IMPORT FOREIGN SCHEMA "." LIMIT TO (good, nosuch, empty) FROM SERVER secimp INTO sec_imp2;
SELECT relname FROM pg_class WHERE relnamespace = 'sec_imp2'::regnamespace ORDER BY relname;

-- ---- the end ----------------------------------------------------------------------------------------------
DROP SCHEMA sec_imp, sec_imp2 CASCADE;
DROP FUNCTION lt_sec_plant(), lt_sec_who(bigint);
DROP EXTENSION dblink;
DROP SERVER secimp CASCADE;
DROP SERVER seclake CASCADE;
DROP OWNED BY regress_lt_ins, regress_lt_insdel, regress_lt_coldt, regress_lt_reader, regress_lt_none,
  regress_lt_mallory;
DROP ROLE regress_lt_ins, regress_lt_insdel, regress_lt_coldt, regress_lt_reader, regress_lt_none,
  regress_lt_mallory;
-- the suites after this one create the extension themselves
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
