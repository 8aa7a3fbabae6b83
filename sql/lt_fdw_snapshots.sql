--
-- lt_fdw_snapshots: which version of a dataset each statement reads while another writer (the reference
-- Lance engine, run with \!) commits between the statements of an open transaction. READ COMMITTED reads
-- the newest version at each statement; REPEATABLE READ and SERIALIZABLE keep the version the table first
-- read until the transaction ends; parallel workers read the leader's version, not the newest one.
--
CREATE EXTENSION lt_fdw;
\getenv tmp LT_TEST_TMP
\getenv root LT_ROOT
\set lake :tmp '/lake'
\set snap :lake '/snap.lance'
\setenv LT_SNAP :snap
\set ref :root '/test/interop/ref.mjs'
\set ops :root '/test/pg/ops'
\setenv LT_REF_MJS :ref
\setenv LT_OPS :ops
-- v1: ids 0..9999, v2: ids 10000..19999
\! node "$LT_REF_MJS" make "$LT_SNAP" "$LT_OPS/snap.json" >/dev/null
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;
CREATE FUNCTION snap_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE q LOOP
    RETURN NEXT replace(ln, current_setting('lt_test.tmp'), '$TMP');
  END LOOP;
END $$;
CREATE FUNCTION snap_workers(q text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE ln text; n integer := 0;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln ~ 'Workers Launched: \d+' THEN
      n := n + substring(ln FROM 'Workers Launched: (\d+)')::integer;
    END IF;
  END LOOP;
  RETURN n;
END $$;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE snap (id bigint, g integer) SERVER lake OPTIONS (path 'snap.lance');

-- what one statement sees: the version EXPLAIN names, COUNT(*) from the manifest, and a real scan
CREATE FUNCTION snap_state(OUT version bigint, OUT n_meta bigint, OUT n bigint, OUT sum_id numeric)
LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN SELECT id FROM snap' LOOP
    IF ln ~ 'Lance Version: \d+' THEN
      version := substring(ln FROM 'Lance Version: (\d+)')::bigint;
    END IF;
  END LOOP;
  SELECT count(*) INTO n_meta FROM snap;
  SELECT count(*), sum(q.id) INTO n, sum_id FROM (SELECT id FROM snap OFFSET 0) q;
END $$;

-- READ COMMITTED: every statement reads the newest version
BEGIN;
SELECT * FROM snap_state();
\! node "$LT_REF_MJS" apply "$LT_SNAP" "$LT_OPS/snap-append.json" >/dev/null
SELECT * FROM snap_state();
SELECT count(*) AS n, max(id) AS max_id FROM snap WHERE id >= 100000;
\! node "$LT_REF_MJS" apply "$LT_SNAP" "$LT_OPS/snap-delete.json" >/dev/null
SELECT * FROM snap_state();
SELECT min(id) AS min_id FROM snap;
COMMIT;

-- REPEATABLE READ: the version first read holds for the whole transaction ...
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM snap_state();
\! node "$LT_REF_MJS" apply "$LT_SNAP" "$LT_OPS/snap-append.json" >/dev/null
SELECT * FROM snap_state();
SELECT count(*) AS n FROM snap WHERE id >= 100000;
-- ... also for parallel workers, which start after the commit: they read the leader's version
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL parallel_leader_participation = off;
SET LOCAL lt_fdw.enable_aggregate_pushdown = off;
SELECT snap_explain('EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM snap');
SELECT count(*) AS n, sum(id) AS sum_id FROM snap;
SELECT snap_workers('SELECT count(*), sum(id) FROM snap') > 0 AS launched;
-- a scan that is not parallel-aware but runs in a worker: a pushed aggregate under a single-copy Gather
SET LOCAL lt_fdw.enable_aggregate_pushdown = on;
SET LOCAL force_parallel_mode = on;
SELECT count(*) AS n, sum(id) AS sum_id FROM snap;
SELECT snap_workers('SELECT count(*), sum(id) FROM snap') > 0 AS launched;
COMMIT;
-- after it, the newest version
SELECT * FROM snap_state();

-- SERIALIZABLE: the same
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT * FROM snap_state();
\! node "$LT_REF_MJS" apply "$LT_SNAP" "$LT_OPS/snap-append.json" >/dev/null
SELECT * FROM snap_state();
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL parallel_leader_participation = off;
SET LOCAL lt_fdw.enable_aggregate_pushdown = off;
SELECT count(*) AS n, sum(id) AS sum_id FROM snap;
SELECT snap_workers('SELECT count(*), sum(id) FROM snap') > 0 AS launched;
SET LOCAL lt_fdw.enable_aggregate_pushdown = on;
SET LOCAL force_parallel_mode = on;
SELECT count(*) AS n, sum(id) AS sum_id FROM snap;
COMMIT;
SELECT * FROM snap_state();

-- a table pinned to a version by its options ignores both: always version 2
CREATE FOREIGN TABLE snap_v2 (id bigint, g integer) SERVER lake OPTIONS (path 'snap.lance', version '2');
BEGIN;
SELECT count(*) AS n, sum(id) AS sum_id FROM snap_v2;
\! node "$LT_REF_MJS" apply "$LT_SNAP" "$LT_OPS/snap-delete.json" >/dev/null
SELECT count(*) AS n, sum(id) AS sum_id FROM snap_v2;
COMMIT;
-- the delete matched nothing new (ids < 20 are gone since v4), yet it made a version
SELECT * FROM snap_state();

DROP SERVER lake CASCADE;
DROP FUNCTION snap_state(), snap_explain(text), snap_workers(text);
