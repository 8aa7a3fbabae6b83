/*
 * lt_txn_int.h — pieces of the commit layer (lt_txn.c) that the other commit kinds
 * (lt_txn_index.c: CreateIndex) share.  Internal to src/lance/.
 */
#ifndef LT_TXN_INT_H
#define LT_TXN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_dataset.h"
#include "lt_status.h"

struct Lt__Pb__Transaction;

/* Feature flags, base paths and storage version this library can write (else LT_EUNSUPPORTED). */
lt_code		lt_txn_check_writable(const lt_dataset *ds, const char *name, lt_error *err);
/* The dataset's root/prefix, for messages. */
void		lt_txn_dataset_name(const lt_dataset *ds, char *buf, size_t len);
/* The transaction that made version ds (inline or _transactions/), NULL when unreadable; free when *owned. */
struct Lt__Pb__Transaction *lt_txn_committed(lt_dataset *ds, bool *owned);
/* Best effort: _versions/latest_version_hint.json. */
void		lt_txn_write_hint(lt_dataset *ds, uint64_t version);

#endif
