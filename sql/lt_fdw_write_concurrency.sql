--
-- lt_fdw_write_concurrency: two sessions writing one dataset (the second through dblink, with the
-- steps interleaved deterministically): concurrent appends both land (the later commit rebases),
-- deletes of different rows both land, deletes of the same row fail the later commit with 40001;
-- then the reference Lance engine (test/pg/ops/write-*.json, run with \!) as the concurrent writer, also with
-- operations lt_fdw cannot lift (a Merge, a Project), which fail the commit closed.
--
\getenv root LT_ROOT
\set ECHO none
\i :root/test/pg/lake.psql
CREATE EXTENSION dblink;
\set ds :lake '/write/w_v2_2.lance'
\setenv LT_WDS :ds
\set ref :root '/test/interop/ref.mjs'
\setenv LT_REF_MJS :ref
\set ops :root '/test/pg/ops'
\setenv LT_OPS :ops
CREATE SERVER wlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE cc (id bigint, value text, _rowaddr bigint) SERVER wlake OPTIONS (path 'write/w_v2_2.lance');
SELECT dblink_connect('s2', format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
                                   split_part(current_setting('unix_socket_directories'), ',', 1))) AS connected;
SELECT lt_test.versions('write/w_v2_2.lance') AS v0 \gset

-- ---- two appends: both land ---------------------------------------------------------------------------
BEGIN;
INSERT INTO cc VALUES (50001, 'session 1');
SELECT dblink_exec('s2', $$INSERT INTO cc VALUES (50002, 'session 2')$$);
SELECT id, value FROM cc WHERE id > 50000 ORDER BY id;
COMMIT;
SELECT id, value FROM cc WHERE id > 50000 ORDER BY id;
SELECT lt_test.versions('write/w_v2_2.lance') - :v0 AS new_versions;

-- ---- deletes of different rows: both land ---------------------------------------------------------------
BEGIN;
DELETE FROM cc WHERE id = 50001;
SELECT dblink_exec('s2', $$DELETE FROM cc WHERE id = 50002$$);
COMMIT;
SELECT count(*) FROM cc WHERE id > 50000;
SELECT lt_test.versions('write/w_v2_2.lance') - :v0 AS new_versions;

-- ---- deletes of the same row: the later commit is a serialization failure ----------------------------------
INSERT INTO cc VALUES (50003, 'contended');
BEGIN;
DELETE FROM cc WHERE id = 50003;
SELECT dblink_exec('s2', $$UPDATE cc SET value = 'updated by session 2' WHERE id = 50003$$);
\set VERBOSITY sqlstate
COMMIT;
\set VERBOSITY default
SELECT id, value FROM cc WHERE id > 50000 ORDER BY id;
-- the same from the other side, with the message
BEGIN;
UPDATE cc SET value = 'session 1 again' WHERE id = 50003;
SELECT dblink_exec('s2', $$DELETE FROM cc WHERE id = 50003$$);
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
-- the message and its detail, which names the conflicting version (the loser is session 2 this time)
INSERT INTO cc VALUES (50004, 'contended again');
SELECT dblink_exec('s2', 'BEGIN');
SELECT dblink_exec('s2', $$DELETE FROM cc WHERE id = 50004$$);
DELETE FROM cc WHERE id = 50004;
SELECT lt_test.try($$SELECT dblink_exec('s2', 'COMMIT')$$);
SELECT count(*) FROM cc WHERE id > 50000;
SELECT lt_test.versions('write/w_v2_2.lance') - :v0 AS new_versions;
SELECT dblink_disconnect('s2');

-- ---- the reference engine as the concurrent writer (run with \!) ---------------------------------------
SELECT lt_test.versions('write/w_v2_2.lance') AS v0 \gset
BEGIN;
INSERT INTO cc VALUES (50010, 'postgres');
\! node "$LT_REF_MJS" apply "$LT_WDS" "$LT_OPS/write-append.json" >/dev/null
SELECT id, value FROM cc WHERE id BETWEEN 50010 AND 50019 ORDER BY id;
COMMIT;
SELECT id, value FROM cc WHERE id BETWEEN 50010 AND 50019 ORDER BY id;
SELECT lt_test.versions('write/w_v2_2.lance') - :v0 AS new_versions;
-- the engine deletes the row this transaction deletes: 40001
INSERT INTO cc VALUES (50020, 'contended with the engine');
BEGIN;
DELETE FROM cc WHERE id = 50020;
\! node "$LT_REF_MJS" apply "$LT_WDS" "$LT_OPS/write-delete.json" >/dev/null
\set VERBOSITY sqlstate
COMMIT;
\set VERBOSITY default
SELECT count(*) FROM cc WHERE id = 50020;
-- the engine commits what lt_fdw cannot lift (its addColumns is a Merge, its dropColumns a Project) while a
-- session has changes pending: the commit fails closed with 40001 naming the engine's version
SELECT lt_test.versions('write/w_v2_2.lance') AS v0 \gset
SELECT dblink_connect('s3', format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
                                   split_part(current_setting('unix_socket_directories'), ',', 1))) AS connected;
SELECT dblink_exec('s3', 'BEGIN');
SELECT dblink_exec('s3', $$INSERT INTO cc VALUES (50030, 'before the merge')$$);
\! node "$LT_REF_MJS" apply "$LT_WDS" "$LT_OPS/write-add-column.json" >/dev/null
SELECT lt_test.try($$SELECT dblink_exec('s3', 'COMMIT')$$);
-- a generic plan keeps its column binding for the dataset version it bound (scan.c): after the engine's
-- next version (which drops w, below) the plan binds again and reports the field gone, never reads with
-- the old binding
SET plan_cache_mode = force_generic_plan;
CREATE FOREIGN TABLE ccw (id bigint, w bigint) SERVER wlake OPTIONS (path 'write/w_v2_2.lance');
SELECT min(id) AS wid FROM cc \gset
PREPARE pw(bigint) AS SELECT w = 2 * id AS doubled FROM ccw WHERE id = $1;
EXECUTE pw(:wid);
EXECUTE pw(:wid);
EXECUTE pw(-1);
SELECT dblink_exec('s3', 'BEGIN');
SELECT dblink_exec('s3', $$DELETE FROM cc WHERE id = 50010$$);
\! node "$LT_REF_MJS" apply "$LT_WDS" "$LT_OPS/write-drop-column.json" >/dev/null
SELECT lt_test.try($$SELECT dblink_exec('s3', 'COMMIT')$$);
SELECT dblink_disconnect('s3');
\set VERBOSITY sqlstate
EXECUTE pw(:wid);
\set VERBOSITY default
DEALLOCATE pw;
RESET plan_cache_mode;
-- nothing of the session's was committed; only the engine's two versions were added
SELECT count(*) FILTER (WHERE id = 50030) AS inserted, count(*) FILTER (WHERE id = 50010) AS kept FROM cc;
SELECT lt_test.versions('write/w_v2_2.lance') - :v0 AS new_versions;
-- ---- cleanup --------------------------------------------------------------------------------------------
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
DROP EXTENSION dblink;

