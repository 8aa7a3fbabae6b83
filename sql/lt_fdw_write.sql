--
-- lt_fdw_write: INSERT, batch inserts and COPY FROM into datasets written by the reference engine
-- (test/pg/specs/w_*.json), read back through lt_fdw: every scalar type, nested types, RETURNING,
-- a new fragment every max_rows_per_file rows, one new version per transaction, storage versions.
--
\getenv root LT_ROOT
\set ECHO none
\i :root/test/pg/lake.psql
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET extra_float_digits = 0;

CREATE SERVER wlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');

-- ---- every scalar type -------------------------------------------------------------------------
CREATE FOREIGN TABLE wt (
  id bigint, b boolean, i8 smallint, i16 smallint, i32 integer, i64 bigint,
  u8 smallint, u16 integer, u32 bigint, u64 numeric(20,0),
  f16 real, f32 real, f64 double precision, s text, ls text,
  bin bytea, lbin bytea, fsb bytea, d32 date, d64 date,
  t32s time, t32ms time, t64us time, t64ns time,
  ts_s timestamp, ts_us timestamp, ts_ns timestamp, tz_ms timestamptz, tz_ns timestamptz,
  dec numeric(12,3), dec38 numeric(38,10),
  _rowaddr bigint
) SERVER wlake OPTIONS (path 'write/w_types.lance');
SELECT count(*) AS rows_before, lt_test.versions('write/w_types.lance') AS versions_before FROM wt;

INSERT INTO wt (id, b, i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, s, ls, bin, lbin, fsb, d32, d64,
                t32s, t32ms, t64us, t64ns, ts_s, ts_us, ts_ns, tz_ms, tz_ns, dec, dec38) VALUES
  (1, true, -128, -32768, -2147483648, -9223372036854775808, 255, 65535, 4294967295, 18446744073709551615,
   1.5, 0.1, 3.141592653589793, 'héllo wörld', 'large "quoted" \ text', '\x0001ff', '\xdeadbeef', '\xdeadbeef',
   '1969-12-31', '2000-02-29', '23:59:59', '12:34:56.789', '00:00:00.000001', '01:02:03.123456',
   '1970-01-01 00:00:00', '1969-12-31 23:59:59.999999', '1969-12-31 23:59:59.999999',
   '2024-06-01 12:00:00.5+00', '2024-01-02 03:04:05.123456+00', -123456789.123,
   9999999999999999999999999999.9999999999),
  (2, false, 127, 32767, 2147483647, 9223372036854775807, 0, 0, 0, 9223372036854775808,
   '-Infinity', 'NaN', 1e300, '', '日本語 😀', '', '', '\x00000000', '0001-01-01', '9999-12-31',
   '00:00:00', '00:00:00', '23:59:59.999999', '23:59:59.999999', '0001-01-01 00:00:00',
   '9999-12-31 23:59:59.999999', '2262-04-11 23:47:16.854775', '1970-01-01 00:00:00+00',
   '1677-09-21 00:12:43.145225+00', 0.001, -0.0000000001),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
-- only the id (the other columns default to NULL)
INSERT INTO wt (id, s) VALUES (4, 'only text');
SELECT lt_test.versions('write/w_types.lance') AS versions_after_two_inserts;

\x on
SELECT * FROM wt ORDER BY id;
\x off
-- the precision below a field's unit is floored, as reads floor ns to µs
INSERT INTO wt (id, t32s, t32ms, ts_s, tz_ms) VALUES (5, '10:00:00.999999', '10:00:00.999999',
  '2000-01-01 00:00:00.999999', '2000-01-01 00:00:00.9999+00');
SELECT id, t32s, t32ms, ts_s, tz_ms FROM wt WHERE id = 5;
-- float16 rounds to the nearest half (ties to even)
INSERT INTO wt (id, f16) VALUES (6, 0.1), (7, 65504), (8, 1e-8), (9, 2049);
SELECT id, f16 FROM wt WHERE id BETWEEN 6 AND 9 ORDER BY id;

-- ---- wider declared types, and text for any scalar ----------------------------------------------
CREATE FOREIGN TABLE wt_wide (
  id numeric, i8 bigint, u16 bigint, f32 double precision, d32 text, dec text, tz_ms text, u64 text
) SERVER wlake OPTIONS (path 'write/w_types.lance');
INSERT INTO wt_wide VALUES (10, 100, 60000, 0.5, '2024-02-29', '12.5', '2024-01-01 00:00:00+00', '42');
SELECT id, i8, u16, f32, d32, dec, tz_ms, u64 FROM wt WHERE id = 10;

-- ---- RETURNING ------------------------------------------------------------------------------------
INSERT INTO wt (id, s, i32) VALUES (11, 'returned', 7), (12, 'too', 8) RETURNING id, s, i32 * 2 AS twice, _rowaddr;
WITH ins AS (INSERT INTO wt (id, s) VALUES (13, 'cte') RETURNING id)
SELECT count(*) FROM ins;
SELECT count(*) AS rows, lt_test.versions('write/w_types.lance') AS versions FROM wt;

-- ---- nested types ---------------------------------------------------------------------------------
CREATE TYPE wpoint AS (x integer, y text);
CREATE FOREIGN TABLE wn (
  id bigint, vec real[], li bigint[], lst text[], st wpoint, ll jsonb, lstruct jsonb, m jsonb
) SERVER wlake OPTIONS (path 'write/w_nested.lance');
INSERT INTO wn VALUES
  (1, '{1.5,-2,0.25}', '{1,-2,9223372036854775807}', '{a,NULL,"c\"d"}', ROW(7, 'seven'),
   '[[1, 2], [], null, [3]]', '[{"a": 1, "b": "x"}, {"a": null, "b": "y"}]', '{"k1": 1, "k2": null}'),
  (2, NULL, '{}', NULL, ROW(NULL, 'no x'), NULL, '[]', '{}'),
  (3, '{0,0,1}', NULL, '{}', NULL, '[[5]]', NULL, NULL);
SELECT * FROM wn ORDER BY id;
SELECT id, (st).x, (st).y, vec[2] AS vec2, cardinality(li) AS n_li FROM wn ORDER BY id;
-- a struct and a list through jsonb
CREATE FOREIGN TABLE wn_json (id bigint, st jsonb, li jsonb, vec jsonb) SERVER wlake OPTIONS (path 'write/w_nested.lance');
INSERT INTO wn_json VALUES (4, '{"x": 9, "y": "nine", "extra": true}', '[4, 5]', '[1, 2, 3]'),
                           (5, '{"y": "no x"}', 'null', null);
SELECT * FROM wn_json WHERE id >= 4 ORDER BY id;

-- ---- batch inserts --------------------------------------------------------------------------------
CREATE FOREIGN TABLE wb (id bigint, value text, li integer[]) SERVER wlake OPTIONS (path 'write/w_v2_2.lance', batch_size '100');
EXPLAIN (COSTS OFF) INSERT INTO wb SELECT g, 'v' || g, ARRAY[g::int] FROM generate_series(2, 1001) g;
INSERT INTO wb SELECT g, 'v' || g, ARRAY[g::int] FROM generate_series(2, 1001) g;
SELECT count(*), sum(id), count(DISTINCT value), sum(li[1]) FROM wb;
SELECT lt_test.versions('write/w_v2_2.lance') AS versions;
ALTER FOREIGN TABLE wb OPTIONS (SET batch_size '1');
INSERT INTO wb VALUES (1002, 'single', '{1002}');
SELECT * FROM wb WHERE id IN (1, 500, 1002) ORDER BY id;

-- ---- max_rows_per_file: a new fragment every N rows ------------------------------------------------
CREATE FOREIGN TABLE wm (id bigint, value text, li integer[], _rowaddr bigint)
  SERVER wlake OPTIONS (path 'write/w_v2_2.lance', max_rows_per_file '300');
SELECT lt_test.versions('write/w_v2_2.lance') AS v0 \gset
INSERT INTO wm SELECT g, 'row ' || g, ARRAY[g::int, -g::int] FROM generate_series(5001, 6000) g;
SELECT _rowaddr >> 32 AS fragment, count(*), min(id), max(id) FROM wm WHERE id > 5000 GROUP BY 1 ORDER BY 1;
SELECT count(*), sum(id), sum(li[2]) FROM wm WHERE id > 5000;
SELECT lt_test.versions('write/w_v2_2.lance') - :v0 AS new_versions;

-- ---- storage 2.0 (a list, a string: the 2.0 encodings) ------------------------------------------------
CREATE FOREIGN TABLE w20 (id bigint, value text, li integer[]) SERVER wlake OPTIONS (path 'write/w_v2_0.lance');
INSERT INTO w20 SELECT g, 'row ' || g, ARRAY[g::int, -g::int] FROM generate_series(2, 1000) g;
SELECT count(*), sum(id), sum(li[2]), count(DISTINCT value) FROM w20;
SELECT * FROM w20 WHERE id IN (1, 2, 1000) ORDER BY id;
SELECT lt_test.versions('write/w_v2_0.lance') AS versions;

-- ---- COPY FROM ------------------------------------------------------------------------------------
COPY wb (id, value, li) FROM STDIN;
2001	copied one	{1,2}
2002	\N	{}
2003	copied three	\N
\.
SELECT * FROM wb WHERE id BETWEEN 2001 AND 2999 ORDER BY id;
COPY wb (id, value) FROM STDIN (FORMAT csv);
2004,"csv, with comma"
2005,
\.
SELECT * FROM wb WHERE id BETWEEN 2004 AND 2999 ORDER BY id;
SELECT count(*) AS rows, lt_test.versions('write/w_v2_2.lance') AS versions FROM wb;

-- ---- nothing inserted: no new version ---------------------------------------------------------------
INSERT INTO wb SELECT * FROM wb WHERE false;
BEGIN;
INSERT INTO wb SELECT * FROM wb WHERE id < 0;
COMMIT;
SELECT lt_test.versions('write/w_v2_2.lance') AS versions_unchanged;

-- ---- INSERT ... SELECT from the table itself: the statement does not see its own rows ---------------
INSERT INTO wb SELECT id + 10000, value, li FROM wb WHERE id <= 3;
SELECT id, value FROM wb WHERE id > 10000 ORDER BY id;

-- ---- cleanup --------------------------------------------------------------------------------------------
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
DROP TYPE wpoint;
