--
-- lt_fdw_rowaccess: point lookups by a btree key (issue 20). A lookup reads only the chunks that hold
-- its row, from data files each backend keeps open per dataset version with their chunk tables; the
-- rows are the heap copy's, and later writes (UPDATE, DELETE, INSERT, ROLLBACK, ROLLBACK TO SAVEPOINT,
-- another writer's commit), time travel and the version cache never show a stale row.
-- Dataset: write/w_rowaccess (80,000 rows in 2 fragments, 2.1, one page per column and fragment),
-- written by the reference; the btree on id is built here (lt_create_index).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
\getenv tmp LT_TEST_TMP
\getenv root LT_ROOT
\set lake :tmp '/lake'
\set ref :root '/test/interop/ref.mjs'
\setenv LT_REF_MJS :ref
\setenv CI_LAKE :lake
CREATE SERVER ra_lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE ra (id bigint, x double precision, s text) SERVER ra_lake OPTIONS (path 'write/w_rowaccess.lance');
SELECT lt_create_index('ra', 'id', 'btree', 'ra_id');
CREATE TABLE ra_heap AS SELECT * FROM ra;
SELECT count(*) FROM ra_heap;

-- keys of the lookups below: spread over both fragments, plus keys that are not there
CREATE FUNCTION ra_keys() RETURNS SETOF bigint LANGUAGE sql AS $$
  SELECT (g * 7919) % 80000 FROM generate_series(1, 300) g UNION ALL VALUES (-1), (80000), (79999), (0), (40000) $$;
-- one point lookup per key (a prepared statement each, as applications do) against the heap's row:
-- how many keys were looked up, how many rows came back, how many differ
CREATE FUNCTION ra_check() RETURNS text LANGUAGE plpgsql AS $$
DECLARE k bigint; n_found bigint := 0; keys bigint := 0; diff bigint := 0; a record; b record;
BEGIN
  FOR k IN SELECT * FROM ra_keys() LOOP
    keys := keys + 1;
    SELECT * INTO a FROM ra WHERE id = k;
    IF FOUND THEN n_found := n_found + 1; END IF;
    SELECT * INTO b FROM ra_heap WHERE id = k;
    IF a IS DISTINCT FROM b THEN diff := diff + 1; END IF;
  END LOOP;
  RETURN format('%s keys, %s found, %s differ', keys, n_found, diff);
END $$;
-- EXPLAIN ANALYZE of one lookup: the index, its rows, and whether it read less than a tenth of the data
CREATE FUNCTION ra_explain(k bigint) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text; data_bytes bigint;
BEGIN
  SELECT sum((pg_stat_file(current_setting('lt_test.lake') || '/write/w_rowaccess.lance/data/' || f)).size)
    INTO data_bytes FROM pg_ls_dir(current_setting('lt_test.lake') || '/write/w_rowaccess.lance/data') f;
  FOR ln IN EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM ra WHERE id = %s', k) LOOP
    IF ln ~ '^\s*Bytes Read:' THEN
      RETURN NEXT format('bytes read below a tenth of the data files: %s', substring(ln from '\d+')::bigint * 10 < data_bytes);
    ELSIF ln ~ 'Lance Index|Rows Selected|actual rows' THEN
      RETURN NEXT ln;
    END IF;
  END LOOP;
END $$;
SELECT set_config('lt_test.lake', :'lake', false) IS NOT NULL AS lake_set;

-- cold, then warm (the files and their chunk tables are kept): the same rows
SELECT ra_check();
SELECT ra_check();
SELECT * FROM ra_explain(12345);
SELECT * FROM ra_explain(71234);
SELECT * FROM ra WHERE id = 12345;

-- writes: every lookup after them sees them
UPDATE ra SET s = 'updated' WHERE id IN (12345, 71234);
UPDATE ra_heap SET s = 'updated' WHERE id IN (12345, 71234);
DELETE FROM ra WHERE id = 40000;
DELETE FROM ra_heap WHERE id = 40000;
INSERT INTO ra VALUES (80000, 0.5, 'inserted');
INSERT INTO ra_heap VALUES (80000, 0.5, 'inserted');
SELECT * FROM ra WHERE id IN (12345, 71234, 40000, 80000) ORDER BY id;
SELECT ra_check();

-- inside a transaction: own writes, then ROLLBACK; a savepoint rolled back
BEGIN;
UPDATE ra SET s = 'in transaction' WHERE id = 777;
SELECT s FROM ra WHERE id = 777;
ROLLBACK;
SELECT s = (SELECT s FROM ra_heap WHERE id = 777) AS unchanged FROM ra WHERE id = 777;
BEGIN;
UPDATE ra SET s = 'kept' WHERE id = 778;
SAVEPOINT sp;
UPDATE ra SET s = 'rolled back' WHERE id = 778;
SELECT s FROM ra WHERE id = 778;
ROLLBACK TO SAVEPOINT sp;
SELECT s FROM ra WHERE id = 778;
COMMIT;
UPDATE ra_heap SET s = 'kept' WHERE id = 778;
SELECT s FROM ra WHERE id = 778;
SELECT ra_check();

-- another writer (the reference engine) commits: the next lookup reads its version
\! cd "$(dirname "$LT_REF_MJS")" && printf '{"ops":[{"op":"update","set":{"s":"'"'"'by the engine'"'"'"},"where":"id = 4242"}]}' > "$CI_LAKE/../ra_upd.json" && node ref.mjs apply "$CI_LAKE/write/w_rowaccess.lance" "$CI_LAKE/../ra_upd.json" > /dev/null
SELECT s FROM ra WHERE id = 4242;
UPDATE ra_heap SET s = 'by the engine' WHERE id = 4242;
SELECT ra_check();

-- time travel: the version before the writes still reads its own rows, after the latest warmed the cache
SELECT min(version) AS v0 FROM lt_versions('ra') WHERE operation = 'CreateIndex' \gset
CREATE FOREIGN TABLE ra_v0 (id bigint, x double precision, s text) SERVER ra_lake
  OPTIONS (path 'write/w_rowaccess.lance', version :'v0');
SELECT id, s <> 'updated' AS original FROM ra_v0 WHERE id = 12345;
SELECT count(*) FROM ra_v0 WHERE id = 40000;
SELECT count(*) FROM ra_v0 WHERE id = 80000;
SELECT s FROM ra WHERE id = 12345;

DROP FOREIGN TABLE ra_v0;
DROP FUNCTION ra_check();
DROP FUNCTION ra_explain(bigint);
DROP FUNCTION ra_keys();
DROP TABLE ra_heap;
DROP FOREIGN TABLE ra;
DROP SERVER ra_lake;
DROP EXTENSION lt_fdw;
