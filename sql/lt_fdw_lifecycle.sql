-- lt_fdw_lifecycle: lt_create_dataset() makes a dataset from a foreign table's columns (and a query's
-- rows) as one Lance commit at COMMIT, in storage 2.2 (default), 2.1 or 2.0; lt_compact() rewrites
-- small fragments into big ones as one Lance Rewrite. The reference engine (Lance 8) reads every result
-- and writes on top. Errors, each with its SQLSTATE.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
\getenv tmp LT_TEST_TMP
\getenv root LT_ROOT
\set life :tmp '/life'
\set ref :root '/test/interop/ref.mjs'
\setenv LT_REF_MJS :ref
\setenv LIFE :life
SELECT set_config('lt_test.life', :'life', false) IS NOT NULL AS life_set;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET extra_float_digits = 0;
CREATE SERVER life FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'life');
-- manifests of a dataset under the server's root
CREATE FUNCTION life_versions(ds text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_ls_dir(current_setting('lt_test.life') || '/' || ds || '/_versions', true, false) f
   WHERE f LIKE '%.manifest' $$;
-- an error's SQLSTATE and message, the test's directory masked
CREATE FUNCTION life_err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, 'file://[^ ]*/life/', '<life>/', 'g');
END $$;
-- the lines of EXPLAIN VERBOSE of q
CREATE FUNCTION life_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q;
END $$;
CREATE FUNCTION life_files(ds text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_ls_dir(current_setting('lt_test.life') || '/' || ds || '/data', true, false) $$;

-- ---- create from the table's definition --------------------------------------------------------
CREATE FOREIGN TABLE t1 (id bigint NOT NULL, name text, price numeric(10,2), tags text[], d date,
                         ts timestamptz, ok boolean, score real, n integer, doc text)
  SERVER life OPTIONS (path 't1.lance');
-- nothing before COMMIT, nothing after ROLLBACK
BEGIN;
SELECT storage_version_written, rows_written, files_written FROM lt_create_dataset('t1');
SELECT life_versions('t1.lance') AS versions_in_txn;
ROLLBACK;
SELECT life_versions('t1.lance') AS versions_after_rollback;
SELECT storage_version_written, rows_written, files_written FROM lt_create_dataset('t1');
SELECT life_versions('t1.lance') AS versions;
SELECT count(*) FROM t1;
SELECT version, operation, row_count FROM lt_versions('t1');
INSERT INTO t1 VALUES (1, 'one', 1.50, ARRAY['a','b'], '2024-01-02', '2024-01-02 03:04:05+00', true, 0.5, 7, '{"k": 1}'),
                      (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
SELECT * FROM t1 ORDER BY id;
INSERT INTO t1 (id) VALUES (NULL);	-- NOT NULL is a non-nullable field: 23502
-- the engine reads the schema (id not nullable) and the rows
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs schema "$LIFE/t1.lance" | cut -c1-60
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/t1.lance" --columns id,name,price,tags,d,ok,n,doc
-- ... and writes on top; lt_fdw reads that
\! cd "$(dirname "$LT_REF_MJS")" && printf '{"ops":[{"op":"append","rows":[{"id":"3","name":"three","price":"2.25","tags":["c"],"d":"2024-03-04","ts":null,"ok":false,"score":1.5,"n":3,"doc":"[]"}]},{"op":"delete","where":"id = 2"}]}' > "$LIFE/../t1_ops.json" && node ref.mjs apply "$LIFE/t1.lance" "$LIFE/../t1_ops.json" | sed 's/"dataset":"[^"]*",//' 
SELECT id, name, price, tags, d, ok, score, n, doc FROM t1 ORDER BY id;
SELECT version, operation, row_count FROM lt_versions('t1');

-- IMPORT FOREIGN SCHEMA sees it at once, with the same types
CREATE SCHEMA imp;
IMPORT FOREIGN SCHEMA "." LIMIT TO (t1) FROM SERVER life INTO imp;
SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute
 WHERE attrelid = 'imp.t1'::regclass AND attnum > 0 ORDER BY attnum;

-- ---- errors --------------------------------------------------------------------------------------
SELECT life_err($$SELECT lt_create_dataset('t1')$$) AS exists;
SELECT life_err($$SELECT lt_create_dataset('t1', '2.3')$$) AS bad_version;
CREATE TABLE life_heap (x integer);
SELECT life_err($$SELECT lt_create_dataset('life_heap')$$) AS not_foreign;
CREATE FOREIGN TABLE t_num (x numeric) SERVER life OPTIONS (path 't_num.lance');
SELECT life_err($$SELECT lt_create_dataset('t_num')$$) AS numeric_without_precision;
CREATE FOREIGN TABLE t_pt (x point) SERVER life OPTIONS (path 't_pt.lance');
SELECT life_err($$SELECT lt_create_dataset('t_pt')$$) AS no_lance_type;
CREATE FOREIGN TABLE t_js (x jsonb) SERVER life OPTIONS (path 't_js.lance');
SELECT life_err($$SELECT lt_create_dataset('t_js')$$) AS jsonb;
CREATE FOREIGN TABLE t1_pinned (id bigint) SERVER life OPTIONS (path 't1.lance', version '1');
SELECT life_err($$SELECT lt_create_dataset('t1_pinned', overwrite => true)$$) AS pinned;
CREATE FOREIGN TABLE t_q (a bigint, b text) SERVER life OPTIONS (path 't_q.lance');
SELECT life_err($$SELECT lt_create_dataset('t_q', query => 'SELECT 1')$$) AS column_count;
SELECT life_err($$SELECT lt_create_dataset('t_q', query => 'SELECT 1::bigint, 2::bigint')$$) AS column_type;
SELECT life_err($$SELECT lt_create_dataset('t_q', query => 'SELECT 1::bigint, (1/0)::text')$$) AS query_fails;
SELECT life_err($$SELECT lt_create_dataset('t_q', query => 'SELECT g::bigint, g::text FROM generate_series(1, 3) g UNION ALL SELECT 1/0, ''x''')$$) AS query_fails_late;
SELECT life_versions('t_q.lance') AS t_q_versions, life_files('t_q.lance') AS t_q_files;
-- one create per dataset and transaction; not with row changes
BEGIN;
SELECT rows_written FROM lt_create_dataset('t_q');
SELECT life_err($$SELECT lt_create_dataset('t_q')$$) AS twice;
SELECT life_err($$INSERT INTO t_q VALUES (1, 'x')$$) AS with_rows;
ROLLBACK;
-- an error after the create in a subtransaction: the create goes with it, its files too
BEGIN;
SAVEPOINT a;
SELECT rows_written FROM lt_create_dataset('t_q', query => 'SELECT g::bigint, g::text FROM generate_series(1, 3) g');
SELECT life_files('t_q.lance') AS files_in_savepoint;
ROLLBACK TO a;
SELECT life_files('t_q.lance') AS files_after_rollback_to;
COMMIT;
SELECT life_versions('t_q.lance') AS t_q_versions;
-- not the owner: 42501
CREATE ROLE life_other;
GRANT USAGE ON FOREIGN SERVER life TO life_other;
GRANT SELECT, INSERT ON t_q TO life_other;
SET ROLE life_other;
SELECT life_err($$SELECT lt_create_dataset('t_q')$$) AS not_owner;
RESET ROLE;

-- ---- create from a query, each storage version; overwrite ----------------------------------------
CREATE FOREIGN TABLE t20 (id bigint NOT NULL, s text, v double precision) SERVER life OPTIONS (path 'sub/t20.lance');
CREATE FOREIGN TABLE t21 (id bigint NOT NULL, s text, v double precision) SERVER life OPTIONS (path 'sub/t21.lance');
CREATE FOREIGN TABLE t22 (id bigint NOT NULL, s text, v double precision) SERVER life OPTIONS (path 'sub/t22.lance');
SELECT storage_version_written, rows_written, files_written FROM lt_create_dataset('t20', '2.0', 'SELECT g, ''s'' || g, (g / 4.0)::float8 FROM generate_series(1, 5000) g');
SELECT storage_version_written, rows_written, files_written FROM lt_create_dataset('t21', '2.1', 'SELECT g, ''s'' || g, (g / 4.0)::float8 FROM generate_series(1, 5000) g');
SELECT storage_version_written, rows_written, files_written FROM lt_create_dataset('t22', query => 'SELECT g, ''s'' || g, (g / 4.0)::float8 FROM generate_series(1, 5000) g');
SELECT count(*), sum(id), sum(v), count(DISTINCT s) FROM t20;
SELECT count(*), sum(id), sum(v), count(DISTINCT s) FROM t21;
SELECT count(*), sum(id), sum(v), count(DISTINCT s) FROM t22;
\! cd "$(dirname "$LT_REF_MJS")" && for v in 20 21 22; do node ref.mjs scan "$LIFE/sub/t$v.lance" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let n=0,id=0n,v=0;for(const l of s.split("\n").filter(Boolean)){const o=JSON.parse(l);n++;id+=BigInt(o.id);v+=Number(o.v)}console.log(`engine: ${n} rows, sum(id) ${id}, sum(v) ${v}`)})'; done
-- the storage version the manifest records
\! cd "$(dirname "$LT_REF_MJS")" && for v in 20 21 22; do node ref.mjs pages "$LIFE/sub/t$v.lance" | head -n 1 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const o=JSON.parse(s);console.log(o.file_version ?? o.version ?? Object.keys(o).join(","))})'; done
-- overwrite: one Overwrite commit on top, the old version still readable
SELECT rows_written FROM lt_create_dataset('t22', query => 'SELECT g, ''new'', 0.5::float8 FROM generate_series(1, 10) g', overwrite => true);
SELECT count(*), min(s), max(s), sum(v) FROM t22;
SELECT version, operation, row_count FROM lt_versions('t22');
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/sub/t22.lance" --columns id,s | head -n 3
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/sub/t22.lance" --version 1 --columns id | wc -l

-- ---- compaction ----------------------------------------------------------------------------------
CREATE FOREIGN TABLE tc (id bigint NOT NULL, s text) SERVER life OPTIONS (path 'tc.lance');
SELECT rows_written FROM lt_create_dataset('tc');
-- 300 single-row transactions: 300 fragments
\set ECHO none
SELECT format('INSERT INTO tc VALUES (%s, %L)', g, 'r' || g) FROM generate_series(1, 300) g \gexec
\set ECHO all
SELECT count(*) AS fragments, sum(physical_rows) AS rows FROM lt_fragments('tc');
DELETE FROM tc WHERE id % 10 = 0;
SELECT * FROM lt_create_index('tc', 'id', 'btree');
CREATE TABLE tc_heap AS SELECT * FROM tc;
-- nothing before COMMIT, nothing after ROLLBACK
SELECT version, fragments, fragments_to_compact, live_rows, deleted_rows, data_bytes > 0 AS has_bytes, versions, indexes, unindexed_rows
  FROM lt_table_stats('tc');
BEGIN;
SELECT * FROM lt_compact('tc');
SELECT count(*) AS fragments_in_txn FROM lt_fragments('tc');
ROLLBACK;
SELECT count(*) AS fragments_after_rollback FROM lt_fragments('tc');
SELECT * FROM lt_compact('tc', target_rows_per_fragment => 100);
SELECT count(*) AS fragments, sum(physical_rows) AS rows, sum(deleted_rows) AS deleted FROM lt_fragments('tc');
SELECT operation FROM lt_versions('tc') ORDER BY version DESC LIMIT 1;
-- the same rows; the index covers the new fragments (a new segment, its payloads at the moved rows'
-- addresses) and its answers equal a scan's
SELECT count(*) AS differ FROM ((SELECT * FROM tc EXCEPT SELECT * FROM tc_heap) UNION ALL (SELECT * FROM tc_heap EXCEPT SELECT * FROM tc)) x;
SELECT * FROM tc WHERE id = 77;
SELECT name, cardinality(covered_fragments) = (SELECT count(*) FROM lt_fragments('tc')) AS covers_all,
       cardinality(unindexed_fragments) AS unindexed FROM lt_indexes('tc');
SELECT count(*) FILTER (WHERE line ~ 'Lance Index: id_idx') AS uses_index
  FROM life_explain('SELECT id FROM tc WHERE id BETWEEN 40 AND 160') line;
SELECT (SELECT count(*) || ' ' || sum(id) FROM tc WHERE id BETWEEN 40 AND 160) AS by_index,
       (SELECT count(*) || ' ' || sum(id) FROM tc_heap WHERE id BETWEEN 40 AND 160) AS by_scan;
SELECT (SELECT count(*) FROM tc WHERE id = 70) AS deleted_row_by_index,
       (SELECT string_agg(id::text, ',' ORDER BY id) FROM tc WHERE id IN (1, 150, 299)) AS moved_rows_by_index,
       (SELECT string_agg(id::text, ',' ORDER BY id) FROM tc_heap WHERE id IN (1, 150, 299)) AS by_scan;
SELECT fragments, fragments_to_compact, live_rows, deleted_rows, versions, indexes, unindexed_rows FROM lt_table_stats('tc');
SELECT name, cardinality(covered_fragments) AS covered, cardinality(unindexed_fragments) AS unindexed FROM lt_indexes('tc');
-- bytes per field, from the data files' column metadata: every field of the version, each with data, within
-- the files' bytes; rows per index that it does not cover (here none, then the rows appended)
SELECT (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(column_bytes) k) =
       (SELECT array_agg(attname::text ORDER BY attname::text) FROM pg_attribute
         WHERE attrelid = 'tc'::regclass AND attnum > 0 AND NOT attisdropped) AS every_field,
       (SELECT bool_and(v::bigint > 0) FROM jsonb_each_text(column_bytes) e(k, v)) AS each_has_bytes,
       (SELECT sum(v::bigint) FROM jsonb_each_text(column_bytes) e(k, v)) <= data_bytes AS within_data_bytes,
       unindexed_rows_by_index
  FROM lt_table_stats('tc');
-- storage 2.0 writes a non-nullable bigint plain: 8 bytes a row; 1000 distinct md5 strings: at least their 32 bytes each
CREATE FOREIGN TABLE tcb (id bigint NOT NULL, s text) SERVER life OPTIONS (path 'tcb.lance');
SELECT rows_written FROM lt_create_dataset('tcb', '2.0', 'SELECT g, md5(g::text) FROM generate_series(1, 1000) g');
SELECT (column_bytes->>'id')::bigint = 8 * live_rows AS id_plain, (column_bytes->>'s')::bigint >= 32 * live_rows AS s_holds_its_text
  FROM lt_table_stats('tcb');
SELECT lt_add_column('tcb', 'extra', 'integer');
SELECT column_bytes->'extra' AS all_null_column_bytes FROM lt_table_stats('tcb');
SELECT lt_create_index('tcb', 'id', 'btree') IS NOT NULL AS built;
INSERT INTO tcb VALUES (5000, 'a', 1), (5001, 'b', 2);
SELECT unindexed_rows_by_index, unindexed_rows FROM lt_table_stats('tcb');
DROP FOREIGN TABLE tcb;
-- nothing left to compact: no commit
SELECT * FROM lt_compact('tc', target_rows_per_fragment => 100);
SELECT count(*) AS versions FROM lt_versions('tc');
-- UPDATE and DELETE work on the compacted table
UPDATE tc SET s = 'upd' WHERE id BETWEEN 1 AND 5;
DELETE FROM tc WHERE id > 290;
SELECT count(*), count(*) FILTER (WHERE s = 'upd') FROM tc;
-- the engine reads it, filters with the index, appends and compacts on top; lt_fdw reads that
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/tc.lance" --columns id | wc -l
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/tc.lance" --columns id,s --filter "id = 77"
\! cd "$(dirname "$LT_REF_MJS")" && printf '{"ops":[{"op":"append","rows":[{"id":"1000","s":"eng"}]},{"op":"optimize"}]}' > "$LIFE/../tc_ops.json" && node ref.mjs apply "$LIFE/tc.lance" "$LIFE/../tc_ops.json" | sed 's/"dataset":"[^"]*",//' 
SELECT count(*), max(id) FROM tc;
SELECT count(*) AS fragments FROM lt_fragments('tc');
-- compaction errors
SELECT life_err($$SELECT lt_compact('tc', 0)$$) AS bad_target;
SELECT life_err($$SELECT lt_compact('tc', materialize_deletions_threshold => 2)$$) AS bad_threshold;
CREATE FOREIGN TABLE tc_pinned (id bigint) SERVER life OPTIONS (path 'tc.lance', version '2');
SELECT life_err($$SELECT lt_compact('tc_pinned')$$) AS pinned;
BEGIN;
INSERT INTO tc VALUES (5000, 'x');
SELECT life_err($$SELECT lt_compact('tc')$$) AS after_insert;
ROLLBACK;
-- nothing else in the transaction of a compaction (a savepoint rolled back takes the compaction too)
DELETE FROM tc WHERE id = 1;
BEGIN;
SELECT fragments_removed FROM lt_compact('tc', 1000, true, 0);
SELECT life_err($$INSERT INTO tc VALUES (5000, 'x')$$) AS insert_after;
SELECT life_err($$DELETE FROM tc WHERE id = 2$$) AS delete_after;
COMMIT;
DELETE FROM tc WHERE id = 2;
BEGIN;
SAVEPOINT a;
SELECT fragments_removed FROM lt_compact('tc', 1000, true, 0);
ROLLBACK TO a;
INSERT INTO tc VALUES (5000, 'x');
COMMIT;
SELECT count(*), sum(id) FROM tc;
SELECT operation FROM lt_versions('tc') ORDER BY version DESC LIMIT 2;
SET ROLE life_other;
SELECT life_err($$SELECT lt_compact('t_q')$$) AS not_owner;
RESET ROLE;
SELECT life_err($$SELECT lt_compact('life_heap')$$) AS not_foreign;
-- stable row ids (a copy of the engine's dataset with btree and bitmap indexes): the moved rows keep
-- their row ids, so the indexes stay (same segments) and cover the new fragment instead of the old ones
\! cp -R "$LT_TEST_TMP/lake/index/stable.lance" "$LIFE/stable.lance" && chmod -R a+rwX "$LIFE/stable.lance"
CREATE FOREIGN TABLE st (id bigint, k integer) SERVER life OPTIONS (path 'stable.lance');
CREATE TABLE st_heap AS SELECT * FROM st;
SELECT name, covered_fragments, unindexed_fragments FROM lt_indexes('st') ORDER BY name;
SELECT fragments_removed, fragments_added, rows_rewritten FROM lt_compact('st', 100000);
SELECT count(*) AS st_fragments FROM lt_fragments('st');
SELECT name, cardinality(covered_fragments) AS covered, unindexed_fragments FROM lt_indexes('st') ORDER BY name;
SELECT count(*) AS differ FROM ((SELECT * FROM st EXCEPT SELECT * FROM st_heap) UNION ALL (SELECT * FROM st_heap EXCEPT SELECT * FROM st)) x;
SELECT count(*) FILTER (WHERE line ~ 'Lance Index: (id_idx|k_idx)') AS uses_index
  FROM life_explain('SELECT id FROM st WHERE id >= 995 AND id < 1015 AND k = 99') line;
SELECT (SELECT count(*) || ' ' || sum(id) FROM st WHERE id >= 995 AND id < 1015) AS by_index,
       (SELECT count(*) || ' ' || sum(id) FROM st_heap WHERE id >= 995 AND id < 1015) AS by_scan;
SELECT (SELECT count(*) || ' ' || sum(id) FROM st WHERE k = 99) AS by_index,
       (SELECT count(*) || ' ' || sum(id) FROM st_heap WHERE k = 99) AS by_scan;
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/stable.lance" --columns id --filter "k = 99" | wc -l

-- an IVF_FLAT index (the engine's, 2 partitions, over 3 fragments with deleted rows): the rows of its
-- partitions move to their new addresses (deleted ones dropped), it covers the new fragment, and with
-- every partition probed its answers are a heap sort's; a moved row's own vector finds that row
\! cp -R "$LT_TEST_TMP/lake/vectors.lance" "$LIFE/vectors.lance" && chmod -R a+rwX "$LIFE/vectors.lance"
CREATE FOREIGN TABLE cv (id bigint, vec real[]) SERVER life OPTIONS (path 'vectors.lance');
CREATE TABLE cv_heap AS SELECT * FROM cv;
SELECT fragments_removed, fragments_added, rows_rewritten FROM lt_compact('cv');
SELECT name, kind, cardinality(covered_fragments) AS covered, unindexed_fragments FROM lt_indexes('cv');
SET lt_fdw.nprobes = 2;
SELECT count(*) FILTER (WHERE line ~ 'Vector Search: IVF_FLAT index vec_idx') AS uses_index
  FROM life_explain($$SELECT id FROM cv ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 10$$) line;
SELECT (SELECT array_agg(id ORDER BY id) FROM (SELECT id FROM cv ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 10) a) =
       (SELECT array_agg(id ORDER BY id) FROM (SELECT id FROM cv_heap ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 10) b)
       AS ann_equals_heap;
SELECT id, (SELECT c.id FROM cv c ORDER BY c.vec <-> h.vec LIMIT 1) AS nearest
  FROM cv_heap h WHERE id IN (5, 1234, 2998) ORDER BY id;
RESET lt_fdw.nprobes;
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs indexes "$LIFE/vectors.lance" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n").filter(Boolean)){const o=JSON.parse(l);console.log(o.name, o.indexType, o.stats && o.stats.numIndexedRows, o.stats && o.stats.numUnindexedRows)}})'

-- ---- schema evolution ------------------------------------------------------------------------------
CREATE FOREIGN TABLE ts (id bigint NOT NULL, a text, b integer) SERVER life OPTIONS (path 'ts.lance');
SELECT rows_written FROM lt_create_dataset('ts', query => 'SELECT g::bigint, ''a'' || g, g::int FROM generate_series(1, 5) g');
SELECT * FROM lt_create_index('ts', 'b', 'btree');
-- add: every row NULL; the foreign table gets the column in the same transaction
BEGIN;
SELECT lt_add_column('ts', 'c', 'double precision');
SELECT attname FROM pg_attribute WHERE attrelid = 'ts'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
SELECT life_versions('ts.lance') AS versions_in_txn;
ROLLBACK;
SELECT attname FROM pg_attribute WHERE attrelid = 'ts'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
SELECT lt_add_column('ts', 'c', 'double precision');
SELECT lt_add_column('ts', 'tags', 'text[]');
SELECT * FROM ts ORDER BY id;
INSERT INTO ts VALUES (6, 'a6', 6, 6.5, ARRAY['x']);
SELECT * FROM ts ORDER BY id;
-- drop: a Project, the index on it goes too; rename: the field keeps its id
SELECT lt_drop_column('ts', 'b');
SELECT lt_rename_column('ts', 'a', 'label');
SELECT * FROM ts ORDER BY id;
SELECT version, operation FROM lt_versions('ts') ORDER BY version;
SELECT count(*) AS indexes FROM lt_indexes('ts');
-- the engine reads each step's schema and rows; an old version keeps its schema
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs schema "$LIFE/ts.lance" | cut -c1-50
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/ts.lance"
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/ts.lance" --version 3 | head -n 2
-- ... and writes on top (an append with the new schema, its compaction); lt_fdw reads that
\! cd "$(dirname "$LT_REF_MJS")" && printf '{"ops":[{"op":"append","rows":[{"id":"7","label":"e7","c":7.5,"tags":["y"]}]},{"op":"optimize"}]}' > "$LIFE/../ts_ops.json" && node ref.mjs apply "$LIFE/ts.lance" "$LIFE/../ts_ops.json" | sed 's/"dataset":"[^"]*",//'
SELECT * FROM ts ORDER BY id;
-- errors
SELECT life_err($$SELECT lt_add_column('ts', 'c', 'integer')$$) AS add_existing;
SELECT life_err($$SELECT lt_add_column('ts', 'p', 'point')$$) AS add_no_type;
SELECT life_err($$SELECT lt_add_column('ts', 'p', 'no_such_type')$$) AS add_bad_type;
SELECT life_err($$SELECT lt_drop_column('ts', 'nope')$$) AS drop_missing;
SELECT life_err($$SELECT lt_rename_column('ts', 'label', 'c')$$) AS rename_onto;
SELECT life_err($$SELECT lt_rename_column('ts', 'label', '_rowid')$$) AS rename_reserved;
BEGIN;
SELECT lt_add_column('ts', 'd', 'integer');
SELECT life_err($$SELECT lt_drop_column('ts', 'c')$$) AS two_in_one;
SELECT life_err($$INSERT INTO ts (id) VALUES (100)$$) AS with_rows;
ROLLBACK;
SELECT life_err($$SELECT lt_drop_column('tc_pinned', 's')$$) AS pinned;
SET ROLE life_other;
SELECT life_err($$SELECT lt_drop_column('t_q', 'b')$$) AS not_owner;
RESET ROLE;

-- ---- add with a value: every existing row gets it, one new data file per fragment (Lance's add_columns) ----
CREATE FOREIGN TABLE tv (id bigint NOT NULL, a text) SERVER life OPTIONS (path 'tv.lance');
SELECT rows_written FROM lt_create_dataset('tv', query => 'SELECT g::bigint, ''a'' || g FROM generate_series(1, 5) g');
INSERT INTO tv VALUES (6, 'a6'), (7, 'a7');
DELETE FROM tv WHERE id = 2;
\! ls "$LIFE/tv.lance/data" | wc -l
-- ROLLBACK removes the files written for the values
BEGIN;
SELECT lt_add_column('tv', 'score', 'numeric(6,2)', '12.5');
\! ls "$LIFE/tv.lance/data" | wc -l
ROLLBACK;
\! ls "$LIFE/tv.lance/data" | wc -l
SELECT lt_add_column('tv', 'score', 'numeric(6,2)', '12.5');
SELECT lt_add_column('tv', 'label', 'text', 'new');
SELECT lt_add_column('tv', 'n', 'integer', NULL);   -- NULL: the cheap default, no data written
SELECT lt_add_column('tv', 'at', 'timestamp', '2024-01-02 03:04:05');
SELECT * FROM tv ORDER BY id;
SELECT fragment_id, physical_rows, deleted_rows, cardinality(data_files) AS files FROM lt_fragments('tv') ORDER BY 1;
SELECT version, operation FROM lt_versions('tv') ORDER BY version DESC LIMIT 4;
-- rows written after it carry their own values; the engine reads the same
INSERT INTO tv (id, a, score) VALUES (8, 'a8', 1.25);
SELECT id, score, label, n FROM tv WHERE id >= 7 ORDER BY id;
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/tv.lance" --columns id,score,label,n,at
-- a value that does not fit the type: its own error, nothing written
SELECT life_err($$SELECT lt_add_column('tv', 'x', 'integer', 'abc')$$) AS not_integer;
SELECT life_err($$SELECT lt_add_column('tv', 'x', 'smallint', '70000')$$) AS out_of_range;
SELECT life_err($$SELECT lt_add_column('tv', 'x', 'date', '2024-13-01')$$) AS bad_date;
SELECT life_err($$SELECT lt_add_column('tv', 'x', 'varchar(4)', 'abc')$$) AS not_read_back;
SELECT life_err($$SELECT lt_add_column('tv', 'x', 'numeric(3,1)', '123.45')$$) AS numeric_overflow;
SELECT life_err($$SELECT lt_add_column('tv', 'x', 'integer', '1', 'maybe')$$) AS bad_tracking;
SELECT life_err($$SELECT lt_add_column('tv', 'x', 'point', '(1,2)')$$) AS no_lance_type;
\! ls "$LIFE/tv.lance/data" | wc -l

-- ---- a column's type changed as Lance's alter_columns casts it: the values rewritten into new data files
-- (one per fragment), the field a new id, files left with no field dropped, indexes on the old field too ----
CREATE FOREIGN TABLE ta (id bigint NOT NULL, n integer, f real, s text) SERVER life OPTIONS (path 'ta.lance');
SELECT rows_written FROM lt_create_dataset('ta', query => 'SELECT g::bigint, g * 10000, (g / 4.0)::real, ''s'' || g FROM generate_series(1, 6) g');
INSERT INTO ta VALUES (7, 70000, 1.75, 's7'), (8, NULL, NULL, NULL);
DELETE FROM ta WHERE id IN (2, 7);
SELECT index_name FROM lt_create_index('ta', 'n', 'btree');
\! ls "$LIFE/ta.lance/data" | wc -l
BEGIN;
SELECT lt_alter_column_type('ta', 'n', 'bigint');
\! ls "$LIFE/ta.lance/data" | wc -l
ROLLBACK;
\! ls "$LIFE/ta.lance/data" | wc -l
SELECT lt_alter_column_type('ta', 'n', 'bigint');
SELECT lt_alter_column_type('ta', 'f', 'double precision');
SELECT * FROM ta ORDER BY id;
SELECT attname, atttypid::regtype FROM pg_attribute WHERE attrelid = 'ta'::regclass AND attnum > 0 ORDER BY attnum;
SELECT version, operation FROM lt_versions('ta') ORDER BY version DESC LIMIT 2;
SELECT count(*) AS indexes FROM lt_indexes('ta');
SELECT fragment_id, cardinality(data_files) AS files FROM lt_fragments('ta') ORDER BY 1;
-- the engine reads the new types (an int64 is a JSON string), the rows written after take them
INSERT INTO ta VALUES (9, 9000000000, 0.1, 's9');
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/ta.lance" --columns id,n,f
-- errors: a value that does not fit the new type, another family, an unknown column, the same type
SELECT life_err($$SELECT lt_alter_column_type('ta', 'n', 'smallint')$$) AS too_big;
SELECT life_err($$SELECT lt_alter_column_type('ta', 's', 'integer')$$) AS other_family;
SELECT life_err($$SELECT lt_alter_column_type('ta', 'nope', 'integer')$$) AS missing;
SELECT life_err($$SELECT lt_alter_column_type('ta', 'n', 'bigint')$$) AS same_type;
SELECT count(*) AS rows, sum(n) AS n_sum FROM ta;
-- a non-nullable field stays non-nullable: its deleted rows (the first ones too) get a live row's value
CREATE FOREIGN TABLE tb (k integer NOT NULL, v text) SERVER life OPTIONS (path 'tb.lance');
SELECT rows_written FROM lt_create_dataset('tb', query => 'SELECT g, ''v'' || g FROM generate_series(1, 8) g');
DELETE FROM tb WHERE k IN (1, 2, 5, 8);
SELECT lt_alter_column_type('tb', 'k', 'bigint');
SELECT * FROM tb ORDER BY k;
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs schema "$LIFE/tb.lance" | head -n 1
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/tb.lance" --columns k | tr '\n' ' '; echo
-- ---- tags and restore --------------------------------------------------------------------------------
SELECT lt_create_tag('ts', 'v1', 1);
BEGIN;
SELECT lt_create_tag('ts', 'inside') > 0 AS tagged;
ROLLBACK;
SELECT * FROM lt_tags('ts');
SELECT lt_create_tag('ts', 'newest') = (SELECT max(version) FROM lt_versions('ts')) AS newest;
SELECT * FROM lt_tags('ts') ORDER BY tag;
CREATE FOREIGN TABLE ts_v1 (id bigint, a text, b integer) SERVER life OPTIONS (path 'ts.lance', tag 'v1');
SELECT * FROM ts_v1 ORDER BY id;
-- the engine reads the tags
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/ts.lance" --version v1 | head -n 2
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/ts.lance" --version newest --columns id | wc -l
SELECT lt_delete_tag('ts', 'newest');
SELECT * FROM lt_tags('ts') ORDER BY tag;
SELECT life_err($$SELECT lt_create_tag('ts', 'v1')$$) AS tag_exists;
SELECT life_err($$SELECT lt_delete_tag('ts', 'nope')$$) AS tag_missing;
SELECT life_err($$SELECT lt_create_tag('ts', '../x')$$) AS tag_name;
SELECT life_err($$SELECT lt_create_tag('ts', 'future', 1000)$$) AS tag_future;
-- restore: version 1's rows become the newest version, one Restore commit; the engine reads it
SELECT count(*) FROM t22;
BEGIN;
SELECT lt_restore('t22', 1) AS restored_as;
SELECT count(*) AS before_commit FROM t22;
COMMIT;
SELECT count(*), sum(id) FROM t22;
SELECT version, operation, row_count FROM lt_versions('t22') ORDER BY version;
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/sub/t22.lance" --columns id | wc -l
SELECT life_err($$SELECT lt_restore('t22', 3)$$) AS restore_latest;
SELECT life_err($$SELECT lt_restore('t22', 0)$$) AS restore_zero;
-- writes after a restore
INSERT INTO t22 VALUES (9999, 'after', 1.0);
SELECT count(*) FROM t22;
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/sub/t22.lance" --columns id --filter "id = 9999"

-- ---- index maintenance ---------------------------------------------------------------------------------
CREATE FOREIGN TABLE tx (id bigint NOT NULL, k integer, tags text[]) SERVER life OPTIONS (path 'tx.lance');
SELECT rows_written FROM lt_create_dataset('tx', query => 'SELECT g::bigint, (g % 5)::int, ARRAY[''t'' || (g % 3)] FROM generate_series(1, 3000) g');
SELECT index_name FROM lt_create_index('tx', 'id', 'btree');
SELECT index_name FROM lt_create_index('tx', 'k', 'bitmap');
SELECT index_name FROM lt_create_index('tx', 'tags', 'label_list');
INSERT INTO tx SELECT g, g % 5, ARRAY['t9'] FROM generate_series(3001, 3100) g;
SELECT name, cardinality(covered_fragments) AS covered, cardinality(unindexed_fragments) AS unindexed, unindexed_rows FROM lt_indexes('tx') ORDER BY name;
-- optimize: the indexes with unindexed fragments, rebuilt under their names at COMMIT
BEGIN;
SELECT lt_optimize_indexes('tx', 'k_idx') AS rebuilt;
SELECT name, cardinality(unindexed_fragments) AS unindexed FROM lt_indexes('tx') ORDER BY name;
COMMIT;
SELECT name, cardinality(unindexed_fragments) AS unindexed FROM lt_indexes('tx') ORDER BY name;
SELECT lt_optimize_indexes('tx') AS rebuilt;
SELECT name, cardinality(covered_fragments) AS covered, cardinality(unindexed_fragments) AS unindexed, unindexed_rows FROM lt_indexes('tx') ORDER BY name;
SELECT lt_optimize_indexes('tx') AS nothing_to_do;
SELECT count(*), sum(id) FROM tx WHERE id > 3050;
SELECT count(*) FROM tx WHERE tags && ARRAY['t9'];
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs indexes "$LIFE/tx.lance" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n").filter(Boolean)){const o=JSON.parse(l);console.log(o.name, o.indexType, o.stats && o.stats.numIndexedRows, o.stats && o.stats.numUnindexedRows)}})'
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$LIFE/tx.lance" --columns id --filter "id > 3050" | wc -l
-- drop: one CreateIndex that only removes; the engine no longer lists it
BEGIN;
SELECT lt_drop_index('tx', 'k_idx');
SELECT count(*) AS indexes_in_txn FROM lt_indexes('tx');
COMMIT;
SELECT name FROM lt_indexes('tx') ORDER BY name;
SELECT operation FROM lt_versions('tx') ORDER BY version DESC LIMIT 1;
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs indexes "$LIFE/tx.lance" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n").filter(Boolean)) console.log(JSON.parse(l).name)})'
SELECT count(*) FROM tx WHERE k = 3;
SELECT life_err($$SELECT lt_drop_index('tx', 'k_idx')$$) AS drop_missing;
SELECT life_err($$SELECT lt_optimize_indexes('tx', 'nope')$$) AS optimize_missing;
SET ROLE life_other;
SELECT life_err($$SELECT lt_drop_index('t_q', 'x')$$) AS not_owner;
RESET ROLE;

-- optimize merges as Lance's does: per index one new segment (a new uuid under the same name) holding the
-- old segment's entries and the appended rows, covering both; btree, bitmap, label_list and zonemap; rows
-- deleted before and after the build, NULLs, a second append merged into the merged segment
CREATE FOREIGN TABLE tm (id bigint NOT NULL, k integer, tags text[], v double precision) SERVER life OPTIONS (path 'tm.lance');
SELECT rows_written FROM lt_create_dataset('tm', query => 'SELECT g::bigint, (g % 7)::int, ARRAY[''t'' || (g % 3)], (g * 0.5)::float8 FROM generate_series(1, 2500) g');
DELETE FROM tm WHERE id % 11 = 0;
SELECT index_name FROM lt_create_index('tm', 'id', 'btree');
SELECT index_name FROM lt_create_index('tm', 'k', 'bitmap');
SELECT index_name FROM lt_create_index('tm', 'tags', 'label_list');
SELECT index_name FROM lt_create_index('tm', 'v', 'zonemap');
DELETE FROM tm WHERE id % 13 = 0;
INSERT INTO tm SELECT g, g % 7, ARRAY['t9', 't' || (g % 3)], g * 0.5 FROM generate_series(2501, 2800) g;
INSERT INTO tm VALUES (2801, NULL, NULL, NULL), (2802, 3, ARRAY[]::text[], -1.5);
SELECT unindexed_rows, unindexed_rows_by_index FROM lt_table_stats('tm');
SELECT name, unindexed_rows FROM lt_indexes('tm') ORDER BY name;
SELECT lt_optimize_indexes('tm') AS merged;
SELECT name, cardinality(covered_fragments) AS covered, cardinality(unindexed_fragments) AS unindexed FROM lt_indexes('tm') ORDER BY name;
SELECT unindexed_rows, unindexed_rows_by_index FROM lt_table_stats('tm');
SELECT operation FROM lt_versions('tm') ORDER BY version DESC LIMIT 1;
-- a second append, merged into the merged segment
INSERT INTO tm SELECT g, g % 7, ARRAY['t8'], g * 0.5 FROM generate_series(2803, 2900) g;
SELECT lt_optimize_indexes('tm', 'id_idx') AS merged_one;
SELECT name, cardinality(unindexed_fragments) AS unindexed FROM lt_indexes('tm') ORDER BY name;
SELECT lt_optimize_indexes('tm') AS merged_rest;
-- every index answer equals a scan's
CREATE TEMP TABLE tm_q (q text);
INSERT INTO tm_q VALUES ('id = 2600'), ('id BETWEEN 2490 AND 2510'), ('id > 2795'), ('id = 2002'), ('k = 3'),
  ('k IS NULL'), ('k IN (0, 6)'), ('tags @> ARRAY[''t9'']'), ('tags && ARRAY[''t8'', ''t1'']'), ('v > 1400'),
  ('v < 0'), ('v BETWEEN 1000 AND 1010'), ('v IS NULL');
CREATE FUNCTION tm_sig(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE 'SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM tm WHERE ' || q INTO r;
  RETURN r;
END $$;
CREATE TEMP TABLE tm_idx AS SELECT q, tm_sig(q) AS sig FROM tm_q;
SET lt_fdw.enable_index_scan = off;
SELECT q.q, i.sig AS indexed, tm_sig(q.q) AS scanned FROM tm_q q JOIN tm_idx i USING (q) WHERE i.sig IS DISTINCT FROM tm_sig(q.q);
RESET lt_fdw.enable_index_scan;
SELECT q, sig FROM tm_idx ORDER BY q;
SELECT count(*) FILTER (WHERE line ~ 'Lance Index: (id|k|tags|v)_idx') AS uses_indexes
  FROM tm_q, LATERAL life_explain('SELECT id FROM tm WHERE ' || q) line;
-- the engine lists every index with no unindexed rows, and its filters equal ours
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs indexes "$LIFE/tm.lance" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n").filter(Boolean)){const o=JSON.parse(l);console.log(o.name, o.indexType, o.stats && o.stats.numIndexedRows, o.stats && o.stats.numUnindexedRows)}})' | sort
\! cd "$(dirname "$LT_REF_MJS")" && for f in "id > 2795" "k = 3" "v > 1400" "array_has_any(tags, ['t8', 't1'])"; do printf '%s: ' "$f"; node ref.mjs scan "$LIFE/tm.lance" --columns id --filter "$f" | wc -l; node ref.mjs plan "$LIFE/tm.lance" --filter "$f" | grep -o 'ScalarIndexQuery: query=.*@[a-z_]*([A-Za-z]*)'; done

-- ---- concurrent writers -------------------------------------------------------------------------------
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;
SELECT dblink_connect('s2', format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
                                   split_part(current_setting('unix_socket_directories'), ',', 1))) AS connected;
-- session 2 never waits on a lock for long: a mistake here fails instead of hanging
SELECT dblink_exec('s2', $$SET lock_timeout = '10s'$$);
-- session 2 writes the dataset through a table of its own (ALTER FOREIGN TABLE locks tc itself)
CREATE FOREIGN TABLE tc_s2 (id bigint, s text) SERVER life OPTIONS (path 'tc.lance');
INSERT INTO tc VALUES (7001, 'c1');
INSERT INTO tc VALUES (7002, 'c2');
SELECT count(*) AS rows_before FROM tc;
-- a concurrent DELETE of rows in fragments being compacted: the compaction's commit loses (40001)
BEGIN;
SELECT fragments_removed > 0 AS compacting FROM lt_compact('tc');
SELECT dblink_exec('s2', $$DELETE FROM tc_s2 WHERE id = 7001$$);
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
SELECT count(*) AS rows_after_delete, (SELECT operation FROM lt_versions('tc') ORDER BY version DESC LIMIT 1) AS last FROM tc;
-- a concurrent append: rebased over, both land
BEGIN;
SELECT fragments_removed > 0 AS compacting FROM lt_compact('tc');
SELECT dblink_exec('s2', $$INSERT INTO tc_s2 VALUES (7003, 'c3')$$);
COMMIT;
SELECT count(*) AS rows_after_append, count(*) FILTER (WHERE id = 7003) AS appended FROM tc;
SELECT operation FROM lt_versions('tc') ORDER BY version DESC LIMIT 2;
-- a schema change against a concurrent UPDATE: 40001; against an append: both land
BEGIN;
SELECT lt_add_column('tc', 'extra', 'integer');
SELECT dblink_exec('s2', $$UPDATE tc_s2 SET s = 'u2' WHERE id = 7003$$);
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
SELECT count(*) AS extra_columns FROM pg_attribute WHERE attrelid = 'tc'::regclass AND attname = 'extra' AND NOT attisdropped;
BEGIN;
SELECT lt_add_column('tc', 'extra', 'integer');
SELECT dblink_exec('s2', $$INSERT INTO tc_s2 VALUES (7004, 'c4')$$);
COMMIT;
SELECT count(*), count(extra) FROM tc;
-- a column added with a value against a concurrent append: 40001 (the new fragment would have no value);
-- against a concurrent delete: both land
BEGIN;
SELECT lt_add_column('tc', 'filled', 'integer', '7');
SELECT dblink_exec('s2', $$INSERT INTO tc_s2 VALUES (7005, 'c5')$$);
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
SELECT count(*) AS filled_columns FROM pg_attribute WHERE attrelid = 'tc'::regclass AND attname = 'filled' AND NOT attisdropped;
BEGIN;
SELECT lt_add_column('tc', 'filled', 'integer', '7');
SELECT dblink_exec('s2', $$DELETE FROM tc_s2 WHERE id = 7005$$);
COMMIT;
SELECT count(*), count(*) FILTER (WHERE filled = 7) AS filled, count(*) FILTER (WHERE id = 7005) AS deleted FROM tc;
-- two creates of one dataset: the later commit finds it there (42P07), nothing overwritten
CREATE FOREIGN TABLE trace (id bigint) SERVER life OPTIONS (path 'race.lance');
SELECT dblink_exec('s2', $$CREATE FOREIGN TABLE trace2 (id bigint) SERVER life OPTIONS (path 'race.lance')$$);
BEGIN;
SELECT rows_written FROM lt_create_dataset('trace', query => 'SELECT 1::bigint');
SELECT r AS s2_rows FROM dblink('s2', $$SELECT rows_written FROM lt_create_dataset('trace2', query => 'SELECT 2::bigint')$$) AS t(r bigint);
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
SELECT * FROM trace;
SELECT dblink_exec('s2', 'DROP FOREIGN TABLE trace2');
SELECT dblink_disconnect('s2');

DROP SCHEMA imp CASCADE;
REVOKE ALL ON FOREIGN SERVER life FROM life_other;
DROP FOREIGN TABLE t_q;
DROP ROLE life_other;
SET client_min_messages = warning;
DROP TABLE life_heap, tc_heap;
DROP FUNCTION life_versions(text), life_files(text), life_err(text);
DROP EXTENSION lt_fdw CASCADE;
DROP EXTENSION dblink;
RESET client_min_messages;
