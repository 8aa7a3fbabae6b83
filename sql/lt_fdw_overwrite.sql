--
-- lt_fdw_overwrite: INSERT OVERWRITE … WHERE — the rows matching a predicate replaced by new rows in one
-- Lance version, spelled three ways (lt_fdw.overwrite_where + INSERT, lt_insert_overwrite(), and
-- BEGIN; DELETE; INSERT; COMMIT).  Dataset write/w_overwrite.lance: fragment 0 = ids 1..3 (08-01),
-- fragment 1 = ids 4,5 (08-01) + 6,7 (08-02), fragment 2 = ids 8,9 (08-03) + 10 (dt NULL).
-- test/pg/lt-info.mjs prints each version's operation and fragments (id:live/physical, d = deletion file).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
CREATE EXTENSION IF NOT EXISTS dblink;
\getenv tmp LT_TEST_TMP
\getenv root LT_ROOT
\set lake :tmp '/lake'
\set ds :lake '/write/w_overwrite.lance'
\setenv LT_OWDS :ds
\set info :root '/test/pg/lt-info.mjs'
\setenv LT_INFO :info
SELECT set_config('lt_test.lake', :'lake', false) IS NOT NULL AS lake_set;
CREATE FUNCTION ow_versions() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_ls_dir(current_setting('lt_test.lake') || '/write/w_overwrite.lance/_versions') f
   WHERE f LIKE '%.manifest' $$;
-- run a statement; print its SQLSTATE, message and detail with the lake's path masked
CREATE FUNCTION ow_try(q text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE st text; msg text; det text;
BEGIN
  EXECUTE q;
  RAISE NOTICE 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%: %', st, replace(msg, current_setting('lt_test.lake'), '$LAKE');
  IF det <> '' THEN
    RAISE NOTICE 'detail: %', regexp_replace(replace(det, current_setting('lt_test.lake'), '$LAKE'),
                                             'fragment [0-9]+\)', 'fragment N)');
  END IF;
END $f$;
CREATE SERVER owlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE ow (id bigint, dt date, value text, score float8) SERVER owlake
  OPTIONS (path 'write/w_overwrite.lance');
CREATE TABLE ow_staging (id bigint, dt date, value text, score float8);
INSERT INTO ow_staging VALUES (101, '2026-08-01', 'new 1', 1), (102, '2026-08-01', 'new 2', 2),
  (103, '2026-08-03', 'new 3', 3), (104, '2026-08-03', 'new 4', 4), (105, '2026-08-03', 'new 5', 5),
  (106, '2026-08-02', 'outside', 6);
SELECT ow_versions() AS v0 \gset
\! node "$LT_INFO" "$LT_OWDS"

-- ---- 1. the GUC spelling: 08-01 lives in all of fragment 0 and half of fragment 1 -----------------------------
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-01'$$;
EXPLAIN (COSTS OFF) INSERT INTO ow SELECT * FROM ow_staging WHERE id IN (101, 102);
ROLLBACK;
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-01'$$;
INSERT INTO ow SELECT * FROM ow_staging WHERE id IN (101, 102);
-- own writes: the new rows, not the old ones
SELECT id, dt, value FROM ow ORDER BY id;
-- another session still sees all the old rows
SELECT dblink_connect('ow2', format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
                                    split_part(current_setting('unix_socket_directories'), ',', 1))) AS connected;
SELECT * FROM dblink('ow2', 'SELECT id FROM ow ORDER BY id') AS t(id bigint);
COMMIT;
SHOW lt_fdw.overwrite_where;
SELECT id, dt, value FROM ow ORDER BY id;
SELECT * FROM dblink('ow2', 'SELECT id FROM ow ORDER BY id') AS t(id bigint);
-- exactly one version: an Update that removed fragment 0, gave fragment 1 a deletion vector, added one
SELECT ow_versions() - :v0 AS new_versions;
\! node "$LT_INFO" "$LT_OWDS"

-- ---- 2. re-running the same replace is idempotent (it replaces the rows the first run appended) ----------------
SELECT ow_versions() AS v1 \gset
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-01'$$;
INSERT INTO ow SELECT * FROM ow_staging WHERE id IN (101, 102);
COMMIT;
SELECT id, dt, value FROM ow ORDER BY id;
SELECT ow_versions() - :v1 AS new_versions;
\! node "$LT_INFO" "$LT_OWDS"

-- ---- 3. lt_insert_overwrite: 08-03 shares fragment 2 with a NULL dt (which does not match) -------------------
SELECT * FROM lt_insert_overwrite('ow', $$dt = '2026-08-03'$$,
                                  $$SELECT * FROM ow_staging WHERE dt = '2026-08-03'$$);
SELECT id, dt, value FROM ow ORDER BY id;
\! node "$LT_INFO" "$LT_OWDS"
-- again: idempotent
SELECT * FROM lt_insert_overwrite('ow', $$dt = '2026-08-03'$$,
                                  $$SELECT * FROM ow_staging WHERE dt = '2026-08-03'$$);
SELECT count(*), sum(id) FROM ow;
-- a VALUES query (a trailing semicolon is fine), and the default validate spelled out
SELECT * FROM lt_insert_overwrite('ow', 'id = 10', $$VALUES (10::bigint, NULL::date, 'j2', 10.5::float8);$$, true);
SELECT id, dt, value FROM ow WHERE id = 10;

-- COPY FROM replaces too
BEGIN;
SET LOCAL lt_fdw.overwrite_where = 'id = 10';
COPY ow FROM STDIN;
10	\N	j3	10.5
\.
COMMIT;
SELECT id, dt, value FROM ow WHERE id = 10;

-- ---- 4. empty input deletes; a predicate matching nothing appends; nothing at all makes no version --------------
SELECT ow_versions() AS v2 \gset
SELECT * FROM lt_insert_overwrite('ow', $$dt = '2026-08-02'$$, 'SELECT * FROM ow_staging WHERE false');
\! node "$LT_INFO" "$LT_OWDS"
SELECT * FROM lt_insert_overwrite('ow', $$dt = '2026-08-09'$$,
                                  $$SELECT 200, DATE '2026-08-09', 'appended', 0.5$$);
\! node "$LT_INFO" "$LT_OWDS"
SELECT * FROM lt_insert_overwrite('ow', $$dt = '2026-08-31'$$, 'SELECT * FROM ow_staging WHERE false');
SELECT ow_versions() - :v2 AS new_versions;
SELECT id, dt, value FROM ow ORDER BY id;

-- ---- 5. validation: a new row outside the predicate is 44000 and nothing is written ------------------------
SELECT ow_versions() AS v3 \gset
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow', $p$dt = '2026-08-01'$p$, 'SELECT * FROM ow_staging WHERE id IN (101, 106)')$$);
-- a NULL predicate result is no match either
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow', $p$dt = '2026-08-01'$p$, 'SELECT 300::bigint, NULL::date, NULL, NULL')$$);
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-01'$$;
\set VERBOSITY default
INSERT INTO ow VALUES (101, '2026-08-01', 'in', 1), (107, '2026-08-05', 'out', 7);
ROLLBACK;
SELECT ow_versions() - :v3 AS new_versions;
SELECT count(*), sum(id) FROM ow;
-- the opt-out appends them as they are: a re-run then does not replace them (they pile up)
SELECT * FROM lt_insert_overwrite('ow', $$dt = '2026-08-01'$$,
                                  'SELECT * FROM ow_staging WHERE id IN (101, 106)', validate => false);
SELECT * FROM lt_insert_overwrite('ow', $$dt = '2026-08-01'$$,
                                  'SELECT * FROM ow_staging WHERE id IN (101, 106)', validate => false);
SELECT id, count(*) FROM ow WHERE id IN (101, 106) GROUP BY id ORDER BY id;
BEGIN;
SET LOCAL lt_fdw.overwrite_validate = off;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-02'$$;
INSERT INTO ow SELECT * FROM ow_staging WHERE id IN (101, 106);
COMMIT;
SELECT id, count(*) FROM ow WHERE id IN (101, 106) GROUP BY id ORDER BY id;

-- ---- 6. errors: each before anything is written, the dataset unchanged ------------------------------------
SELECT ow_versions() AS v4 \gset
-- set for UPDATE or DELETE (in the transaction of the statement: the setting counts only there)
BEGIN;
SET lt_fdw.overwrite_where = 'id = 1';
SELECT ow_try('UPDATE ow SET value = $$x$$ WHERE id = 6');
SELECT ow_try('DELETE FROM ow WHERE id = 6');
-- the predicate itself
SET lt_fdw.overwrite_where = '   ';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'dt = ';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'nosuch = 1';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'score + 1';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'random() < 0.5';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'id IN (SELECT 1)';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'count(*) > 0';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'true FROM pg_class';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'id = 1; DROP TABLE ow_staging';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'id = 1, id = 2';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
SET lt_fdw.overwrite_where = 'ctid IS NOT NULL';
SELECT ow_try('INSERT INTO ow VALUES (1, NULL, NULL, NULL)');
COMMIT;
-- the error points into the predicate, not into the INSERT
BEGIN;
SET lt_fdw.overwrite_where = 'nosuch = 1';
INSERT INTO ow VALUES (1, NULL, NULL, NULL);
ROLLBACK;
RESET lt_fdw.overwrite_where;
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow', '', 'SELECT * FROM ow_staging')$$);
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow', NULL, 'SELECT * FROM ow_staging')$$);
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow', 'id = 1', 'DELETE FROM ow_staging')$$);
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow', 'id = 1', 'SELECT 1; SELECT 2')$$);
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow_staging', 'id = 1', 'SELECT * FROM ow_staging')$$);
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('no_such_table', 'id = 1', 'SELECT 1')$$);
-- a query whose columns do not fit, a table whose columns the dataset lacks
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow', 'id = 1', 'SELECT $q$x$q$, 1')$$);
CREATE FOREIGN TABLE ow_wide (id bigint, dt date, value text, score float8, extra int) SERVER owlake
  OPTIONS (path 'write/w_overwrite.lance');
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow_wide', 'id = 1', 'SELECT 1, NULL::date, NULL, NULL, 1')$$);
-- a version-pinned table, a legacy 0.1 dataset
CREATE FOREIGN TABLE ow_pinned (id bigint, dt date, value text, score float8) SERVER owlake
  OPTIONS (path 'write/w_overwrite.lance', version '1');
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow_pinned', 'id = 1', 'SELECT 1, NULL::date, NULL, NULL')$$);
CREATE FOREIGN TABLE ow_legacy (id bigint) SERVER owlake OPTIONS (path 'write/w_legacy.lance');
SELECT ow_try($$SELECT * FROM lt_insert_overwrite('ow_legacy', 'id = 1', 'SELECT 1::bigint')$$);
SELECT ow_versions() - :v4 AS new_versions;
SELECT count(*), sum(id) FROM ow;

-- ---- 7. BEGIN; DELETE; INSERT; COMMIT is one version too ----------------------------------------------
SELECT ow_versions() AS v5 \gset
BEGIN;
DELETE FROM ow WHERE id IN (101, 106);
INSERT INTO ow VALUES (110, '2026-08-04', 'from a transaction', 11);
COMMIT;
SELECT ow_versions() - :v5 AS new_versions;
\! node "$LT_INFO" "$LT_OWDS"
-- a replace rolled back to a savepoint leaves nothing; the transaction then commits nothing
BEGIN;
SAVEPOINT s;
SET LOCAL lt_fdw.overwrite_where = 'id = 110';
INSERT INTO ow VALUES (110, '2026-08-04', 'replaced', 11);
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT ow_versions() - :v5 AS new_versions;
SELECT id, value FROM ow WHERE id = 110;
-- two replaces in one transaction: the second replaces the first one's rows too (one version)
BEGIN;
SELECT rows_deleted, rows_inserted FROM lt_insert_overwrite('ow', 'id >= 110', $$SELECT 111, NULL::date, 'first', 1.0$$);
SELECT rows_deleted, rows_inserted FROM lt_insert_overwrite('ow', 'id >= 110', $$SELECT 112, NULL::date, 'second', 2.0$$);
COMMIT;
SELECT id, value FROM ow WHERE id >= 110 ORDER BY id;
SELECT ow_versions() - :v5 AS new_versions;

-- ---- 8. EXPLAIN ANALYZE shows what the replace did -----------------------------------------------------
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = '2026-08-03' OR value LIKE 'new%'$$;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  INSERT INTO ow SELECT * FROM ow_staging WHERE dt = '2026-08-03';
ROLLBACK;

-- ---- 9. concurrent writers (session 2 through dblink) ------------------------------------------------------
SELECT ow_versions() AS v6 \gset
-- an append of non-matching rows lands alongside the replace
BEGIN;
SELECT rows_deleted FROM lt_insert_overwrite('ow', $$dt = '2026-08-03'$$, $$SELECT * FROM ow_staging WHERE dt = '2026-08-03'$$);
SELECT dblink_exec('ow2', $$INSERT INTO ow VALUES (400, '2026-08-07', 'concurrent, outside', 1)$$);
COMMIT;
SELECT ow_versions() - :v6 AS new_versions;
SELECT count(*) FILTER (WHERE id = 400) AS concurrent, count(*) FILTER (WHERE dt = '2026-08-03') AS replaced FROM ow;
-- an append of matching rows makes the replace's commit a serialization failure naming the version
SELECT dblink_exec('ow2', 'BEGIN');
SELECT * FROM dblink('ow2', $$SELECT rows_deleted FROM lt_insert_overwrite('ow', 'dt = ''2026-08-03''', 'SELECT * FROM ow_staging WHERE dt = ''2026-08-03''')$$) AS t(n bigint);
INSERT INTO ow VALUES (401, '2026-08-03', 'concurrent, inside', 1);
SELECT ow_try($$SELECT dblink_exec('ow2', 'COMMIT')$$);
SELECT id, value FROM ow WHERE dt = '2026-08-03' ORDER BY id;
-- a concurrent delete of rows the replace deletes conflicts as in the write path
SELECT dblink_exec('ow2', 'BEGIN');
SELECT * FROM dblink('ow2', $$SELECT rows_deleted FROM lt_insert_overwrite('ow', 'dt = ''2026-08-03''', 'SELECT * FROM ow_staging WHERE dt = ''2026-08-03''')$$) AS t(n bigint);
DELETE FROM ow WHERE id = 401;
SELECT ow_try($$SELECT dblink_exec('ow2', 'COMMIT')$$);
SELECT id, value FROM ow WHERE dt = '2026-08-03' ORDER BY id;
-- a replace rolled back to a savepoint no longer guards its predicate at commit
BEGIN;
SAVEPOINT s;
SELECT rows_deleted FROM lt_insert_overwrite('ow', $$dt = '2026-08-03'$$, $$SELECT * FROM ow_staging WHERE dt = '2026-08-03'$$);
ROLLBACK TO SAVEPOINT s;
INSERT INTO ow VALUES (402, '2026-08-06', 'plain insert', 1);
SELECT dblink_exec('ow2', $$INSERT INTO ow VALUES (403, '2026-08-03', 'concurrent, inside', 1)$$);
COMMIT;
SELECT id, value FROM ow WHERE id IN (402, 403) ORDER BY id;
SELECT dblink_disconnect('ow2');

-- ---- cleanup -----------------------------------------------------------------------------------------
DROP TABLE ow_staging;
DROP FUNCTION ow_versions(), ow_try(text);
DROP EXTENSION dblink;
-- (later suites create the extension themselves)
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
