--
-- lt_fdw_write_errors: what a write refuses, each with its SQLSTATE: type mismatches, values out of
-- range for every integer width (never a wrap), NOT NULL fields, pinned (read-only) tables, roles
-- without pg_write_server_files, legacy datasets; nothing is written by a failed statement.
--
\getenv root LT_ROOT
\set ECHO none
\i :root/test/pg/lake.psql
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE SERVER wlake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root :'lake');
CREATE FOREIGN TABLE e_wt (
  id bigint, b boolean, i8 smallint, i16 smallint, i32 integer, i64 bigint,
  u8 smallint, u16 integer, u32 bigint, u64 numeric(20,0),
  f16 real, f32 real, f64 double precision, s text, fsb bytea, d64 date, ts_ns timestamp,
  dec numeric(12,3), t32s time
) SERVER wlake OPTIONS (path 'write/w_types.lance');
SELECT lt_test.versions('write/w_types.lance') AS v0 \gset

\set VERBOSITY default
-- ---- out of range, for every integer width ----------------------------------------------------------
INSERT INTO e_wt (id, i8) VALUES (9001, 300);
INSERT INTO e_wt (id, i8) VALUES (9001, -129);
INSERT INTO e_wt (id, u8) VALUES (9001, 256);
INSERT INTO e_wt (id, u8) VALUES (9001, -1);
INSERT INTO e_wt (id, u16) VALUES (9001, 65536);
INSERT INTO e_wt (id, u32) VALUES (9001, 4294967296);
INSERT INTO e_wt (id, u32) VALUES (9001, -1);
INSERT INTO e_wt (id, u64) VALUES (9001, 18446744073709551616);
INSERT INTO e_wt (id, u64) VALUES (9001, -1);
-- wider declared types are checked against the field
CREATE FOREIGN TABLE e_wide (id numeric, i16 bigint, i32 numeric, f16 double precision, f32 double precision)
  SERVER wlake OPTIONS (path 'write/w_types.lance');
INSERT INTO e_wide (id, i16) VALUES (9001, 32768);
INSERT INTO e_wide (id, i32) VALUES (9001, 2147483648);
INSERT INTO e_wide (id, i32) VALUES (9001, 1.5);
INSERT INTO e_wide (id) VALUES (9223372036854775808);
INSERT INTO e_wide (id) VALUES (9001.5);
INSERT INTO e_wide (id, f16) VALUES (9001, 65520);
INSERT INTO e_wide (id, f32) VALUES (9001, 1e39);
-- decimals: more digits than the precision (the column's own typmod, or the field's)
INSERT INTO e_wt (id, dec) VALUES (9001, 1234567890.5);
CREATE FOREIGN TABLE e_dec (id bigint, dec numeric) SERVER wlake OPTIONS (path 'write/w_types.lance');
INSERT INTO e_dec VALUES (9001, 1234567890.5);
INSERT INTO e_dec VALUES (9001, 'NaN');
INSERT INTO e_dec VALUES (9001, 'Infinity');
-- timestamps outside the unit's range, infinite dates
INSERT INTO e_wt (id, ts_ns) VALUES (9001, '2263-01-01');
INSERT INTO e_wt (id, d64) VALUES (9001, 'infinity');
-- a fixed-size binary of the wrong length
INSERT INTO e_wt (id, fsb) VALUES (9001, '\x0102');
-- the error names the column and the row's position in a multi-row insert is irrelevant: nothing lands
INSERT INTO e_wt (id, i8) VALUES (9001, 1), (9002, 2), (9003, 1000);
\set VERBOSITY sqlstate
INSERT INTO e_wt (id, i8) VALUES (9001, 300);
INSERT INTO e_wt (id, u64) VALUES (9001, -1);
INSERT INTO e_wt (id, ts_ns) VALUES (9001, '2263-01-01');
INSERT INTO e_wt (id, fsb) VALUES (9001, '\x0102');
\set VERBOSITY default
SELECT count(*) FILTER (WHERE id > 9000) AS rows, lt_test.versions('write/w_types.lance') - :v0 AS new_versions FROM e_wt;

-- ---- NOT NULL fields -----------------------------------------------------------------------------------
INSERT INTO e_wt (id, s) VALUES (NULL, 'no id');
CREATE FOREIGN TABLE e_noid (s text) SERVER wlake OPTIONS (path 'write/w_types.lance');
SELECT lt_test.try('INSERT INTO e_noid VALUES (''no id column'')');
\set VERBOSITY sqlstate
INSERT INTO e_wt (id, s) VALUES (NULL, 'no id');
INSERT INTO e_noid VALUES ('no id column');
\set VERBOSITY default
-- nested values: the shapes are checked too
CREATE FOREIGN TABLE e_wn (id bigint, vec real[], m jsonb, st jsonb, li bigint[]) SERVER wlake OPTIONS (path 'write/w_nested.lance');
INSERT INTO e_wn (id, m) VALUES (9001, '{"a": 1}');
INSERT INTO e_wn (id, vec) VALUES (9001, '{1,2}');
INSERT INTO e_wn (id, li) VALUES (9001, '{{1,2},{3,4}}');
INSERT INTO e_wn (id, st) VALUES (9001, '[1, 2]');
INSERT INTO e_wn (id, st) VALUES (9001, '{"x": "nine"}');
INSERT INTO e_wn (id, m) VALUES (9001, '{"a": "not a number"}');
INSERT INTO e_wn (id, li) VALUES (9001, '{1,NULL}');
SELECT id, li FROM e_wn WHERE id > 9000 ORDER BY id;
DELETE FROM e_wn WHERE id > 9000;
SELECT count(*) FROM e_wn WHERE id > 9000;

-- ---- type mismatches: checked before anything is written --------------------------------------------------
CREATE FOREIGN TABLE e_bad (id bigint, b integer) SERVER wlake OPTIONS (path 'write/w_types.lance');
SELECT lt_test.try('INSERT INTO e_bad VALUES (9001, 1)');
CREATE FOREIGN TABLE e_bad2 (id bigint, s integer[]) SERVER wlake OPTIONS (path 'write/w_types.lance');
SELECT lt_test.try('INSERT INTO e_bad2 VALUES (9001, ''{1}'')');
CREATE FOREIGN TABLE e_bad3 (id bigint, nope text) SERVER wlake OPTIONS (path 'write/w_types.lance');
SELECT lt_test.try('INSERT INTO e_bad3 VALUES (9001, ''x'')');
CREATE FOREIGN TABLE e_bad4 (id bigint, i32 text) SERVER wlake OPTIONS (path 'write/w_types.lance');
INSERT INTO e_bad4 VALUES (9001, 'twelve');
\set VERBOSITY sqlstate
INSERT INTO e_bad VALUES (9001, 1);
INSERT INTO e_bad3 VALUES (9001, 'x');
INSERT INTO e_bad4 VALUES (9001, 'twelve');
\set VERBOSITY default
-- unsupported statements (ON CONFLICT DO NOTHING without a target is supported: lt_fdw_keys)
INSERT INTO e_wt (id) VALUES (9001) ON CONFLICT (id) DO NOTHING;

-- ---- pinned tables are read-only ----------------------------------------------------------------------------
CREATE FOREIGN TABLE e_ev_v1 (id bigint, value text) SERVER wlake OPTIONS (path 'write/w_events.lance', version '1');
SELECT lt_test.try('INSERT INTO e_ev_v1 VALUES (9001, ''x'')');
SELECT lt_test.try('DELETE FROM e_ev_v1');
SELECT lt_test.try('UPDATE e_ev_v1 SET value = ''x''');
SELECT table_name, is_insertable_into FROM information_schema.tables WHERE table_name IN ('e_ev_v1', 'e_wt') ORDER BY 1;
\set VERBOSITY sqlstate
INSERT INTO e_ev_v1 VALUES (9001, 'x');
DELETE FROM e_ev_v1;
\set VERBOSITY default

-- ---- legacy (0.1) datasets are read-only -----------------------------------------------------------------------
CREATE FOREIGN TABLE e_wl (id bigint, value text, li integer[]) SERVER wlake OPTIONS (path 'write/w_legacy.lance');
SELECT * FROM e_wl;
SELECT lt_test.try('INSERT INTO e_wl VALUES (2, ''two'', ''{2}'')');
SELECT lt_test.try('DELETE FROM e_wl');
\set VERBOSITY sqlstate
INSERT INTO e_wl VALUES (2, 'two', '{2}');
\set VERBOSITY default

-- ---- options ------------------------------------------------------------------------------------------------
CREATE FOREIGN TABLE e_wo (id bigint) SERVER wlake OPTIONS (path 'write/w_types.lance', batch_size '0');
CREATE FOREIGN TABLE e_wo (id bigint) SERVER wlake OPTIONS (path 'write/w_types.lance', max_rows_per_file 'many');
CREATE FOREIGN TABLE e_wo (id bigint) SERVER wlake OPTIONS (path 'write/w_types.lance', batch_size '70000');
CREATE FOREIGN TABLE e_wo (id bigint) SERVER wlake OPTIONS (path 'write/w_types.lance', max_row_per_file '10');
ALTER SERVER wlake OPTIONS (ADD batch_size '10', ADD max_rows_per_file '1000');
ALTER SERVER wlake OPTIONS (DROP batch_size, DROP max_rows_per_file);

-- ---- privileges: writes need pg_write_server_files ------------------------------------------------------------
CREATE ROLE regress_lt_writer_ro;
GRANT pg_read_server_files TO regress_lt_writer_ro;
GRANT USAGE ON FOREIGN SERVER wlake TO regress_lt_writer_ro;
GRANT SELECT, INSERT, UPDATE, DELETE ON e_wt TO regress_lt_writer_ro;
CREATE ROLE regress_lt_writer;
GRANT pg_read_server_files, pg_write_server_files TO regress_lt_writer;
GRANT SELECT, INSERT, UPDATE, DELETE ON e_wt TO regress_lt_writer;
SET ROLE regress_lt_writer_ro;
SELECT count(*) FROM e_wt WHERE id > 9000;
SELECT lt_test.try('INSERT INTO e_wt (id) VALUES (9001)');
SELECT lt_test.try('DELETE FROM e_wt WHERE id = 9001');
\set VERBOSITY sqlstate
INSERT INTO e_wt (id) VALUES (9001);
\set VERBOSITY default
RESET ROLE;
SET ROLE regress_lt_writer;
INSERT INTO e_wt (id, s) VALUES (9000, 'by the writer role');
DELETE FROM e_wt WHERE id = 9000;
RESET ROLE;
SELECT count(*) FILTER (WHERE id > 9000) AS rows, lt_test.versions('write/w_types.lance') - :v0 AS new_versions FROM e_wt;
DROP OWNED BY regress_lt_writer_ro, regress_lt_writer;
DROP ROLE regress_lt_writer_ro, regress_lt_writer;

-- ---- cleanup --------------------------------------------------------------------------------------------
SET client_min_messages = warning;
DROP EXTENSION lt_fdw CASCADE;
RESET client_min_messages;
