/* lt_fdw--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION lt_fdw" to load this file. \quit

CREATE FUNCTION lt_fdw_handler()
RETURNS fdw_handler
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FUNCTION lt_fdw_validator(text[], oid)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FOREIGN DATA WRAPPER lt_fdw
  HANDLER lt_fdw_handler
  VALIDATOR lt_fdw_validator;

-- what the last ANALYZE of an lt_fdw table in this session sampled and read (NULL before any)
CREATE FUNCTION lt_last_analyze(OUT relation regclass, OUT version bigint, OUT live_rows bigint,
                                OUT deleted_rows bigint, OUT sample_rows integer, OUT fragments integer,
                                OUT fragments_read integer, OUT bytes_read bigint, OUT read_requests bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;

-- ---- idxscan: scalar indexes -------------------------------------------------------------------
-- the dataset's indexes at the version a query would read: name, indexed columns, kind (btree, bitmap,
-- label_list, zonemap, or unknown for kinds lt_fdw does not use), fragments covered and not covered, and the
-- live rows of those not covered (what lt_optimize_indexes would bring in)
CREATE FUNCTION lt_indexes(target regclass, OUT name text, OUT columns text[], OUT kind text,
                           OUT covered_fragments bigint[], OUT unindexed_fragments bigint[],
                           OUT unindexed_rows bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

-- ---- INSERT OVERWRITE … WHERE (src/fdw/overwrite.c) ----------------------------------------------
-- Replace the rows of target matching predicate with the rows of query, committed with the
-- transaction as one Lance version (an Update): the same as INSERT INTO target <query> with
-- lt_fdw.overwrite_where = predicate and lt_fdw.overwrite_validate = validate.
CREATE FUNCTION lt_insert_overwrite(target regclass, predicate text, query text, validate boolean DEFAULT true,
                                    OUT rows_deleted bigint, OUT rows_inserted bigint,
                                    OUT fragments_removed bigint, OUT fragments_updated bigint,
                                    OUT fragments_added bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;

-- ---- lt_create_index (src/fdw/index_build.c) -------------------------------------------------
-- Build a scalar index (btree, bitmap, label_list, zonemap) on a column, readable and used by the
-- Lance engine; committed as a Lance CreateIndex with the transaction.
CREATE FUNCTION lt_create_index(target regclass, column_name text, kind text, name text DEFAULT NULL,
                                OUT index_name text, OUT index_kind text, OUT built_on_version bigint,
                                OUT rows_indexed bigint, OUT bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;

-- ---- dataset administration (src/fdw/admin.c) -------------------------------------------------
-- every version of the table's dataset: when it was committed, by which operation, its live rows; where the
-- table is (its identifier in a namespace, NULL for a table named by path, and its resolved location)
CREATE FUNCTION lt_versions(target regclass, OUT version bigint, OUT "timestamp" timestamptz,
                            OUT operation text, OUT row_count bigint,
                            OUT identifier text, OUT location text)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

-- the fragments of the version the table reads
CREATE FUNCTION lt_fragments(target regclass, OUT fragment_id bigint, OUT physical_rows bigint,
                             OUT deleted_rows bigint, OUT data_files text[], OUT deletion_file text)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

-- remove old versions (committed more than older_than ago, not the latest, not tagged) and the files
-- no remaining version references, by the Lance library's cleanup rules
CREATE FUNCTION lt_cleanup(target regclass, older_than interval, delete_unverified boolean DEFAULT false,
                           dry_run boolean DEFAULT false,
                           OUT old_versions bigint, OUT files_removed bigint, OUT bytes_removed bigint,
                           OUT removed text[])
RETURNS record
AS 'MODULE_PATHNAME', 'lt_cleanup_sql'
LANGUAGE C STRICT VOLATILE;

-- the same cleanup, one row per file removed (or, with dry_run, that would be): what psql shows best
CREATE FUNCTION lt_cleanup_files(target regclass, older_than interval, delete_unverified boolean DEFAULT false,
                                 dry_run boolean DEFAULT false, OUT path text, OUT kind text)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

-- ---- keyed tables (src/fdw/keys.c) --------------------------------------------------------------
-- Mark the primary key of a table's dataset (checked to hold: no duplicate, no NULL); committed with
-- the transaction as Lance's own field-metadata update. Returns the number of rows checked.
CREATE FUNCTION lt_set_primary_key(target regclass, columns text[])
RETURNS bigint
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;

-- the primary key fields of the table's dataset in key order (NULL when it has none)
CREATE FUNCTION lt_primary_key(target regclass)
RETURNS text[]
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT STABLE;

-- ---- merge-insert (src/fdw/merge.c) ------------------------------------------------------------
-- Lance's merge-insert (upsert): the rows of query matched with target's rows on on_columns (NULL:
-- the dataset's primary key); matched rows updated (update_all), left alone (do_nothing) or an
-- error (fail); source rows without a match inserted (insert_all) or not (do_nothing); target rows
-- without a match deleted when delete_not_matched_by_source. Committed with the transaction as one
-- Lance version.
CREATE FUNCTION lt_merge_insert(target regclass, query text, on_columns text[] DEFAULT NULL,
                                when_matched text DEFAULT 'update_all',
                                when_not_matched text DEFAULT 'insert_all',
                                delete_not_matched_by_source boolean DEFAULT false,
                                OUT rows_inserted bigint, OUT rows_updated bigint, OUT rows_deleted bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;

-- ---- vector distances (src/fdw/vector.c), pgvector's spelling and meaning ----------------------
-- On real[] and double precision[] (what fixed_size_list<float16|float32|float64, N> columns map to):
-- one-dimensional arrays of the same length without NULL items (else 22000 / 22004); NULL in, NULL out.
CREATE FUNCTION l2_distance(real[], real[]) RETURNS double precision
AS 'MODULE_PATHNAME', 'lt_l2_distance_f4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION cosine_distance(real[], real[]) RETURNS double precision
AS 'MODULE_PATHNAME', 'lt_cosine_distance_f4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION inner_product(real[], real[]) RETURNS double precision
AS 'MODULE_PATHNAME', 'lt_inner_product_f4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION lt_negative_inner_product(real[], real[]) RETURNS double precision
AS 'MODULE_PATHNAME', 'lt_negative_inner_product_f4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION l2_distance(double precision[], double precision[]) RETURNS double precision
AS 'MODULE_PATHNAME', 'lt_l2_distance_f8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION cosine_distance(double precision[], double precision[]) RETURNS double precision
AS 'MODULE_PATHNAME', 'lt_cosine_distance_f8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION inner_product(double precision[], double precision[]) RETURNS double precision
AS 'MODULE_PATHNAME', 'lt_inner_product_f8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION lt_negative_inner_product(double precision[], double precision[]) RETURNS double precision
AS 'MODULE_PATHNAME', 'lt_negative_inner_product_f8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR <-> (LEFTARG = real[], RIGHTARG = real[], FUNCTION = l2_distance, COMMUTATOR = '<->');
CREATE OPERATOR <=> (LEFTARG = real[], RIGHTARG = real[], FUNCTION = cosine_distance, COMMUTATOR = '<=>');
CREATE OPERATOR <#> (LEFTARG = real[], RIGHTARG = real[], FUNCTION = lt_negative_inner_product, COMMUTATOR = '<#>');
CREATE OPERATOR <-> (LEFTARG = double precision[], RIGHTARG = double precision[], FUNCTION = l2_distance, COMMUTATOR = '<->');
CREATE OPERATOR <=> (LEFTARG = double precision[], RIGHTARG = double precision[], FUNCTION = cosine_distance, COMMUTATOR = '<=>');
CREATE OPERATOR <#> (LEFTARG = double precision[], RIGHTARG = double precision[], FUNCTION = lt_negative_inner_product, COMMUTATOR = '<#>');

-- ---- what \df+ and \dew+ say ---------------------------------------------------------------------
COMMENT ON FOREIGN DATA WRAPPER lt_fdw IS
  'Lance datasets (local directories or S3) as foreign tables: reads with pushdown and indexes, INSERT / COPY / UPDATE / DELETE / TRUNCATE committed as one Lance version per transaction';
COMMENT ON FUNCTION lt_fdw_handler() IS 'the lt_fdw foreign-data wrapper''s handler';
COMMENT ON FUNCTION lt_fdw_validator(text[], oid) IS
  'checks lt_fdw''s server, user mapping, foreign table and column options (local paths: pg_read_server_files)';
COMMENT ON FUNCTION lt_last_analyze() IS
  'what the last ANALYZE of an lt_fdw table in this session sampled and read (needs SELECT on that table)';
COMMENT ON FUNCTION lt_indexes(regclass) IS
  'the indexes of the table''s dataset at the version a query would read: kind, columns, fragments covered and not, unindexed rows (needs SELECT)';
COMMENT ON FUNCTION lt_insert_overwrite(regclass, text, text, boolean) IS
  'replaces the rows matching predicate with the rows of query, as one Lance version at COMMIT (needs INSERT, DELETE and SELECT on the predicate''s columns)';
COMMENT ON FUNCTION lt_create_index(regclass, text, text, text) IS
  'builds a btree, bitmap, label_list or zonemap index on a column, committed with the transaction (needs the table''s owner)';
COMMENT ON FUNCTION lt_versions(regclass) IS
  'every version of the table''s dataset: its timestamp, operation and live rows, and the table''s namespace identifier and location (needs SELECT)';
COMMENT ON FUNCTION lt_fragments(regclass) IS
  'the fragments of the version the table reads: rows, deleted rows, data and deletion files (needs SELECT)';
COMMENT ON FUNCTION lt_cleanup(regclass, interval, boolean, boolean) IS
  'removes old versions and the files no kept version references, by the Lance library''s rules (needs the table''s owner)';
COMMENT ON FUNCTION lt_cleanup_files(regclass, interval, boolean, boolean) IS
  'lt_cleanup with one row per file removed (path, kind: manifest, data, deletion, transaction, index); dry_run => true lists without removing (needs the table''s owner)';
COMMENT ON FUNCTION lt_set_primary_key(regclass, text[]) IS
  'marks the dataset''s primary key, checked to hold, committed with the transaction (needs the table''s owner)';
COMMENT ON FUNCTION lt_primary_key(regclass) IS
  'the primary key fields of the table''s dataset in key order, NULL when it has none (needs SELECT)';
COMMENT ON FUNCTION lt_merge_insert(regclass, text, text[], text, text, boolean) IS
  'Lance''s merge-insert (upsert) of the rows of query, as one Lance version at COMMIT (needs INSERT / UPDATE / DELETE as the options ask, SELECT on the key columns)';
COMMENT ON FUNCTION l2_distance(real[], real[]) IS 'Euclidean distance (the <-> operator), as pgvector''s';
COMMENT ON FUNCTION l2_distance(double precision[], double precision[]) IS 'Euclidean distance (the <-> operator), as pgvector''s';
COMMENT ON FUNCTION cosine_distance(real[], real[]) IS 'cosine distance, 1 - cosine similarity (the <=> operator), as pgvector''s';
COMMENT ON FUNCTION cosine_distance(double precision[], double precision[]) IS 'cosine distance, 1 - cosine similarity (the <=> operator), as pgvector''s';
COMMENT ON FUNCTION inner_product(real[], real[]) IS 'inner product, as pgvector''s';
COMMENT ON FUNCTION inner_product(double precision[], double precision[]) IS 'inner product, as pgvector''s';
COMMENT ON FUNCTION lt_negative_inner_product(real[], real[]) IS 'the negative inner product (the <#> operator)';
COMMENT ON FUNCTION lt_negative_inner_product(double precision[], double precision[]) IS 'the negative inner product (the <#> operator)';

-- ---- issue 18: table lifecycle from SQL (src/fdw/lifecycle.c) ---------------------------------
-- Create the dataset a foreign table names, from its columns (and the rows of query), as one Lance
-- commit at COMMIT; overwrite => true replaces an existing dataset (one Overwrite).
CREATE FUNCTION lt_create_dataset(target regclass, storage_version text DEFAULT '2.2', query text DEFAULT NULL,
                                  overwrite boolean DEFAULT false,
                                  OUT dataset text, OUT storage_version_written text, OUT rows_written bigint,
                                  OUT files_written integer)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
-- Compact small fragments and fragments with many deleted rows, as Lance does: one Rewrite at COMMIT.
CREATE FUNCTION lt_compact(target regclass, target_rows_per_fragment bigint DEFAULT 1048576,
                           materialize_deletions boolean DEFAULT true,
                           materialize_deletions_threshold double precision DEFAULT 0.1,
                           OUT fragments_removed bigint, OUT fragments_added bigint, OUT rows_rewritten bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
-- Schema evolution as Lance commits it (add: a Merge, every row NULL; drop, rename: a Project), the
-- foreign table altered with it; one Lance commit at COMMIT.
CREATE FUNCTION lt_add_column(target regclass, column_name text, column_type text) RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
CREATE FUNCTION lt_drop_column(target regclass, column_name text) RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
CREATE FUNCTION lt_rename_column(target regclass, column_name text, new_name text) RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
-- Lance tags (_refs/tags/<tag>.json), written at COMMIT; Lance's Restore commit.
CREATE FUNCTION lt_create_tag(target regclass, tag text, version bigint DEFAULT NULL) RETURNS bigint
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
CREATE FUNCTION lt_delete_tag(target regclass, tag text) RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
CREATE FUNCTION lt_tags(target regclass, OUT tag text, OUT version bigint) RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lt_tags_sql'
LANGUAGE C STRICT VOLATILE;
CREATE FUNCTION lt_restore(target regclass, version bigint) RETURNS bigint
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION lt_create_tag(regclass, text, bigint) IS
  'tags a version (default: the one the statement reads) of the table''s dataset, at COMMIT (needs the table''s owner)';
COMMENT ON FUNCTION lt_delete_tag(regclass, text) IS
  'deletes a tag of the table''s dataset, at COMMIT (needs the table''s owner)';
COMMENT ON FUNCTION lt_tags(regclass) IS
  'the tags of the table''s dataset and the versions they name (needs SELECT)';
COMMENT ON FUNCTION lt_restore(regclass, bigint) IS
  'makes an older version''s content the newest version, as one Lance Restore at COMMIT (needs the table''s owner)';
-- Index maintenance: drop one (a CreateIndex that only removes), bring appended rows into them (rebuilt).
CREATE FUNCTION lt_drop_index(target regclass, name text) RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
CREATE FUNCTION lt_optimize_indexes(target regclass, name text DEFAULT NULL) RETURNS integer
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION lt_drop_index(regclass, text) IS
  'drops an index of the table''s dataset, as one Lance CreateIndex at COMMIT (needs the table''s owner)';
COMMENT ON FUNCTION lt_optimize_indexes(regclass, text) IS
  'merges the rows appended since each scalar index (or the one named) was built into it, as Lance''s optimize: one new segment per index, committed with the transaction; returns how many (needs the table''s owner)';
-- What to decide compaction and index maintenance on.
CREATE FUNCTION lt_table_stats(target regclass, OUT version bigint, OUT fragments bigint,
                               OUT fragments_to_compact bigint, OUT live_rows bigint, OUT deleted_rows bigint,
                               OUT data_bytes bigint, OUT versions bigint, OUT indexes bigint,
                               OUT unindexed_rows bigint, OUT column_bytes jsonb,
                               OUT unindexed_rows_by_index jsonb)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION lt_table_stats(regclass) IS
  'fragments (and how many lt_compact would rewrite), live and deleted rows, data bytes (in all and per field), versions, indexes and the rows they do not cover (in all and per index) (needs SELECT)';
COMMENT ON FUNCTION lt_add_column(regclass, text, text) IS
  'adds a field (every row NULL) to the table''s dataset and the column to the table, as one Lance Merge at COMMIT (needs the table''s owner)';
COMMENT ON FUNCTION lt_drop_column(regclass, text) IS
  'drops a field (and the indexes on it) from the table''s dataset and the column from the table, as one Lance Project at COMMIT (needs the table''s owner)';
COMMENT ON FUNCTION lt_rename_column(regclass, text, text) IS
  'renames a field of the table''s dataset (its id kept) and the column, as one Lance Project at COMMIT (needs the table''s owner)';
COMMENT ON FUNCTION lt_create_dataset(regclass, text, text, boolean) IS
  'creates the dataset of a foreign table from its columns (and the rows of query) in storage 2.2, 2.1 or 2.0, as one Lance commit at COMMIT (needs the table''s owner)';
COMMENT ON FUNCTION lt_compact(regclass, bigint, boolean, double precision) IS
  'rewrites small fragments and fragments with many deleted rows into fragments of about target_rows_per_fragment rows, as one Lance Rewrite at COMMIT (needs the table''s owner)';
-- issue 17: field assignment (is_assigned(field)); boolean columns with the column option is_assigned read it
CREATE FUNCTION lt_track_assignment(target regclass, column_name text, initial text)
RETURNS void
AS 'MODULE_PATHNAME', 'lt_track_assignment'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION lt_track_assignment(regclass, text, text) IS
  'starts tracking the assignment of a field (initial: ''assigned'' or ''unassigned''), committed with the transaction (needs the table''s owner)';
-- issue 16: vector index building — lt_create_index with options (kind ivf_flat: num_partitions, metric,
-- sample_rate, max_iters as "key=value, ..."), the same function as the four-argument form
CREATE FUNCTION lt_create_index(target regclass, column_name text, kind text, name text, options text,
                                OUT index_name text, OUT index_kind text, OUT built_on_version bigint,
                                OUT rows_indexed bigint, OUT bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'lt_create_index'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION lt_create_index(regclass, text, text, text, text) IS
  'builds an index with options (ivf_flat: ''num_partitions=N, metric=l2|cosine|dot, sample_rate=R, max_iters=I''), committed with the transaction (needs the table''s owner)';
-- issues 18 and 17: a column added with a value in every row and/or tracked for field assignment (the same
-- function as the three-argument form; lt_drop_column of a tracked field drops its state, lt_cleanup its files);
-- a column's type changed as Lance's alter_columns casts it
CREATE FUNCTION lt_add_column(target regclass, column_name text, column_type text, default_value text,
                              track_assignment text DEFAULT NULL) RETURNS void
AS 'MODULE_PATHNAME', 'lt_add_column'
LANGUAGE C VOLATILE;
CREATE FUNCTION lt_alter_column_type(target regclass, column_name text, column_type text) RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION lt_alter_column_type(regclass, text, text) IS
  'changes the type of a field within its family (integers, floats, decimals, temporal types, strings) as Lance''s alter_columns casts: the values rewritten into new data files, the field a new id, one Lance Merge at COMMIT (needs the table''s owner)';
COMMENT ON FUNCTION lt_add_column(regclass, text, text, text, text) IS
  'adds a field to the table''s dataset with default_value in every row (NULL: every row NULL, no data written) and, with track_assignment ''unassigned'' or ''assigned'', tracks its assignment from the same Lance commit at COMMIT (needs the table''s owner)';
-- issue 18 point 7: the progress of long work (src/fdw/progress.c). lt_compact, lt_create_dataset from a
-- query, lt_add_column with a value and lt_alter_column_type report as PostgreSQL's COPY FROM (an extension
-- cannot add a command type; COPY's rows counter is kept true), marked 19540 ('LT') in the last slot;
-- index builds report in pg_stat_progress_create_index.
CREATE VIEW lt_stat_progress AS
SELECT s.pid, s.datid, d.datname, s.relid,
       CASE s.param11 WHEN 1 THEN 'compact' WHEN 2 THEN 'create dataset' WHEN 3 THEN 'add column'
                      WHEN 4 THEN 'alter column type' END AS operation,
       CASE s.param12 WHEN 1 THEN 'planning' WHEN 2 THEN 'writing data files' END AS phase,
       NULLIF(s.param13, -1) AS fragments_total, s.param14 AS fragments_done,
       NULLIF(s.param15, -1) AS rows_total, s.param16 AS rows_done
  FROM pg_stat_get_progress_info('COPY') s LEFT JOIN pg_database d ON s.datid = d.oid
 WHERE s.param20 = 19540;
GRANT SELECT ON lt_stat_progress TO PUBLIC;
COMMENT ON VIEW lt_stat_progress IS
  'one row per backend running lt_compact, lt_create_dataset from a query, lt_add_column with a value or lt_alter_column_type: its phase, fragments and rows done of total (NULL: not known ahead)';
CREATE FUNCTION hamming_distance(smallint[], smallint[]) RETURNS double precision
AS 'MODULE_PATHNAME', 'lt_hamming_distance_u8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OPERATOR <~> (LEFTARG = smallint[], RIGHTARG = smallint[], FUNCTION = hamming_distance, COMMUTATOR = '<~>');
COMMENT ON FUNCTION hamming_distance(smallint[], smallint[]) IS 'Hamming distance of binary vectors (the <~> operator): the bits that differ, items bytes 0..255 (fixed_size_list<uint8, N>, Lance''s hamming metric)';
