--
-- lt_fdw_overwrite_index: the delete set of a replace planned with a zone map (lt_create_index): fragments
-- it proves empty are pruned, a fragment whose zones are all the replaced value is removed by id without a
-- read (its data file is made unreadable to the server first, and the replace still works), mixed zones
-- are rechecked, fragments the zone map does not cover are scanned.  Dataset write/w_overwrite_zones.lance:
-- an empty dataset filled here with fragments 0..3 of 1000 rows: 08-01, 08-02, 08-03 and 08-04 alternating, 08-05.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
\getenv tmp LT_TEST_TMP
\getenv root LT_ROOT
\set lake :tmp '/lake'
\set ds :lake '/write/w_overwrite_zones.lance'
\setenv LT_OZDS :ds
\set info :root '/test/pg/lt-info.mjs'
\setenv LT_INFO :info
CREATE SERVER ozlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE oz (id bigint, dt date, value text) SERVER ozlake
  OPTIONS (path 'write/w_overwrite_zones.lance', max_rows_per_file '1000');
-- a fragment per 1000 rows: 08-01, 08-02, 08-03 and 08-04 alternating, 08-05
INSERT INTO oz SELECT g, CASE g / 1000 WHEN 0 THEN DATE '2026-08-01' WHEN 1 THEN DATE '2026-08-02'
                             WHEN 2 THEN DATE '2026-08-03' + g % 2 ELSE DATE '2026-08-05' END, 'row ' || g
  FROM generate_series(0, 3999) g;
SELECT * FROM lt_create_index('oz', 'dt', 'zonemap', 'dt_zones');
SELECT name, kind, covered_fragments FROM lt_indexes('oz');
\! node "$LT_INFO" "$LT_OZDS"

-- 08-01: fragment 0's zones are all 08-01, the others' zones exclude it
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-01'$$;
EXPLAIN (COSTS OFF) INSERT INTO oz SELECT g, DATE '2026-08-01', 'new' FROM generate_series(10000, 10099) g;
ROLLBACK;
-- the replace never reads fragment 0: it works with that data file unreadable to the server
\set f0 `node "$LT_INFO" --data-file 0 "$LT_OZDS"`
\setenv LT_F0 :f0
\! chmod 000 "$LT_F0"
-- (the control: without the zone map the replace has to read that file, and cannot)
SET lt_fdw.enable_index_scan = off;
DO $$ BEGIN
  PERFORM * FROM lt_insert_overwrite('oz', $p$dt = DATE '2026-08-01'$p$, $q$SELECT 1::bigint, DATE '2026-08-01', 'x'$q$);
  RAISE NOTICE 'fragment 0 was read';
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'without the zone map: % (%)', SQLSTATE, CASE WHEN SQLERRM LIKE '%Permission denied%' OR SQLERRM LIKE '%ermission%' THEN 'permission denied' ELSE 'other error' END;
END $$;
RESET lt_fdw.enable_index_scan;
SELECT * FROM lt_insert_overwrite('oz', $$dt = DATE '2026-08-01'$$,
                                  $$SELECT g, DATE '2026-08-01', 'new' FROM generate_series(10000, 10099) g$$);
\! chmod 644 "$LT_F0"
\! node "$LT_INFO" "$LT_OZDS"
SELECT dt, count(*), min(id), max(id) FROM oz GROUP BY dt ORDER BY dt;

-- 08-03: fragment 2's zones hold 08-03 and 08-04: its rows are rechecked, half of them deleted
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-03'$$;
EXPLAIN (COSTS OFF) INSERT INTO oz SELECT 1, DATE '2026-08-03', 'x' WHERE false;
ROLLBACK;
SELECT * FROM lt_insert_overwrite('oz', $$dt = DATE '2026-08-03'$$, $$SELECT 20000, DATE '2026-08-03', 'one'$$);
\! node "$LT_INFO" "$LT_OZDS"

-- 08-01 again: its rows now live in the fragment the zone map does not cover, which is scanned
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt = DATE '2026-08-01'$$;
EXPLAIN (COSTS OFF) INSERT INTO oz SELECT 1, DATE '2026-08-01', 'x' WHERE false;
ROLLBACK;
SELECT * FROM lt_insert_overwrite('oz', $$dt = DATE '2026-08-01'$$,
                                  $$SELECT g, DATE '2026-08-01', 'newer' FROM generate_series(10000, 10009) g$$);
SELECT dt, count(*), min(id), max(id) FROM oz GROUP BY dt ORDER BY dt;

-- a range over two whole fragments: both removed by id
BEGIN;
SET LOCAL lt_fdw.overwrite_where = $$dt BETWEEN DATE '2026-08-02' AND DATE '2026-08-05' AND dt <> DATE '2026-08-03' AND dt <> DATE '2026-08-04'$$;
EXPLAIN (COSTS OFF) INSERT INTO oz SELECT 1, DATE '2026-08-02', 'x' WHERE false;
ROLLBACK;
SELECT * FROM lt_insert_overwrite('oz', $$dt IN (DATE '2026-08-02', DATE '2026-08-05')$$, 'SELECT 1::bigint, NULL::date, NULL WHERE false');
SELECT dt, count(*) FROM oz GROUP BY dt ORDER BY dt;
\! node "$LT_INFO" "$LT_OZDS"

SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
