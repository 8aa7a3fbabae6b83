--
-- lt_fdw_options: the validator (option names, closest-match hints, value checks, version/tag
-- exclusion) and the privilege rule for local paths (superuser or pg_read_server_files), checked when
-- options are set and again when a table is read.
--
CREATE EXTENSION lt_fdw;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SELECT set_config('lt_test.tmp', :'tmp', false) IS NOT NULL AS tmp_set;
\set VERBOSITY default

-- ---- option names ---------------------------------------------------------------------------------
CREATE SERVER bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (roots '/tmp');          -- typo: hint
CREATE SERVER bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (path 'x.lance');        -- a table option
CREATE SERVER bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (host 'x');              -- unknown
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (paht 'x.lance');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', verison '1');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', tags 'v1');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (root '/tmp');
CREATE FOREIGN TABLE bad (id bigint OPTIONS (colum_name 'x')) SERVER lake OPTIONS (path 'x.lance');
ALTER FOREIGN DATA WRAPPER lt_fdw OPTIONS (ADD root '/tmp');
CREATE USER MAPPING FOR CURRENT_USER SERVER lake OPTIONS (user 'x');
-- the SQLSTATE: fdw_invalid_option_name (HV00D)
\set VERBOSITY sqlstate
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (paht 'x.lance');
\set VERBOSITY default

-- ---- option values ------------------------------------------------------------------------------
CREATE SERVER bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '');
CREATE SERVER bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 'relative/dir');
CREATE SERVER bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 's3://Bad_Bucket/prefix');  -- s3: test/s3
CREATE SERVER bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 'file://host/dir');
CREATE SERVER bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 'http://example.com/lake');
CREATE SERVER ok_uri FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 'file:///tmp/');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path '');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 's3://bucket/../t.lance');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', version '0');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', version '-1');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', version '1.5');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', version 'latest');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', version '99999999999999999999999');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', tag '');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', tag '../x');
CREATE FOREIGN TABLE bad (id bigint) SERVER lake OPTIONS (path 'x.lance', version '2', tag 'base');
CREATE FOREIGN TABLE bad (id bigint OPTIONS (column_name '')) SERVER lake OPTIONS (path 'x.lance');
CREATE FOREIGN TABLE pinned (id bigint) SERVER lake OPTIONS (path 'versions.lance', version '2');
ALTER FOREIGN TABLE pinned OPTIONS (ADD tag 'base');              -- version and tag together
ALTER FOREIGN TABLE pinned OPTIONS (DROP version, ADD tag 'base');
SELECT count(*) FROM pinned;
ALTER FOREIGN TABLE pinned OPTIONS (SET tag 'trimmed');
SELECT count(*) FROM pinned;
-- a table without path, a relative path on a server without root
CREATE FOREIGN TABLE no_path (id bigint) SERVER lake;
SELECT * FROM no_path;
CREATE SERVER rootless FOREIGN DATA WRAPPER lt_fdw;
CREATE FOREIGN TABLE rel_path (id bigint) SERVER rootless OPTIONS (path 'versions.lance');
SELECT * FROM rel_path;
-- an absolute path or a file:// URI needs no root
CREATE FOREIGN TABLE abs_path (id bigint) SERVER rootless OPTIONS (path :'lake');
DO $$ BEGIN
  EXECUTE format('ALTER FOREIGN TABLE abs_path OPTIONS (SET path %L)',
                 'file://' || current_setting('lt_test.tmp') || '/lake/versions.lance');
END $$;
SELECT count(*) FROM abs_path;

-- ---- privileges -----------------------------------------------------------------------------------
CREATE ROLE regress_lt_reader LOGIN;
CREATE ROLE regress_lt_nopriv LOGIN;
GRANT pg_read_server_files TO regress_lt_reader;
GRANT USAGE ON FOREIGN DATA WRAPPER lt_fdw TO regress_lt_reader, regress_lt_nopriv;
GRANT USAGE ON FOREIGN SERVER lake TO regress_lt_reader, regress_lt_nopriv;
GRANT CREATE ON SCHEMA public TO regress_lt_reader, regress_lt_nopriv;
CREATE FOREIGN TABLE owned_by_super (id bigint) SERVER lake OPTIONS (path 'versions.lance');
GRANT SELECT ON owned_by_super TO regress_lt_reader, regress_lt_nopriv;

SET ROLE regress_lt_nopriv;
CREATE SERVER nopriv_srv FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '/');
CREATE FOREIGN TABLE nopriv_tbl (id bigint) SERVER lake OPTIONS (path 'versions.lance');
CREATE FOREIGN TABLE nopriv_tbl (id bigint) SERVER lake;                        -- no path: allowed ...
SELECT * FROM nopriv_tbl;                                                      -- ... but unusable
ALTER FOREIGN TABLE nopriv_tbl OPTIONS (ADD path '/etc');
ALTER FOREIGN TABLE nopriv_tbl OPTIONS (ADD version '3');                      -- not a path: allowed
\set VERBOSITY terse
SELECT count(*) FROM owned_by_super;                                           -- reading needs the privilege too
\set VERBOSITY default
DROP FOREIGN TABLE nopriv_tbl;
RESET ROLE;

SET ROLE regress_lt_reader;
CREATE FOREIGN TABLE reader_tbl (id bigint) SERVER lake OPTIONS (path 'versions.lance');
SELECT count(*) FROM reader_tbl;
SELECT count(*) FROM owned_by_super;
CREATE SERVER reader_srv FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '/tmp');
DROP SERVER reader_srv;
DROP FOREIGN TABLE reader_tbl;
RESET ROLE;

-- a view owned by a privileged role reads with the owner's privileges
CREATE VIEW super_view AS SELECT count(*) AS n FROM owned_by_super;
GRANT SELECT ON super_view TO regress_lt_nopriv;
SET ROLE regress_lt_nopriv;
SELECT n FROM super_view;
RESET ROLE;
-- losing the privilege is noticed when the table is read
REVOKE pg_read_server_files FROM regress_lt_reader;
SET ROLE regress_lt_reader;
\set VERBOSITY terse
SELECT count(*) FROM owned_by_super;
\set VERBOSITY default
RESET ROLE;

-- ---- the option table in the catalogs ---------------------------------------------------------------
SELECT srvname, srvoptions FROM pg_foreign_server WHERE srvname IN ('ok_uri', 'rootless') ORDER BY 1;
SELECT c.relname, ft.ftoptions FROM pg_foreign_table ft JOIN pg_class c ON c.oid = ft.ftrelid
 WHERE c.relname = 'pinned';

DROP VIEW super_view;
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
REVOKE CREATE ON SCHEMA public FROM regress_lt_reader, regress_lt_nopriv;
DROP ROLE regress_lt_reader;
DROP ROLE regress_lt_nopriv;
