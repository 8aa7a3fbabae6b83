--
-- lt_fdw_create_index: lt_create_index() builds btree, bitmap, label_list and zonemap indexes on the
-- version the statement reads and commits them as one Lance CreateIndex with the transaction
-- (nothing before COMMIT, nothing after ROLLBACK or ROLLBACK TO). lt_fdw's scans use them (the same
-- rows as lt_fdw.enable_index_scan = off, before and after writes), the reference engine plans with
-- them and returns the same rows. Errors, each with its SQLSTATE.
-- Datasets: write/w_ixbuild (6000 rows in 3 fragments, no index) and write/w_floats (floats with NaN of both
-- signs, -0, +-Infinity and nulls), written by the reference.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
\getenv tmp LT_TEST_TMP
\getenv root LT_ROOT
\set lake :tmp '/lake'
\set ref :root '/test/interop/ref.mjs'
\setenv LT_REF_MJS :ref
\setenv CI_LAKE :lake
SELECT set_config('lt_test.lake', :'lake', false) IS NOT NULL AS lake_set;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE SERVER ci_lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE ci (id bigint, k integer, s text, tags text[], f double precision, d date)
  SERVER ci_lake OPTIONS (path 'write/w_ixbuild.lance');
CREATE FOREIGN TABLE ci_pinned (id bigint, k integer) SERVER ci_lake OPTIONS (path 'write/w_ixbuild.lance', version '1');
CREATE TABLE ci_heap AS SELECT * FROM ci;

CREATE FUNCTION ci_versions() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_ls_dir(current_setting('lt_test.lake') || '/write/w_ixbuild.lance/_versions') f
   WHERE f LIKE '%.manifest' $$;
-- index files (an aborted build may leave its empty directory, as any orphan, for lt_cleanup)
CREATE FUNCTION ci_index_files() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*)
    FROM pg_ls_dir(current_setting('lt_test.lake') || '/write/w_ixbuild.lance/_indices', true, false) d,
         LATERAL pg_ls_dir(current_setting('lt_test.lake') || '/write/w_ixbuild.lance/_indices/' || d, true, false) f $$;
-- q's rows with the index and without (index scan off): how many, and how many differ
CREATE FUNCTION ci_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint; diff bigint;
BEGIN
  PERFORM set_config('lt_fdw.enable_index_scan', 'on', true);
  EXECUTE 'CREATE TEMP TABLE ci_on AS ' || q;
  PERFORM set_config('lt_fdw.enable_index_scan', 'off', true);
  EXECUTE 'CREATE TEMP TABLE ci_off AS ' || q;
  PERFORM set_config('lt_fdw.enable_index_scan', 'on', true);
  SELECT count(*) INTO diff FROM ((TABLE ci_on EXCEPT ALL TABLE ci_off) UNION ALL (TABLE ci_off EXCEPT ALL TABLE ci_on)) d;
  SELECT count(*) INTO n FROM ci_on;
  DROP TABLE ci_on; DROP TABLE ci_off;
  RETURN format('%s rows, %s differ', n, diff);
END $$;
-- does EXPLAIN of q name the index?
CREATE FUNCTION ci_uses(q text, idx text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
    IF ln LIKE '%' || idx || '%' THEN RETURN true; END IF;
  END LOOP;
  RETURN false;
END $$;
-- run a statement; print its SQLSTATE and message with the lake's path masked
CREATE FUNCTION ci_try(q text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE st text; msg text;
BEGIN
  EXECUTE q;
  RAISE NOTICE 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
  RAISE NOTICE '%: %', st, replace(msg, current_setting('lt_test.lake'), '$LAKE');
END $f$;

SELECT ci_versions() AS v0, ci_index_files() AS files0;

-- ---- one index, autocommit: one new version ---------------------------------------------------------
SELECT index_name, index_kind, built_on_version, rows_indexed, bytes > 0 AS has_bytes
  FROM lt_create_index('ci', 'id', 'btree');
SELECT ci_versions() AS v1, ci_index_files() AS files1;
SELECT name, columns, kind, cardinality(covered_fragments) AS covered, cardinality(unindexed_fragments) AS unindexed
  FROM lt_indexes('ci') ORDER BY name;
SELECT ci_uses('SELECT * FROM ci WHERE id = 17', 'id_idx') AS uses_id_idx;
SELECT ci_same('SELECT * FROM ci WHERE id = 17');
SELECT ci_same('SELECT id FROM ci WHERE id BETWEEN 1000 AND 1200 OR id > 5990');

-- ---- several in one transaction: one CreateIndex, at COMMIT --------------------------------------------
BEGIN;
SELECT index_name, index_kind, rows_indexed FROM lt_create_index('ci', 'k', 'bitmap');
SELECT index_name, index_kind, rows_indexed FROM lt_create_index('ci', 'tags', 'label_list');
SELECT index_name, index_kind, rows_indexed FROM lt_create_index('ci', 'f', 'zonemap', 'f_zone');
SELECT index_name, index_kind, rows_indexed FROM lt_create_index('ci', 's', 'btree', name => 's_tree');
SELECT ci_versions() AS not_yet, (SELECT count(*) FROM lt_indexes('ci')) AS indexes_seen;
COMMIT;
SELECT ci_versions() AS v2;
SELECT name, columns, kind, cardinality(covered_fragments) AS covered FROM lt_indexes('ci') ORDER BY name;
SELECT ci_uses('SELECT * FROM ci WHERE k = 3', 'k_idx') AS uses_k_idx,
       ci_uses('SELECT * FROM ci WHERE s = ''a''', 's_tree') AS uses_s_tree;
SELECT ci_same('SELECT * FROM ci WHERE k = 3');
SELECT ci_same('SELECT id FROM ci WHERE k IS NULL OR k IN (1, 2)');
SELECT ci_same('SELECT id FROM ci WHERE tags && ARRAY[''lance'', ''page '']');
SELECT ci_same('SELECT id FROM ci WHERE tags @> ARRAY[''lance'']');
SELECT ci_same('SELECT id FROM ci WHERE f > 30000');
SELECT ci_same('SELECT id FROM ci WHERE s = ''a'' OR s IS NULL');
-- the same rows as the heap copy
SELECT (SELECT count(*) FROM ci WHERE k = 3) = (SELECT count(*) FROM ci_heap WHERE k = 3) AS same_as_heap;

-- ---- the reference engine plans with them and returns the same rows ----------------------------------------
\! cd "$(dirname "$LT_REF_MJS")" && for w in "id = 17" "k = 3" "array_has_any(tags, ['lance'])" "s = 'a'" "f > 30000"; do node ref.mjs plan "$CI_LAKE/write/w_ixbuild.lance" --filter "$w" | grep -o 'ScalarIndexQuery: query=.*@[a-z_]*([A-Za-z]*)'; done
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$CI_LAKE/write/w_ixbuild.lance" --columns id --filter "k = 3" > "$CI_LAKE/../ci_ref_k3.jsonl"
SELECT count(*) AS ref_rows,
       count(*) FILTER (WHERE (l::jsonb ->> 'id')::bigint NOT IN (SELECT id FROM ci WHERE k = 3)) AS not_ours
  FROM regexp_split_to_table(pg_read_file(current_setting('lt_test.lake') || '/../ci_ref_k3.jsonl'), E'\n') l
 WHERE l <> '';

-- ---- rolled back: no version, no files left ----------------------------------------------------------
SELECT ci_versions() AS v, ci_index_files() AS files \gset
BEGIN;
SELECT index_name FROM lt_create_index('ci', 'd', 'btree');
ROLLBACK;
SELECT ci_versions() = :v AS no_version, ci_index_files() = :files AS no_files;
BEGIN;
SAVEPOINT a;
SELECT index_name FROM lt_create_index('ci', 'd', 'btree');
ROLLBACK TO SAVEPOINT a;
SELECT index_name FROM lt_create_index('ci', 'd', 'zonemap', 'd_zone');
COMMIT;
SELECT ci_versions() = :v + 1 AS one_version, ci_index_files() = :files + 1 AS one_more_file;
SELECT name, kind FROM lt_indexes('ci') WHERE columns = ARRAY['d'];

-- ---- building again under a name replaces the index ----------------------------------------------------
SELECT index_name, index_kind FROM lt_create_index('ci', 'k', 'btree', 'k_idx');
SELECT name, kind FROM lt_indexes('ci') WHERE name = 'k_idx';
SELECT ci_same('SELECT id FROM ci WHERE k < 3');

-- ---- writes after the index: appended rows found, deleted rows gone ---------------------------------------
INSERT INTO ci SELECT id + 100000, k, s, tags, f, d FROM ci_heap WHERE id < 300;
DELETE FROM ci WHERE id % 7 = 1;
INSERT INTO ci_heap SELECT id + 100000, k, s, tags, f, d FROM ci_heap WHERE id < 300;
DELETE FROM ci_heap WHERE id % 7 = 1;
SELECT name, cardinality(covered_fragments) AS covered, cardinality(unindexed_fragments) AS unindexed
  FROM lt_indexes('ci') WHERE name = 'id_idx';
SELECT ci_same('SELECT id FROM ci WHERE id = 100017 OR id = 17 OR id = 15');
SELECT ci_same('SELECT id FROM ci WHERE k = 3');
SELECT ci_same('SELECT id FROM ci WHERE tags && ARRAY[''lance'']');
SELECT (SELECT array_agg(id ORDER BY id) FROM ci WHERE id IN (1, 2, 8, 100001, 100002))
     = (SELECT array_agg(id ORDER BY id) FROM ci_heap WHERE id IN (1, 2, 8, 100001, 100002)) AS same_as_heap;
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$CI_LAKE/write/w_ixbuild.lance" --columns id --filter "id < 300 OR id > 100000" > "$CI_LAKE/../ci_ref_w.jsonl"
SELECT count(*) AS ref_rows,
       count(*) = (SELECT count(*) FROM ci WHERE id < 300 OR id > 100000) AS same_count
  FROM regexp_split_to_table(pg_read_file(current_setting('lt_test.lake') || '/../ci_ref_w.jsonl'), E'\n') l
 WHERE l <> '';

-- ---- errors ------------------------------------------------------------------------------------------------
SELECT ci_versions() AS v \gset
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'hash')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'nope', 'btree')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'label_list')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'tags', 'btree')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'tags', 'zonemap')$$);
SELECT ci_try($$SELECT lt_create_index('ci', NULL, 'btree')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'btree', '')$$);
-- ivf_flat (issue 16): options are for vector indexes, known keys and metrics, a vector column
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'btree', NULL, 'num_partitions=4')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_flat', NULL, 'partitions=4')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_flat', NULL, 'metric=manhattan')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_flat', NULL, 'num_partitions=0')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_flat', NULL, 'num_partitions')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_flat')$$);
-- ivf_pq: its own options (not ivf_flat's), a vector column
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_flat', NULL, 'num_bits=4')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_pq', NULL, 'num_sub_vectors=0')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_pq', NULL, 'num_sub_vectors=2, metric=cosine')$$);
-- ivf_hnsw_sq: m and ef_construction (its own: not ivf_sq's), in range, a vector column
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_sq', NULL, 'm=16')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_hnsw_sq', NULL, 'm=1')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_hnsw_sq', NULL, 'm=257')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_hnsw_sq', NULL, 'ef_construction=0')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_hnsw_sq', NULL, 'ef_construction=100001')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_hnsw_sq', NULL, 'num_bits=8')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_hnsw_sq', NULL, 'm=16, ef_construction=100, metric=dot')$$);
-- ivf_hnsw_pq: sub-vectors, bits (8 or 4), m, ef_construction
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_hnsw_pq', NULL, 'num_bits=4')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_hnsw_pq', NULL, 'num_sub_vectors=0')$$);
SELECT ci_try($$SELECT lt_create_index('ci', 'id', 'ivf_hnsw_pq', NULL, 'num_sub_vectors=4, m=8, ef_construction=64')$$);
-- float16 and uint8 vectors (write/w_binvec: h16 fixed_size_list<float16, 8>, bits fixed_size_list<uint8, 16>): no
-- RaBitQ codes over uint8 vectors (0A000); hamming is uint8's metric and uint8 vectors take no other (22023), and only
-- ivf_flat (0A000); nothing is written (float16 IVF_RQ builds: test/interop/vector-rq.mjs, vector-types.mjs)
CREATE FOREIGN TABLE ci_vt (id bigint, bits smallint[], h16 real[]) SERVER ci_lake OPTIONS (path 'write/w_binvec.lance');
SELECT count(*) AS vt_indexes FROM lt_indexes('ci_vt') \gset
SELECT ci_try($$SELECT lt_create_index('ci_vt', 'bits', 'ivf_rq', NULL, 'num_partitions=2')$$);
SELECT ci_try($$SELECT lt_create_index('ci_vt', 'h16', 'ivf_flat', NULL, 'metric=hamming')$$);
SELECT ci_try($$SELECT lt_create_index('ci_vt', 'bits', 'ivf_flat', NULL, 'metric=l2')$$);
SELECT ci_try($$SELECT lt_create_index('ci_vt', 'bits', 'ivf_sq')$$);
SELECT ci_try($$SELECT lt_create_index('ci_vt', 'bits', 'ivf_hnsw_sq', NULL, 'metric=hamming')$$);
SELECT count(*) = :vt_indexes AS vt_nothing_built FROM lt_indexes('ci_vt');
SELECT ci_try($$SELECT lt_create_index('ci_pinned', 'id', 'btree')$$);
SELECT ci_try($$SELECT lt_create_index('ci_heap', 'id', 'btree')$$);
-- a name taken by an index of another column
SELECT ci_try($$SELECT lt_create_index('ci', 's', 'bitmap', 'id_idx')$$);
-- twice in one transaction
BEGIN;
SELECT index_name FROM lt_create_index('ci', 's', 'bitmap', 's_bm');
SELECT ci_try($$SELECT lt_create_index('ci', 's', 'btree', 's_bm')$$);
ROLLBACK;
-- with row changes in the same transaction, in either order
BEGIN;
DELETE FROM ci WHERE id = 2;
SELECT ci_try($$SELECT lt_create_index('ci', 's', 'bitmap', 's_bm')$$);
ROLLBACK;
BEGIN;
SELECT index_name FROM lt_create_index('ci', 's', 'bitmap', 's_bm');
DELETE FROM ci WHERE id = 2;
\set VERBOSITY terse
COMMIT;
-- PREPARE TRANSACTION
BEGIN;
SELECT index_name FROM lt_create_index('ci', 's', 'bitmap', 's_bm');
PREPARE TRANSACTION 'ci_p';
\set VERBOSITY default
-- a role without the privileges
CREATE ROLE ci_nobody;
GRANT SELECT ON ci TO ci_nobody;
SET ROLE ci_nobody;
SELECT ci_try($$SELECT lt_create_index('ci', 's', 'bitmap', 's_bm')$$);
RESET ROLE;
GRANT INSERT ON ci TO ci_nobody;
SET ROLE ci_nobody;
SELECT ci_try($$SELECT lt_create_index('ci', 's', 'bitmap', 's_bm')$$);
RESET ROLE;
-- the owner (as CREATE INDEX asks), but without the file privileges of the dataset's location
ALTER FOREIGN TABLE ci OWNER TO ci_nobody;
SET ROLE ci_nobody;
SELECT ci_try($$SELECT lt_create_index('ci', 's', 'bitmap', 's_bm')$$);
RESET ROLE;
ALTER FOREIGN TABLE ci OWNER TO CURRENT_USER;
DROP OWNED BY ci_nobody;
DROP ROLE ci_nobody;
SELECT ci_versions() = :v AS nothing_committed, (SELECT count(*) FROM ci WHERE id = 2) AS row_2_kept;

-- ---- row changes rolled back to a savepoint: the index alone commits ---------------------------------------
-- (and an index built in a released savepoint goes with the savepoint around it)
SELECT ci_versions() AS v, ci_index_files() AS files \gset
BEGIN;
SELECT index_name FROM lt_create_index('ci', 's', 'bitmap', 's_bm');
SAVEPOINT a;
DELETE FROM ci WHERE id = 2;
ROLLBACK TO SAVEPOINT a;
SAVEPOINT b;
SAVEPOINT c;
SELECT index_name FROM lt_create_index('ci', 'k', 'zonemap', 'k_zone');
RELEASE SAVEPOINT c;
ROLLBACK TO SAVEPOINT b;
COMMIT;
SELECT ci_versions() = :v + 1 AS one_version, ci_index_files() - :files AS new_files,
       (SELECT count(*) FROM ci WHERE id = 2) AS row_2_kept;
SELECT name, kind FROM lt_indexes('ci') WHERE name IN ('s_bm', 'k_zone');
SELECT ci_same('SELECT id FROM ci WHERE s = ''a''');

-- ---- two builds in one READ COMMITTED transaction, a commit to the dataset in between --------------------
-- (one CreateIndex holds both: the second is built on the version of the first)
SELECT ci_versions() AS v \gset
BEGIN;
SELECT built_on_version AS first_version FROM lt_create_index('ci', 'k', 'zonemap', 'k_zone') \gset
\! cd "$(dirname "$LT_REF_MJS")" && printf '{"ops":[{"op":"append","rows":[{"id":"900000","k":1,"s":"z","tags":["x"],"f":1.5,"d":"2021-01-01"}]}]}' > "$CI_LAKE/../ci_add.json" && node ref.mjs apply "$CI_LAKE/write/w_ixbuild.lance" "$CI_LAKE/../ci_add.json" > /dev/null
SELECT count(*) AS engine_row_seen FROM ci WHERE id = 900000;
SELECT index_name, built_on_version = :first_version AS same_version FROM lt_create_index('ci', 'id', 'zonemap', 'id_zone');
COMMIT;
SELECT ci_versions() = :v + 2 AS engine_and_ours;
SELECT name, kind, cardinality(unindexed_fragments) AS unindexed FROM lt_indexes('ci') WHERE name IN ('k_zone', 'id_zone') ORDER BY name;
SELECT ci_same('SELECT id FROM ci WHERE k = 1 AND id >= 900000');

-- ---- floats with NaN of both signs, -0 and 0, +-Infinity, nulls (write/w_floats: zones of each kind) --------
-- lt_fdw's zone maps and btrees (and their use) give PostgreSQL's answer: each predicate's rows with the index,
-- without it (index scan off) and on a heap copy are the same. The engine's side: test/interop/index-build.sh.
CREATE FOREIGN TABLE cf (id bigint, g double precision, h real) SERVER ci_lake OPTIONS (path 'write/w_floats.lance');
CREATE TABLE cf_heap AS SELECT * FROM cf;
CREATE FUNCTION cf_same(p text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint; d_on bigint; d_off bigint;
BEGIN
  PERFORM set_config('lt_fdw.enable_index_scan', 'on', true);
  EXECUTE 'CREATE TEMP TABLE cf_on AS SELECT id FROM cf WHERE ' || p;
  PERFORM set_config('lt_fdw.enable_index_scan', 'off', true);
  EXECUTE 'CREATE TEMP TABLE cf_off AS SELECT id FROM cf WHERE ' || p;
  PERFORM set_config('lt_fdw.enable_index_scan', 'on', true);
  EXECUTE 'CREATE TEMP TABLE cf_h AS SELECT id FROM cf_heap WHERE ' || p;
  SELECT count(*) INTO d_on FROM ((TABLE cf_on EXCEPT ALL TABLE cf_h) UNION ALL (TABLE cf_h EXCEPT ALL TABLE cf_on)) d;
  SELECT count(*) INTO d_off FROM ((TABLE cf_off EXCEPT ALL TABLE cf_h) UNION ALL (TABLE cf_h EXCEPT ALL TABLE cf_off)) d;
  SELECT count(*) INTO n FROM cf_h;
  DROP TABLE cf_on; DROP TABLE cf_off; DROP TABLE cf_h;
  RETURN format('%s rows; index on: %s differ, off: %s differ', n, d_on, d_off);
END $$;
CREATE TABLE cf_preds (k serial, p text);
INSERT INTO cf_preds (p) SELECT replace(u.p, 'x', c) FROM unnest(ARRAY['g', 'h']) c, unnest(ARRAY[
  'x = 0', 'x = ''-0''', 'x <> 0', 'x < 0', 'x <= 0', 'x > 0', 'x >= 0', 'x = 3', 'x > 5', 'x < -5', 'x >= 1e30',
  'x <= -1e30', 'x > ''Infinity''', 'x >= ''Infinity''', 'x < ''-Infinity''', 'x <= ''-Infinity''', 'x = ''NaN''',
  'x < ''NaN''', 'x >= ''NaN''', 'x > ''NaN''', 'x <= ''NaN''', 'x IS NULL', 'x IS NOT NULL', 'x IN (0, 3, -12)',
  'x IN (0, ''NaN'')', 'x BETWEEN -1 AND 1', 'NOT (x > 0)', 'NOT (x < 5)', 'x = 30', 'x = -29']) WITH ORDINALITY u(p, o)
  ORDER BY c, o;
SELECT index_name, index_kind FROM lt_create_index('cf', 'g', 'zonemap', 'g_ix');
SELECT index_name, index_kind FROM lt_create_index('cf', 'h', 'btree', 'h_ix');
SELECT ci_uses('SELECT id FROM cf WHERE g > 5', 'g_ix') AS g_zonemap_used,
       ci_uses('SELECT id FROM cf WHERE h < -5', 'h_ix') AS h_btree_used;
SELECT p, cf_same(p) FROM cf_preds ORDER BY k;
SELECT index_name, index_kind FROM lt_create_index('cf', 'g', 'btree', 'g_ix');
SELECT index_name, index_kind FROM lt_create_index('cf', 'h', 'zonemap', 'h_ix');
SELECT ci_uses('SELECT id FROM cf WHERE g > 5', 'g_ix') AS g_btree_used,
       ci_uses('SELECT id FROM cf WHERE h < -5', 'h_ix') AS h_zonemap_used;
SELECT p, cf_same(p) FROM cf_preds ORDER BY k;
-- a bitmap on a float column is refused (LanceDB builds none, and Lance 8 confuses NaN keys of either sign in it)
SELECT ci_try($$SELECT lt_create_index('cf', 'g', 'bitmap')$$);
DROP TABLE cf_heap, cf_preds;
DROP FUNCTION cf_same(text);

-- ---- cleanup (the next suites create the extension themselves) -------------------------------------------
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
DROP TABLE ci_heap;
DROP FUNCTION ci_versions(), ci_index_files(), ci_same(text), ci_uses(text, text), ci_try(text);
