--
-- lt_fdw_admin: lt_versions, lt_fragments and lt_cleanup on a dataset that the Lance engine made and
-- lt_fdw changed (deletes, an aborted insert, a fragment emptied), then cleaned up.
--
-- (an earlier suite may have left the extension installed)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SET timezone = 'UTC';
SELECT set_config('lt_test.lake', :'lake', false) IS NOT NULL AS lake_set;
CREATE SERVER alake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE ad (id bigint, value text) SERVER alake OPTIONS (path 'write/w_admin.lance');
-- the files of the dataset, by directory
CREATE FUNCTION a_files() RETURNS TABLE (dir text, files bigint) LANGUAGE sql AS $$
  SELECT d, (SELECT count(*) FROM pg_ls_dir(current_setting('lt_test.lake') || '/write/w_admin.lance/' || d) f
              WHERE f NOT LIKE '%hint.json')
    FROM unnest(ARRAY['_deletions', '_transactions', '_versions', 'data']) d ORDER BY d $$;
-- what a cleanup removed, by directory
CREATE FUNCTION a_removed(r text[]) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(d || ' ' || n, ', ' ORDER BY d), 'nothing')
    FROM (SELECT split_part(x, '/', 1) d, count(*) n FROM unnest(r) x GROUP BY 1) s $$;

-- ---- lt_versions and lt_fragments of what the engine wrote ------------------------------------------
SELECT version, "timestamp" <= now() AS committed, operation, row_count FROM lt_versions('ad') ORDER BY version;
SELECT fragment_id, physical_rows, deleted_rows, cardinality(data_files) AS n_files,
       data_files[1] ~ '^data/[01]{24}[0-9a-f]{26}\.lance$' AS data_file_name, deletion_file
  FROM lt_fragments('ad');

-- ---- changes through lt_fdw -------------------------------------------------------------------------
DELETE FROM ad WHERE id = (SELECT min(id) FROM ad);
DELETE FROM ad WHERE id = (SELECT max(id) FROM ad);
BEGIN;
INSERT INTO ad VALUES (1000, 'lt_admin rolled back');
-- the transaction's own view: the new fragment is there
SELECT count(*) AS fragments_in_the_transaction FROM lt_fragments('ad');
\set VERBOSITY terse
SELECT w FROM lt_cleanup('ad', '0 seconds') w;
\set VERBOSITY default
ROLLBACK;
INSERT INTO ad VALUES (1001, 'lt_admin new'), (1002, 'lt_admin new');
DELETE FROM ad WHERE value = 'lt_admin new';
DELETE FROM ad WHERE id = (SELECT min(id) FROM ad);
CREATE TEMP TABLE a_rows AS SELECT count(*) AS n, sum(id) AS s FROM ad;
SELECT version, "timestamp" >= lag("timestamp") OVER (ORDER BY version) AS later, operation, row_count
  FROM lt_versions('ad') ORDER BY version;
SELECT fragment_id, physical_rows, deleted_rows, deletion_file ~ '^_deletions/0-[0-9]+-[0-9]+\.arrow$' AS deletion_file_name
  FROM lt_fragments('ad');
SELECT * FROM a_files();

-- ---- lt_cleanup -------------------------------------------------------------------------------------
-- nothing is older than a day: nothing goes
SELECT old_versions, files_removed, a_removed(removed) FROM lt_cleanup('ad', '1 day');
-- a dry run reports and removes nothing
SELECT old_versions, files_removed, a_removed(removed) FROM lt_cleanup('ad', '0 seconds', dry_run => true);
-- the same list one file a line (lt_cleanup_files), readable in psql
SELECT kind, count(*) FROM lt_cleanup_files('ad', '0 seconds', dry_run => true) GROUP BY kind ORDER BY kind;
SELECT count(*) AS versions FROM lt_versions('ad');
-- every version but the latest; the files only they referenced (the older deletion files, the emptied
-- fragment's data file, their transaction files); the aborted insert's data file is not verified (no
-- manifest ever named it) and younger than 7 days: it stays
-- (files_removed counts every path of the list: the old manifests and the other files)
SELECT old_versions, files_removed, bytes_removed > 0 AS bytes, cardinality(removed) = files_removed AS counts_agree,
       a_removed(removed) FROM lt_cleanup('ad', '0 seconds');
SELECT version, operation, row_count FROM lt_versions('ad');
SELECT * FROM a_files();
SELECT (SELECT count(*) FROM ad) = n AS same_count, (SELECT sum(id) FROM ad) = s AS same_sum FROM a_rows;
-- delete_unverified: the orphan of the aborted insert goes too
SELECT old_versions, files_removed, a_removed(removed) FROM lt_cleanup('ad', '0 seconds', delete_unverified => true);
SELECT * FROM a_files();
SELECT (SELECT count(*) FROM ad) = n AS same_count, (SELECT sum(id) FROM ad) = s AS same_sum FROM a_rows;
-- and again: nothing left to remove
SELECT old_versions, files_removed FROM lt_cleanup('ad', '0 seconds', true);

-- ---- errors and privileges --------------------------------------------------------------------------
\set VERBOSITY terse
SELECT * FROM lt_cleanup('ad', '-1 day');
CREATE TABLE a_heap (id int);
SELECT * FROM lt_versions('a_heap');
-- a foreign table of another wrapper (with a "path" option too) is refused by every lt_fdw function
CREATE FOREIGN DATA WRAPPER a_other_fdw;
CREATE SERVER a_other FOREIGN DATA WRAPPER a_other_fdw;
CREATE FOREIGN TABLE a_foreign (id bigint) SERVER a_other OPTIONS (path 'ad.lance');
SELECT * FROM lt_versions('a_foreign');
SELECT * FROM lt_fragments('a_foreign');
SELECT * FROM lt_cleanup('a_foreign', '0 seconds');
SELECT * FROM lt_indexes('a_foreign');
SELECT * FROM lt_create_index('a_foreign', 'id', 'btree');
SELECT lt_primary_key('a_foreign');
SELECT lt_set_primary_key('a_foreign', ARRAY['id']);
SELECT * FROM lt_merge_insert('a_foreign', 'SELECT 1::bigint AS id', ARRAY['id']);
SELECT * FROM lt_insert_overwrite('a_foreign', 'true', 'SELECT 1::bigint');
DROP SERVER a_other CASCADE;
DROP FOREIGN DATA WRAPPER a_other_fdw;
CREATE ROLE lt_admin_reader;
GRANT USAGE ON FOREIGN SERVER alake TO lt_admin_reader;
GRANT SELECT ON ad TO lt_admin_reader;
SET ROLE lt_admin_reader;
SELECT count(*) FROM lt_versions('ad');
RESET ROLE;
GRANT pg_read_server_files TO lt_admin_reader;
SET ROLE lt_admin_reader;
SELECT count(*) FROM lt_versions('ad');
SELECT count(*) FROM lt_fragments('ad');
SELECT * FROM lt_cleanup('ad', '0 seconds');
RESET ROLE;
\set VERBOSITY default

-- ---- cleanup --------------------------------------------------------------------------------------------
DROP TABLE a_heap;
DROP FOREIGN TABLE ad;
DROP SERVER alake;
DROP FUNCTION a_files(), a_removed(text[]);
REVOKE pg_read_server_files FROM lt_admin_reader;
DROP ROLE lt_admin_reader;
-- the suites after this one create the extension themselves
DROP EXTENSION lt_fdw CASCADE;
