--
-- lt_fdw_scan: reading datasets written by the reference Lance engine (test/pg/specs/*.json, generated
-- by test/pg/run.sh into $LT_TEST_TMP/lake): every scalar type, nested types, _rowid/_rowaddr,
-- versions and tags, deletion vectors, projections, PREPARE/EXECUTE, EXPLAIN.
--
CREATE EXTENSION lt_fdw;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- EXPLAIN output with the unstable parts masked (paths, byte counts)
CREATE FUNCTION explain_filter(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE q LOOP
    ln := replace(ln, current_setting('lt_test.tmp'), '$TMP');
    ln := regexp_replace(ln, 'Bytes Read: \d+', 'Bytes Read: N');
    ln := regexp_replace(ln, 'Read Requests: \d+', 'Read Requests: N');
    RETURN NEXT ln;
  END LOOP;
END $$;

CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');

-- ---- scalars: one column per type, natural mapping -------------------------------------------
CREATE FOREIGN TABLE scalars (
  id bigint, b boolean, i8 smallint, i16 smallint, i32 integer, i64 bigint,
  u8 smallint, u16 integer, u32 bigint, u64 numeric(20,0),
  f16 real, f32 real, f64 double precision, s text, ls text,
  bin bytea, lbin bytea, fsb bytea, d32 date, d64 date,
  t32s time, t32ms time, t64us time, t64ns time,
  ts_s timestamp, ts_us timestamp, ts_ns timestamp, tz_ms timestamptz, tz_ns timestamptz,
  dec numeric(12,3), dec38 numeric(38,10)
) SERVER lake OPTIONS (path 'scalars.lance');

\x on
SELECT * FROM scalars ORDER BY id;
\x off

SELECT count(*) FROM scalars;
SELECT id, s, length(s) AS len, octet_length(s) AS bytes FROM scalars ORDER BY id;
SELECT id FROM scalars WHERE b ORDER BY id;
SELECT sum(i32::bigint) AS sum_i32, sum(u64) AS sum_u64, max(dec38) AS max_dec38 FROM scalars;
SELECT id, f32 = 'NaN'::real AS f32_nan, f16 = '-Infinity'::real AS f16_neginf FROM scalars WHERE id = 2;
SELECT id, ts_ns, extract(epoch FROM tz_ms) AS tz_ms_epoch FROM scalars WHERE ts_ns IS NOT NULL ORDER BY id;
-- a projection reads only the referenced fields; order of columns does not matter
SELECT i8, id FROM scalars WHERE id IN (1, 2) ORDER BY id;
-- LIMIT stops early
SELECT id FROM scalars LIMIT 2;

-- wider declared types, and text for any scalar
CREATE FOREIGN TABLE scalars_wide (
  id numeric, i8 bigint, u16 bigint, f32 double precision, d32 text, dec text, tz_ms text, u64 text
) SERVER lake OPTIONS (path 'scalars.lance');
SELECT * FROM scalars_wide ORDER BY id;

-- column_name maps a column to another field
CREATE FOREIGN TABLE renamed (key bigint OPTIONS (column_name 'id'), label text OPTIONS (column_name 's'))
  SERVER lake OPTIONS (path 'scalars.lance');
SELECT * FROM renamed ORDER BY key;
-- options are kept per backend until a change: the next statement reads the changed column option
ALTER FOREIGN TABLE renamed ALTER COLUMN key OPTIONS (SET column_name 'i8');
SELECT * FROM renamed ORDER BY label;
ALTER FOREIGN TABLE renamed ALTER COLUMN key OPTIONS (SET column_name 'id');
SELECT * FROM renamed ORDER BY key;

-- _rowid and _rowaddr: fragment 1 starts at 1 << 32
CREATE FOREIGN TABLE rowids (_rowid bigint, _rowaddr bigint, id bigint) SERVER lake OPTIONS (path 'scalars.lance');
SELECT _rowid, _rowaddr, _rowaddr >> 32 AS fragment, _rowaddr & 4294967295 AS "offset", id FROM rowids ORDER BY _rowid;
SELECT count(*) FROM rowids WHERE _rowaddr >= 4294967296;

-- ---- nested types -------------------------------------------------------------------------------
CREATE TYPE st_t AS (x integer, y text);
CREATE TYPE stl_t AS (l integer[], s text);
CREATE TYPE inner_t AS (a bigint, b double precision);
CREATE TYPE sts_t AS ("inner" inner_t, c boolean);
CREATE FOREIGN TABLE nested (
  id bigint, vec real[], fsl_i32 integer[], li bigint[], lst text[],
  st st_t, stl stl_t, ll jsonb, lstruct jsonb, sts sts_t
) SERVER lake OPTIONS (path 'nested.lance');
SELECT * FROM nested ORDER BY id;
SELECT id, (st).x, (st).y, (sts)."inner".a, vec[2], array_length(li, 1) FROM nested ORDER BY id;
-- jsonb accepts structs and lists too
CREATE FOREIGN TABLE nested_json (id bigint, st jsonb, vec jsonb, li jsonb, sts jsonb)
  SERVER lake OPTIONS (path 'nested.lance');
SELECT * FROM nested_json ORDER BY id;
SELECT id, st->>'y' AS y, sts->'inner'->'a' AS a FROM nested_json ORDER BY id;

-- ---- versions, tags, deletion vectors -----------------------------------------------------------
-- v1: fragment 0 (ids 0-9); v2: + fragment 1 (10-19), tag base; v3: + ids 100-104; v4: delete id % 4 = 0, tag trimmed
CREATE FOREIGN TABLE v_latest (id bigint, x integer, _rowaddr bigint) SERVER lake OPTIONS (path 'versions.lance');
CREATE FOREIGN TABLE v1 (id bigint, x integer) SERVER lake OPTIONS (path 'versions.lance', version '1');
CREATE FOREIGN TABLE v3 (id bigint, x integer) SERVER lake OPTIONS (path 'versions.lance', version '3');
CREATE FOREIGN TABLE v_base (id bigint, x integer) SERVER lake OPTIONS (path 'versions.lance', tag 'base');
CREATE FOREIGN TABLE v_trimmed (id bigint, x integer) SERVER lake OPTIONS (path 'versions.lance', tag 'trimmed');
SELECT count(*), min(id), max(id), sum(x) FROM v_latest;
SELECT count(*), min(id), max(id) FROM v1;
SELECT count(*), min(id), max(id) FROM v3;
SELECT count(*), min(id), max(id) FROM v_base;
SELECT count(*), min(id), max(id) FROM v_trimmed;
-- deleted rows are gone, the survivors keep their addresses
SELECT id, x, _rowaddr >> 32 AS fragment, _rowaddr & 4294967295 AS "offset" FROM v_latest WHERE id < 10 OR id >= 100 ORDER BY id;
SELECT count(*) AS deleted_visible FROM v_latest WHERE id % 4 = 0;
-- the same table read twice in one statement reads one version
SELECT (SELECT count(*) FROM v_latest) = (SELECT count(*) FROM v_latest a JOIN v_latest b USING (id)) AS same;
-- REPEATABLE READ pins the version read first (a writer between statements is tested elsewhere)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM v_latest;
SELECT count(*) FROM v_latest;
COMMIT;

-- ---- planning -------------------------------------------------------------------------------------
-- row estimates come from the manifest (live rows: physical rows minus deletions)
SELECT bool_or(l ~ 'rows=18 ') v_latest_18 FROM explain_filter('EXPLAIN SELECT * FROM v_latest') l;
SELECT bool_or(l ~ 'rows=10 ') v1_10 FROM explain_filter('EXPLAIN SELECT * FROM v1') l;
SELECT bool_or(l ~ 'rows=3 ') nested_3 FROM explain_filter('EXPLAIN SELECT * FROM nested') l;
-- a bigger table costs more
SELECT (SELECT substring(l from 'cost=[0-9.]+\.\.([0-9.]+)')::float FROM explain_filter('EXPLAIN SELECT * FROM v1') l LIMIT 1)
     < (SELECT substring(l from 'cost=[0-9.]+\.\.([0-9.]+)')::float FROM explain_filter('EXPLAIN SELECT * FROM v3') l LIMIT 1)
       AS v3_costs_more;

-- ---- EXPLAIN ------------------------------------------------------------------------------------
SELECT explain_filter('EXPLAIN (COSTS OFF) SELECT id FROM v_latest WHERE x > 10');
SELECT explain_filter('EXPLAIN (COSTS OFF) SELECT id FROM v_base');
SELECT explain_filter('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM v_latest');
SELECT explain_filter('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM v3');
SELECT explain_filter('EXPLAIN (VERBOSE, COSTS OFF, FORMAT JSON) SELECT id FROM v1');

-- ---- PREPARE / EXECUTE, rescans -----------------------------------------------------------------
PREPARE q(bigint) AS SELECT id, x FROM v_latest WHERE id > $1 ORDER BY id LIMIT 3;
EXECUTE q(10);
EXECUTE q(100);
EXECUTE q(1000);
DEALLOCATE q;
-- a rescan (inner side of a nested loop)
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;
SELECT count(*) FROM v1 a JOIN v3 b ON a.id = b.id;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_material;

SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
DROP TYPE sts_t, inner_t, stl_t, st_t;
