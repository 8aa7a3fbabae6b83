/*
 * lt_txn_int.h — pieces of the commit layer (lt_txn.c) that the other commit kinds
 * (lt_txn_index.c: CreateIndex) share.  Internal to src/lance/.
 */
#ifndef LT_TXN_INT_H
#define LT_TXN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "txn/lt_action.h"
#include "table/lt_dataset.h"
#include "util/lt_status.h"

struct Lt__Pb__Transaction;
struct Lt__Pb__Manifest;
struct Lt__Pb__IndexSection;
struct lt_commit_result;

/* Feature flags, base paths and storage version this library can write (else LT_EUNSUPPORTED). */
lt_code		lt_txn_check_writable(const lt_dataset *ds, const char *name, lt_error *err);
/* The dataset's root/prefix, for messages. */
void		lt_txn_dataset_name(const lt_dataset *ds, char *buf, size_t len);
/* The transaction that made version ds (inline or _transactions/), NULL when unreadable; free when *owned. */
struct Lt__Pb__Transaction *lt_txn_committed(lt_dataset *ds, bool *owned);

/*
 * The conflict check every commit kind uses: lift the transaction that made `next` (prev: the
 * version before it), compare its footprint with ours (fo, the footprint of `ours`), and return
 * LT_ECONFLICT with a message naming next's version when they clash.  rows / rows_arg: lifting's
 * callback for the rows a Delete / Update deleted (NULL: unknown).  check_inserts: when ours has a
 * replace's predicate (AssertNoMatchingInserts) and they inserted rows, called once for the
 * version instead of conflicting outright (LT_OK clears it).
 */
lt_code		lt_txn_check_version(const lt_composite *ours, const lt_footprint *fo, lt_dataset *prev, lt_dataset *next,
								 const char *name, lt_lift_rows_fn rows, void *rows_arg,
								 lt_code (*check_inserts) (void *arg, lt_dataset *prev, lt_dataset *next,
														   lt_error *err),
								 void *check_arg, lt_error *err);

/* One kind of commit, driven by lt_txn_commit_loop. */
typedef struct lt_commit_kind
{
	const char *name;			/* the dataset, for messages */
	/* a version committed since our base, in order (prev: the one before it): LT_ECONFLICT when it conflicts */
	lt_code		(*check) (void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err);
	/* one attempt on base, the newest version: *lost_race when the manifest's slot was taken */
	lt_code		(*attempt) (void *arg, lt_dataset *base, struct lt_commit_result *res, bool *lost_race,
							lt_error *err);
	void	   *arg;
} lt_commit_kind;

/* Check, attempt, and after a lost race back off and go again (max_attempts <= 0: the default). */
lt_code		lt_txn_commit_loop(lt_dataset *read, const lt_commit_kind *kind, int max_attempts,
							   struct lt_commit_result *result, lt_error *err);

/*
 * Publish version base->version + 1: manifest (the base's with what changed, feature
 * flags set) stamped with version, time and writer; the transaction file of tx (uuid
 * and read version set), then the manifest only if its slot is free (LT_ECONFLICT and
 * *lost_race otherwise).  Crash-test fault points included.
 */
lt_code		lt_txn_publish(lt_dataset *base, const struct Lt__Pb__Manifest *manifest,
						   const struct Lt__Pb__IndexSection *indexes, struct Lt__Pb__Transaction *tx,
						   const char *name, bool *lost_race, lt_error *err);

#endif
