--
-- lt_fdw_keys: keyed tables. A dataset whose schema marks an unenforced primary key (as the reference
-- engine writes it) has its key enforced for lt_fdw's writes: 23505 for a key that exists in the
-- version read (with the transaction's own writes) or earlier in the statement (INSERT, COPY,
-- UPDATE), 23502 for a NULL key; INSERT ... ON CONFLICT DO NOTHING skips those rows.
-- lt_set_primary_key() marks a key on an existing dataset (checked to hold), committed as Lance's
-- field-metadata UpdateConfig: the reference engine then sees the key and its mergeInsert writes an
-- inserted-keys filter over it.
-- Datasets: write/w_keyed (id, 3000 rows, 2 fragments), write/w_keyed2 (key (b, a)),
-- write/w_unkeyed (no key), written by the reference.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
\getenv tmp LT_TEST_TMP
\getenv root LT_ROOT
\set lake :tmp '/lake'
\set ref :root '/test/interop/ref.mjs'
\set inspect :root '/build/lt-inspect'
\setenv LT_REF_MJS :ref
\setenv LT_INSPECT_BIN :inspect
\setenv CI_LAKE :lake
SELECT set_config('lt_test.lake', :'lake', false) IS NOT NULL AS lake_set;
CREATE SERVER kl FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE kt (id bigint, v text) SERVER kl OPTIONS (path 'write/w_keyed.lance', batch_size '8');
CREATE FOREIGN TABLE kt2 (a text, b integer, v bigint) SERVER kl OPTIONS (path 'write/w_keyed2.lance');
CREATE FOREIGN TABLE ku (id bigint, k integer, s text, n integer, d date) SERVER kl OPTIONS (path 'write/w_unkeyed.lance');
CREATE FOREIGN TABLE kt_pinned (id bigint, v text) SERVER kl OPTIONS (path 'write/w_keyed.lance', version '1');

-- run a statement; print its SQLSTATE, message and detail with the lake's path masked
CREATE FUNCTION k_try(q text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE st text; msg text; det text;
BEGIN
  EXECUTE q;
  RAISE NOTICE 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%: % [%]', st, replace(msg, current_setting('lt_test.lake'), '$LAKE'),
    replace(det, current_setting('lt_test.lake'), '$LAKE');
END $f$;
CREATE FUNCTION k_versions(ds text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_ls_dir(current_setting('lt_test.lake') || '/write/' || ds || '.lance/_versions') f
   WHERE f LIKE '%.manifest' $$;

-- ---- the key as the reference marked it --------------------------------------------------------------
SELECT lt_primary_key('kt') AS kt_key, lt_primary_key('kt2') AS kt2_key, lt_primary_key('ku') AS ku_key;
SELECT count(*), count(DISTINCT id) FROM kt;

-- ---- INSERT of a key in the read version: 23505, nothing written ----------------------------------------
SELECT k_versions('w_keyed') AS v0 \gset
SELECT k_try($$INSERT INTO kt VALUES (5, 'five')$$);
SELECT k_try($$INSERT INTO kt VALUES (1000001, 'new'), (2999, 'last')$$);
SELECT k_versions('w_keyed') = :v0 AS no_version;
INSERT INTO kt VALUES (1000001, 'new');
SELECT id, v FROM kt WHERE id = 1000001;

-- ---- within one statement, and earlier in the same transaction ------------------------------------------
SELECT k_try($$INSERT INTO kt VALUES (1000002, 'a'), (1000003, 'b'), (1000002, 'c')$$);
SELECT k_try($$INSERT INTO kt SELECT 1000004 FROM generate_series(1, 2)$$);
BEGIN;
INSERT INTO kt VALUES (1000010, 'x');
SELECT k_try($$INSERT INTO kt VALUES (1000010, 'again')$$);
ROLLBACK;
BEGIN;
INSERT INTO kt VALUES (1000010, 'x');
SAVEPOINT s;
SELECT k_try($$INSERT INTO kt VALUES (1000010, 'again')$$);
ROLLBACK TO SAVEPOINT s;
INSERT INTO kt VALUES (1000011, 'y');
COMMIT;
SELECT id, v FROM kt WHERE id >= 1000010 ORDER BY id;
-- a key deleted earlier in the transaction can be inserted again
BEGIN;
DELETE FROM kt WHERE id = 7;
INSERT INTO kt VALUES (7, 'seven again');
COMMIT;
SELECT id, v FROM kt WHERE id = 7;
SELECT count(*) = count(DISTINCT id) AS unique_ids FROM kt;

-- ---- COPY -------------------------------------------------------------------------------------------
COPY kt FROM stdin;
1000020	c1
1000021	c2
\.
SELECT k_try($$COPY kt FROM PROGRAM 'printf "1000030\tz\n1000031\tz\n1000030\tz\n"'$$);
SELECT k_try($$COPY kt FROM PROGRAM 'printf "1000040\tz\n12\tz\n"'$$);
SELECT count(*) FROM kt WHERE id >= 1000020;

-- ---- UPDATE: keeping a key, changing it to a free one, to a taken one -------------------------------------
UPDATE kt SET v = 'updated' WHERE id BETWEEN 100 AND 109;
SELECT count(*) FROM kt WHERE v = 'updated';
UPDATE kt SET id = 2000000 + id WHERE id BETWEEN 100 AND 104;
SELECT array_agg(id ORDER BY id) FROM kt WHERE v = 'updated';
SELECT k_try($$UPDATE kt SET id = 200 WHERE id = 201$$);
SELECT k_try($$UPDATE kt SET id = 3000000 WHERE id IN (300, 301)$$);
-- a key freed by the update: taken again
INSERT INTO kt VALUES (100, 'back');
-- swapping two keys in one statement collides midway, as with a unique index checked row by row
SELECT k_try($$UPDATE kt SET id = CASE id WHEN 400 THEN 401 ELSE 400 END WHERE id IN (400, 401)$$);
SELECT count(*) = count(DISTINCT id) AS unique_ids, count(*) AS rows FROM kt;

-- ---- ON CONFLICT DO NOTHING: existing and repeated keys skipped, the count says so ------------------------
WITH ins AS (INSERT INTO kt VALUES (1, 'dup'), (1000050, 'new'), (2, 'dup'), (1000050, 'twice'), (1000051, 'new')
               ON CONFLICT DO NOTHING RETURNING id)
SELECT count(*) AS inserted, array_agg(id ORDER BY id) FROM ins;
WITH ins AS (INSERT INTO kt SELECT g, 'bulk' FROM generate_series(2990, 3009) g ON CONFLICT DO NOTHING RETURNING id)
SELECT count(*) AS inserted, min(id), max(id) FROM ins;
-- without RETURNING the rows go in batches (batch_size): the same rows are skipped
INSERT INTO kt SELECT g, 'batch' FROM generate_series(2995, 3014) g ON CONFLICT DO NOTHING;
SELECT count(*) AS inserted, min(id), max(id) FROM kt WHERE v = 'batch';
INSERT INTO kt VALUES (1000052, 'r') ON CONFLICT DO NOTHING RETURNING id;
INSERT INTO kt VALUES (1000052, 'r') ON CONFLICT DO NOTHING RETURNING id;
SELECT id, v FROM kt WHERE id IN (1, 2, 1000050, 1000051) ORDER BY id;
SELECT k_try($$INSERT INTO kt VALUES (1, 'x') ON CONFLICT (id) DO NOTHING$$);
SELECT k_try($$INSERT INTO kt VALUES (1, 'x') ON CONFLICT DO UPDATE SET v = 'y'$$);
-- an unkeyed table: DO NOTHING inserts everything
INSERT INTO ku VALUES (5000, 1, 'a', 1, '2020-01-01') ON CONFLICT DO NOTHING;

-- ---- NULL keys: 23502 ----------------------------------------------------------------------------------
SELECT k_try($$INSERT INTO kt VALUES (NULL, 'null key')$$);
SELECT k_try($$INSERT INTO kt (v) VALUES ('no key')$$);
SELECT k_try($$INSERT INTO kt2 VALUES (NULL, 1, 9)$$);

-- ---- a composite key ---------------------------------------------------------------------------------
SELECT k_try($$INSERT INTO kt2 VALUES ('x', 1, 10)$$);
INSERT INTO kt2 VALUES ('x', 3, 11), ('z', 1, 12);
SELECT k_try($$INSERT INTO kt2 VALUES ('q', 7, 13), ('q', 7, 14)$$);
SELECT a, b, v FROM kt2 ORDER BY b, a;

-- ---- memory: the key set is bounded by work_mem -----------------------------------------------------------
SET work_mem = '64kB';
SELECT k_try($$INSERT INTO kt VALUES (4000000, 'big')$$);
RESET work_mem;

-- ---- a btree index on the key answers the lookups: only fragments it does not cover are read -----------------
SELECT index_name, rows_indexed FROM lt_create_index('kt', 'id', 'btree');
INSERT INTO kt VALUES (5000000, 'after the index');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  INSERT INTO kt VALUES (5000001, 'a'), (5000000, 'b'), (12, 'c'), (5000002, 'd') ON CONFLICT DO NOTHING;
SELECT k_try($$INSERT INTO kt VALUES (6000000, 'x'), (13, 'y')$$);
SELECT k_try($$INSERT INTO kt VALUES (6000000, 'x'), (5000001, 'y')$$);
SET lt_fdw.enable_index_scan = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) INSERT INTO kt VALUES (12, 'c') ON CONFLICT DO NOTHING;
RESET lt_fdw.enable_index_scan;
SELECT count(*) = count(DISTINCT id) AS unique_ids FROM kt;

-- ---- concurrent writers: a key committed meanwhile fails the commit (40001) ----------------------------------
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;
SELECT dblink_connect('s2', format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
                                   split_part(current_setting('unix_socket_directories'), ',', 1))) AS connected;
-- the same key: the later commit loses
BEGIN;
INSERT INTO kt VALUES (7000000, 'session 1');
SELECT dblink_exec('s2', $$INSERT INTO kt VALUES (7000000, 'session 2')$$);
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
-- the message and its detail, naming the key (the loser is session 2 this time)
SELECT dblink_exec('s2', 'BEGIN');
SELECT dblink_exec('s2', $$INSERT INTO kt VALUES (7000007, 'session 2')$$);
INSERT INTO kt VALUES (7000007, 'session 1');
SELECT k_try($$SELECT dblink_exec('s2', 'COMMIT')$$);
-- other keys: both land
BEGIN;
INSERT INTO kt VALUES (7000001, 'session 1');
SELECT dblink_exec('s2', $$INSERT INTO kt VALUES (7000002, 'session 2')$$);
COMMIT;
SELECT id, v FROM kt WHERE id >= 7000000 ORDER BY id;
-- the reference engine's plain add does not say which keys it inserted: 40001 even for another key
BEGIN;
INSERT INTO kt VALUES (7000003, 'postgres');
\! cd "$(dirname "$LT_REF_MJS")" && printf '{"ops":[{"op":"append","rows":[{"id":"7000004","v":"engine add"}]}]}' > "$CI_LAKE/../k_add.json" && node ref.mjs apply "$CI_LAKE/write/w_keyed.lance" "$CI_LAKE/../k_add.json" > /dev/null
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
-- and of the same key
BEGIN;
INSERT INTO kt VALUES (7000005, 'postgres');
\! cd "$(dirname "$LT_REF_MJS")" && printf '{"ops":[{"op":"append","rows":[{"id":"7000005","v":"engine add"}]}]}' > "$CI_LAKE/../k_add.json" && node ref.mjs apply "$CI_LAKE/write/w_keyed.lance" "$CI_LAKE/../k_add.json" > /dev/null
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
-- the engine's mergeInsert on the key inserting the same key meanwhile: 40001
BEGIN;
INSERT INTO kt VALUES (7000006, 'postgres');
\! cd "$(dirname "$LT_REF_MJS")" && printf '{"ops":[{"op":"merge_insert","on":"id","insert_only":true,"rows":[{"id":"7000006","v":"engine merge"}]}]}' > "$CI_LAKE/../k_add.json" && node ref.mjs apply "$CI_LAKE/write/w_keyed.lance" "$CI_LAKE/../k_add.json" > /dev/null
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
SELECT id, v FROM kt WHERE id >= 7000000 ORDER BY id;
SELECT count(*) = count(DISTINCT id) AS unique_ids FROM kt;
SELECT dblink_disconnect('s2');
-- our commit carries the keys it inserted as Lance writes them: an Update whose filter is the one lt_keys builds
INSERT INTO kt VALUES (8000000, 'f'), (8000001, 'g');
SELECT operation FROM lt_versions('kt') ORDER BY version DESC LIMIT 1;
\! t=$(ls -t "$CI_LAKE"/write/w_keyed.lance/_transactions/*.txn | head -n 1); printf '{"id":"8000000"}\n{"id":"8000001"}\n' > "$CI_LAKE/../k_keys.jsonl"; "$LT_INSPECT_BIN" key-filter "$t" --dataset "$CI_LAKE/write/w_keyed.lance" --keys "$CI_LAKE/../k_keys.jsonl" | sed 's/"probability":[^,]*,//'

-- ---- the reference engine reads what we wrote and still sees the key -------------------------------------
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs schema "$CI_LAKE/write/w_keyed.lance"
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$CI_LAKE/write/w_keyed.lance" --columns id | sort | uniq -d | wc -l
SELECT count(*) AS ours FROM kt;
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs scan "$CI_LAKE/write/w_keyed.lance" --columns id | wc -l

-- ---- lt_set_primary_key: failures -------------------------------------------------------------------------
SELECT k_versions('w_unkeyed') AS u0 \gset
SELECT k_try($$SELECT lt_set_primary_key('ku', ARRAY['k'])$$);
SELECT k_try($$SELECT lt_set_primary_key('ku', ARRAY['s'])$$);
SELECT k_try($$SELECT lt_set_primary_key('ku', ARRAY['n'])$$);
SELECT k_try($$SELECT lt_set_primary_key('ku', ARRAY['d'])$$);
SELECT k_try($$SELECT lt_set_primary_key('ku', ARRAY['nope'])$$);
SELECT k_try($$SELECT lt_set_primary_key('ku', ARRAY['id', 'id'])$$);
SELECT k_try($$SELECT lt_set_primary_key('ku', ARRAY[]::text[])$$);
SELECT k_try($$SELECT lt_set_primary_key('kt', ARRAY['id'])$$);
SELECT k_try($$SELECT lt_set_primary_key('kt_pinned', ARRAY['id'])$$);
BEGIN;
INSERT INTO ku VALUES (5001, 1, 'b', 2, '2020-01-02');
SELECT k_try($$SELECT lt_set_primary_key('ku', ARRAY['id'])$$);
ROLLBACK;
-- rolled back: no key
BEGIN;
SELECT lt_set_primary_key('ku', ARRAY['id']) AS rows_checked;
ROLLBACK;
SELECT lt_primary_key('ku') AS still_none, k_versions('w_unkeyed') = :u0 AS no_version;
-- rolled back to a savepoint: the key can be set again; after a row change it is refused at COMMIT
BEGIN;
SAVEPOINT s;
SELECT lt_set_primary_key('ku', ARRAY['id']) AS rows_checked;
ROLLBACK TO SAVEPOINT s;
SELECT lt_set_primary_key('ku', ARRAY['id']) AS rows_checked;
INSERT INTO ku VALUES (5002, 1, 'c', 2, '2020-01-03');
\set VERBOSITY terse
COMMIT;
-- nor PREPARE TRANSACTION
BEGIN;
SELECT lt_set_primary_key('ku', ARRAY['id']) AS rows_checked;
PREPARE TRANSACTION 'k_p';
\set VERBOSITY default
SELECT lt_primary_key('ku') AS still_none, k_versions('w_unkeyed') = :u0 AS no_version,
       (SELECT count(*) FROM ku WHERE id = 5002) AS no_row;

-- ---- lt_set_primary_key: a composite key, one commit --------------------------------------------------------
-- (rows changed and rolled back to a savepoint do not stop it)
BEGIN;
SELECT lt_set_primary_key('ku', ARRAY['k', 'id']) AS rows_checked;
SELECT lt_primary_key('ku') AS not_yet;
SAVEPOINT s;
INSERT INTO ku VALUES (5003, 1, 'c', 2, '2020-01-03');
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT lt_primary_key('ku') AS ku_key, k_versions('w_unkeyed') = :u0 + 1 AS one_version;
SELECT operation FROM lt_versions('ku') ORDER BY version DESC LIMIT 1;
SELECT k_try($$INSERT INTO ku VALUES (17, 1, 'dup?', 0, NULL)$$);
SELECT k_try($$INSERT INTO ku VALUES (17, (SELECT k FROM ku WHERE id = 17 AND s <> 'dup?'), 'dup', 0, NULL)$$);
SELECT k_try($$SELECT lt_set_primary_key('ku', ARRAY['id'])$$);
-- the reference sees the key, and its mergeInsert on (k, id) records the inserted keys over fields [1, 0]
\! cd "$(dirname "$LT_REF_MJS")" && node ref.mjs schema "$CI_LAKE/write/w_unkeyed.lance"
\! cd "$(dirname "$LT_REF_MJS")" && printf '{"ops":[{"op":"merge_insert","on":["k","id"],"insert_only":true,"rows":[{"id":"9000","k":3,"s":"m","n":1,"d":"2021-01-01"},{"id":"9001","k":4,"s":"m","n":1,"d":"2021-01-01"}]}]}' > "$CI_LAKE/../k_merge.json" && node ref.mjs apply "$CI_LAKE/write/w_unkeyed.lance" "$CI_LAKE/../k_merge.json" | sed 's/"dataset":"[^"]*",//'
\! t=$(ls -t "$CI_LAKE"/write/w_unkeyed.lance/_transactions/*.txn | head -n 1); printf '{"k":3,"id":"9000"}\n{"k":4,"id":"9001"}\n' > "$CI_LAKE/../k_keys.jsonl"; "$LT_INSPECT_BIN" key-filter "$t" --dataset "$CI_LAKE/write/w_unkeyed.lance" --keys "$CI_LAKE/../k_keys.jsonl" | sed 's/"probability":[^,]*,//'
SELECT id, k, s FROM ku WHERE id IN (17, 9000, 9001) ORDER BY id, k;

SET client_min_messages = warning;
DROP FUNCTION k_try(text);
DROP FUNCTION k_versions(text);
DROP EXTENSION lt_fdw CASCADE;
DROP EXTENSION dblink;
RESET client_min_messages;
