/*
 * lt_compact.h — compaction, as Lance plans and does it (implemented in lt_compact.c): runs of
 * small fragments, and fragments with many deleted rows, are copied into fragments of about the
 * target size; the commit (lt_txn_mark_compaction) is one Rewrite.
 */
#ifndef LT_COMPACT_H
#define LT_COMPACT_H

#include <stdbool.h>
#include <stdint.h>

#include "file/lt_writer.h"
#include "table/lt_dataset.h"
#include "util/lt_status.h"

typedef struct lt_compact_options
{
	uint64_t	target_rows_per_fragment;	/* 0 = 1048576 (Lance's default) */
	bool		materialize_deletions;	/* copy fragments whose deleted share is above the threshold */
	double		materialize_deletions_threshold;	/* Lance's default 0.1 */
	uint64_t	max_bytes_per_file;		/* a new file once this many bytes are written (0 = no limit) */
} lt_compact_options;

/* A run of fragments (indexes into ds->fragments, ascending) rewritten together. */
typedef struct lt_compact_group
{
	size_t		first, count;
	uint64_t	live_rows;
} lt_compact_group;

typedef struct lt_compact_plan
{
	size_t		n_groups;
	lt_compact_group *groups;
	size_t		n_fragments;	/* fragments in every group */
} lt_compact_plan;

/*
 * Lance's plan: walk the fragments in id order; a fragment is a candidate when it has fewer
 * physical rows than the target or (materialize_deletions) more deleted rows than the threshold's
 * share; consecutive candidates form a group, closed once it holds the target's rows; a group of
 * one fragment with no deleted row gains nothing and is dropped.  A group never mixes fragments
 * that different index segments cover (the commit moves each segment's coverage, and remaps its
 * payloads, group by group: lt_txn_rewrite.c).
 */
lt_code		lt_compact_plan_make(const lt_dataset *ds, const lt_compact_options *opts, lt_compact_plan *out,
								 lt_error *err);
/*
 * A plan for compacting after every small commit (auto_compact): each group loses its leading fragments with no
 * deleted row that hold at least as many live rows as the rest of the group, so that a merged fragment is copied
 * again only once what joins it is as large: each row is copied O(log rows) times, not once per compaction
 * (Lance's plan alone copies the growing first fragment every time).  Groups left with one fragment and no
 * deleted row go.
 */
void		lt_compact_plan_tier(const lt_dataset *ds, lt_compact_plan *plan);
/*
 * How many fragments lt_compact_plan_make + lt_compact_plan_tier would rewrite on the version an append made
 * (a: lt_commit_result.adoption) on read (at a->from_version): read's fragments and a's, nothing opened or
 * read.  An auto-compaction that would rewrite too few needs not read the version at all.
 */
lt_code		lt_compact_tier_after_append(const lt_dataset *read, const lt_adoption *a, const lt_compact_options *opts,
										 size_t *n_fragments, lt_error *err);
void		lt_compact_plan_clear(lt_compact_plan *plan);

/*
 * A file a group was copied into, the row ids of its rows (stable row ids; else NULL), and per
 * tracked field (field assignment, lt_assignment.h) the state its rows had where they came from:
 * a compaction moves assignment with the rows and never creates any.
 */
typedef struct lt_compact_file
{
	lt_written_file file;
	uint64_t   *row_ids;
	int			n_assign;
	int32_t    *assign_field;	/* the tracked fields' ids */
	uint8_t    *assign_kind;	/* lt_assign_kind per field */
	struct roaring_bitmap_s **assign_rows;	/* PARTIAL: the assigned rows of the file; else NULL */
} lt_compact_file;

/*
 * Copy the live rows of a group's fragments, in order, into new files under the dataset's data/
 * (its storage version), each at most target_rows_per_fragment rows.  *files (lt_malloc'd) and
 * their contents are the caller's (lt_compact_files_free).  Answers cancel between batches.
 */
lt_code		lt_compact_copy_group(lt_dataset *ds, const lt_compact_group *g, const lt_compact_options *opts,
								  lt_compact_file **files, size_t *n_files, lt_error *err);
void		lt_compact_files_free(lt_compact_file *files, size_t n);

#endif
