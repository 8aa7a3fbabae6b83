--
-- lt_fdw_merge: lt_merge_insert() (Lance's merge-insert: every when_matched / when_not_matched /
-- delete_not_matched_by_source variant, NULL keys, duplicate source keys, composite keys, the
-- argument checks, transactions and savepoints, index use, stable row ids, privileges) and TRUNCATE
-- (in transactions, with INSERT, of several tables, indexes kept, pinned tables refused).
--
\getenv root LT_ROOT
\set ECHO none
\i :root/test/pg/lake.psql
-- a merge-insert matched both ways (lt_fdw's own hash join for one integer key, and a PostgreSQL join), each
-- rolled back: its counts and a digest of the table's columns cols afterwards, or its SQLSTATE
CREATE FUNCTION m_both(tbl text, cols text, q text, on_cols text[], wm text DEFAULT 'update_all',
                       wnm text DEFAULT 'insert_all', del boolean DEFAULT false) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE res text[] := '{}'; r text; st text; mode text;
BEGIN
  FOREACH mode IN ARRAY ARRAY['on', 'off'] LOOP
    BEGIN
      PERFORM set_config('lt_fdw.merge_insert_fast_path', mode, true);
      EXECUTE format('SELECT row(m.*)::text FROM lt_merge_insert(%L, %L, %L, %L, %L, %L) m', tbl, q, on_cols, wm, wnm, del)
        INTO r;
      EXECUTE format('SELECT %L || '' '' || count(*) || '' '' || coalesce(md5(string_agg(x::text, '','' ORDER BY x::text)), ''-'') FROM (SELECT %s FROM %s) x',
                     r, cols, tbl) INTO r;
      RAISE EXCEPTION 'undo';
    EXCEPTION
      WHEN raise_exception THEN res := res || r;
      WHEN OTHERS THEN GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE; res := res || ('error ' || st);
    END;
  END LOOP;
  RETURN CASE WHEN res[1] = res[2] THEN 'same: ' || res[1] ELSE 'DIFFERENT: ' || res[1] || ' / ' || res[2] END;
END $f$;
CREATE SERVER mlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE mt (id bigint, k2 integer, v text, _rowid bigint) SERVER mlake OPTIONS (path 'write/w_merge.lance');
-- the source of most cases: a match (1), a NULL key, a new key (5), a match whose other key column is NULL (4)
CREATE VIEW msrc AS SELECT * FROM (VALUES (1::bigint, 1, 'A'), (NULL, 3, 'snull'), (5, 5, 'E'), (4, NULL, 'D')) s(id, k2, v);
SELECT id, k2, v FROM mt ORDER BY id, v;
SELECT lt_test.versions('write/w_merge.lance') AS versions_at_start;

-- ---- the variants (each in a transaction that rolls back: the table stays as it was) ----------------------
-- upsert (the defaults: update_all, insert_all): NULL never matches NULL, so the NULL-key source row is new
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}');
SELECT id, k2, v FROM mt ORDER BY id, v;
ROLLBACK;
-- find-or-create: matched rows stay as they are
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', when_matched => 'do_nothing');
SELECT id, k2, v FROM mt ORDER BY id, v;
ROLLBACK;
-- update only
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', when_not_matched => 'do_nothing');
SELECT id, k2, v FROM mt ORDER BY id, v;
ROLLBACK;
-- upsert and delete the rows the source does not have (the NULL-key target row is never matched: deleted)
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', delete_not_matched_by_source => true);
SELECT id, k2, v FROM mt ORDER BY id, v;
ROLLBACK;
-- only delete what the source does not have
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', 'do_nothing', 'do_nothing', true);
SELECT id, k2, v FROM mt ORDER BY id, v;
ROLLBACK;
-- a composite key: (4, NULL) matches nothing, so both rows with id 4 stay
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc', '{id,k2}');
SELECT id, k2, v FROM mt ORDER BY id, v;
ROLLBACK;
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc', '{k2,id}', delete_not_matched_by_source => true);
SELECT id, k2, v FROM mt ORDER BY id, v;
ROLLBACK;
-- when_matched fail: an error as soon as a source row matches (nothing is kept) ...
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', 'fail')$$);
-- ... and a plain insert of new keys when none does
BEGIN;
SELECT * FROM lt_merge_insert('mt', $$SELECT 9::bigint AS id, 9 AS k2, 'nine' AS v$$, '{id}', 'fail');
SELECT id, k2, v FROM mt WHERE id = 9;
ROLLBACK;
-- an empty source: nothing changes, no version ...
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc WHERE false', '{id}');
-- ... unless it deletes every row the source does not have
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc WHERE false', '{id}', delete_not_matched_by_source => true);
SELECT count(*) FROM mt;
ROLLBACK;
SELECT lt_test.versions('write/w_merge.lance') AS versions_unchanged;

-- on_columns NULL: the dataset's primary key, (region, id) here
CREATE FOREIGN TABLE mpk (id bigint, region text, value text) SERVER mlake OPTIONS (path 'write/w_merge_pk.lance');
BEGIN;
SELECT * FROM lt_merge_insert('mpk', $$SELECT * FROM (VALUES (1::bigint, 'us', 'B'), (2, 'us', 'new')) s(id, region, value)$$);
SELECT * FROM mpk ORDER BY region, id;
ROLLBACK;
-- the primary key holds for a merge-insert's rows as for INSERT and UPDATE (keyed tables): two new rows with
-- one key, or a match on another column that moves a row onto an existing key, are 23505
SELECT lt_test.try($$SELECT lt_merge_insert('mpk', $q$SELECT * FROM (VALUES (7::bigint, 'eu', 'x'), (7, 'eu', 'y')) s(id, region, value)$q$)$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mpk', $q$SELECT 2::bigint AS id, 'eu' AS region, 'b' AS value$q$, '{value}')$$);
CREATE FOREIGN TABLE mpk_noregion (id bigint, value text) SERVER mlake OPTIONS (path 'write/w_merge_pk.lance');
SELECT lt_test.try($$SELECT lt_merge_insert('mpk_noregion', 'SELECT 1::bigint AS id, ''x'' AS value')$$);

-- ---- both ways of matching give the same rows -----------------------------------------------------------
SELECT m_both('mt', 'id, k2, v', 'SELECT * FROM msrc', '{id}');
SELECT m_both('mt', 'id, k2, v', 'SELECT * FROM msrc', '{id}', 'do_nothing');
SELECT m_both('mt', 'id, k2, v', 'SELECT * FROM msrc', '{id}', 'update_all', 'do_nothing');
SELECT m_both('mt', 'id, k2, v', 'SELECT * FROM msrc', '{id}', 'update_all', 'insert_all', true);
SELECT m_both('mt', 'id, k2, v', 'SELECT * FROM msrc', '{id}', 'do_nothing', 'do_nothing', true);
SELECT m_both('mt', 'id, k2, v', 'SELECT * FROM msrc', '{id}', 'fail');
SELECT m_both('mt', 'id, k2, v', 'SELECT * FROM msrc WHERE false', '{id}', 'update_all', 'insert_all', true);
SELECT m_both('mt', 'id, k2, v', $$SELECT * FROM (VALUES (1::bigint, 1, 'A1'), (1, 1, 'A2')) s(id, k2, v)$$, '{id}');
SELECT m_both('mt', 'id, k2, v', $$SELECT * FROM (VALUES (1::bigint, 1, 'A1'), (1, 1, 'A2'), (7, 7, 'x'), (7, 7, 'y')) s(id, k2, v)$$, '{id}', 'do_nothing');
SELECT m_both('mt', 'id, k2, v', 'SELECT k2::bigint AS id, id::int AS k2, v FROM msrc', '{k2}');

-- ---- duplicate source keys ----------------------------------------------------------------------------
-- two source rows matching one target row: cardinality violation, as Lance's ambiguous merge
SELECT lt_test.try($$SELECT lt_merge_insert('mt', $q$SELECT * FROM (VALUES (1::bigint, 1, 'A1'), (1, 1, 'A2')) s(id, k2, v)$q$, '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', $q$SELECT * FROM (VALUES (2::bigint, 2, 'x'), (7, 7, 'y'), (2, 22, 'z')) s(id, k2, v)$q$, '{id}', delete_not_matched_by_source => true)$$);
-- ... fine when matched rows are left alone; duplicates without a match are all inserted (as Lance does)
BEGIN;
SELECT * FROM lt_merge_insert('mt', $$SELECT * FROM (VALUES (1::bigint, 1, 'A1'), (1, 1, 'A2'), (7, 7, 'x'), (7, 7, 'y')) s(id, k2, v)$$, '{id}', 'do_nothing');
SELECT id, k2, v FROM mt ORDER BY id, v;
ROLLBACK;
SELECT lt_test.versions('write/w_merge.lance') AS versions_unchanged;

-- ---- source columns: by name, in any order, converted to the table's types -----------------------------
BEGIN;
SELECT * FROM lt_merge_insert('mt', $$SELECT 'ten' AS v, '10' AS id, 10.0 AS k2$$, '{id}');
SELECT * FROM lt_merge_insert('mt', $$SELECT 'ten!' AS v, 10 AS id, 11 AS k2 UNION ALL SELECT 'eleven', 11, 11;$$, '{id}');
SELECT id, k2, v FROM mt WHERE id >= 10 ORDER BY id;
ROLLBACK;
-- a column _rowid of the source is ignored, as INSERT ignores it
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT id + 100 AS id, k2, v, _rowid FROM mt WHERE id = 1', '{id}');
SELECT id, k2, v FROM mt WHERE id > 100;
ROLLBACK;

-- ---- a partial source: matched rows keep the columns it does not give, new rows have them NULL ------------------
BEGIN;
SELECT id, k2, v FROM mt WHERE id IN (1, 2) ORDER BY id;
SELECT * FROM lt_merge_insert('mt', $$SELECT * FROM (VALUES (1::bigint, 'partial'), (9001, 'new')) s(id, v)$$, '{id}');
SELECT id, k2, v FROM mt WHERE id IN (1, 2, 9001) ORDER BY id;
-- matched on _rowid (the rows a scan read): only matched rows change, and only the columns given
SELECT * FROM lt_merge_insert('mt', $$SELECT _rowid, 'by row id' AS v FROM mt WHERE id = 2$$, '{_rowid}', when_not_matched => 'do_nothing');
SELECT id, k2, v FROM mt WHERE id IN (1, 2) ORDER BY id;
SELECT count(*) AS rows FROM mt;
-- a row id that names no row (any more): a NOTICE counts them, nothing is written
SELECT * FROM lt_merge_insert('mt', $$SELECT -1::bigint AS _rowid, 'gone' AS v$$, '{_rowid}', when_not_matched => 'do_nothing');
-- a match on _rowid cannot insert
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT _rowid, v FROM mt', '{_rowid}')$$);
ROLLBACK;
SELECT lt_test.versions('write/w_merge.lance') AS versions_unchanged;

-- ---- argument checks (nothing is written) ------------------------------------------------------------
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', 'upsert')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', when_not_matched => 'insert')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', 'do_nothing', 'do_nothing')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{nope}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{id,id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{_rowid}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', ARRAY['id', NULL])$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT k2, v FROM msrc', '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT _rowid FROM mt', '{_rowid}', when_not_matched => 'do_nothing')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT *, 1 AS extra FROM msrc', '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT id, k2, v, v FROM msrc', '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'VALUES (1, 1, ''a'')', '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'DELETE FROM mt', '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT 1; SELECT 2', '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT true AS id, 1 AS k2, ''a'' AS v', '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', NULL, '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', NULL)$$);
SELECT lt_test.try($$SELECT lt_merge_insert('msrc', 'SELECT * FROM msrc', '{id}')$$);
-- a replace setting does not apply to a merge-insert: refused
BEGIN;
SET LOCAL lt_fdw.overwrite_where = 'id = 1';
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}')$$);
ROLLBACK;
-- a pinned table is read-only
CREATE FOREIGN TABLE mt_v1 (id bigint, k2 integer, v text) SERVER mlake OPTIONS (path 'write/w_merge.lance', version '1');
SELECT lt_test.try($$SELECT lt_merge_insert('mt_v1', 'SELECT * FROM msrc', '{id}')$$);
SELECT lt_test.versions('write/w_merge.lance') AS versions_unchanged;

-- ---- transactions ---------------------------------------------------------------------------------------
-- a merge-insert, then an INSERT and a second merge in the same transaction: each sees what came before,
-- and everything is one Lance version (an Update)
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}');
INSERT INTO mt (id, k2, v) VALUES (6, 6, 'six');
SELECT * FROM lt_merge_insert('mt', $$SELECT * FROM (VALUES (6::bigint, 66, 'SIX'), (5, 55, 'EE')) s(id, k2, v)$$, '{id}');
SELECT id, k2, v FROM mt ORDER BY id, v;
SELECT count(*) FROM mt;
COMMIT;
SELECT lt_test.versions('write/w_merge.lance') AS versions_after_commit;
SELECT version, operation, row_count FROM lt_versions('mt') ORDER BY version DESC LIMIT 1;
SELECT id, k2, v FROM mt ORDER BY id, v;
-- ROLLBACK TO a savepoint drops the merge made after it, keeps the one before
BEGIN;
SELECT * FROM lt_merge_insert('mt', $$SELECT 7::bigint AS id, 7 AS k2, 'seven' AS v$$, '{id}');
SAVEPOINT s1;
SELECT * FROM lt_merge_insert('mt', $$SELECT 1::bigint AS id, 1 AS k2, 'gone' AS v$$, '{id}', delete_not_matched_by_source => true);
SELECT id, k2, v FROM mt ORDER BY id, v;
ROLLBACK TO s1;
SELECT id, k2, v FROM mt ORDER BY id, v;
COMMIT;
SELECT lt_test.versions('write/w_merge.lance') AS versions_after_savepoint;
-- an error inside the merge (a duplicate) rolls back to the savepoint, the transaction goes on
BEGIN;
SAVEPOINT s2;
SELECT lt_merge_insert('mt', $$SELECT * FROM (VALUES (7::bigint, 1, 'x'), (7, 2, 'y')) s(id, k2, v)$$, '{id}');
ROLLBACK TO s2;
SELECT count(*) FROM mt;
COMMIT;
SELECT lt_test.versions('write/w_merge.lance') AS versions_unchanged;
-- the source may read the target itself (it reads the same state as the match)
SELECT * FROM lt_merge_insert('mt', 'SELECT id, k2 * 10 AS k2, upper(v) AS v FROM mt WHERE id IS NOT NULL', '{id}');
SELECT id, k2, v FROM mt ORDER BY id, v;

-- ---- stable row ids: updated rows keep their ids --------------------------------------------------------
CREATE FOREIGN TABLE ms (id bigint, value text, _rowid bigint) SERVER mlake OPTIONS (path 'write/w_merge_stable.lance');
SELECT id, value, _rowid FROM ms ORDER BY id;
SELECT * FROM lt_merge_insert('ms', $$SELECT * FROM (VALUES (2::bigint, 'TWO'), (4, 'four')) s(id, value)$$, '{id}');
SELECT id, value, _rowid FROM ms ORDER BY id;
-- matched on _rowid (a partial source): the row keeps its id, so the same id names it again
SELECT * FROM lt_merge_insert('ms', $$SELECT _rowid, 'by row id' AS value FROM ms WHERE id = 2$$, '{_rowid}', when_not_matched => 'do_nothing');
SELECT * FROM lt_merge_insert('ms', $$SELECT _rowid, value || '!' AS value FROM ms WHERE id = 2$$, '{_rowid}', when_not_matched => 'do_nothing');
SELECT id, value, _rowid FROM ms ORDER BY id;

-- ---- matching through the key's btree index ---------------------------------------------------------
CREATE FOREIGN TABLE mx (id bigint, k integer, s text) SERVER mlake OPTIONS (path 'write/w_merge_ix.lance');
SELECT name, columns, kind FROM lt_indexes('mx');
-- the join lt_merge_insert runs (its text is a DEBUG1 message): a few source rows are looked up in the
-- index, one parameterized scan per source row; many source rows are a hash join
SELECT lt_test.explain($q$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT s.id, s.k, s.s, s.lt_merge_source, t.ctid FROM (SELECT CAST(q.id AS bigint) AS id, CAST(q.k AS integer) AS k, CAST(q.s AS text) AS s, true AS lt_merge_source FROM (SELECT * FROM (VALUES (5::bigint, 1, 'five'), (59999, 2, 'last'), (60000, 3, 'new')) s(id, k, s)
) q) s LEFT JOIN ONLY public.mx t ON s.id = t.id$q$);
SELECT lt_test.explain($q$EXPLAIN (COSTS OFF)
SELECT s.id, s.k, s.s, s.lt_merge_source, t.ctid FROM (SELECT CAST(q.id AS bigint) AS id, CAST(q.k AS integer) AS k, CAST(q.s AS text) AS s, true AS lt_merge_source FROM (SELECT id, k + 1 AS k, s FROM mx WHERE id % 3 = 0
) q) s LEFT JOIN ONLY public.mx t ON s.id = t.id$q$);
-- lt_merge_insert itself, on this integer key: its own hash join, the index naming the rows to read
BEGIN;
SET LOCAL client_min_messages = debug1;
SELECT * FROM lt_merge_insert('mx', $$SELECT * FROM (VALUES (5::bigint, 1, 'five'), (59999, 2, 'last'), (60000, 3, 'new')) s(id, k, s)$$, '{id}');
RESET client_min_messages;
COMMIT;
SELECT id, k, s FROM mx WHERE id IN (5, 59999, 60000) ORDER BY id;
SELECT count(*), count(DISTINCT id) FROM mx;
-- many source rows: a hash join over one scan of the key column, the same answer as without the index
BEGIN;
SELECT * FROM lt_merge_insert('mx', 'SELECT id, k + 1 AS k, s FROM mx WHERE id % 3 = 0', '{id}');
SELECT count(*), sum(k), count(DISTINCT id) FROM mx;
ROLLBACK;
SELECT m_both('mx', 'id, k, s', 'SELECT id, k + 1 AS k, s FROM mx WHERE id % 3 = 0', '{id}');
SELECT m_both('mx', 'id, k, s', 'SELECT id * 2 AS id, k, s FROM mx WHERE id % 1000 = 0', '{id}', 'update_all', 'insert_all', true);
SELECT m_both('mx', 'id, k, s', $$SELECT * FROM (VALUES (7::bigint, 1, 'seven'), (-1, 2, 'new'), (7, 3, 'again')) s(id, k, s)$$, '{id}', 'do_nothing');
-- keys beyond work_mem × hash_mem_multiplier: the source is read again and matched by a PostgreSQL join
BEGIN;
SET LOCAL work_mem = '64kB';
SET LOCAL hash_mem_multiplier = 1;
SET LOCAL client_min_messages = debug1;
SELECT * FROM lt_merge_insert('mx', 'SELECT id, k + 1 AS k, s FROM mx WHERE id % 3 = 0', '{id}');
RESET client_min_messages;
SELECT count(*), sum(k), count(DISTINCT id) FROM mx;
ROLLBACK;
SET lt_fdw.enable_index_scan = off;
BEGIN;
SELECT * FROM lt_merge_insert('mx', 'SELECT id, k + 1 AS k, s FROM mx WHERE id % 3 = 0', '{id}');
SELECT count(*), sum(k), count(DISTINCT id) FROM mx;
ROLLBACK;
RESET lt_fdw.enable_index_scan;

-- ---- privileges: those of the commands it stands for ----------------------------------------------------
CREATE ROLE lt_merge_user;
GRANT pg_read_server_files, pg_write_server_files TO lt_merge_user;
GRANT SELECT, INSERT ON mt TO lt_merge_user;
GRANT SELECT ON msrc TO lt_merge_user;
SET ROLE lt_merge_user;
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}')$$);
SELECT lt_test.try($$SELECT lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', 'do_nothing', delete_not_matched_by_source => true)$$);
BEGIN;
SELECT * FROM lt_merge_insert('mt', 'SELECT * FROM msrc', '{id}', 'do_nothing');
ROLLBACK;
RESET ROLE;
REVOKE ALL ON mt FROM lt_merge_user;
REVOKE ALL ON msrc FROM lt_merge_user;
DROP ROLE lt_merge_user;

-- ---- TRUNCATE -------------------------------------------------------------------------------------------
CREATE FOREIGN TABLE tt (id bigint, s text) SERVER mlake OPTIONS (path 'write/w_trunc.lance');
CREATE FOREIGN TABLE tt2 (id bigint, s text) SERVER mlake OPTIONS (path 'write/w_trunc2.lance');
SELECT count(*) FROM tt;
SELECT name, columns, kind FROM lt_indexes('tt') ORDER BY name;
SELECT lt_test.versions('write/w_trunc.lance') AS versions_at_start;
-- rolled back: nothing happened
BEGIN;
TRUNCATE tt;
SELECT count(*) FROM tt;
ROLLBACK;
SELECT count(*) FROM tt;
SELECT lt_test.versions('write/w_trunc.lance') AS versions_unchanged;
-- rows inserted before a TRUNCATE in the same transaction go too; rows after it stay: one version (an Overwrite)
BEGIN;
INSERT INTO tt VALUES (1000, 'before');
TRUNCATE tt;
SELECT count(*) FROM tt;
INSERT INTO tt VALUES (1001, 'after');
SELECT * FROM tt;
COMMIT;
SELECT lt_test.versions('write/w_trunc.lance') AS versions_after_commit;
SELECT version, operation, row_count FROM lt_versions('tt') ORDER BY version DESC LIMIT 1;
SELECT * FROM tt;
-- the indexes are still defined; they cover no fragment now, so the new rows are found unindexed
SELECT name, columns, kind, covered_fragments FROM lt_indexes('tt') ORDER BY name;
SELECT * FROM tt WHERE id = 1001;
-- ROLLBACK TO a savepoint before the TRUNCATE brings the rows back
BEGIN;
SAVEPOINT s1;
TRUNCATE tt;
ROLLBACK TO s1;
SELECT count(*) FROM tt;
COMMIT;
SELECT lt_test.versions('write/w_trunc.lance') AS versions_unchanged;
-- several tables at once (RESTART IDENTITY and CASCADE change nothing in a dataset)
TRUNCATE tt, tt2 RESTART IDENTITY CASCADE;
SELECT (SELECT count(*) FROM tt) AS tt_rows, (SELECT count(*) FROM tt2) AS tt2_rows;
SELECT lt_test.versions('write/w_trunc.lance') AS tt_versions, lt_test.versions('write/w_trunc2.lance') AS tt2_versions;
-- an empty table: no new version
TRUNCATE tt;
SELECT lt_test.versions('write/w_trunc.lance') AS versions_unchanged;
-- writes go on after it
INSERT INTO tt VALUES (1, 'one'), (2, 'two');
SELECT * FROM tt ORDER BY id;
-- a pinned table is read-only; a merge-insert after a TRUNCATE in one transaction sees the empty table
CREATE FOREIGN TABLE tt_v1 (id bigint, s text) SERVER mlake OPTIONS (path 'write/w_trunc.lance', version '1');
SELECT lt_test.try('TRUNCATE tt_v1');
-- a dataset of the legacy storage format is read-only: TRUNCATE and a merge-insert refuse it as INSERT does
CREATE FOREIGN TABLE tt_legacy (id bigint, value text, li integer[]) SERVER mlake OPTIONS (path 'write/w_legacy.lance');
SELECT lt_test.try('TRUNCATE tt_legacy');
SELECT lt_test.try($$SELECT lt_merge_insert('tt_legacy', 'SELECT 7::bigint AS id, ''x'' AS value, ''{7}''::int[] AS li', '{id}')$$);
BEGIN;
TRUNCATE tt;
SELECT * FROM lt_merge_insert('tt', $$SELECT * FROM (VALUES (1::bigint, 'ONE'), (3, 'three')) s(id, s)$$, '{id}');
COMMIT;
SELECT * FROM tt ORDER BY id;
-- TRUNCATE needs the TRUNCATE privilege
CREATE ROLE lt_trunc_user;
GRANT pg_write_server_files TO lt_trunc_user;
SET ROLE lt_trunc_user;
SELECT lt_test.try('TRUNCATE tt');
RESET ROLE;
DROP ROLE lt_trunc_user;

-- the suites after this one create the extension themselves
SET client_min_messages = warning;
DROP VIEW msrc;
DROP FUNCTION m_both(text, text, text, text[], text, text, boolean);
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
