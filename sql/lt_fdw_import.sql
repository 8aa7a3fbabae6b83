--
-- lt_fdw_import: IMPORT FOREIGN SCHEMA over the server root ("." ) or a sub-directory, LIMIT TO /
-- EXCEPT, import_row_id, composite types for struct columns, and its errors.
--
CREATE EXTENSION lt_fdw;
\getenv tmp LT_TEST_TMP
\set lake :tmp '/lake'
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE SCHEMA imp;

-- the root: every dataset directory but the one lt_fdw refuses (an unknown reader feature flag)
IMPORT FOREIGN SCHEMA "." EXCEPT (flags) FROM SERVER lake INTO imp;
SELECT c.relname, ft.ftoptions
  FROM pg_foreign_table ft JOIN pg_class c ON c.oid = ft.ftrelid
 WHERE c.relnamespace = 'imp'::regnamespace ORDER BY 1;
-- the columns and types follow the dataset schema
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relnamespace = 'imp'::regnamespace AND a.attnum > 0 AND c.relname IN ('scalars', 'nested')
 ORDER BY c.relname, a.attnum;
-- composite types for structs, nested too
SELECT t.typname, a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid
 WHERE t.typnamespace = 'imp'::regnamespace AND t.typtype = 'c' AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t.typrelid AND c.relkind <> 'c')
 ORDER BY t.typname, a.attnum;
-- the imported tables read
SELECT id, i64, u64, s, ts_ns, tz_ms, dec FROM imp.scalars ORDER BY id;
SELECT id, vec, li, st, stl, ll, sts FROM imp.nested ORDER BY id;
SELECT count(*) FROM imp.versions;

-- LIMIT TO, import_row_id, a sub-directory
IMPORT FOREIGN SCHEMA "sub" LIMIT TO (events) FROM SERVER lake INTO public OPTIONS (import_row_id 'true');
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'public.events'::regclass;
SELECT _rowid, id, x FROM events ORDER BY _rowid LIMIT 3;
-- names that match nothing import nothing
IMPORT FOREIGN SCHEMA "." LIMIT TO (no_such_table) FROM SERVER lake INTO public;
-- re-importing a struct reuses the existing composite type
CREATE SCHEMA imp2;
IMPORT FOREIGN SCHEMA "." LIMIT TO (nested) FROM SERVER lake INTO imp2;
DROP FOREIGN TABLE imp2.nested;
IMPORT FOREIGN SCHEMA "." LIMIT TO (nested) FROM SERVER lake INTO imp2;
SELECT count(*) FROM imp2.nested;
SELECT count(*) AS composite_types FROM pg_type WHERE typnamespace = 'imp2'::regnamespace AND typtype = 'c'
   AND typrelid IN (SELECT oid FROM pg_class WHERE relkind = 'c');

-- errors
\set VERBOSITY default
\set SHOW_CONTEXT never
IMPORT FOREIGN SCHEMA "." LIMIT TO (flags) FROM SERVER lake INTO public;
\set SHOW_CONTEXT errors
IMPORT FOREIGN SCHEMA "no_such_dir" FROM SERVER lake INTO public;
IMPORT FOREIGN SCHEMA "../etc" FROM SERVER lake INTO public;
IMPORT FOREIGN SCHEMA "." FROM SERVER lake INTO public OPTIONS (import_rowid 'true');
IMPORT FOREIGN SCHEMA "." FROM SERVER lake INTO public OPTIONS (import_row_id 'maybe');
CREATE SERVER rootless FOREIGN DATA WRAPPER lt_fdw;
IMPORT FOREIGN SCHEMA "." FROM SERVER rootless INTO public;
CREATE ROLE regress_lt_importer;
GRANT USAGE ON FOREIGN SERVER lake TO regress_lt_importer;
GRANT CREATE ON SCHEMA imp2 TO regress_lt_importer;
SET ROLE regress_lt_importer;
IMPORT FOREIGN SCHEMA "." LIMIT TO (versions) FROM SERVER lake INTO imp2;
RESET ROLE;

SET client_min_messages = warning;
DROP SCHEMA imp CASCADE;
DROP SCHEMA imp2 CASCADE;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
DROP ROLE regress_lt_importer;
