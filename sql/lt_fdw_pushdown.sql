--
-- lt_fdw_pushdown: WHERE quals translated into the reader's filter ("Lance Filter" in EXPLAIN) or kept
-- with Postgres ("Filter"); every result is compared with the same query under
-- lt_fdw.enable_filter_pushdown = off. Datasets: scalars.lance (every scalar type, edge values, a row
-- of nulls) and pushdown.lance (60,000 rows, 4 fragments, deletions).
--
CREATE EXTENSION lt_fdw;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

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

-- the rows of q with pushdown on and off: how many, and how many differ (EXCEPT ALL both ways)
CREATE FUNCTION same_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint; diff bigint;
BEGIN
  PERFORM set_config('lt_fdw.enable_filter_pushdown', 'on', true);
  EXECUTE 'CREATE TEMP TABLE r_on AS ' || q;
  PERFORM set_config('lt_fdw.enable_filter_pushdown', 'off', true);
  EXECUTE 'CREATE TEMP TABLE r_off AS ' || q;
  PERFORM set_config('lt_fdw.enable_filter_pushdown', 'on', true);
  SELECT count(*) INTO diff FROM ((TABLE r_on EXCEPT ALL TABLE r_off) UNION ALL (TABLE r_off EXCEPT ALL TABLE r_on)) d;
  SELECT count(*) INTO n FROM r_on;
  DROP TABLE r_on; DROP TABLE r_off;
  RETURN format('%s rows, %s differ', n, diff);
END $$;

-- where a predicate runs (remote: all in the reader; local: all in Postgres; split: both), the ids
-- it selects, and the comparison with pushdown off
CREATE FUNCTION check_pred(tbl text, pred text, OUT runs text, OUT ids text, OUT same text)
LANGUAGE plpgsql AS $$
DECLARE ln text; r bool := false; l bool := false;
BEGIN
  FOR ln IN EXECUTE format('EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM %s WHERE %s', tbl, pred) LOOP
    r := r OR ln ~ '^\s+Lance Filter:';
    l := l OR ln ~ '^\s+Filter:';
  END LOOP;
  runs := CASE WHEN r AND l THEN 'split' WHEN r THEN 'remote' ELSE 'local' END;
  EXECUTE format('SELECT string_agg(id::text, '','' ORDER BY id) FROM %s WHERE %s', tbl, pred) INTO ids;
  same := same_rows(format('SELECT * FROM %s WHERE %s', tbl, pred));
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
-- wider declared types, text for any scalar, another scale for a decimal
CREATE FOREIGN TABLE scalars_wide (
  id numeric, i8 bigint, u16 bigint, f32 double precision, d32 text, dec numeric(12,1), tz_ms text
) SERVER lake OPTIONS (path 'scalars.lance');

-- ---- operators and types ----------------------------------------------------------------------
SELECT p AS predicate, c.*
FROM (VALUES
  -- integers, any widths, constants on either side
  ($$id = 2$$), ($$2 = id$$), ($$id <> 2$$), ($$i8 < 0$$), ($$i16 <= 2$$), ($$i32 > 3$$), ($$i64 >= 4$$),
  ($$i32 = 3::bigint$$), ($$i8 = 1::bigint$$), ($$i64 < 1::smallint$$), ($$u8 > 4$$), ($$u16 = 65535$$),
  ($$u32 < 10$$), ($$u64 > 8$$), ($$u64 = 18446744073709551615$$), ($$u64 >= 9223372036854775808$$),
  ($$i32 > 2.5$$), ($$i64::float8 < 0.5$$), ($$i32 BETWEEN 0 AND 10$$), ($$i32 NOT BETWEEN 0 AND 10$$),
  -- floats: NaN equals NaN and sorts above every number; -0 = 0
  ($$f16 < 0$$), ($$f32 = 'NaN'$$), ($$f32 > 1$$), ($$f32 < 'NaN'::real$$), ($$f32 >= 'NaN'$$),
  ($$f64 > 1e299$$), ($$f64 <> 'NaN'::float8$$), ($$f32 > 2.5::float8$$), ($$f16 = '-Infinity'$$),
  ($$f64 < 0$$), ($$f16 > -0.0::float8$$),
  -- numeric: decimals, unsigned 64, scales; NaN and more than 38 digits stay local
  ($$dec = 99.5$$), ($$dec > 0$$), ($$dec = 99.500$$), ($$dec38 < 0$$),
  ($$dec38 = 9999999999999999999999999999.9999999999$$), ($$dec38 > 1.49999999999999999999999999999999999999$$),
  ($$dec < 'NaN'$$), ($$dec > 0.000000000000000000000000000000000000001$$), ($$dec BETWEEN -1 AND 1$$),
  -- text: equality under any deterministic collation, ordering only under C / POSIX
  ($$s = ''$$), ($$s = E'tab\there'$$), ($$s <> 'x'$$), ($$s < 'b'$$), ($$s < 'b' COLLATE "C"$$),
  ($$s >= 'h' COLLATE "POSIX"$$), ($$ls = 'x'$$), ($$s = 'héllo wörld'$$), ($$ls > '日' COLLATE "C"$$),
  ($$s::varchar = 'x'$$), ($$s LIKE 'o%'$$),
  -- bytea
  ($$bin = '\x0001ff'$$), ($$bin < '\x01'$$), ($$fsb = '\x01020304'$$), ($$lbin > ''$$), ($$bin <> ''$$),
  -- dates (date32, date64), against dates and timestamps; infinities; TimeZone-dependent stays local
  ($$d32 < '1970-01-01'$$), ($$d32 = '2024-02-29'$$), ($$d64 > '2000-01-01'$$), ($$d32 < 'infinity'$$),
  ($$d32 > '-infinity'$$), ($$d64 = 'infinity'$$), ($$d32 < '2024-02-29 00:00:01'::timestamp$$),
  ($$d32 <= '2024-02-28 23:59:59'::timestamp$$), ($$d32 < '2024-02-29'::timestamptz$$),
  -- times of every unit
  ($$t32s = '23:59:59'$$), ($$t64ns > '00:00:00'$$), ($$t32ms < '00:00:01.001'$$), ($$t64ns = '01:02:03.123456'$$),
  ($$t64us >= '23:59:59.999999'$$),
  -- timestamps of every unit (ns floored to µs), against timestamps and dates (midnight), infinities
  ($$ts_s = '1970-01-01'$$), ($$ts_ns < '1970-01-01'$$), ($$ts_ns = '1969-12-31 23:59:59.999999'$$),
  ($$ts_us <= '1969-12-31 23:59:59.999999'$$), ($$ts_us > 'infinity'$$), ($$ts_us < 'infinity'$$),
  ($$ts_s >= '2001-09-09'::date$$), ($$ts_s = '2001-09-09'::date$$), ($$ts_s <= '2001-09-09'::date$$),
  ($$ts_ns > '2262-04-11 23:47:16.854775'$$),
  ($$tz_ms = '2024-06-01 12:00:00.5+00'$$), ($$tz_ns < '2000-01-01'::timestamptz$$),
  ($$tz_ns > '2000-01-01 00:00:00+00'$$), ($$tz_ms > '2000-01-01'::timestamp$$),
  -- booleans
  ($$b$$), ($$NOT b$$), ($$b IS TRUE$$), ($$b IS NOT TRUE$$), ($$b IS FALSE$$), ($$b IS NOT FALSE$$),
  ($$b IS UNKNOWN$$), ($$b IS NOT UNKNOWN$$), ($$b = false$$), ($$b <> true$$),
  -- IS [NOT] NULL
  ($$i32 IS NULL$$), ($$s IS NOT NULL$$), ($$bin IS NULL$$), ($$tz_ns IS NOT NULL$$),
  -- IN, = ANY, <> ALL (NULL items, empty arrays), with an expression item
  ($$id IN (1, 4, 9)$$), ($$id NOT IN (1, 4)$$), ($$i8 = ANY ('{1,127,NULL}')$$), ($$i8 <> ALL ('{1,NULL}')$$),
  ($$i8 <> ALL ('{1,-128}')$$), ($$id = ANY ('{}')$$), ($$i32 <> ALL ('{}')$$), ($$s IN ('x', '')$$),
  ($$d32 IN ('2024-02-29', '0001-01-01')$$), ($$dec IN (99.5, 0.001)$$), ($$f32 IN ('NaN', 2.5)$$),
  ($$id IN (1, i8)$$), ($$s COLLATE "C" IN ('x', 'y')$$),
  -- AND / OR / NOT, and qual lists split between the reader and Postgres
  ($$(id = 1 OR i8 > 100) AND NOT (s = '')$$), ($$NOT (i32 > 0 OR s IS NULL)$$),
  ($$id = 1 OR s < 'z'$$), ($$id > 1 AND s < 'z'$$), ($$i32 > 0 AND i64 + 0 > 0$$),
  -- never pushed: expressions, two columns, functions
  ($$id + 0 = 2$$), ($$id = i64$$), ($$i32::text = '3'$$), ($$length(s) > 3$$)
) v(p), LATERAL check_pred('scalars', p) c;

-- declared types other than the natural ones
SELECT p AS predicate, c.*
FROM (VALUES ($$id = 2$$), ($$id > 2.5$$), ($$i8 < 0$$), ($$u16 > 6$$), ($$f32 > 2$$), ($$d32 = '2024-02-29'$$),
             ($$dec = 99.5$$), ($$tz_ms IS NULL$$)) v(p),
     LATERAL check_pred('scalars_wide', p) c;

-- a user-defined operator is never pushed (a SQL function would be inlined into the built-in one)
CREATE FUNCTION my_eq(bigint, bigint) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS 'BEGIN RETURN $1 = $2; END';
CREATE OPERATOR === (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = my_eq);
SELECT * FROM check_pred('scalars', $$id === 2$$);

-- what EXPLAIN shows: the pushed filter and the local one
SELECT explain_filter($$EXPLAIN (VERBOSE, COSTS OFF)
  SELECT id, s FROM scalars WHERE i32 BETWEEN -5 AND 5 AND s < 'x' AND d32 IN ('2024-02-29', '1969-12-31') AND b IS NOT NULL$$);
SET lt_fdw.enable_filter_pushdown = off;
SELECT explain_filter($$EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM scalars WHERE i32 > 0$$);
RESET lt_fdw.enable_filter_pushdown;

-- ---- a bigger table: selective filters, rows removed, LIMIT --------------------------------------
CREATE FOREIGN TABLE pd (id bigint, grp integer, x double precision, s text, dt date, flag boolean,
  amount numeric(12,2), ts timestamp, payload text) SERVER lake OPTIONS (path 'pushdown.lance');
SELECT count(*), count(x), count(dt) FROM pd;
SELECT explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT id, payload FROM pd WHERE id BETWEEN 1000 AND 1099 AND grp = 3$$);
SELECT p AS predicate, c.same
FROM (VALUES ($$id BETWEEN 1000 AND 1099 AND grp = 3$$), ($$x > 0$$), ($$x = 'Infinity' OR x IS NULL$$),
             ($$dt < '1970-01-01'$$), ($$flag AND grp IN (1, 2)$$), ($$amount > 0 AND amount < 1000000000$$),
             ($$ts >= '1970-01-01'$$), ($$s = 'block zip de'$$), ($$id % 100 = 42$$), ($$grp <> ALL ('{0,1,2}')$$)) v(p),
     LATERAL check_pred('pd', p) c;
-- LIMIT stops reading: the scan has not left the first fragment
SELECT explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM pd LIMIT 10$$);
SELECT explain_filter($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM pd WHERE grp = 7 LIMIT 10$$);
-- ... and within that fragment LIMIT reads only the first chunks of each column: far fewer bytes than
-- reading 14,000 rows of that fragment
CREATE FUNCTION bytes_read(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO j;
  RETURN coalesce((j->0->'Plan'->>'Bytes Read'), (j->0->'Plan'->'Plans'->0->>'Bytes Read'))::bigint;
END $$;
SELECT bytes_read('SELECT * FROM pd LIMIT 10') * 5 < bytes_read('SELECT * FROM pd LIMIT 14000') AS limit_reads_little,
       bytes_read('SELECT * FROM pd LIMIT 10') > 0 AS limit_reads_something;
DROP FUNCTION bytes_read(text);

-- ---- parameters ----------------------------------------------------------------------------------
SET plan_cache_mode = force_generic_plan;
PREPARE q1(bigint, text) AS SELECT id, s FROM scalars WHERE id >= $1 AND s <> $2 ORDER BY id;
SELECT explain_filter($$EXPLAIN (VERBOSE, COSTS OFF) EXECUTE q1(2, 'x')$$);
EXECUTE q1(2, 'x');
EXECUTE q1(0, '');
EXECUTE q1(NULL, '');
-- a numeric parameter the filter cannot take (NaN) is checked locally for that execution
PREPARE q2(numeric) AS SELECT id FROM scalars WHERE dec < $1 ORDER BY id;
EXECUTE q2(100);
EXECUTE q2('NaN');
EXECUTE q2(0.0000000000000000000000000000000000000001);
-- an array parameter
PREPARE q3(int[]) AS SELECT id FROM scalars WHERE i32 = ANY ($1) ORDER BY id;
SELECT explain_filter($$EXPLAIN (VERBOSE, COSTS OFF) EXECUTE q3('{3}')$$);
EXECUTE q3('{3,-2147483648}');
EXECUTE q3('{}');
EXECUTE q3(NULL);
EXECUTE q3('{NULL,3}');
PREPARE q4(text[]) AS SELECT id FROM scalars WHERE s <> ALL ($1) ORDER BY id;
EXECUTE q4('{"", x}');
EXECUTE q4('{}');
PREPARE q5(date, timestamptz) AS SELECT id FROM scalars WHERE d32 < $1 AND tz_ms >= $2 ORDER BY id;
EXECUTE q5('infinity', '-infinity');
EXECUTE q5('2000-01-01', '1970-01-01');
PREPARE q6(bigint[]) AS SELECT count(*) FROM pd WHERE id = ANY ($1) AND grp > 0;
EXECUTE q6('{1, 2, 42, 142, 59999, 60000}');
RESET plan_cache_mode;
DEALLOCATE ALL;

-- a parameterized nested loop: the inner scan's filter takes each outer row's value
CREATE TEMP TABLE keys (k bigint);
INSERT INTO keys VALUES (1), (4), (42), (100), (59999), (NULL);
ANALYZE keys;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;
SELECT explain_filter($$EXPLAIN (VERBOSE, COSTS OFF) SELECT k, p.grp FROM keys JOIN pd p ON p.id = keys.k$$);
SELECT k, p.grp FROM keys JOIN pd p ON p.id = keys.k ORDER BY k;
SELECT same_rows($$SELECT k, p.grp FROM keys JOIN pd p ON p.id = keys.k$$);
-- a correlated subquery: a PARAM_EXEC rescans the foreign scan
SELECT k, (SELECT max(id) FROM pd WHERE grp = keys.k AND id < 1000) AS m FROM keys ORDER BY k;
SELECT same_rows($$SELECT k, (SELECT max(id) FROM pd WHERE grp = keys.k AND id < 1000) AS m FROM keys$$);
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_material;

SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
DROP OPERATOR === (bigint, bigint);
DROP FUNCTION my_eq(bigint, bigint);
DROP FUNCTION explain_filter(text), same_rows(text), check_pred(text, text);
