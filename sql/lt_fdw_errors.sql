--
-- lt_fdw_errors: every failure is an ERROR with a real SQLSTATE and a message naming the dataset,
-- column or version: missing datasets, versions and tags (58P01), a corrupt data file (XX001, with the
-- file's path), an unknown reader feature flag (0A000), columns that do not match the dataset (HV007 /
-- HV004), values that do not fit the declared type (with the column in the error context).
--
CREATE EXTENSION lt_fdw;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;

-- runs a statement and returns its SQLSTATE and message, with the unstable parts masked
CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE detail text;
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
  RETURN SQLSTATE || ': ' ||
         regexp_replace(replace(SQLERRM || coalesce(nullif(E'\nDETAIL: ' || detail, E'\nDETAIL: '), ''),
                                current_setting('lt_test.tmp'), '$TMP'),
                        'data/[^/: ]+\.lance', 'data/<file>.lance', 'g');
END $$;

CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');

-- ---- missing things: 58P01 ------------------------------------------------------------------------
CREATE FOREIGN TABLE missing (id bigint) SERVER lake OPTIONS (path 'no_such.lance');
SELECT try('SELECT * FROM missing');
CREATE FOREIGN TABLE not_dataset (id bigint) SERVER lake OPTIONS (path '.');
SELECT try('SELECT * FROM not_dataset');
CREATE FOREIGN TABLE no_version (id bigint) SERVER lake OPTIONS (path 'versions.lance', version '99');
SELECT try('SELECT * FROM no_version');
CREATE FOREIGN TABLE no_tag (id bigint) SERVER lake OPTIONS (path 'versions.lance', tag 'nope');
SELECT try('SELECT * FROM no_tag');
-- EXPLAIN opens the dataset too
SELECT try('EXPLAIN SELECT * FROM missing');

-- ---- corrupt files: XX001 naming the file ---------------------------------------------------------
CREATE FOREIGN TABLE corrupt (id bigint, s text) SERVER lake OPTIONS (path 'corrupt.lance');
SELECT try('SELECT * FROM corrupt');
-- count(*) reads no column: the damaged data file is never opened
SELECT try('SELECT count(*) FROM corrupt');
-- the backend is fine afterwards, and so is the next scan
SELECT count(*) FROM (SELECT 1) s;

-- ---- an unknown reader feature flag: refused ---------------------------------------------------------
CREATE FOREIGN TABLE flags (id bigint) SERVER lake OPTIONS (path 'flags.lance');
SELECT try('SELECT * FROM flags');
-- an older version of the same dataset has no such flag
ALTER FOREIGN TABLE flags OPTIONS (ADD version '1');
SELECT count(*) FROM flags;

-- ---- columns that do not match the dataset: HV007 / HV004 ---------------------------------------
\set VERBOSITY default
CREATE FOREIGN TABLE bad_name (id bigint, nope integer) SERVER lake OPTIONS (path 'versions.lance');
SELECT try('SELECT id FROM bad_name');
CREATE FOREIGN TABLE bad_type (id bigint, s integer) SERVER lake OPTIONS (path 'scalars.lance');
SELECT try('SELECT id FROM bad_type');
CREATE FOREIGN TABLE bad_narrow (id integer) SERVER lake OPTIONS (path 'scalars.lance');
SELECT try('SELECT id FROM bad_narrow');
CREATE FOREIGN TABLE bad_tz (ts_us timestamptz) SERVER lake OPTIONS (path 'scalars.lance');
SELECT try('SELECT * FROM bad_tz');
CREATE FOREIGN TABLE bad_rowid (_rowid text) SERVER lake OPTIONS (path 'scalars.lance');
SELECT try('SELECT * FROM bad_rowid');
CREATE TYPE wrong_st AS (x integer, z text);
CREATE FOREIGN TABLE bad_struct (st wrong_st) SERVER lake OPTIONS (path 'nested.lance');
SELECT try('SELECT * FROM bad_struct');
CREATE FOREIGN TABLE bad_struct_text (st text) SERVER lake OPTIONS (path 'nested.lance');
SELECT try('SELECT * FROM bad_struct_text');
CREATE FOREIGN TABLE bad_list (lstruct integer[]) SERVER lake OPTIONS (path 'nested.lance');
SELECT try('SELECT * FROM bad_list');
CREATE FOREIGN TABLE bad_nested_list (ll integer[]) SERVER lake OPTIONS (path 'nested.lance');
SELECT try('SELECT * FROM bad_nested_list');
-- the SQLSTATEs, and the full report of one
\set VERBOSITY sqlstate
SELECT id FROM bad_name;
SELECT id FROM bad_type;
\set VERBOSITY default
SELECT * FROM bad_rowid;

-- ---- values that do not fit the declared type: the column is named in the context -------------------
\set SHOW_CONTEXT always
CREATE FOREIGN TABLE narrow_numeric (id bigint, dec numeric(5,2)) SERVER lake OPTIONS (path 'scalars.lance');
SELECT id, dec FROM narrow_numeric ORDER BY id;
SELECT id FROM narrow_numeric ORDER BY id;     -- a column not read is not converted
-- values that cannot be read at all, after 5,000 good rows (rows are converted a chunk at a time, column by
-- column): the error is the first one in row order, then column order, with its row address
CREATE FOREIGN TABLE badvalues (id bigint, d date, s text, n int) SERVER lake OPTIONS (path 'badvalues.lance');
SELECT count(*), count(d), count(s), sum(n) FROM badvalues WHERE id < 5001;
SELECT * FROM badvalues;                        -- row 5001: its string
SELECT id, d FROM badvalues;                    -- row 5002: its date
SELECT id, n FROM badvalues WHERE id >= 5003;   -- neither is read
SELECT * FROM badvalues WHERE id >= 5002;       -- row 5002 again
SELECT * FROM badvalues WHERE id >= 5003;       -- row 5003: the date first (column order)
SELECT id, length(s) FROM badvalues WHERE id >= 5003 AND d IS NULL;    -- the filter reads d: no row passes
\set SHOW_CONTEXT errors

SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
DROP TYPE wrong_st;
