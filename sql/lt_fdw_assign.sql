--
-- lt_fdw_assign: field assignment, is_assigned(field) (issue 17; docs/field-assignment.md). A boolean
-- column with the column option is_assigned reads the state of a tracked field; lt_track_assignment()
-- starts tracking a field with an explicit initial state; INSERT / COPY assign the fields of their
-- column list, UPDATE the fields of its SET list (the others move with the row), lt_fdw.invalidate_fields
-- clears named fields in the same commit; the state is snapshot state (time travel, ROLLBACK, savepoints);
-- a concurrent change of the tracked fields fails the commit with 40001; both reference engines
-- (Lance 8 and 12) read the dataset's rows identically and refuse to write it.
-- Dataset: a copy of write/w_unkeyed (id, k, s, n, d; 2000 rows in 2 fragments).
--
\getenv root LT_ROOT
\set ECHO none
\i :root/test/pg/lake.psql
CREATE EXTENSION IF NOT EXISTS dblink;
\setenv AS_LAKE :lake
\setenv AS_ROOT :root
\! mkdir -p "$AS_LAKE/assign" && chmod a+rwx "$AS_LAKE/assign" && cp -R "$AS_LAKE/write/w_unkeyed.lance" "$AS_LAKE/assign/docs.lance" && chmod -R a+rwX "$AS_LAKE/assign/docs.lance"
CREATE SERVER asl FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE docs (id bigint, k integer, s text, n integer, d date,
                           s_assigned boolean OPTIONS (is_assigned 's'),
                           n_assigned boolean OPTIONS (is_assigned 'n'))
  SERVER asl OPTIONS (path 'assign/docs.lance');
CREATE FOREIGN TABLE docs_plain (id bigint, k integer, s text, n integer, d date) SERVER asl OPTIONS (path 'assign/docs.lance');
SELECT lt_test.versions('assign/docs.lance') AS v0 \gset

-- ---- not tracked yet: naming is_assigned of the field is an error; a query that does not name it works --
SELECT lt_test.try('SELECT count(*) FROM docs WHERE s_assigned');
SELECT count(*) FROM docs_plain;
SELECT lt_test.try('SELECT count(*) FROM docs');   -- every column is checked, read or not
SELECT lt_test.try('EXPLAIN (COSTS OFF) SELECT id FROM docs');   -- when planning, before any execution
CREATE FOREIGN TABLE docs_bad (id bigint, x boolean OPTIONS (is_assigned 'nope')) SERVER asl OPTIONS (path 'assign/docs.lance');
SELECT lt_test.try('EXPLAIN (COSTS OFF) SELECT id FROM docs_bad');
SELECT lt_test.try($$CREATE FOREIGN TABLE docs_bad2 (id bigint, x boolean OPTIONS (is_assigned '')) SERVER asl OPTIONS (path 'assign/docs.lance')$$);
CREATE FOREIGN TABLE docs_bad3 (id bigint, x integer OPTIONS (is_assigned 's')) SERVER asl OPTIONS (path 'assign/docs.lance');
SELECT lt_test.try('EXPLAIN (COSTS OFF) SELECT id FROM docs_bad3');
DROP FOREIGN TABLE docs_bad, docs_bad3;

-- ---- lt_track_assignment: explicit initial state, errors ------------------------------------------------
SELECT lt_test.try($$SELECT lt_track_assignment('docs_plain', 's', 'maybe')$$);
SELECT lt_test.try($$SELECT lt_track_assignment('docs_plain', 'nope', 'assigned')$$);
SELECT lt_test.try($$SELECT lt_track_assignment('docs_plain', 's', NULL)$$);
-- ROLLBACK: nothing tracked, no version
BEGIN;
SELECT lt_track_assignment('docs_plain', 's', 'assigned');
ROLLBACK;
SELECT lt_test.versions('assign/docs.lance') - :v0 AS new_versions;
-- a savepoint rolled back forgets it too
BEGIN;
SAVEPOINT a;
SELECT lt_track_assignment('docs_plain', 's', 'assigned');
ROLLBACK TO SAVEPOINT a;
COMMIT;
SELECT lt_test.versions('assign/docs.lance') - :v0 AS new_versions;
SELECT lt_track_assignment('docs_plain', 's', 'assigned');
SELECT lt_track_assignment('docs_plain', 'n', 'unassigned');
SELECT lt_test.versions('assign/docs.lance') - :v0 AS new_versions;
SELECT lt_test.versions('assign/docs.lance') AS v_tracked \gset
-- tracking a tracked field is an error (also twice in one transaction)
SELECT lt_test.try($$SELECT lt_track_assignment('docs_plain', 's', 'unassigned')$$);
BEGIN;
SELECT lt_track_assignment('docs_plain', 'k', 'assigned');
SELECT lt_test.try($$SELECT lt_track_assignment('docs_plain', 'k', 'assigned')$$);
ROLLBACK;

-- ---- reading: an ordinary boolean, never NULL, in any expression ---------------------------------------------
SELECT count(*), count(*) FILTER (WHERE s_assigned) AS s_yes, count(*) FILTER (WHERE n_assigned) AS n_yes,
       count(s_assigned) AS s_nonnull, count(n_assigned) AS n_nonnull FROM docs;
SELECT s_assigned, n_assigned, NOT n_assigned AS n_not, s_assigned AND NOT n_assigned AS both_ FROM docs ORDER BY id LIMIT 2;
SELECT s_assigned OR n_assigned AS either, count(*) FROM docs GROUP BY 1 ORDER BY 1;
SELECT id FROM docs WHERE NOT n_assigned AND id < 3 ORDER BY n_assigned, id;
-- a NULL value that is assigned (the initial state says so, never the NULLs)
SELECT count(*) FILTER (WHERE s IS NULL AND s_assigned) > 0 AS null_but_assigned FROM docs;

-- ---- writes: INSERT assigns the fields of its column list, also an explicit NULL ----------------------------
INSERT INTO docs (id, k, s) VALUES (5000, 1, NULL);
INSERT INTO docs (id, k) VALUES (5001, 1);
INSERT INTO docs (id, k, s, n) VALUES (5002, 1, 'x', 2);
INSERT INTO docs VALUES (5003, 1, 'all', 3, NULL);   -- no column list: every column given
COPY docs (id, k, n) FROM STDIN;
5004	1	7
\.
SELECT id, s, n, s_assigned, n_assigned FROM docs WHERE id >= 5000 ORDER BY id;
-- RETURNING gives the state the rows get
INSERT INTO docs (id, k, n) VALUES (5005, 1, 5) RETURNING id, s_assigned, n_assigned;
UPDATE docs SET s = 'r' WHERE id = 5005 RETURNING id, s, s_assigned, n_assigned;
DELETE FROM docs WHERE id = 5005;
-- the is_assigned columns cannot be written (an UPDATE may only set them to false: below)
SELECT lt_test.try($$INSERT INTO docs (id, k, s_assigned) VALUES (5009, 1, true)$$);
SELECT lt_test.try($$UPDATE docs SET n_assigned = true WHERE id = 5001$$);

-- ---- UPDATE: the SET list assigns, other fields move with the row ---------------------------------------------
UPDATE docs SET n = 10 WHERE id IN (5000, 5001);
SELECT id, n, s_assigned, n_assigned FROM docs WHERE id >= 5000 ORDER BY id;
-- invalidation in the same commit: the text changed, its derived field is stale
BEGIN;
SET LOCAL lt_fdw.invalidate_fields = 'n';
UPDATE docs SET s = 'new' WHERE id IN (5002, 5004);
SELECT id, s, s_assigned, n_assigned FROM docs WHERE id >= 5000 ORDER BY id;   -- own writes
COMMIT;
SELECT id, s, s_assigned, n_assigned FROM docs WHERE id >= 5000 ORDER BY id;
-- an invalidation-only mutation: SET a column to itself, invalidate s
BEGIN;
SET LOCAL lt_fdw.invalidate_fields = 's';
UPDATE docs SET k = k WHERE id = 5003;
COMMIT;
SELECT id, s_assigned, n_assigned FROM docs WHERE id = 5003;
-- writing and invalidating one field, an untracked or unknown field: errors before anything is written
SELECT lt_test.versions('assign/docs.lance') AS v_before \gset
BEGIN;
SET LOCAL lt_fdw.invalidate_fields = 's';
SELECT lt_test.try($$UPDATE docs SET s = 'both' WHERE id = 5000$$);
SET LOCAL lt_fdw.invalidate_fields = 'k';
SELECT lt_test.try($$UPDATE docs SET n = 1 WHERE id = 5000$$);
SET LOCAL lt_fdw.invalidate_fields = 'nope';
SELECT lt_test.try($$UPDATE docs SET n = 1 WHERE id = 5000$$);
COMMIT;
SELECT lt_test.versions('assign/docs.lance') - :v_before AS new_versions;

-- ---- deletes leave the state of the other rows alone ------------------------------------------------------------
DELETE FROM docs WHERE id BETWEEN 100 AND 199 OR id = 5001;
SELECT count(*), count(*) FILTER (WHERE s_assigned) AS s_yes, count(*) FILTER (WHERE n_assigned) AS n_yes FROM docs;

-- ---- in a filter: an exact row mask per fragment, the same rows as without it ------------------------------------
-- (the mask takes top-level "col" / "NOT col" conjuncts; "(NOT col) IS TRUE" is the same filter, unmasked)
SELECT id FROM docs WHERE NOT s_assigned ORDER BY id;
SELECT id FROM docs WHERE (NOT s_assigned) IS TRUE ORDER BY id;
SELECT id, n FROM docs WHERE n_assigned AND k = 1 ORDER BY id;
SELECT id, n FROM docs WHERE (n_assigned AND k = 1) IS TRUE ORDER BY id;
SELECT count(*) FROM docs WHERE s_assigned AND NOT n_assigned;
SELECT count(*) FROM docs WHERE (s_assigned AND NOT n_assigned) IS TRUE;
-- the fragments the mask proves empty are never opened (the two original ones among them: s assigned everywhere)
SELECT ln FROM lt_test.explain($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT id FROM docs WHERE NOT s_assigned$$) AS ln WHERE ln ~ 'Fragments|Assignment|Rows Removed by Filter';
SELECT ln FROM lt_test.explain($$EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT id FROM docs WHERE n_assigned AND k = 1$$) AS ln WHERE ln ~ 'Fragments|Assignment|Rows Removed by Filter';

-- parallel workers apply the same mask to their units of work: the same answers
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT ln FROM lt_test.explain($$EXPLAIN (COSTS OFF) SELECT id, s_assigned FROM docs WHERE NOT s_assigned$$) AS ln
 WHERE ln ~ 'Gather|Workers|Assignment';
SELECT id, s_assigned FROM docs WHERE NOT s_assigned ORDER BY id;
SELECT count(*) FROM (SELECT id FROM docs WHERE s_assigned AND NOT n_assigned) q;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;

-- ---- ROLLBACK and savepoints ---------------------------------------------------------------------------------------
BEGIN;
INSERT INTO docs (id, k, n) VALUES (6000, 1, 1);
SAVEPOINT b;
UPDATE docs SET s = 'sp' WHERE id = 6000;
SELECT id, s_assigned, n_assigned FROM docs WHERE id = 6000;
ROLLBACK TO SAVEPOINT b;
SELECT id, s_assigned, n_assigned FROM docs WHERE id = 6000;
COMMIT;
SELECT id, s_assigned, n_assigned FROM docs WHERE id = 6000;
BEGIN;
INSERT INTO docs (id, k, s) VALUES (6001, 1, 'gone');
ROLLBACK;
SELECT count(*) FROM docs WHERE id = 6001;

-- ---- time travel: each version has its own state -------------------------------------------------------------------
CREATE FOREIGN TABLE docs_v (id bigint, s_assigned boolean OPTIONS (is_assigned 's'),
                             n_assigned boolean OPTIONS (is_assigned 'n'))
  SERVER asl OPTIONS (path 'assign/docs.lance', version :'v_tracked');
SELECT count(*), count(*) FILTER (WHERE s_assigned) AS s_yes, count(*) FILTER (WHERE n_assigned) AS n_yes FROM docs_v;
CREATE FOREIGN TABLE docs_v0 (id bigint, s_assigned boolean OPTIONS (is_assigned 's'))
  SERVER asl OPTIONS (path 'assign/docs.lance', version :'v0');
SELECT lt_test.try('SELECT count(*) FROM docs_v0');
-- a rename of the PostgreSQL column keeps it (the state is keyed by field id, the option by field name)
ALTER FOREIGN TABLE docs RENAME COLUMN s_assigned TO text_ok;
SELECT count(*) FILTER (WHERE text_ok) AS s_yes FROM docs;
ALTER FOREIGN TABLE docs RENAME COLUMN text_ok TO s_assigned;

-- ---- concurrency: a write planned before a field was tracked fails with 40001 ----------------------------------------
SELECT dblink_connect('as2', format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
                                    split_part(current_setting('unix_socket_directories'), ',', 1))) AS connected;
BEGIN;
INSERT INTO docs (id, k, s) VALUES (7000, 1, 'mine');
SELECT * FROM dblink('as2', $$SELECT lt_track_assignment('docs_plain', 'd', 'assigned')::text$$) AS t(r text);
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
SELECT count(*) FROM docs WHERE id = 7000;
-- the other order: a tracking commit over a concurrent write rebases (every row gets the initial state)
BEGIN;
SELECT lt_track_assignment('docs_plain', 'k', 'assigned');
SELECT dblink_exec('as2', $$INSERT INTO docs (id, k) VALUES (7003, 1)$$);
COMMIT;
-- two writers of different rows both land (the later rebases, the state merges)
BEGIN;
INSERT INTO docs (id, k, s) VALUES (7001, 1, 'a');
SELECT dblink_exec('as2', $$INSERT INTO docs (id, k, n) VALUES (7002, 1, 2)$$);
COMMIT;
SELECT id, s_assigned, n_assigned FROM docs WHERE id >= 7000 ORDER BY id;
SELECT dblink_disconnect('as2');

-- ---- IMPORT gives each tracked field an is_assigned column --------------------------------------------------------------
CREATE SCHEMA as_import;
IMPORT FOREIGN SCHEMA "assign" LIMIT TO (docs) FROM SERVER asl INTO as_import;
SELECT attname, format_type(atttypid, atttypmod) AS type, attfdwoptions FROM pg_attribute
 WHERE attrelid = 'as_import.docs'::regclass AND attnum > 0 ORDER BY attnum;
SELECT count(*) FILTER (WHERE s_is_assigned) AS s_yes, count(*) FILTER (WHERE n_is_assigned) AS n_yes,
       count(*) FILTER (WHERE d_is_assigned) AS d_yes, count(*) FILTER (WHERE k_is_assigned) AS k_yes,
       count(*) AS total FROM as_import.docs;
DROP SCHEMA as_import CASCADE;

-- ---- merge-insert assigns what it writes (its source gives every column) -------------------------------------------
SELECT id, s_assigned, n_assigned FROM docs WHERE id IN (5004, 6000) ORDER BY id;
SELECT * FROM lt_merge_insert('docs',
  $$SELECT * FROM (VALUES (5004::bigint, 1, 'merged', 4, NULL::date), (8000, 1, 'new', NULL, NULL)) v(id, k, s, n, d)$$, '{id}');
SELECT id, s, n, s_assigned, n_assigned FROM docs WHERE id IN (5004, 6000, 8000) ORDER BY id;

-- ---- the backfill loop: NOT is_assigned selects the work, lt_merge_insert on _rowid writes it back -------------------
CREATE FOREIGN TABLE docs_rid (id bigint, k integer, s text, n integer, d date, _rowid bigint,
                               s_assigned boolean OPTIONS (is_assigned 's'),
                               n_assigned boolean OPTIONS (is_assigned 'n'))
  SERVER asl OPTIONS (path 'assign/docs.lance');
SELECT count(*) FILTER (WHERE NOT n_assigned) AS n_todo, count(*) AS total FROM docs_rid;
UPDATE docs_rid SET s_assigned = false WHERE id IN (1, 3);   -- so that the rows written differ in s's state
CREATE TEMP TABLE work AS
  SELECT _rowid, id, k, s, d, s_assigned, id * 10 AS n FROM docs_rid WHERE NOT n_assigned AND id < 1000 ORDER BY id LIMIT 6;
SELECT id, s_assigned FROM work ORDER BY id;
SELECT * FROM lt_merge_insert('docs_rid', 'SELECT _rowid, n FROM work', '{_rowid}', when_not_matched => 'do_nothing');
-- exactly those rows became assigned (n), with their values; their other columns and s's state are kept
SELECT count(*) FILTER (WHERE NOT n_assigned) AS n_todo FROM docs_rid;
SELECT d.id, d.n, d.n_assigned, (d.k, d.s, d.d, d.s_assigned) IS NOT DISTINCT FROM (w.k, w.s, w.d, w.s_assigned) AS rest_kept
  FROM docs_rid d JOIN work w USING (id) ORDER BY id;
SELECT count(*) AS n_assigned_elsewhere FROM docs_rid WHERE n_assigned AND id < 1000 AND id NOT IN (SELECT id FROM work);
-- the same row ids again: their rows were replaced (no stable row ids), reported, nothing written
SELECT * FROM lt_merge_insert('docs_rid', 'SELECT _rowid, n FROM work', '{_rowid}', when_not_matched => 'do_nothing');
-- a text change invalidates n in the same commit: the row is work again
BEGIN;
SET LOCAL lt_fdw.invalidate_fields = 'n';
UPDATE docs_rid SET s = 'new text' WHERE id = (SELECT min(id) FROM work);
COMMIT;
SELECT id, s, n, s_assigned, n_assigned FROM docs_rid WHERE id IN (SELECT id FROM work) ORDER BY id;
SELECT operation FROM lt_versions('docs') ORDER BY version DESC LIMIT 1;
DROP TABLE work;
-- a partial source on another key: a new row leaves the fields it does not give unassigned (NULL), a
-- matched row keeps their state (id 1: s unassigned stays so, id 2: s assigned stays so)
-- (k is a non-nullable field: a new row without it is refused, nothing written)
SELECT lt_test.try($q$SELECT lt_merge_insert('docs_rid', $$SELECT * FROM (VALUES (1::bigint, 7), (8100, 7)) v(id, n)$$, '{id}')$q$);
SELECT * FROM lt_merge_insert('docs_rid', $$SELECT * FROM (VALUES (1::bigint, 14, 7), (2, 6, 7), (8100, 1, 7)) v(id, k, n)$$, '{id}');
SELECT id, k, s IS NULL AS s_null, n, s_assigned, n_assigned FROM docs_rid WHERE id IN (1, 2, 8100) ORDER BY id;

-- ---- lt_fdw.invalidate_fields counts only when this transaction set it ------------------------------------------------
SET lt_fdw.invalidate_fields = 'n';
SELECT lt_test.try($$UPDATE docs SET k = 2 WHERE id = 5000$$);
RESET lt_fdw.invalidate_fields;
SELECT id, k, n_assigned FROM docs WHERE id = 5000;

-- ---- the reference engines: the same rows, and no write -------------------------------------------------------------
SELECT count(*) AS rows FROM docs_plain;
\! cd "$AS_ROOT/test/interop" && node assign-engines.mjs . "$AS_LAKE/assign/docs.lance" id,k,s,n 2>/dev/null
\! cd "$AS_ROOT/test/interop" && node assign-engines.mjs lance12 "$AS_LAKE/assign/docs.lance" id,k,s,n 2>/dev/null
-- the digest lt_fdw computes over the same rows, in the same text form
SELECT left(encode(sha256(convert_to(string_agg(
         concat_ws('|', id::text, k::text, coalesce(to_json(s)::text, 'null'), coalesce(n::text, 'null')),
         E'\n' ORDER BY id), 'UTF8')), 'hex'), 16) AS digest FROM docs_plain;

-- ---- a damaged root is XX001 naming the file, never "unassigned" ----------------------------------------------------
\! cp -R "$AS_LAKE/assign/docs.lance" "$AS_LAKE/assign/bad.lance" && chmod -R a+rwX "$AS_LAKE/assign/bad.lance" && for f in "$AS_LAKE"/assign/bad.lance/_assignment/*.root; do printf 'XXXX' | dd of="$f" bs=1 seek=20 conv=notrunc 2>/dev/null; done
CREATE FOREIGN TABLE bad (id bigint, s_assigned boolean OPTIONS (is_assigned 's')) SERVER asl OPTIONS (path 'assign/bad.lance');
DO $$
BEGIN
  PERFORM count(*) FROM bad WHERE s_assigned;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE '%: %', SQLSTATE, regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>');
END $$;
SELECT count(id) FROM bad;   -- a query that does not read the state reads no state

SELECT count(*) AS rows, count(*) FILTER (WHERE s_assigned) AS s_assigned FROM docs;
-- ---- lt_cleanup keeps the state the kept versions name ------------------------------------------------------------
SELECT count(*) FILTER (WHERE s_assigned) AS s_yes, count(*) FILTER (WHERE n_assigned) AS n_yes FROM docs;
SELECT old_versions > 0 AS removed_versions FROM lt_cleanup('docs', '0 seconds', delete_unverified => true);
SELECT count(*) FILTER (WHERE s_assigned) AS s_yes, count(*) FILTER (WHERE n_assigned) AS n_yes FROM docs;

-- ---- state-only invalidation: SET the is_assigned column to false; the rows stay where they are ---------------------
SELECT count(*) AS fragments FROM lt_fragments('docs') \gset
SELECT lt_test.versions('assign/docs.lance') AS v_so \gset
SELECT count(*) FILTER (WHERE s_assigned) AS s_yes, count(*) FILTER (WHERE n_assigned) AS n_yes FROM docs WHERE id < 100;
BEGIN;
UPDATE docs SET s_assigned = false WHERE id < 50;
SELECT count(*) FILTER (WHERE s_assigned) AS s_yes FROM docs WHERE id < 100;   -- own writes
SAVEPOINT c;
UPDATE docs SET s_assigned = false WHERE id BETWEEN 50 AND 59;
ROLLBACK TO SAVEPOINT c;
COMMIT;
SELECT count(*) FILTER (WHERE s_assigned) AS s_yes, count(*) FILTER (WHERE n_assigned) AS n_yes FROM docs WHERE id < 100;
SELECT lt_test.versions('assign/docs.lance') - :v_so AS new_versions,
       (SELECT count(*) FROM lt_fragments('docs')) - :fragments AS new_fragments;
SELECT operation FROM lt_versions('docs') ORDER BY version DESC LIMIT 1;
-- only false; and with data columns in the SET list it is an invalidation of the rows written
SELECT lt_test.try($$UPDATE docs SET s_assigned = true WHERE id = 60$$);
SELECT lt_test.try($$UPDATE docs SET s = 'x', s_assigned = false WHERE id = 60$$);
UPDATE docs SET n = 1, s_assigned = false WHERE id = 60;
SELECT id, n, s_assigned, n_assigned FROM docs WHERE id = 60;
\! cd "$AS_ROOT/test/interop" && node assign-engines.mjs lance12 "$AS_LAKE/assign/docs.lance" id 2>/dev/null | tail -n 1

-- ---- compaction moves the state with the rows (the row mapping of the data; a rewrite never assigns) ---------------
CREATE TEMP TABLE as_before AS SELECT id, s_assigned, n_assigned FROM docs;
SELECT count(*) AS fragments FROM lt_fragments('docs') \gset
SELECT max(version) AS v_co FROM lt_versions('docs') \gset
SELECT fragments_removed > 1 AS compacted, rows_rewritten = (SELECT count(*) FROM as_before) AS every_row
  FROM lt_compact('docs', 1000000, true, 0);
SELECT (SELECT count(*) FROM lt_fragments('docs')) < :fragments AS fewer_fragments;
SELECT operation FROM lt_versions('docs') ORDER BY version DESC LIMIT 1;
SELECT count(*) AS differ FROM ((SELECT id, s_assigned, n_assigned FROM docs EXCEPT ALL SELECT * FROM as_before)
  UNION ALL (SELECT * FROM as_before EXCEPT ALL SELECT id, s_assigned, n_assigned FROM docs)) x;
SELECT count(*) FILTER (WHERE s_assigned) AS s_yes, count(*) FILTER (WHERE NOT s_assigned) AS s_no,
       count(*) FILTER (WHERE n_assigned) AS n_yes, count(*) FILTER (WHERE NOT n_assigned) AS n_no FROM docs;
-- the version before keeps its own state
CREATE FOREIGN TABLE docs_pre (id bigint, s_assigned boolean OPTIONS (is_assigned 's'), n_assigned boolean OPTIONS (is_assigned 'n'))
  SERVER asl OPTIONS (path 'assign/docs.lance', version :'v_co');
SELECT count(*) AS differ_pre FROM ((SELECT * FROM docs_pre EXCEPT ALL SELECT * FROM as_before)
  UNION ALL (SELECT * FROM as_before EXCEPT ALL SELECT * FROM docs_pre)) x;
-- Lance 12 reads the compacted rows (all of them) and still refuses to write
SELECT count(*) AS rows FROM docs;
\! cd "$AS_ROOT/test/interop" && node assign-engines.mjs lance12 "$AS_LAKE/assign/docs.lance" id 2>/dev/null | sed -n '2p;$p' | cut -d, -f1-2

-- ---- TRUNCATE: the state starts again with the rows added after it --------------------------------------------------
BEGIN;
TRUNCATE docs;
INSERT INTO docs (id, k, n) VALUES (1, 1, 1);
COMMIT;
SELECT id, s_assigned, n_assigned FROM docs;

-- ---- schema evolution of tracked fields (issues 17 and 18) ----------------------------------------------------------
\! cp -R "$AS_LAKE/write/w_unkeyed.lance" "$AS_LAKE/assign/evo.lance" && chmod -R a+rwX "$AS_LAKE/assign/evo.lance"
CREATE FOREIGN TABLE evo (id bigint, k integer, s text, n integer, d date) SERVER asl OPTIONS (path 'assign/evo.lance');
SELECT lt_test.versions('assign/evo.lance') AS ev0 \gset
-- a new column tracked as unassigned, in the one commit that adds it; its is_assigned column comes with it
BEGIN;
SELECT lt_add_column('evo', 'emb', 'integer', NULL, 'unassigned');
ROLLBACK;
SELECT lt_test.versions('assign/evo.lance') - :ev0 AS versions_after_rollback,
       (SELECT count(*) FROM pg_attribute WHERE attrelid = 'evo'::regclass AND attname LIKE 'emb%' AND NOT attisdropped) AS columns;
SELECT lt_add_column('evo', 'emb', 'integer', NULL, 'unassigned');
SELECT lt_test.versions('assign/evo.lance') - :ev0 AS new_versions;
SELECT operation FROM lt_versions('evo') ORDER BY version DESC LIMIT 1;
SELECT attname, atttypid::regtype, attfdwoptions FROM pg_attribute WHERE attrelid = 'evo'::regclass AND attnum > 5 AND NOT attisdropped ORDER BY attnum;
SELECT count(*) AS rows, count(*) FILTER (WHERE emb_is_assigned) AS assigned, count(emb) AS non_null FROM evo;
-- writing it assigns exactly the rows written (an explicit NULL too)
UPDATE evo SET emb = id WHERE id < 10;
UPDATE evo SET emb = NULL WHERE id BETWEEN 10 AND 14;
SELECT count(*) FILTER (WHERE emb_is_assigned) AS assigned, count(emb) AS non_null FROM evo;
-- the planner's estimate of an is_assigned filter comes from the state's counts (15 of 2000 rows assigned)
CREATE FUNCTION pg_temp.est(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN ' || q LOOP
    IF ln ~ 'Foreign Scan' THEN RETURN substring(ln from 'rows=([0-9]+)'); END IF;
  END LOOP;
  RETURN NULL;
END $f$;
SELECT pg_temp.est('SELECT id FROM evo WHERE emb_is_assigned') AS assigned_est,
       pg_temp.est('SELECT id FROM evo WHERE NOT emb_is_assigned') AS unassigned_est,
       pg_temp.est('SELECT id FROM evo WHERE NOT emb_is_assigned AND k < 0')::int < pg_temp.est('SELECT id FROM evo WHERE k < 0')::int AS combined;
SELECT regexp_replace(l, 'cost=\S+ ', '') AS plan
  FROM lt_test.explain('EXPLAIN SELECT id FROM evo WHERE emb_is_assigned') l LIMIT 1;
-- with a value, tracked as assigned: every existing row holds it and is assigned; rows inserted without it are not
SELECT lt_add_column('evo', 'score', 'integer', '5', 'assigned');
INSERT INTO evo (id, k) VALUES (90000, 1);
SELECT count(*) AS rows, count(*) FILTER (WHERE score_is_assigned) AS assigned, count(*) FILTER (WHERE score = 5) AS fives FROM evo;
SELECT lt_test.try($$SELECT lt_add_column('evo', 'x', 'integer', NULL, 'partly')$$);
SELECT lt_test.versions('assign/evo.lance') AS ev_before_rename \gset
-- rename keeps the state (keyed by field id); the column reading it follows the new name
SELECT lt_rename_column('evo', 'emb', 'embedding');
SELECT attname, attfdwoptions FROM pg_attribute WHERE attrelid = 'evo'::regclass AND attname LIKE 'emb%' AND NOT attisdropped ORDER BY attnum;
SELECT count(*) FILTER (WHERE emb_is_assigned) AS assigned, count(embedding) AS non_null FROM evo;
-- both engines read the same rows and still refuse to write
\! cd "$AS_ROOT/test/interop" && node assign-engines.mjs . "$AS_LAKE/assign/evo.lance" id,embedding,score 2>/dev/null
\! cd "$AS_ROOT/test/interop" && node assign-engines.mjs lance12 "$AS_LAKE/assign/evo.lance" id,embedding,score 2>/dev/null
-- drop of a tracked field: its state goes in the same commit, with the column that read it; the other stays tracked
SELECT lt_test.versions('assign/evo.lance') AS ev1 \gset
SELECT lt_drop_column('evo', 'embedding');
SELECT lt_test.versions('assign/evo.lance') - :ev1 AS new_versions;
SELECT attname FROM pg_attribute WHERE attrelid = 'evo'::regclass AND attnum > 5 AND NOT attisdropped ORDER BY attnum;
SELECT count(*) FILTER (WHERE score_is_assigned) AS assigned FROM evo;
SELECT pg_temp.est('SELECT id FROM evo WHERE score_is_assigned') AS assigned_est,
       pg_temp.est('SELECT id FROM evo WHERE NOT score_is_assigned') AS unassigned_est;
\! cd "$AS_ROOT/test/interop" && node assign-engines.mjs lance12 "$AS_LAKE/assign/evo.lance" id,score 2>/dev/null | tail -n 1
-- a new field of the same name is a new field id: not tracked (its is_assigned column is an error)
SELECT lt_add_column('evo', 'embedding', 'integer');
CREATE FOREIGN TABLE evo_new (id bigint, a boolean OPTIONS (is_assigned 'embedding')) SERVER asl OPTIONS (path 'assign/evo.lance');
SELECT lt_test.try('SELECT count(*) FROM evo_new WHERE a');
-- the version before the drop still has the state (time travel)
CREATE FOREIGN TABLE evo_old (id bigint, emb integer, a boolean OPTIONS (is_assigned 'emb'))
  SERVER asl OPTIONS (path 'assign/evo.lance', version :'ev_before_rename');
SELECT count(*) FILTER (WHERE a) AS assigned FROM evo_old;
-- the last tracked field dropped: no state and no writer flag left, so the engines write the dataset again
SELECT lt_drop_column('evo', 'score');
\! cd "$AS_ROOT/test/interop" && node assign-engines.mjs lance12 "$AS_LAKE/assign/evo.lance" id 2>/dev/null | tail -n 1
SELECT count(*) AS rows FROM evo;

-- ---- is_assigned in a vector search (issues 16 and 17): the state narrows the rows before the limit ---------------
-- A copy of the lake's vectors.lance (3,000 rows in 3 fragments, the engine's IVF_FLAT index of 2 partitions
-- on vec, rows with id % 7 = 3 deleted).  Invalidation in place keeps the rows in the index's fragments.
\! cp -R "$AS_LAKE/vectors.lance" "$AS_LAKE/assign/vec.lance" && chmod -R a+rwX "$AS_LAKE/assign/vec.lance"
CREATE FOREIGN TABLE av (id bigint, cat integer, vec real[], v64 double precision[], vec_assigned boolean OPTIONS (is_assigned 'vec'))
  SERVER asl OPTIONS (path 'assign/vec.lance');
CREATE FOREIGN TABLE av_plain (id bigint, cat integer, vec real[]) SERVER asl OPTIONS (path 'assign/vec.lance');
SELECT lt_track_assignment('av_plain', 'vec', 'assigned');
UPDATE av SET vec_assigned = false WHERE id % 3 = 0;
SELECT name, kind, covered_fragments, unindexed_fragments FROM lt_indexes('av');
CREATE TEMP TABLE avh AS SELECT id, cat, vec, vec_assigned FROM av;
SELECT count(*) AS live, count(*) FILTER (WHERE vec_assigned) AS assigned FROM avh;
CREATE FUNCTION pg_temp.knn_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln ~ '(Vector Search|Prefilter Rows|Exact \(Small Prefilter\)|Index Searches):' THEN RETURN NEXT btrim(ln); END IF;
  END LOOP;
END $f$;
-- one probe of two: the index search takes the state as its prefilter, and still returns k rows, all assigned
SET lt_fdw.nprobes = 1;
SELECT pg_temp.knn_lines($$SELECT id FROM av WHERE vec_assigned ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 50$$);
SELECT count(*) AS rows, bool_and(vec_assigned) AS all_assigned
  FROM (SELECT vec_assigned FROM av WHERE vec_assigned ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 50) s;
SELECT count(*) AS rows, bool_and(NOT vec_assigned AND cat = 4) AS all_pass
  FROM (SELECT vec_assigned, cat FROM av WHERE NOT vec_assigned AND cat = 4 ORDER BY vec <=> '{8,7,6,5,4,3,2,1}' LIMIT 200) s;
SELECT count(*) AS expected FROM avh WHERE NOT vec_assigned AND cat = 4;
-- every partition probed (IVF_FLAT scores exactly) and the exact path: the heap's answer, with the state
-- alone and with another filter
CREATE FUNCTION pg_temp.av_differ() RETURNS text LANGUAGE plpgsql AS $f$
DECLARE q text; w text; a text; b text; tried int := 0; bad text := '';
BEGIN
  PERFORM setseed(0.5);
  FOR i IN 1..6 LOOP
    SELECT '{' || string_agg((random() * 2000 - 1000)::real::text, ',') || '}' INTO q FROM generate_series(1, 8);
    FOREACH w IN ARRAY ARRAY['vec_assigned', 'NOT vec_assigned', 'vec_assigned AND cat < 3'] LOOP
      EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM av WHERE %s ORDER BY vec <-> %L::real[] LIMIT 25) s', w, q) INTO a;
      EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM avh WHERE %s ORDER BY vec <-> %L::real[] LIMIT 25) s', w, q) INTO b;
      tried := tried + 1;
      IF a IS DISTINCT FROM b THEN bad := bad || w || ' ' || q || E'\n'; END IF;
    END LOOP;
  END LOOP;
  RETURN tried || ' queries, differ: ' || CASE WHEN bad = '' THEN 'none' ELSE bad END;
END $f$;
SET lt_fdw.nprobes = 2;
SELECT pg_temp.av_differ() AS through_index;
SET lt_fdw.vector_index = off;
SELECT pg_temp.av_differ() AS exact;
-- and under parallel workers (the exact path: each process ranks the rows of its fragments that the state keeps)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT count(*) AS gather_merge FROM lt_test.explain($$EXPLAIN (COSTS OFF) SELECT id FROM av WHERE vec_assigned ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 25$$) l
 WHERE l LIKE '%Gather Merge%';
SELECT pg_temp.av_differ() AS parallel_exact;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
RESET lt_fdw.vector_index;
-- few rows assigned: the mask is searched exactly (EXPLAIN counts it), every one of them returned
SET lt_fdw.nprobes = 1;
UPDATE av SET vec_assigned = false WHERE id % 25 <> 0;
SELECT pg_temp.knn_lines($$SELECT id FROM av WHERE vec_assigned ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 500$$);
UPDATE avh SET vec_assigned = false WHERE id % 25 <> 0;
SELECT count(*) AS rows, bool_and(vec_assigned) AS all_assigned, bool_and(id % 25 = 0) AS all_kept,
       array_agg(id ORDER BY id) = (SELECT array_agg(id ORDER BY id) FROM avh WHERE vec_assigned) AS every_one
  FROM (SELECT id, vec_assigned FROM av WHERE vec_assigned ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 500) s;
SELECT (SELECT array_agg(id) FROM (SELECT id FROM av WHERE vec_assigned ORDER BY vec <-> '{1,2,3,4,5,6,7,8}', id LIMIT 500) a) =
       (SELECT array_agg(id) FROM (SELECT id FROM avh WHERE vec_assigned ORDER BY vec <-> '{1,2,3,4,5,6,7,8}', id LIMIT 500) b) AS heap_order;
RESET lt_fdw.nprobes;

DROP SERVER asl CASCADE;
DROP EXTENSION dblink;
