--
-- lt_fdw_vector_types: Hamming distance of binary vectors (hamming_distance, <~> on smallint[], what
-- fixed_size_list<uint8, N> maps to) and exact kNN through the scan over uint8 and float16 vectors,
-- compared with the same query over a heap copy.
-- Dataset: write/w_binvec (1500 rows in 3 fragments, bits fixed_size_list<uint8,16> NULL every 40th row,
-- h16 fixed_size_list<float16,8>, cat 0..4, rows with id % 9 = 4 deleted), written by the reference engine.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SET extra_float_digits = 0;

-- ---- 1. the operator and function -----------------------------------------------------------------
SELECT '{255,0,1}'::smallint[] <~> '{0,0,3}' AS bits, hamming_distance('{15,240}'::smallint[], '{240,15}') AS fn,
       '{7}'::smallint[] <~> '{7}' AS same, '{}'::smallint[] <~> '{}' AS empty;
-- NULL in, NULL out
SELECT NULL::smallint[] <~> '{1}' IS NULL AS op_null, hamming_distance('{1}'::smallint[], NULL) IS NULL AS fn_null;
-- errors of class 22: dimensions, items beyond a byte, NULL items, arrays of two dimensions
\set VERBOSITY sqlstate
SELECT '{1,2,3}'::smallint[] <~> '{1,2}';
SELECT '{256}'::smallint[] <~> '{1}';
SELECT '{1}'::smallint[] <~> '{-1}';
SELECT '{1,NULL}'::smallint[] <~> '{1,2}';
SELECT '{{1,2},{3,4}}'::smallint[] <~> '{{1,2},{3,4}}';
\set VERBOSITY default
SELECT hamming_distance('{1,2,3}'::smallint[], '{1,2}');
SELECT '{300}'::smallint[] <~> '{1}';
-- the operator commutes
SELECT oprname, oprleft::regtype, oprright::regtype, oprcom::regoperator, oprcode
FROM pg_operator WHERE oprname = '<~>' AND oprleft = 'smallint[]'::regtype;

-- ---- 2. exact kNN inside the scan ------------------------------------------------------------------
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;
CREATE FUNCTION explain_vt(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE q LOOP
    RETURN NEXT replace(ln, current_setting('lt_test.tmp'), '$TMP');
  END LOOP;
END $$;
CREATE SERVER vtlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE bv (id bigint, cat integer, bits smallint[], h16 real[])
  SERVER vtlake OPTIONS (path 'write/w_binvec.lance');
CREATE TABLE bh AS SELECT * FROM bv;
SELECT count(*) AS live_rows, count(bits) AS with_bits, count(DISTINCT bits) AS distinct_bits,
       (SELECT min(b) FROM bh, unnest(bits) b) AS least_byte, (SELECT max(b) FROM bh, unnest(bits) b) AS largest_byte
FROM bh;
-- the scan returns the rows in order: no Sort above it
SELECT explain_vt($$EXPLAIN (COSTS OFF) SELECT id FROM bv ORDER BY bits <~> '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}' LIMIT 5$$);
SELECT explain_vt($$EXPLAIN (COSTS OFF) SELECT id FROM bv ORDER BY h16 <=> '{1,2,3,4,5,6,7,8}' LIMIT 5$$);
-- an expression of the column on both sides: PostgreSQL sorts
SELECT explain_vt($$EXPLAIN (COSTS OFF) SELECT id FROM bv ORDER BY bits <~> bits LIMIT 5$$);

-- random queries, several k, with and without pushed filters: the same distances in the same order as
-- the heap copy, and the same rows below the k-th distance (Hamming distances tie often: which of the rows
-- at the k-th distance come is the scan's choice, by row address; the heap's Sort picks any)
CREATE FUNCTION knn_types_differ(n int, filters text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ks int[] := ARRAY[1, 5, 37, 200];
  ops text[] := ARRAY['<->', '<=>', '<#>'];
  bad text := ''; q text; sql text; a float8[]; b float8[]; ia text; ib text; tried int := 0; lim int; flt text;
BEGIN
  PERFORM setseed(0.5);
  FOR i IN 1..n LOOP
    lim := ks[1 + i % 4];
    flt := filters[1 + i % array_length(filters, 1)];
    SELECT '{' || string_agg((floor(random() * 256))::int::text, ',') || '}' INTO q FROM generate_series(1, 16);
    sql := format('SELECT id, bits <~> %L::smallint[] AS d FROM %%I %s ORDER BY bits <~> %L::smallint[] LIMIT %s', q, flt, q, lim);
    FOR j IN 1..2 LOOP
      IF j = 2 THEN
        SELECT '{' || string_agg((random() * 20 - 10)::real::text, ',') || '}' INTO q FROM generate_series(1, 8);
        sql := format('SELECT id, h16 %s %L::real[] AS d FROM %%I %s ORDER BY h16 %s %L::real[] LIMIT %s',
                      ops[1 + i % 3], q, flt, ops[1 + i % 3], q, lim);
      END IF;
      EXECUTE format('SELECT array_agg(d ORDER BY rn), string_agg(id::text, '','' ORDER BY id) FILTER (WHERE d < max_d)
                      FROM (SELECT id, d, row_number() OVER () AS rn, max(d) OVER () AS max_d FROM (%s) s) t', format(sql, 'bv')) INTO a, ia;
      EXECUTE format('SELECT array_agg(d ORDER BY rn), string_agg(id::text, '','' ORDER BY id) FILTER (WHERE d < max_d)
                      FROM (SELECT id, d, row_number() OVER () AS rn, max(d) OVER () AS max_d FROM (%s) s) t', format(sql, 'bh')) INTO b, ib;
      tried := tried + 1;
      IF a IS DISTINCT FROM b OR ia IS DISTINCT FROM ib THEN bad := bad || format(sql, 'bv') || E'\n'; END IF;
    END LOOP;
  END LOOP;
  RETURN tried || ' queries, differ: ' || CASE WHEN bad = '' THEN 'none' ELSE bad END;
END $$;
SELECT knn_types_differ(24, ARRAY['', 'WHERE cat = 3', 'WHERE cat IN (1, 2) AND id > 500', 'WHERE id BETWEEN 1200 AND 1260']);
-- more than every row: the NULL vectors come last
SELECT count(*) AS rows, count(*) FILTER (WHERE bits IS NULL) AS null_vectors,
       bool_and(bits IS NULL) FILTER (WHERE rn > 1300) AS nulls_last
FROM (SELECT id, bits, row_number() OVER () AS rn
      FROM (SELECT id, bits FROM bv ORDER BY bits <~> '{0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0}' LIMIT 5000) s) t;
-- a query of another dimension or beyond a byte: the operator's errors, from the scan too
\set VERBOSITY sqlstate
SELECT id FROM bv ORDER BY bits <~> '{1,2,3}' LIMIT 3;
SELECT id FROM bv ORDER BY bits <~> '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,999}' LIMIT 3;
\set VERBOSITY default
-- a NULL query: every distance NULL, as the operator gives
SELECT count(*) AS rows, count(d) AS distances FROM (SELECT bits <~> NULL::smallint[] AS d FROM bv ORDER BY bits <~> NULL::smallint[] LIMIT 7) s;
-- a prepared statement's generic plan
PREPARE bknn(smallint[], int) AS SELECT array_agg(bits <~> $1) FROM (SELECT bits FROM bv WHERE cat <> 4 ORDER BY bits <~> $1 LIMIT $2) s;
PREPARE bknn_heap(smallint[], int) AS SELECT array_agg(bits <~> $1) FROM (SELECT bits FROM bh WHERE cat <> 4 ORDER BY bits <~> $1 LIMIT $2) s;
SET plan_cache_mode = force_generic_plan;
SELECT explain_vt($$EXPLAIN (COSTS OFF) EXECUTE bknn('{9,8,7,6,5,4,3,2,1,0,1,2,3,4,5,6}', 20)$$);
EXECUTE bknn('{9,8,7,6,5,4,3,2,1,0,1,2,3,4,5,6}', 20) \gset a_
EXECUTE bknn_heap('{9,8,7,6,5,4,3,2,1,0,1,2,3,4,5,6}', 20) \gset b_
SELECT :'a_array_agg' = :'b_array_agg' AS generic_same;
RESET plan_cache_mode;

DROP SERVER vtlake CASCADE;
DROP TABLE bh;
DROP FUNCTION knn_types_differ(int, text[]), explain_vt(text);
