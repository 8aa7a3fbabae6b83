--
-- lt_fdw_vector: vector distances on real[] and double precision[] with pgvector's spelling
-- (<->, <=>, <#>, l2_distance, cosine_distance, inner_product), and ORDER BY col <op> q LIMIT k
-- answered inside the scan (exact kNN), compared with the same query over a heap copy.
-- Dataset: vectors.lance (3000 rows in 3 fragments, vec fixed_size_list<float32,8> NULL every 50th
-- row, v64 fixed_size_list<float64,4>, cat 0..9, rows with id % 7 = 3 deleted).
--
CREATE EXTENSION lt_fdw;
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
