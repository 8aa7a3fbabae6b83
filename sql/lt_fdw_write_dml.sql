--
-- lt_fdw_write_dml: DELETE and UPDATE, and transactions: one Lance version per Postgres transaction,
-- own writes visible to later statements (scans, COUNT(*) from metadata, pushed aggregates),
-- ROLLBACK, SAVEPOINT / ROLLBACK TO, PREPARE TRANSACTION refused, stable row ids kept by UPDATE.
--
\getenv root LT_ROOT
\set ECHO none
\i :root/test/pg/lake.psql
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE SERVER wlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE ev (id bigint, dt date, value text, score double precision, _rowaddr bigint, _rowid bigint)
  SERVER wlake OPTIONS (path 'write/w_events.lance');
SELECT id, dt, value, score, _rowaddr >> 32 AS fragment FROM ev ORDER BY id;
SELECT lt_test.versions('write/w_events.lance') AS versions_at_start;

-- ---- DELETE -----------------------------------------------------------------------------------------
SELECT lt_test.explain('EXPLAIN (VERBOSE, COSTS OFF) DELETE FROM ev WHERE id = 2');
SELECT lt_test.explain('EXPLAIN (VERBOSE, COSTS OFF) UPDATE ev SET score = 0 WHERE id = 2');
DELETE FROM ev WHERE id = 2;
SELECT id, value FROM ev ORDER BY id;
SELECT lt_test.versions('write/w_events.lance') AS versions;
-- RETURNING gives the deleted rows
DELETE FROM ev WHERE dt = '2026-08-03' RETURNING id, value, score;
-- a local qual (not pushed down) and a join
CREATE TABLE del_ids (id bigint);
INSERT INTO del_ids VALUES (3), (42);
DELETE FROM ev USING del_ids WHERE ev.id = del_ids.id AND ev.value || '' = 'c';
SELECT id, value FROM ev ORDER BY id;
-- nothing matched: no new version
SELECT lt_test.versions('write/w_events.lance') AS before_noop;
DELETE FROM ev WHERE id = 12345;
SELECT lt_test.versions('write/w_events.lance') AS after_noop;

-- ---- UPDATE: the new row versions move to new fragments ----------------------------------------------
INSERT INTO ev (id, dt, value, score) VALUES (6, '2026-08-04', 'f', 6.5), (7, '2026-08-04', 'g', 7.5);
SELECT id, value, _rowaddr >> 32 AS fragment FROM ev ORDER BY id;
UPDATE ev SET score = score * 2, value = upper(value) WHERE id >= 6;
SELECT id, value, score FROM ev ORDER BY id;
UPDATE ev SET value = 'four' WHERE value IS NULL RETURNING id, value, score;
SELECT id, value, score FROM ev ORDER BY id;
-- an UPDATE that changes the id (the whole row is written again)
UPDATE ev SET id = id + 100 WHERE id = 1;
SELECT id, dt, value, score FROM ev ORDER BY id;
SELECT count(*) FROM ev;
SELECT lt_test.versions('write/w_events.lance') AS versions;

-- ---- a transaction is one version; its statements see their own writes -------------------------------
SELECT lt_test.versions('write/w_events.lance') AS v0 \gset
BEGIN;
INSERT INTO ev (id, value) VALUES (200, 'tx1'), (201, 'tx2');
SELECT id, value FROM ev WHERE id >= 200 ORDER BY id;
SELECT count(*) FROM ev;
SELECT lt_test.explain('EXPLAIN (COSTS OFF) SELECT count(*) FROM ev');
SELECT count(*), max(id), min(value) FROM ev;
UPDATE ev SET value = 'tx2 updated' WHERE id = 201;
DELETE FROM ev WHERE id = 200;
SELECT id, value FROM ev WHERE id >= 200 ORDER BY id;
-- another backend does not see them yet (reads the last committed version)
SELECT lt_test.versions('write/w_events.lance') - :v0 AS new_versions_inside;
COMMIT;
SELECT lt_test.versions('write/w_events.lance') - :v0 AS new_versions_after_commit;
SELECT id, value FROM ev WHERE id >= 200 ORDER BY id;

-- ---- ROLLBACK discards everything ------------------------------------------------------------------------
SELECT lt_test.versions('write/w_events.lance') AS v0 \gset
BEGIN;
INSERT INTO ev (id, value) VALUES (300, 'rolled back');
DELETE FROM ev WHERE id = 4;
SELECT count(*) FROM ev WHERE id IN (4, 300);
ROLLBACK;
SELECT count(*) FROM ev WHERE id IN (4, 300);
SELECT lt_test.versions('write/w_events.lance') - :v0 AS new_versions;
-- an error aborts the transaction and its changes
BEGIN;
INSERT INTO ev (id, value) VALUES (301, 'lost');
SELECT 1 / 0;
COMMIT;
SELECT count(*) FROM ev WHERE id = 301;
SELECT lt_test.versions('write/w_events.lance') - :v0 AS new_versions;

-- ---- SAVEPOINT and ROLLBACK TO -------------------------------------------------------------------------
BEGIN;
INSERT INTO ev (id, value) VALUES (400, 'kept');
SAVEPOINT a;
INSERT INTO ev (id, value) VALUES (401, 'after a');
DELETE FROM ev WHERE id = 4;
SELECT id FROM ev WHERE id IN (4, 400, 401) ORDER BY id;
ROLLBACK TO a;
SELECT id FROM ev WHERE id IN (4, 400, 401) ORDER BY id;
INSERT INTO ev (id, value) VALUES (402, 'after rollback to');
SAVEPOINT b;
DELETE FROM ev WHERE id = 400;
SAVEPOINT c;
INSERT INTO ev (id, value) VALUES (403, 'in c');
RELEASE c;
SELECT id FROM ev WHERE id >= 400 ORDER BY id;
ROLLBACK TO b;
SELECT id FROM ev WHERE id >= 400 ORDER BY id;
COMMIT;
SELECT id, value FROM ev WHERE id >= 400 ORDER BY id;
SELECT lt_test.versions('write/w_events.lance') - :v0 AS new_versions;
-- a table first modified inside a rolled back savepoint
BEGIN;
SAVEPOINT s;
INSERT INTO ev (id, value) VALUES (500, 'gone');
ROLLBACK TO s;
SELECT count(*) FROM ev WHERE id = 500;
COMMIT;
SELECT lt_test.versions('write/w_events.lance') - :v0 AS new_versions;
-- a PL/pgSQL exception block is a subtransaction too
DO $$
BEGIN
  INSERT INTO ev (id, value) VALUES (501, 'outer');
  BEGIN
    INSERT INTO ev (id, value) VALUES (502, 'inner');
    PERFORM 1 / 0;
  EXCEPTION WHEN division_by_zero THEN
    RAISE NOTICE 'inner block rolled back';
  END;
END $$;
SELECT id, value FROM ev WHERE id >= 500 ORDER BY id;

-- ---- PREPARE TRANSACTION is refused when a Lance table changed ----------------------------------------
\set VERBOSITY sqlstate
BEGIN;
INSERT INTO ev (id, value) VALUES (600, 'prepared');
PREPARE TRANSACTION 'lt_fdw_p1';
\set VERBOSITY terse
BEGIN;
INSERT INTO ev (id, value) VALUES (600, 'prepared');
PREPARE TRANSACTION 'lt_fdw_p1';
\set VERBOSITY default
SELECT count(*) FROM ev WHERE id = 600;
-- without changes it is fine
BEGIN;
SELECT count(*) FROM ev WHERE id = 600;
PREPARE TRANSACTION 'lt_fdw_p2';
COMMIT PREPARED 'lt_fdw_p2';

-- ---- REPEATABLE READ: the version is pinned; own writes still show -----------------------------------
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM ev;
INSERT INTO ev (id, value) VALUES (700, 'rr');
SELECT count(*) FROM ev;
COMMIT;
SELECT count(*) FROM ev;

-- ---- an open cursor over the table and a later change in the same transaction --------------------------
BEGIN;
DECLARE c CURSOR FOR SELECT id FROM ev ORDER BY id;
FETCH 1 FROM c;
INSERT INTO ev (id, value) VALUES (800, 'cursor');
FETCH 1 FROM c;
CLOSE c;
SELECT count(*) FROM ev WHERE id = 800;
COMMIT;
-- a cursor over the transaction's own writes reads the state at its DECLARE, as a heap cursor reads
-- its snapshot, while later statements of the transaction change the table and read the changes
BEGIN;
INSERT INTO ev (id, value) VALUES (801, 'before the cursor');
DECLARE c CURSOR FOR SELECT id, value FROM ev WHERE id >= 800;
FETCH 1 FROM c;
DELETE FROM ev WHERE id = 801;
INSERT INTO ev (id, value) VALUES (802, 'cursor still open');
UPDATE ev SET value = 'updated' WHERE id = 800;
SELECT id, value FROM ev WHERE id >= 800 ORDER BY id;
DECLARE c2 CURSOR FOR SELECT id, value FROM ev WHERE id >= 800 ORDER BY id;
FETCH ALL FROM c;
DELETE FROM ev WHERE id = 802;
FETCH ALL FROM c2;
CLOSE c;
CLOSE c2;
SELECT id, value FROM ev WHERE id >= 800 ORDER BY id;
-- a savepoint rolled back while a cursor declared before it is open
DECLARE c4 CURSOR FOR SELECT id, value FROM ev WHERE id >= 800;
SAVEPOINT s1;
INSERT INTO ev (id, value) VALUES (803, 'rolled back');
DELETE FROM ev WHERE id = 800;
SELECT id, value FROM ev WHERE id >= 800 ORDER BY id;
ROLLBACK TO SAVEPOINT s1;
SELECT id, value FROM ev WHERE id >= 800 ORDER BY id;
FETCH ALL FROM c4;
CLOSE c4;
ROLLBACK;
SELECT count(*) FROM ev WHERE id IN (801, 802);

-- ---- two foreign tables of one dataset share the transaction ---------------------------------------------
CREATE FOREIGN TABLE ev2 (key bigint OPTIONS (column_name 'id'), label text OPTIONS (column_name 'value'))
  SERVER wlake OPTIONS (path 'write/w_events.lance');
SELECT lt_test.versions('write/w_events.lance') AS v0 \gset
BEGIN;
INSERT INTO ev (id, value) VALUES (900, 'through ev');
INSERT INTO ev2 VALUES (901, 'through ev2');
SELECT key, label FROM ev2 WHERE key >= 900 ORDER BY key;
COMMIT;
SELECT lt_test.versions('write/w_events.lance') - :v0 AS new_versions;
SELECT id, value FROM ev WHERE id >= 900 ORDER BY id;

-- ---- stable row ids: UPDATE keeps the ids of the rows it moves -------------------------------------------
CREATE FOREIGN TABLE st (id bigint, value text, _rowid bigint, _rowaddr bigint) SERVER wlake OPTIONS (path 'write/w_stable.lance');
SELECT id, value, _rowid FROM st ORDER BY id;
CREATE TEMP TABLE st_before AS SELECT id, _rowid, _rowaddr FROM st;
UPDATE st SET value = value || '!' WHERE id = 2;
SELECT s.id, s.value, s._rowid = b._rowid AS same_rowid, s._rowaddr = b._rowaddr AS same_address
  FROM st s JOIN st_before b USING (id) ORDER BY id;
INSERT INTO st VALUES (4, 'four');
SELECT id, value, _rowid FROM st ORDER BY id;
-- RETURNING of an INSERT: _rowid and _rowaddr are NULL, the row gets both at commit (a concurrent
-- commit may take the next ids first); later statements of the transaction read provisional ones
BEGIN;
INSERT INTO st VALUES (5, 'five') RETURNING id, value, _rowid IS NULL AS rowid_null, _rowaddr IS NULL AS rowaddr_null;
SELECT id, _rowid IS NULL AS rowid_null FROM st WHERE id = 5;
COMMIT;
SELECT id, _rowid = (SELECT max(_rowid) FROM st) AS newest_rowid FROM st WHERE id = 5;

-- a pushed-down qual on an initplan's output: its value is read at the first row, not at executor
-- start (when the initplan has not run yet)
SELECT id, value FROM ev WHERE id = (SELECT max(id) FROM ev);
SELECT id FROM ev WHERE id = (SELECT 5) OR id = (SELECT min(id) FROM ev) ORDER BY id;

-- the final state
SELECT id, dt, value, score FROM ev ORDER BY id;

-- ---- cleanup --------------------------------------------------------------------------------------------
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
DROP TABLE del_ids;
