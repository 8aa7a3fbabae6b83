--
-- lt_fdw_load: the extension loads, creates its wrapper, and its validator rejects unknown options.
--
CREATE EXTENSION lt_fdw;

-- the wrapper, its handler and validator
SELECT w.fdwname, w.fdwhandler::regproc AS handler, w.fdwvalidator::regproc AS validator,
       pg_get_userbyid(w.fdwowner) = current_user AS owned_by_me
  FROM pg_foreign_data_wrapper w
 WHERE w.fdwname = 'lt_fdw';

-- every object the extension owns
SELECT pg_describe_object(classid, objid, objsubid) AS object
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'lt_fdw')
   AND deptype = 'e'
 ORDER BY 1;

SELECT extname, extversion, extrelocatable FROM pg_extension WHERE extname = 'lt_fdw';

-- a server and a user mapping without options
CREATE SERVER lt_srv FOREIGN DATA WRAPPER lt_fdw;
CREATE USER MAPPING FOR CURRENT_USER SERVER lt_srv;
SELECT srvname, fdwname
  FROM pg_foreign_server s JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw
 WHERE srvname = 'lt_srv';

-- unknown options are refused, in every catalog the validator sees
\set VERBOSITY default
CREATE SERVER lt_bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (no_such_option 'x');
ALTER SERVER lt_srv OPTIONS (ADD no_such_option 'x');
ALTER FOREIGN DATA WRAPPER lt_fdw OPTIONS (ADD no_such_option 'x');
ALTER USER MAPPING FOR CURRENT_USER SERVER lt_srv OPTIONS (ADD no_such_option 'x');
CREATE FOREIGN TABLE lt_bad_tbl (id bigint) SERVER lt_srv OPTIONS (no_such_option 'x');
CREATE FOREIGN TABLE lt_bad_col (id bigint OPTIONS (no_such_option 'x')) SERVER lt_srv;
-- the SQLSTATE of the refusal: fdw_invalid_option_name (HV00D)
\set VERBOSITY sqlstate
CREATE SERVER lt_bad FOREIGN DATA WRAPPER lt_fdw OPTIONS (no_such_option 'x');
\set VERBOSITY default
SELECT count(*) AS bad_servers FROM pg_foreign_server WHERE srvname = 'lt_bad';

-- the handler loads; a table needs a path to be read
CREATE FOREIGN TABLE lt_tbl (id bigint, s text) SERVER lt_srv;
SELECT * FROM lt_tbl;
-- SQLSTATE fdw_option_name_not_found (HV00J)
\set VERBOSITY sqlstate
SELECT count(*) FROM lt_tbl;
\set VERBOSITY default

-- everything goes away with the extension
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
SELECT count(*) AS wrappers_left FROM pg_foreign_data_wrapper WHERE fdwname = 'lt_fdw';
