--
-- lt_fdw_parallel: parallel scans. The leader resolves the version and hands out units of work
-- (fragments) through shared memory; workers read the same version. Results equal the serial ones.
--
CREATE EXTENSION lt_fdw;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SET timezone = 'UTC';
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;
CREATE FUNCTION explain_filter(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE q LOOP
    RETURN NEXT replace(ln, current_setting('lt_test.tmp'), '$TMP');
  END LOOP;
END $$;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE pd (id bigint, grp integer, x double precision, s text, dt date, flag boolean,
  amount numeric(12,2), ts timestamp, payload text) SERVER lake OPTIONS (path 'pushdown.lance');

-- the serial answers
CREATE TEMP TABLE serial AS
  SELECT grp, count(*) AS n, sum(id) AS s_id, count(x) AS n_x, max(payload) AS m FROM pd GROUP BY grp;
CREATE TEMP TABLE serial_f AS SELECT id, grp, dt FROM pd WHERE grp IN (3, 4) AND id < 20000;

SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;

SELECT explain_filter($$EXPLAIN (COSTS OFF)
  SELECT grp, count(*) AS n, sum(id) AS s_id, count(x) AS n_x, max(payload) AS m FROM pd GROUP BY grp$$);
CREATE TEMP TABLE par AS
  SELECT grp, count(*) AS n, sum(id) AS s_id, count(x) AS n_x, max(payload) AS m FROM pd GROUP BY grp;
SELECT count(*) AS groups, (SELECT count(*) FROM ((TABLE serial EXCEPT ALL TABLE par) UNION ALL
                                                   (TABLE par EXCEPT ALL TABLE serial)) d) AS differ FROM par;

-- with a pushed filter
SELECT explain_filter($$EXPLAIN (COSTS OFF) SELECT id, grp, dt FROM pd WHERE grp IN (3, 4) AND id < 20000$$);
CREATE TEMP TABLE par_f AS SELECT id, grp, dt FROM pd WHERE grp IN (3, 4) AND id < 20000;
SELECT count(*) AS n, (SELECT count(*) FROM ((TABLE serial_f EXCEPT ALL TABLE par_f) UNION ALL
                                              (TABLE par_f EXCEPT ALL TABLE serial_f)) d) AS differ FROM par_f;

-- the workers really did the work (the leader does not take part here)
CREATE FUNCTION workers_launched(q text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE ln text; n integer := 0;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln ~ 'Workers Launched: \d+' THEN
      n := n + substring(ln FROM 'Workers Launched: (\d+)')::integer;
    END IF;
  END LOOP;
  RETURN n;
END $$;
SELECT workers_launched('SELECT id, x FROM pd WHERE grp > 2') > 0 AS launched;

-- a rescan of a Gather (the inner side of a nested loop) hands the units out again
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off; SET enable_memoize = off;
SET enable_seqscan = off;
CREATE TEMP TABLE g (k integer);
INSERT INTO g VALUES (1), (2);
ANALYZE g;
SELECT explain_filter($$EXPLAIN (COSTS OFF)
  SELECT g.k, count(*) FROM g JOIN pd p ON p.id % 2 = g.k - 1 AND p.grp IN (4, 5) GROUP BY g.k$$);
SELECT g.k, count(*) FROM g JOIN pd p ON p.id % 2 = g.k - 1 AND p.grp IN (4, 5) GROUP BY g.k ORDER BY g.k;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_material; RESET enable_memoize; RESET enable_seqscan;
RESET max_parallel_workers_per_gather;
SELECT grp, count(*) FROM pd WHERE grp IN (4, 5) GROUP BY grp ORDER BY grp;
SET max_parallel_workers_per_gather = 2;

-- the same results with the reader filter switched off
SET lt_fdw.enable_filter_pushdown = off;
SELECT count(*), sum(id) FROM pd WHERE grp IN (3, 4) AND id < 20000;
RESET lt_fdw.enable_filter_pushdown;
SELECT count(*), sum(id) FROM pd WHERE grp IN (3, 4) AND id < 20000;

-- a pushed aggregate beats a Partial Aggregate over a parallel scan: it reads only the aggregated (and
-- filter) columns and forms no tuple, where the parallel plan pays for every row that passes the filter
ANALYZE pd;
SHOW max_parallel_workers_per_gather;
SELECT explain_filter($$EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM pd WHERE grp IN (3, 4)$$);
SELECT count(*), sum(id) FROM pd WHERE grp IN (3, 4);
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET parallel_leader_participation;
SELECT explain_filter($$EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM pd WHERE grp IN (3, 4)$$);
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET lt_fdw.enable_aggregate_pushdown = off;     -- the plan it beats, with the same answer
SELECT explain_filter($$EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM pd WHERE grp IN (3, 4)$$);
SELECT count(*), sum(id) FROM pd WHERE grp IN (3, 4);
RESET lt_fdw.enable_aggregate_pushdown;

-- EXPLAIN ANALYZE of a parallel scan sums the workers' counters into what the leader shows: with the
-- leader not taking part, all of the scan is theirs. The same numbers as a serial scan: 4 fragments,
-- the 600 deleted rows, every live row the pushed filter drops
CREATE FUNCTION scan_counters(q text, OUT workers integer, OUT fragments bigint, OUT deleted bigint,
                              OUT filtered bigint, OUT bytes bigint) LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  workers := 0;
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln ~ 'Workers Launched: \d+' THEN workers := substring(ln FROM 'Workers Launched: (\d+)')::integer; END IF;
    IF ln ~ 'Fragments Scanned: \d+' THEN fragments := substring(ln FROM 'Fragments Scanned: (\d+)')::bigint; END IF;
    IF ln ~ 'Rows Removed by Deletion Vectors: \d+' THEN
      deleted := substring(ln FROM 'Rows Removed by Deletion Vectors: (\d+)')::bigint;
    END IF;
    IF ln ~ 'Rows Removed by Lance Filter: \d+' THEN
      filtered := substring(ln FROM 'Rows Removed by Lance Filter: (\d+)')::bigint;
    END IF;
    IF ln ~ 'Bytes Read: \d+' THEN bytes := substring(ln FROM 'Bytes Read: (\d+)')::bigint; END IF;
  END LOOP;
END $$;
SET parallel_leader_participation = off;
SELECT explain_filter($$EXPLAIN (COSTS OFF) SELECT id, payload FROM pd WHERE grp IN (3, 4)$$);
CREATE TEMP TABLE c_par AS SELECT * FROM scan_counters('SELECT id, payload FROM pd WHERE grp IN (3, 4)');
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE c_ser AS SELECT * FROM scan_counters('SELECT id, payload FROM pd WHERE grp IN (3, 4)');
SELECT p.workers > 0 AS parallel, s.workers AS serial_workers, p.fragments, s.fragments AS serial_fragments,
       p.deleted, s.deleted AS serial_deleted,
       p.filtered = 59400 - (SELECT count(*) FROM pd WHERE grp IN (3, 4)) AS filtered_all,
       p.filtered = s.filtered AS filtered_as_serial, p.bytes > 0 AS bytes_read,
       p.bytes BETWEEN s.bytes / 2 AND s.bytes * 2 AS bytes_near_serial
  FROM c_par p, c_ser s;
SET max_parallel_workers_per_gather = 2;
RESET parallel_leader_participation;
-- with the leader taking part, the sums are the same
CREATE TEMP TABLE c_lead AS SELECT * FROM scan_counters('SELECT id, payload FROM pd WHERE grp IN (3, 4)');
SELECT l.fragments, l.deleted, l.filtered = s.filtered AS filtered_as_serial FROM c_lead l, c_ser s;

SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
DROP FUNCTION explain_filter(text), workers_launched(text), scan_counters(text);
