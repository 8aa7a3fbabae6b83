--
-- lt_fdw_aggregates: aggregate pushdown (src/fdw/upper.c). count(*) without quals from the manifest;
-- count/sum/avg/min/max, GROUP BY one column, HAVING and pushed WHERE quals computed inside lt_fdw.
-- Every result is compared, as text (so -0, NaN and numeric scales count), with the same query over a
-- heap copy of the table; errors are compared too.
--
CREATE EXTENSION lt_fdw;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET extra_float_digits = 3;

CREATE OR REPLACE FUNCTION explain_filter(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE q LOOP
    ln := replace(ln, current_setting('lt_test.tmp'), '$TMP');
    ln := regexp_replace(ln, 'Bytes Read: [1-9]\d*', 'Bytes Read: N');
    ln := regexp_replace(ln, 'Read Requests: [1-9]\d*', 'Read Requests: N');
    RETURN NEXT ln;
  END LOOP;
END $$;

-- the rows of a query as sorted text, or its error
CREATE OR REPLACE FUNCTION rows_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(t::text ORDER BY t::text), ''{}'')::text FROM (%s) t', q) INTO r;
  RETURN r;
EXCEPTION WHEN OTHERS THEN
  RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END $$;

-- 'pushed' / 'local', and whether the foreign table gives what its heap copy gives (h_<name>)
CREATE OR REPLACE FUNCTION check_agg(q text, ft text, OUT plan text, OUT same boolean, OUT result text) LANGUAGE plpgsql AS $$
DECLARE hq text := regexp_replace(q, '\m' || ft || '\M', 'h_' || ft, 'g');
        hr text;
        ln text;
BEGIN
  plan := 'local';
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF ln ~ 'Lance Aggregate' THEN plan := 'pushed'; END IF;
  END LOOP;
  result := rows_of(q);
  hr := rows_of(hq);
  same := result = hr;
  IF NOT same THEN result := result || '  <>  heap: ' || hr; END IF;
END $$;

CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE scalars (
  id bigint, b boolean, i8 smallint, i16 smallint, i32 integer, i64 bigint,
  u8 smallint, u16 integer, u32 bigint, u64 numeric(20,0),
  f16 real, f32 real, f64 double precision, s text, ls text,
  bin bytea, lbin bytea, fsb bytea, d32 date, d64 date,
  t32s time, t32ms time, t64us time, t64ns time,
  ts_s timestamp, ts_us timestamp, ts_ns timestamp, tz_ms timestamptz, tz_ns timestamptz,
  dec numeric(12,3), dec38 numeric(38,10)
) SERVER lake OPTIONS (path 'scalars.lance');
-- wider declared types: the aggregate follows the declared type
CREATE FOREIGN TABLE wide (id numeric, i8 bigint, u16 bigint, f32 double precision, dec numeric)
  SERVER lake OPTIONS (path 'scalars.lance');
CREATE FOREIGN TABLE v_latest (id bigint, x integer, _rowid bigint) SERVER lake OPTIONS (path 'versions.lance');
CREATE FOREIGN TABLE v1 (id bigint, x integer) SERVER lake OPTIONS (path 'versions.lance', version '1');
CREATE FOREIGN TABLE v3 (id bigint, x integer) SERVER lake OPTIONS (path 'versions.lance', version '3');
CREATE FOREIGN TABLE v_trimmed (id bigint, x integer) SERVER lake OPTIONS (path 'versions.lance', tag 'trimmed');

-- heap copies, read with the pushdown off (and in scan order)
SET lt_fdw.enable_aggregate_pushdown = off;
CREATE TABLE h_scalars AS SELECT * FROM scalars;
CREATE TABLE h_wide AS SELECT * FROM wide;
CREATE TABLE h_v_latest AS SELECT * FROM v_latest;
CREATE TABLE h_v1 AS SELECT * FROM v1;
CREATE TABLE h_v3 AS SELECT * FROM v3;
CREATE TABLE h_v_trimmed AS SELECT * FROM v_trimmed;
RESET lt_fdw.enable_aggregate_pushdown;
SHOW lt_fdw.enable_aggregate_pushdown;

-- ---- count(*) from metadata ------------------------------------------------------------------------
SELECT count(*) FROM v_latest;
SELECT explain_filter('EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM v_latest');
-- no data file is opened: 0 fragments scanned, 0 bytes read
SELECT explain_filter('EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM v_latest');
SELECT q, (check_agg(q, t)).* FROM (VALUES
  ('SELECT count(*) FROM v_latest', 'v_latest'),
  ('SELECT count(*) FROM v1', 'v1'),
  ('SELECT count(*) FROM v3', 'v3'),
  ('SELECT count(*) FROM v_trimmed', 'v_trimmed'),
  ('SELECT count(*), count(*) * 2 AS twice FROM scalars', 'scalars'),
  ('SELECT count(*) FROM scalars HAVING count(*) > 100', 'scalars')
) v(q, t);

-- count(col) of a field the schema declares non-nullable (id, x) is count(*): from metadata as well;
-- count of a nullable field (i32) reads the column
SELECT explain_filter('EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(id), count(x), count(*) FROM v_latest');
SELECT explain_filter('EXPLAIN (VERBOSE, COSTS OFF) SELECT count(id), count(i32) FROM scalars');
SELECT q, (check_agg(q, t)).* FROM (VALUES
  ('SELECT count(id), count(x) FROM v_latest', 'v_latest'),
  ('SELECT count(x) FROM v_trimmed', 'v_trimmed'),
  ('SELECT count(id) FROM scalars', 'scalars'),
  ('SELECT count(id), count(i32) FROM scalars', 'scalars')
) v(q, t);

-- ---- every aggregate x type -------------------------------------------------------------------------
SELECT q, (check_agg(q, 'scalars')).* FROM (VALUES
  ('SELECT count(i32), count(f32), count(dec), count(d32), count(b), count(ts_ns) FROM scalars'),
  ('SELECT sum(i8), sum(i16), sum(i32), sum(u8), sum(u16) FROM scalars'),
  ('SELECT sum(i64), sum(u32) FROM scalars'),
  ('SELECT avg(i8), avg(i16), avg(i32), avg(i64), avg(u8), avg(u16), avg(u32) FROM scalars'),
  ('SELECT sum(f16), sum(f32), sum(f64) FROM scalars'),
  ('SELECT avg(f16), avg(f32) FROM scalars'),
  ('SELECT avg(f64) FROM scalars'),
  ('SELECT sum(dec), avg(dec), sum(dec38), avg(dec38), sum(u64), avg(u64) FROM scalars'),
  ('SELECT min(i8), max(i8), min(i16), max(i16), min(i32), max(i32), min(i64), max(i64) FROM scalars'),
  ('SELECT min(u8), max(u8), min(u16), max(u16), min(u32), max(u32), min(u64), max(u64) FROM scalars'),
  ('SELECT min(f16), max(f16), min(f32), max(f32), min(f64), max(f64) FROM scalars'),
  ('SELECT min(dec), max(dec), min(dec38), max(dec38) FROM scalars'),
  ('SELECT min(d32), max(d32), min(d64), max(d64) FROM scalars'),
  ('SELECT min(t32s), max(t32s), min(t32ms), max(t32ms), min(t64us), max(t64us), min(t64ns), max(t64ns) FROM scalars'),
  ('SELECT min(ts_s), max(ts_s), min(ts_us), max(ts_us), min(ts_ns), max(ts_ns) FROM scalars'),
  ('SELECT min(tz_ms), max(tz_ms), min(tz_ns), max(tz_ns) FROM scalars'),
  ('SELECT sum(i32) + 1 AS s1, max(f64) / 2 AS half, count(*) - count(i32) AS nulls FROM scalars')
) v(q);
-- declared types wider than the natural one
SELECT q, (check_agg(q, 'wide')).* FROM (VALUES
  ('SELECT sum(id), avg(id), min(id), max(id) FROM wide'),
  ('SELECT sum(i8), avg(i8), sum(u16), max(u16) FROM wide'),
  ('SELECT sum(f32), avg(f32), min(f32), max(f32) FROM wide'),
  ('SELECT sum(dec), avg(dec), min(dec), max(dec) FROM wide')
) v(q);

-- ---- GROUP BY one column, NULL groups, NaN, HAVING ----------------------------------------------------
SELECT q, (check_agg(q, 'scalars')).* FROM (VALUES
  ('SELECT b, count(*), sum(i32), avg(f64) FILTER (WHERE true) FROM scalars GROUP BY b'),
  ('SELECT b, count(*), sum(i32), min(d32), max(dec) FROM scalars GROUP BY b'),
  ('SELECT s, count(*), count(s), sum(i64), max(tz_ns) FROM scalars GROUP BY s'),
  ('SELECT i8, count(*), max(f32) FROM scalars GROUP BY i8'),
  ('SELECT f32, count(*), sum(i16) FROM scalars GROUP BY f32'),
  ('SELECT d32, count(*) FROM scalars GROUP BY d32'),
  ('SELECT ts_ns, count(*) FROM scalars GROUP BY ts_ns'),
  ('SELECT s FROM scalars GROUP BY s'),
  ('SELECT b, count(*) FROM scalars GROUP BY b HAVING count(*) > 1'),
  ('SELECT b, sum(i32) FROM scalars GROUP BY b HAVING max(i16) > 0 AND b'),
  ('SELECT count(*) FROM scalars GROUP BY b')
) v(q);

-- ---- deletion vectors, versions, tags -------------------------------------------------------------
SELECT q, (check_agg(q, t)).* FROM (VALUES
  ('SELECT count(*), count(x), sum(x), avg(x), sum(id), avg(id), min(id), max(id) FROM v_latest', 'v_latest'),
  ('SELECT x, count(*), sum(id) FROM v_latest GROUP BY x', 'v_latest'),
  ('SELECT count(*), sum(x), avg(id), min(id), max(id) FROM v1', 'v1'),
  ('SELECT count(*), sum(x), avg(id), min(id), max(id) FROM v3', 'v3'),
  ('SELECT count(*), sum(x), avg(id), min(id), max(id) FROM v_trimmed', 'v_trimmed')
) v(q, t);

-- ---- pushed WHERE quals, empty inputs ------------------------------------------------------------
SELECT q, (check_agg(q, t)).* FROM (VALUES
  ('SELECT count(*), sum(x), avg(x) FROM v_latest WHERE x > 50', 'v_latest'),
  ('SELECT count(*), sum(x), avg(x), min(id) FROM v_latest WHERE id < 0', 'v_latest'),
  ('SELECT x, count(*) FROM v_latest WHERE id < 0 GROUP BY x', 'v_latest'),
  ('SELECT x % 7 = 0 AS k, count(*) FROM v_latest WHERE id IN (1, 2, 3, 101) GROUP BY 1', 'v_latest'),
  ('SELECT b, count(*), sum(dec) FROM scalars WHERE i32 IS NOT NULL GROUP BY b', 'scalars'),
  ('SELECT count(*), max(f32) FROM scalars WHERE f32 = ''NaN''', 'scalars'),
  ('SELECT count(*) FROM v_latest WHERE _rowid > 5', 'v_latest')
) v(q, t);
SELECT explain_filter('EXPLAIN (VERBOSE, COSTS OFF) SELECT x, count(*), sum(id) FROM v_latest WHERE x > 50 GROUP BY x');
SELECT explain_filter('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*), sum(x) FROM v_latest WHERE x > 50');
-- parameters: custom and generic plans; a value the filter cannot take (NaN) is checked row by row here
PREPARE pq(int) AS SELECT count(*), sum(x), max(id) FROM v_latest WHERE x > $1;
EXECUTE pq(50);
EXECUTE pq(100);
SET plan_cache_mode = force_generic_plan;
SELECT explain_filter('EXPLAIN (VERBOSE, COSTS OFF) EXECUTE pq(50)');
EXECUTE pq(50);
EXECUTE pq(100);
PREPARE pn(numeric) AS SELECT b, count(*), sum(i32), max(dec) FROM scalars WHERE dec < $1 GROUP BY b ORDER BY b;
EXECUTE pn(100);
EXECUTE pn('NaN');
SET lt_fdw.enable_aggregate_pushdown = off;
EXECUTE pq(50);
EXECUTE pn('NaN');
RESET lt_fdw.enable_aggregate_pushdown;
RESET plan_cache_mode;
DEALLOCATE pq;
DEALLOCATE pn;

-- ---- what is not pushed -------------------------------------------------------------------------------
SELECT q, (check_agg(q, t)).plan FROM (VALUES
  ('SELECT count(DISTINCT x) FROM v_latest', 'v_latest'),
  ('SELECT sum(x ORDER BY id) FROM v_latest', 'v_latest'),
  ('SELECT sum(x) FILTER (WHERE id > 3) FROM v_latest', 'v_latest'),
  ('SELECT string_agg(s, '','') FROM scalars', 'scalars'),
  ('SELECT sum(x + 1) FROM v_latest', 'v_latest'),
  ('SELECT x % 3, count(*) FROM v_latest GROUP BY 1', 'v_latest'),
  ('SELECT x, id, count(*) FROM v_latest GROUP BY x, id', 'v_latest'),
  ('SELECT count(*) FROM v_latest GROUP BY ROLLUP (x)', 'v_latest'),
  ('SELECT count(*) FROM v_latest WHERE random() > 2', 'v_latest'),
  ('SELECT max(s) FROM scalars', 'scalars'),
  ('SELECT count(s) FROM scalars', 'scalars')
) v(q, t);
SELECT explain_filter('EXPLAIN (VERBOSE, COSTS OFF) SELECT count(DISTINCT x) FROM v_latest');
SELECT explain_filter('EXPLAIN (VERBOSE, COSTS OFF) SELECT x % 3, count(*) FROM v_latest GROUP BY 1');
SELECT explain_filter('EXPLAIN (VERBOSE, COSTS OFF) SELECT b, count(*), sum(i32) FROM scalars GROUP BY b HAVING sum(i64) > 0');
-- the GUC turns it off
SET lt_fdw.enable_aggregate_pushdown = off;
SELECT explain_filter('EXPLAIN (COSTS OFF) SELECT count(*) FROM v_latest');
RESET lt_fdw.enable_aggregate_pushdown;
-- an aggregate in a subquery and a join of two aggregates
SELECT (SELECT count(*) FROM v1) AS c1, (SELECT sum(x) FROM v3) AS s3;
SELECT a.x, a.n, b.n FROM (SELECT x, count(*) n FROM v1 GROUP BY x) a JOIN (SELECT x, count(*) n FROM v3 GROUP BY x) b USING (x) ORDER BY 1 LIMIT 3;

DROP TABLE h_scalars, h_wide, h_v_latest, h_v1, h_v3, h_v_trimmed;
DROP FUNCTION check_agg(text, text), rows_of(text), explain_filter(text);
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
