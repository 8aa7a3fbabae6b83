--
-- lt_fdw_analyze: ANALYZE samples live rows uniformly and reads only those rows through the
-- library's random-access path (analyze.c). Statistics land in pg_stats, the planner's estimates
-- come from them, and the sample of a table much larger than it reads a small part of its bytes.
--
CREATE EXTENSION lt_fdw;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;
SET timezone = 'UTC';
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');

-- the planner's row estimate of a query
CREATE FUNCTION plan_rows(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j->0->'Plan'->>'Plan Rows')::bigint;
END $$;
-- runs a statement and returns its SQLSTATE and message, with the temporary directory masked
CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE detail text;
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
  RETURN SQLSTATE || ': ' || replace(SQLERRM || coalesce(nullif(E'\nDETAIL: ' || detail, E'\nDETAIL: '), ''),
                                     current_setting('lt_test.tmp'), '$TMP');
END $$;
-- the bytes a scan read (EXPLAIN ANALYZE of a query whose top node is the foreign scan)
CREATE FUNCTION scan_bytes(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF) ' || q INTO j;
  RETURN (j->0->'Plan'->>'Bytes Read')::bigint;
END $$;

-- analyze.lance: 100,000 rows in 2 fragments of legacy files, 10,000 deleted; grp cycles 1..5
CREATE FOREIGN TABLE big (_rowid bigint, id bigint, grp integer, label text)
  SERVER lake OPTIONS (path 'analyze.lance');

-- ---- before ANALYZE: the manifest's live rows, no statistics ----------------------------------
SELECT lt_last_analyze() IS NULL AS no_analyze_yet;
SELECT reltuples, relpages FROM pg_class WHERE oid = 'big'::regclass;
SELECT plan_rows('SELECT * FROM big') AS rows_from_manifest;
SELECT count(*) AS stats FROM pg_stats WHERE tablename = 'big';

-- ---- ANALYZE with a 300-row sample ------------------------------------------------------------
SET default_statistics_target = 1;
ANALYZE big;
SELECT relation, version, live_rows, deleted_rows, sample_rows, fragments, fragments_read
  FROM lt_last_analyze();
SELECT reltuples, relpages > 0 AS has_pages FROM pg_class WHERE oid = 'big'::regclass;

-- statistics: unique keys, a low-cardinality column, no nulls (label's n_distinct varies by sample)
SELECT attname, n_distinct, null_frac FROM pg_stats
 WHERE tablename = 'big' AND attname IN ('_rowid', 'id', 'grp') ORDER BY attname;
SELECT null_frac, avg_width FROM pg_stats WHERE tablename = 'big' AND attname = 'label';
-- the sample is spread over the whole table (both fragments), and holds live rows only
SELECT (histogram_bounds::text::bigint[])[1] < 10000 AS low_id_sampled,
       (histogram_bounds::text::bigint[])[2] > 90000 AS high_id_sampled
  FROM pg_stats WHERE tablename = 'big' AND attname = 'id';
SELECT coalesce(most_common_vals, histogram_bounds)::text::int[] <@ '{1,2,3,4,5}' AS grp_values_known
  FROM pg_stats WHERE tablename = 'big' AND attname = 'grp';

-- the planner now estimates from the statistics
SELECT plan_rows('SELECT * FROM big') AS rows_from_reltuples;
SELECT plan_rows('SELECT * FROM big WHERE grp = 3') BETWEEN 9000 AND 27000 AS eq_estimate_near_fifth;
SELECT plan_rows('SELECT * FROM big WHERE id = 4242') AS unique_estimate;

-- the sample read a small part of what a full pass reads (random access, not a near-full pass)
SELECT scan_bytes('SELECT * FROM big') AS full_scan_bytes \gset
SELECT bytes_read * 20 < :full_scan_bytes AS sample_read_under_5_percent,
       bytes_read > 0 AS sample_read_something
  FROM lt_last_analyze();

-- a larger sample (default target: 30,000 rows) is still only the sampled rows, in physical order
RESET default_statistics_target;
ANALYZE big (id, grp);
SELECT sample_rows, fragments_read FROM lt_last_analyze();
SELECT n_distinct FROM pg_stats WHERE tablename = 'big' AND attname = 'grp';
SELECT correlation > 0.99 AS id_in_physical_order FROM pg_stats WHERE tablename = 'big' AND attname = 'id';

-- ---- 2.1 files: random access reads mini-block chunks ------------------------------------------
-- analyze21.lance: 500,000 rows in 2 fragments, 50,000 deleted (id % 10 = 9)
CREATE FOREIGN TABLE big21 (id bigint, grp integer, label text) SERVER lake OPTIONS (path 'analyze21.lance');
CREATE FUNCTION scan_requests(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF) ' || q INTO j;
  RETURN (j->0->'Plan'->>'Read Requests')::bigint;
END $$;
-- a full scan reads whole pages, though deletions cut its rows into short runs
SELECT scan_bytes('SELECT * FROM big21') AS full21_bytes, scan_requests('SELECT * FROM big21') AS full21_requests \gset
SELECT :full21_requests < 200 AS full_scan_reads_pages_whole;
-- a sparse sample (300 rows) reads the chunks that hold its rows: well under a full pass
SET default_statistics_target = 1;
ANALYZE big21;
SELECT live_rows, deleted_rows, sample_rows, fragments_read FROM lt_last_analyze();
SELECT bytes_read * 5 < :full21_bytes * 3 AS sparse_sample_reads_under_60_percent FROM lt_last_analyze();
-- a dense sample (30,000 rows: nearly every chunk) reads the pages whole, never more than a full pass
RESET default_statistics_target;
ANALYZE big21;
SELECT sample_rows FROM lt_last_analyze();
SELECT bytes_read <= :full21_bytes AS dense_sample_reads_at_most_a_pass,
       read_requests <= :full21_requests AS dense_sample_requests_at_most_a_pass
  FROM lt_last_analyze();
-- grp is NULL every 7th row
SELECT attname, n_distinct, null_frac BETWEEN 0.1 AND 0.2 AS null_frac_near_seventh FROM pg_stats
 WHERE tablename = 'big21' AND attname IN ('id', 'grp') ORDER BY attname;
DROP FUNCTION scan_requests(text);

-- ---- tables smaller than the sample: every live row; nested types; pinned versions ---------------
CREATE TYPE st_t AS (x integer, y text);
CREATE FOREIGN TABLE nested (id bigint, vec real[], li bigint[], st st_t, ll jsonb)
  SERVER lake OPTIONS (path 'nested.lance');
ANALYZE nested;
SELECT live_rows, sample_rows, fragments_read FROM lt_last_analyze();
-- null_frac: one row of three is NULL in every column but id
SELECT attname, null_frac, n_distinct FROM pg_stats WHERE tablename = 'nested' ORDER BY attname;
SELECT plan_rows('SELECT * FROM nested WHERE st IS NULL') AS null_st_estimate;

-- versions.lance: v3 has 25 rows; the latest (v4) 18, after deleting id % 4 = 0
CREATE FOREIGN TABLE v3 (id bigint, x integer, _rowaddr bigint)
  SERVER lake OPTIONS (path 'versions.lance', version '3');
CREATE FOREIGN TABLE vlatest (id bigint, x integer) SERVER lake OPTIONS (path 'versions.lance');
ANALYZE v3;
SELECT version, live_rows, deleted_rows, sample_rows FROM lt_last_analyze();
ANALYZE vlatest;
SELECT version, live_rows, deleted_rows, sample_rows FROM lt_last_analyze();
SELECT c.relname, c.reltuples FROM pg_class c WHERE c.relname IN ('v3', 'vlatest') ORDER BY 1;
SELECT plan_rows('SELECT * FROM vlatest') AS vlatest_rows;

-- ---- errors: a column the dataset lacks, the privilege rule for the owner ------------------------
CREATE FOREIGN TABLE bad (id bigint, nope text) SERVER lake OPTIONS (path 'versions.lance');
SELECT try('ANALYZE bad');
CREATE ROLE regress_lt_analyze;
CREATE FOREIGN TABLE owned (id bigint) SERVER lake OPTIONS (path 'versions.lance');
ALTER FOREIGN TABLE owned OWNER TO regress_lt_analyze;
SELECT try('ANALYZE owned');	-- runs as the owner, who may not read server files
DROP FOREIGN TABLE owned;
DROP ROLE regress_lt_analyze;

DROP SERVER lake CASCADE;
DROP TYPE st_t;
DROP FUNCTION plan_rows(text), scan_bytes(text), try(text);
DROP EXTENSION lt_fdw;
