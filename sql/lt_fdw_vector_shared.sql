--
-- lt_fdw_vector_shared: the vector index cache shared between backends (lt_fdw.vector_shared_cache_dir,
-- lt_fdw.vector_shared_cache_size). The first backend to search an index segment decodes what it
-- probes and writes it to the directory; a second backend (a new connection, its own cache empty)
-- maps those files and decodes nothing (EXPLAIN ANALYZE's Index Cache line), with the same answers.
-- A directory that cannot be used, or the shared cache off: each backend decodes its own, same answers.
-- Dataset: vectors.lance (3000 rows, vec fixed_size_list<float32,8> with the engine's IVF_FLAT index of
-- 2 partitions).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lt_fdw;
RESET client_min_messages;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
\set shdir :tmp '/vshare'
SET lt_fdw.vector_shared_cache_dir = :'shdir';
CREATE SERVER shlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE sht (id bigint, cat integer, vec real[]) SERVER shlake OPTIONS (path 'vectors.lance');
SHOW lt_fdw.vector_shared_cache_size;
-- each backend's answers, to compare across connections
CREATE TABLE sh_answers (backend text, q int, ids text);
-- the Index Cache line of q's EXPLAIN ANALYZE
CREATE FUNCTION sh_cache(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln ~ 'Index Cache: ' THEN RETURN trim(ln); END IF;
  END LOOP;
  RETURN 'no Index Cache line';
END $$;
-- record this backend's answers to 12 queries (both partitions probed, and one): ids and distances to the last bit
CREATE FUNCTION sh_answer(backend text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE q text;
BEGIN
  PERFORM set_config('extra_float_digits', '3', true);
  FOR i IN 1..12 LOOP
    q := '{' || i || ',' || (i * 7) % 13 || ',3,' || -i || ',5,' || i % 4 || ',7,' || (i * i) % 11 || '}';
    PERFORM set_config('lt_fdw.nprobes', (1 + i % 2)::text, true);
    EXECUTE format('INSERT INTO sh_answers SELECT %L, %s, string_agg(id || ''='' || d, '','' ORDER BY d, id) '
                   'FROM (SELECT id, vec <-> %L::real[] AS d FROM sht ORDER BY vec <-> %L::real[] LIMIT 10) s',
                   backend, i, q, q);
  END LOOP;
END $$;
-- the cache files in the directory
CREATE FUNCTION sh_files() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_ls_dir(current_setting('lt_fdw.vector_shared_cache_dir'), true, false) f WHERE f LIKE '%.ltvc' $$;

-- ---- the first backend: decodes the model and both partitions, writes them ------------------------
SET lt_fdw.nprobes = 2;
SELECT sh_files() AS files_before;
SELECT sh_cache($$SELECT id FROM sht ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$) AS first_backend;
SELECT sh_files() AS files_after;
-- a second search in the same backend: its own memory
SELECT sh_cache($$SELECT id FROM sht ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 10$$) AS first_backend_again;
SELECT sh_answer('first');

-- ---- a second backend: maps the files, decodes nothing --------------------------------------------
\c
SET lt_fdw.vector_shared_cache_dir = :'shdir';
SET lt_fdw.nprobes = 2;
SELECT sh_cache($$SELECT id FROM sht ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$) AS second_backend;
SELECT sh_cache($$SELECT id FROM sht ORDER BY vec <-> '{1,2,3,4,5,6,7,8}' LIMIT 10$$) AS second_backend_again;
SELECT sh_answer('second');

-- ---- a third backend with no memory of its own for the cache: still maps the files ---------------
\c
SET lt_fdw.vector_shared_cache_dir = :'shdir';
SET lt_fdw.vector_index_cache = 0;
SET lt_fdw.nprobes = 2;
SELECT sh_cache($$SELECT id FROM sht ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$) AS no_own_memory;
SELECT sh_answer('no own memory');

-- ---- a directory that cannot be made: the backend's own cache, the same answers ---------------------
\c
SET lt_fdw.vector_shared_cache_dir = '/proc/lt_fdw_no/such/dir';
SET lt_fdw.nprobes = 2;
SELECT sh_cache($$SELECT id FROM sht ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$) AS unusable_dir;
SELECT sh_cache($$SELECT id FROM sht ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$) AS unusable_dir_again;
SELECT sh_answer('unusable dir');

-- ---- the shared cache off (size 0): the same ---------------------------------------------------------
\c
SET lt_fdw.vector_shared_cache_dir = :'shdir';
SET lt_fdw.vector_shared_cache_size = 0;
SET lt_fdw.nprobes = 2;
SELECT sh_cache($$SELECT id FROM sht ORDER BY vec <-> '{9,9,9,9,9,9,9,9}' LIMIT 10$$) AS shared_off;
SELECT sh_answer('shared off');
-- the index off: exact answers (both partitions probed of an IVF_FLAT index are exact too)
SET lt_fdw.vector_index = off;
SELECT sh_answer('exact');
RESET lt_fdw.vector_index;

-- every backend gave the same answers, equal to the exact ones where both partitions were probed
SELECT backend, count(*) AS queries,
       count(*) FILTER (WHERE cardinality(string_to_array(a.ids, ',')) = 10) AS with_ten_rows,
       count(*) FILTER (WHERE a.ids IS DISTINCT FROM f.ids) AS differ_from_first
FROM sh_answers a JOIN (SELECT q, ids FROM sh_answers WHERE backend = 'first') f USING (q)
GROUP BY backend ORDER BY backend;
SELECT count(*) FILTER (WHERE a.ids IS DISTINCT FROM e.ids) AS two_probes_differ_from_exact
FROM sh_answers a JOIN (SELECT q, ids FROM sh_answers WHERE backend = 'exact') e USING (q)
WHERE a.backend = 'first' AND q % 2 = 1;

-- settings: superuser only (a role that could point backends at its own files could make them trust them)
CREATE ROLE sh_user;
SET ROLE sh_user;
\set VERBOSITY sqlstate
SET lt_fdw.vector_shared_cache_dir = '/tmp';
SET lt_fdw.vector_shared_cache_size = '1MB';
\set VERBOSITY default
RESET ROLE;
DROP ROLE sh_user;

DROP SERVER shlake CASCADE;
DROP TABLE sh_answers;
DROP FUNCTION sh_cache(text), sh_answer(text), sh_files();
