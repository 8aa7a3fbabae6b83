--
-- lt_fdw_vector: vector distances on real[] and double precision[] with pgvector's spelling
-- (<->, <=>, <#>, l2_distance, cosine_distance, inner_product), and ORDER BY col <op> q LIMIT k
-- answered inside the scan (exact kNN), compared with the same query over a heap copy.
-- Dataset: vectors.lance (3000 rows in 3 fragments, vec fixed_size_list<float32,8> NULL every 50th
-- row, with the engine's IVF_FLAT index (listed; the scan's search is exact), v64
-- fixed_size_list<float64,4>, cat 0..9, rows with id % 7 = 3 deleted).
--
-- the suites share one database: the extension may be there already
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SET extra_float_digits = 0;

-- ---- 1. operators and functions ------------------------------------------------------------------
SELECT '{1,2,3}'::real[] <-> '{4,5,6}' AS l2, l2_distance('{1,2,3}'::real[], '{4,5,6}') AS l2_fn,
       '{1,2,3}'::real[] <=> '{4,5,6}' AS cos, cosine_distance('{1,2,3}'::real[], '{4,5,6}') AS cos_fn,
       '{1,2,3}'::real[] <#> '{4,5,6}' AS neg_ip, inner_product('{1,2,3}'::real[], '{4,5,6}') AS ip;
SELECT '{1,2,3}'::float8[] <-> '{4,5,6}' AS l2, '{1,2,3}'::float8[] <=> '{4,5,6}' AS cos,
       '{1,2,3}'::float8[] <#> '{4,5,6}' AS neg_ip, inner_product('{1,2,3}'::float8[], '{4,5,6}') AS ip;
-- float32 arithmetic for real[], float64 for double precision[]
SELECT '{0.1,0.2}'::real[] <-> '{0.3,0.7}' AS l2_f4, '{0.1,0.2}'::float8[] <-> '{0.3,0.7}' AS l2_f8;
-- the same vector: 0; opposite: cosine 2; orthogonal: 1; a zero vector: NaN (as pgvector)
SELECT '{3,4}'::real[] <-> '{3,4}' AS same, '{1,1}'::real[] <=> '{-1,-1}' AS opposite,
       '{1,0}'::real[] <=> '{0,5}' AS orthogonal, '{0,0}'::real[] <=> '{1,2}' AS zero;
-- empty vectors: no dimensions to compare
SELECT '{}'::real[] <-> '{}' AS l2_empty, '{}'::real[] <#> '{}' AS ip_empty;
-- NULL in, NULL out
SELECT NULL::real[] <-> '{1}' IS NULL AS l2_null, l2_distance('{1}'::real[], NULL) IS NULL AS fn_null,
       NULL::float8[] <=> NULL IS NULL AS cos_null, inner_product(NULL::real[], '{1}') IS NULL AS ip_null;
-- a literal and an integer array take the column's type
SELECT ARRAY[1, 2]::real[] <-> ARRAY[4, 6] AS int_array, ARRAY[1.5, 2] <-> '{1.5,2}'::float8[] AS numeric_array;
-- errors of class 22: dimensions, NULL items, arrays of two dimensions
\set VERBOSITY sqlstate
SELECT '{1,2,3}'::real[] <-> '{1,2}';
SELECT cosine_distance('{1,2}'::float8[], '{1}');
SELECT '{1,NULL}'::real[] <#> '{1,2}';
SELECT '{{1,2},{3,4}}'::real[] <-> '{{1,2},{3,4}}';
\set VERBOSITY default
SELECT '{1,2,3}'::real[] <-> '{1,2}';
SELECT '{1,NULL}'::real[] <#> '{1,2}';
-- the operators commute
SELECT oprname, oprleft::regtype, oprright::regtype, oprcom::regoperator, oprcode
FROM pg_operator WHERE oprname IN ('<->', '<=>', '<#>') AND oprleft IN ('real[]'::regtype, 'float8[]'::regtype)
ORDER BY oprname, oprleft::regtype::text;
-- on a heap table they are ordinary operators
CREATE TEMP TABLE hv (id int, v real[]);
INSERT INTO hv VALUES (1, '{0,0}'), (2, '{1,1}'), (3, '{5,5}'), (4, NULL), (5, '{-1,0.5}');
SELECT id, round((v <-> '{1,0}')::numeric, 4) AS l2 FROM hv ORDER BY v <-> '{1,0}', id;
SELECT id, v <#> '{1,2}' AS neg_ip FROM hv ORDER BY v <#> '{1,2}' NULLS FIRST, id;

-- ---- 2. exact kNN inside the scan ------------------------------------------------------------------
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;
CREATE FUNCTION explain_knn(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE q LOOP
    -- what the index cache answered depends on the suites run before (lt_fdw_vector_shared shows it)
    CONTINUE WHEN ln ~ '^\s*Index Cache: ';
    ln := replace(ln, current_setting('lt_test.tmp'), '$TMP');
    ln := regexp_replace(ln, 'Bytes Read: \d+', 'Bytes Read: N');
    ln := regexp_replace(ln, 'Read Requests: \d+', 'Read Requests: N');
    RETURN NEXT ln;
  END LOOP;
END $$;
CREATE SERVER vlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE vt (id bigint, cat integer, vec real[], v64 double precision[])
  SERVER vlake OPTIONS (path 'vectors.lance');
CREATE TABLE vh AS SELECT * FROM vt;
-- the engine's IVF_FLAT index on vec, listed with its kind as index.idx names it
SELECT name, columns, kind, covered_fragments, unindexed_fragments FROM lt_indexes('vt');
SELECT count(*) AS live_rows, count(vec) AS with_vec, count(DISTINCT vec) AS distinct_vec FROM vh;

-- the scan returns the rows in order: no Sort above it
SELECT explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 5$$);
SELECT explain_knn($$EXPLAIN (COSTS OFF) SELECT id, vec <=> '{1,2,3,4,5,6,7,8}' FROM vt WHERE cat = 3 ORDER BY 2 LIMIT 5$$);
SELECT explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt ORDER BY v64 <#> '{1,2,3,4}' LIMIT 5$$);

-- random queries, every metric, several k, with and without pushed filters: the same ids and
-- distances as the heap copy (its Sort uses the same operator); returns the queries that differ
CREATE FUNCTION knn_differ(n int, filters text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ops text[] := ARRAY['<->', '<=>', '<#>'];
  ks int[] := ARRAY[1, 5, 37, 200];
  bad text := ''; q text; q64 text; sql text; a text; b text; tried int := 0;
BEGIN
  PERFORM setseed(0.25);
  FOR i IN 1..n LOOP
    SELECT '{' || string_agg((random() * 2000 - 1000)::real::text, ',') || '}' INTO q FROM generate_series(1, 8);
    SELECT '{' || string_agg((random() * 60000 - 30000)::text, ',') || '}' INTO q64 FROM generate_series(1, 4);
    FOREACH sql IN ARRAY ARRAY[
        format('SELECT array_agg(id || ''='' || d) FROM (SELECT id, vec %s %L::real[] AS d FROM %%I %s ORDER BY vec %s %L::real[] LIMIT %s) s',
               ops[1 + i % 3], q, filters[1 + i % array_length(filters, 1)], ops[1 + i % 3], q, ks[1 + i % 4]),
        format('SELECT array_agg(id || ''='' || d) FROM (SELECT id, v64 %s %L::float8[] AS d FROM %%I %s ORDER BY v64 %s %L::float8[] LIMIT %s) s',
               ops[1 + (i + 1) % 3], q64, filters[1 + (i + 1) % array_length(filters, 1)], ops[1 + (i + 1) % 3], q64, ks[1 + (i + 2) % 4])] LOOP
      EXECUTE format(sql, 'vt') INTO a;
      EXECUTE format(sql, 'vh') INTO b;
      tried := tried + 1;
      IF a IS DISTINCT FROM b THEN bad := bad || format(sql, 'vt') || E'\n'; END IF;
    END LOOP;
  END LOOP;
  RETURN tried || ' queries, differ: ' || CASE WHEN bad = '' THEN 'none' ELSE bad END;
END $$;
SELECT knn_differ(24, ARRAY['', 'WHERE cat = 3', 'WHERE cat IN (1, 2) AND id > 1000', 'WHERE id BETWEEN 2500 AND 2620']);
-- the kNN path was the one taken (a Sort would also give the right answer)
SELECT count(*) AS sorts FROM explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt WHERE cat IN (1, 2) AND id > 1000 ORDER BY vec <=> '{1,2,3,4,5,6,7,8}' LIMIT 37$$) l
WHERE l LIKE '%Sort%';

-- a filter selecting fewer rows than k: every matching row, in order
SELECT count(*) AS rows, bool_and(id BETWEEN 2990 AND 3010) AS all_match
FROM (SELECT id FROM vt WHERE id BETWEEN 2990 AND 3010 ORDER BY vec <-> '{0,0,0,0,0,0,0,0}' LIMIT 50) s;
-- more than every row: the NULL vectors come last
SELECT count(*) AS rows, count(*) FILTER (WHERE vec IS NULL) AS null_vectors,
       bool_and(vec IS NULL) FILTER (WHERE rn > 2520) AS nulls_last,
       bool_and(vec IS NOT NULL) FILTER (WHERE rn <= 2520) AS vectors_first
FROM (SELECT id, vec, row_number() OVER () AS rn FROM (SELECT id, vec FROM vt ORDER BY vec <-> '{0,0,0,0,0,0,0,0}' LIMIT 5000) s) t;
-- OFFSET: the scan ranks LIMIT + OFFSET rows
SELECT (SELECT array_agg(id) FROM (SELECT id FROM vt ORDER BY vec <-> '{5,5,5,5,5,5,5,5}' LIMIT 5 OFFSET 10) s) =
       (SELECT array_agg(id) FROM (SELECT id FROM vh ORDER BY vec <-> '{5,5,5,5,5,5,5,5}' LIMIT 5 OFFSET 10) s) AS offset_same;
-- a qual the scan cannot push is checked after it: the stream goes on (more rounds) until LIMIT has its rows
-- (enable_sort off: with a local qual the planner may prefer its own Sort, which is right too)
SET enable_sort = off;
SELECT explain_knn($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT id FROM vt WHERE (id::text || 'x') LIKE '%3x' ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 20$$);
SELECT (SELECT array_agg(id) FROM (SELECT id FROM vt WHERE (id::text || 'x') LIKE '%3x' ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 20) s) =
       (SELECT array_agg(id) FROM (SELECT id FROM vh WHERE (id::text || 'x') LIKE '%3x' ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 20) s) AS local_qual_same;
RESET enable_sort;
-- a prepared statement's generic plan: the query vector and k are parameters
PREPARE knn(real[], int) AS SELECT array_agg(id) FROM (SELECT id FROM vt WHERE cat <> 4 ORDER BY vec <-> $1 LIMIT $2) s;
PREPARE knn_heap(real[], int) AS SELECT array_agg(id) FROM (SELECT id FROM vh WHERE cat <> 4 ORDER BY vec <-> $1 LIMIT $2) s;
SET plan_cache_mode = force_generic_plan;
SELECT explain_knn($$EXPLAIN (COSTS OFF) EXECUTE knn('{1,2,3,4,5,6,7,8}', 7)$$);
EXECUTE knn('{1,2,3,4,5,6,7,8}', 40) \gset a_
EXECUTE knn_heap('{1,2,3,4,5,6,7,8}', 40) \gset b_
SELECT :'a_array_agg' = :'b_array_agg' AS prepared_same, cardinality(:'a_array_agg'::bigint[]) AS k;
-- plpgsql's variables are parameters of a generic plan too
CREATE FUNCTION knn_generic(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE qv real[]; k int; a bigint[]; b bigint[]; bad int := 0;
BEGIN
  FOR i IN 1..n LOOP
    qv := ARRAY[i * 37 % 500, -i, i * 10, 0, 1, 2, 3, i]::real[];
    k := 1 + i * 13 % 90;
    SELECT array_agg(id) INTO a FROM (SELECT id FROM vt WHERE cat <> 4 ORDER BY vec <=> qv LIMIT k) s;
    SELECT array_agg(id) INTO b FROM (SELECT id FROM vh WHERE cat <> 4 ORDER BY vec <=> qv LIMIT k) s;
    IF a IS DISTINCT FROM b OR cardinality(a) <> k THEN bad := bad + 1; END IF;
  END LOOP;
  RETURN bad;
END $$;
SELECT knn_generic(12) AS generic_differ;
RESET plan_cache_mode;
-- LATERAL: the query vector is an outer row's
SELECT explain_knn($$EXPLAIN (COSTS OFF) SELECT q.qid, s.id FROM (VALUES (1, '{1,2,3,4,5,6,7,8}'::real[]), (2, '{-500,0,500,0,-500,0,500,0}')) q(qid, v),
  LATERAL (SELECT id FROM vt WHERE cat < 8 ORDER BY vt.vec <-> q.v LIMIT 3) s$$);
SELECT (SELECT array_agg(q.qid || ':' || s.id) FROM (VALUES (1, '{1,2,3,4,5,6,7,8}'::real[]), (2, '{-500,0,500,0,-500,0,500,0}'), (3, NULL)) q(qid, v),
          LATERAL (SELECT id FROM vt WHERE cat < 8 ORDER BY vt.vec <-> q.v, id LIMIT 3) s) =
       (SELECT array_agg(q.qid || ':' || s.id) FROM (VALUES (1, '{1,2,3,4,5,6,7,8}'::real[]), (2, '{-500,0,500,0,-500,0,500,0}'), (3, NULL)) q(qid, v),
          LATERAL (SELECT id FROM vh WHERE cat < 8 ORDER BY vh.vec <-> q.v, id LIMIT 3) s) AS lateral_same;
-- a NULL query vector: every distance is NULL, k rows all the same
SELECT count(*) AS rows, count(d) AS distances FROM (SELECT vec <-> NULL AS d FROM vt ORDER BY vec <-> NULL::real[] LIMIT 4) s;
-- what the scan does not answer, Postgres sorts: DESC, NULLS FIRST, no LIMIT, an expression of the column,
-- a query vector from another table, and with lt_fdw.enable_vector_search off
SELECT explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' DESC LIMIT 5$$);
SELECT explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' NULLS FIRST LIMIT 5$$);
SELECT count(*) AS sorts FROM explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt ORDER BY vec <-> '{1,2,3,4,5,6,7,8}'$$) l WHERE l LIKE '%Sort%';
SELECT count(*) AS sorts FROM explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt ORDER BY (vec || '{}'::real[]) <-> '{1,2,3,4,5,6,7,8}' LIMIT 5$$) l WHERE l LIKE '%Sort%';
SELECT count(*) AS sorts FROM explain_knn($$EXPLAIN (COSTS OFF) SELECT vt.id FROM vt, vh WHERE vh.id = 1 ORDER BY vt.vec <-> vh.vec LIMIT 5$$) l WHERE l LIKE '%Sort%';
SET lt_fdw.enable_vector_search = off;
SELECT count(*) AS sorts FROM explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 5$$) l WHERE l LIKE '%Sort%';
RESET lt_fdw.enable_vector_search;
-- errors are the operator's: a query of another dimension, a NULL item
SELECT id FROM vt ORDER BY vec <-> '{1,2,3}' LIMIT 5;
SELECT id FROM vt ORDER BY vec <-> '{1,2,3,4,5,6,7,NULL}' LIMIT 5;

-- ---- 3. through the engine's IVF_FLAT index (l2, 2 partitions) ------------------------------------
-- lt_fdw.nprobes partitions are searched (default 20: here every partition, so the answers above are
-- exact); with one probe some answers are approximate: rows of the other partition are not candidates
CREATE FUNCTION ann_stats(nprobes int, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE q text; a bigint[]; b bigint[]; e bigint[]; differ int := 0; subset int := 0; exact int := 0;
BEGIN
  PERFORM setseed(0.5);
  PERFORM set_config('lt_fdw.nprobes', nprobes::text, true);
  FOR i IN 1..n LOOP
    SELECT '{' || string_agg((random() * 2000 - 1000)::real::text, ',') || '}' INTO q FROM generate_series(1, 8);
    EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM vt ORDER BY vec <-> %L::real[] LIMIT 10) s', q) INTO a;
    EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM vh ORDER BY vec <-> %L::real[] LIMIT 10) s', q) INTO b;
    PERFORM set_config('lt_fdw.vector_index', 'off', true);
    EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM vt ORDER BY vec <-> %L::real[] LIMIT 10) s', q) INTO e;
    PERFORM set_config('lt_fdw.vector_index', 'on', true);
    IF a IS DISTINCT FROM b THEN differ := differ + 1; END IF;
    IF e IS NOT DISTINCT FROM b THEN exact := exact + 1; END IF;
    -- every row the index returns is a real row at its real distance, in order
    IF cardinality(a) = 10 AND (SELECT bool_and(d1 <= d2) FROM (SELECT vec <-> q::real[] AS d1,
         lead(vec <-> q::real[]) OVER (ORDER BY ord) AS d2 FROM unnest(a) WITH ORDINALITY u(uid, ord) JOIN vh ON vh.id = u.uid) t
         WHERE d2 IS NOT NULL) THEN subset := subset + 1; END IF;
  END LOOP;
  -- how many answers a partial probe changes depends on the engine's k-means (random): said only for full probes
  RETURN format('nprobes %s: %s of %s ordered, lt_fdw.vector_index off exact in %s%s', nprobes, subset, n, exact,
                CASE WHEN nprobes >= 2 THEN format(', %s differ from exact', differ) ELSE '' END);
END $$;
-- EXPLAIN ANALYZE of a partial probe: its counts depend on the engine's k-means (how many rows the probed
-- partition holds, whether an exact round follows), so they are masked
CREATE FUNCTION explain_ann(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN SELECT * FROM explain_knn(q) LOOP
    CONTINUE WHEN ln ~ 'Exact Fallbacks: ';
    RETURN NEXT regexp_replace(ln, '(Index Rows Scored|Vector Rounds|Vectors Scored): \d+', '\1: N');
  END LOOP;
END $$;
SELECT ann_stats(1, 20);
SELECT ann_stats(2, 20);
SET lt_fdw.nprobes = 1;
SELECT explain_ann($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM vt ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$);
-- a prefilter: the pushed filter is a row mask the index search applies before the limit
SELECT explain_ann($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM vt WHERE cat IN (1, 2, 3, 4, 5, 6) ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$);
-- one probe (of two partitions) holds fewer matching rows than asked (1,714 match, 34 of them without a vector, which sort last): the rows come back through an exact round
SELECT explain_ann($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM vt WHERE id < 2000 ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 1700$$);
SELECT count(*) AS rows, bool_and(id < 2000) AS all_match,
       (SELECT count(*) FROM vh WHERE id < 2000) AS matching
FROM (SELECT id FROM vt WHERE id < 2000 ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 1700) s;
-- a selective filter (fewer rows than one probe would score): ranked exactly
SELECT explain_knn($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM vt WHERE id BETWEEN 100 AND 140 ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$);
SELECT (SELECT array_agg(id) FROM (SELECT id FROM vt WHERE id BETWEEN 100 AND 140 ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10) s) =
       (SELECT array_agg(id) FROM (SELECT id FROM vh WHERE id BETWEEN 100 AND 140 ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10) s) AS selective_same;
-- lt_fdw.vector_index off: exact, and EXPLAIN says why the index is not used
SET lt_fdw.vector_index = off;
SELECT explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$);
RESET lt_fdw.vector_index;
RESET lt_fdw.nprobes;
SHOW lt_fdw.nprobes;
SHOW lt_fdw.refine_factor;
SHOW lt_fdw.ef;

-- after deletes through lt_fdw (a new version with deletion files): the same as the heap without those rows
DELETE FROM vt WHERE id % 5 = 1 OR id BETWEEN 1000 AND 1100;
DELETE FROM vh WHERE id % 5 = 1 OR id BETWEEN 1000 AND 1100;
SELECT (SELECT count(*) FROM vt) = (SELECT count(*) FROM vh) AS same_count;
SELECT knn_differ(12, ARRAY['', 'WHERE cat = 6', 'WHERE id < 1500']);
-- through the index with one probe: deleted rows are never candidates
SET lt_fdw.nprobes = 1;
SELECT count(*) AS deleted_returned FROM (SELECT id FROM vt ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 300) s
WHERE id % 5 = 1 OR id BETWEEN 1000 AND 1100;
RESET lt_fdw.nprobes;

-- exact kNN under parallel workers: each process ranks the fragments it claims and returns its rows in
-- order, Gather Merge merges them; the same ids and distances as the heap copy (deleted rows included)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;	-- the workers rank the fragments (the leader only merges)
SET lt_fdw.vector_index = off;
SELECT explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt WHERE cat = 6 ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$);
SELECT knn_differ(12, ARRAY['', 'WHERE cat = 6', 'WHERE id < 1500']);
SELECT count(*) AS gather_merges FROM explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt WHERE id < 1500 ORDER BY vec <=> '{1,2,3,4,5,6,7,8}' LIMIT 37$$) l
WHERE l LIKE '%Gather Merge%';
-- more rows than a round ranks (a local qual): each process ranks again, over the same fragments
SET enable_sort = off;
SELECT (SELECT array_agg(id) FROM (SELECT id FROM vt WHERE (id::text || 'x') LIKE '%3x' ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 20) s) =
       (SELECT array_agg(id) FROM (SELECT id FROM vh WHERE (id::text || 'x') LIKE '%3x' ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 20) s) AS parallel_local_qual_same;
RESET enable_sort;
-- with the vector index usable no parallel exact path is offered (it would win at these costs); PostgreSQL's own
-- parallel Sort may (the parallel costs are zero here)
RESET lt_fdw.vector_index;
SELECT count(*) AS parallel_exact FROM explain_knn($$EXPLAIN (COSTS OFF) SELECT id FROM vt ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$) l
WHERE l LIKE '%Vector Search: exact%';
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;

-- ---- 4. bitmap prefilters: exact kNN over the rows a scalar index selects ------------------------------
-- prefilter.lance: 30,000 rows of 128-d float32 vectors (one full-zip page of 10,000 rows per fragment,
-- NULL every 211th), the engine's bitmap indexes on cat (100 values) and tag (1,000). The rows an index
-- selects are read at their offsets: far apart in bytes (1% and less of the rows) a window each, denser
-- samples streamed through the page; every answer is the heap copy's, after deletes and an append too
CREATE FOREIGN TABLE pt (id bigint, cat integer, tag integer, vec real[]) SERVER vlake OPTIONS (path 'prefilter.lance');
CREATE TABLE ph AS SELECT * FROM pt;
SELECT name, kind, covered_fragments FROM lt_indexes('pt') ORDER BY name;
SELECT explain_knn($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT id FROM pt WHERE cat = 7 ORDER BY vec <-> array_fill(0.5::real, ARRAY[128]) LIMIT 10$$);
-- queries near rows of the table; k up to more rows than match; the heap's ties (NULL vectors) by id,
-- the scan's by row address (the same order here)
CREATE FUNCTION prefilter_differ(n int, filters text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ops text[] := ARRAY['<->', '<=>', '<#>'];
  ks int[] := ARRAY[1, 10, 37, 200];
  bad text := ''; q text; f text; a text; b text; tried int := 0;
BEGIN
  FOR i IN 1..n LOOP
    SELECT '{' || string_agg((x + (i % 5 - 2) * 0.01)::real::text, ',') || '}' INTO q
    FROM (SELECT vec FROM ph WHERE vec IS NOT NULL ORDER BY id OFFSET i * 997 % 25000 LIMIT 1) r, unnest(r.vec) x;
    FOREACH f IN ARRAY filters LOOP
      EXECUTE format('SELECT array_agg(id || ''='' || coalesce(d::text, ''null'')) FROM (SELECT id, vec %s %L::real[] AS d FROM pt %s ORDER BY vec %s %L::real[] LIMIT %s) s',
                     ops[1 + i % 3], q, f, ops[1 + i % 3], q, ks[1 + (i + tried) % 4]) INTO a;
      EXECUTE format('SELECT array_agg(id || ''='' || coalesce(d::text, ''null'')) FROM (SELECT id, vec %s %L::real[] AS d FROM ph %s ORDER BY vec %s %L::real[], id LIMIT %s) s',
                     ops[1 + i % 3], q, f, ops[1 + i % 3], q, ks[1 + (i + tried) % 4]) INTO b;
      tried := tried + 1;
      IF a IS DISTINCT FROM b THEN bad := bad || format('%s %s k %s', ops[1 + i % 3], f, ks[1 + (i + tried - 1) % 4]) || E'\n'; END IF;
    END LOOP;
  END LOOP;
  RETURN tried || ' queries, differ: ' || CASE WHEN bad = '' THEN 'none' ELSE bad END;
END $$;
-- the bytes a query reads (EXPLAIN ANALYZE's Bytes Read)
CREATE FUNCTION knn_bytes(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE ln text; b bigint := 0;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln ~ '^\s*Bytes Read: ' THEN b := b + substring(ln FROM 'Bytes Read: (\d+)')::bigint; END IF;
  END LOOP;
  RETURN b;
END $$;
-- 0.1%, 1%, 10% and 50% of the rows, an index answer with a filter on top, and a union of two indexes
SELECT prefilter_differ(6, ARRAY['WHERE tag = 123', 'WHERE cat = 7', 'WHERE cat IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)',
  'WHERE cat < 50', 'WHERE cat = 7 AND id > 15000', 'WHERE cat IN (3, 97) OR tag = 5']);
-- the 1% (about 280 vectors of 513 bytes) and the 0.1% are read row by row: far less than the 15 MB of
-- vector pages (read whole before)
SELECT knn_bytes($$SELECT id FROM pt WHERE cat = 7 ORDER BY vec <-> array_fill(0.5::real, ARRAY[128]) LIMIT 10$$) < 1000000 AS one_percent_by_row,
       knn_bytes($$SELECT id FROM pt WHERE tag = 123 ORDER BY vec <-> array_fill(0.5::real, ARRAY[128]) LIMIT 10$$) < 200000 AS tenth_percent_by_row;
-- after deletes through lt_fdw, and rows appended (a fragment the bitmap indexes do not cover: scanned with the filter)
DELETE FROM pt WHERE id % 11 = 4 OR id BETWEEN 9990 AND 10500;
DELETE FROM ph WHERE id % 11 = 4 OR id BETWEEN 9990 AND 10500;
INSERT INTO pt SELECT id + 30000, cat, tag, vec FROM ph WHERE id < 4000;
INSERT INTO ph SELECT id + 30000, cat, tag, vec FROM ph WHERE id < 4000;
SELECT (SELECT count(*) FROM pt) = (SELECT count(*) FROM ph) AS same_count;
SELECT prefilter_differ(4, ARRAY['WHERE tag = 123', 'WHERE cat = 7', 'WHERE cat IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)',
  'WHERE cat < 50', 'WHERE cat = 7 AND id > 15000']);
-- the IVF path is not involved here (no vector index): with one, the same prefilter is the index search's mask (section 3)

DROP SERVER vlake CASCADE;
DROP TABLE vh, ph;
DROP FUNCTION explain_ann(text), explain_knn(text), knn_differ(int, text[]), knn_generic(int), ann_stats(int, int),
  prefilter_differ(int, text[]), knn_bytes(text);
