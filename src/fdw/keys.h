/*
 * keys.h — keyed tables (keys.c): the primary key of a dataset checked for each written row, and
 * lt_set_primary_key's UpdateConfig commit.
 */
#ifndef LT_FDW_KEYS_H
#define LT_FDW_KEYS_H

#include "executor/tuptable.h"
#include "utils/rel.h"

#include "table/lt_dataset.h"
#include "types/lt_schema.h"

#include "convert_write.h"
#include "xact.h"

/* keys.c: the primary key of a keyed table, checked for each written row */
typedef struct LtKeyCheck LtKeyCheck;
struct LtXactTable;
/* NULL when the dataset has no primary key; fields/att_of_field/conv as the modify state's */
extern LtKeyCheck *lt_keys_begin(Relation rel, const char *uri, struct LtXactTable *xt, const lt_dataset *ds, int n_fields,
								 const lt_field *const *fields, const AttrNumber *att_of_field,
								 LtWriteConv *const *conv, bool is_update, bool skip_existing);
/* true: write the row; false: skip it (ON CONFLICT DO NOTHING); ERROR 23505 / 23502 otherwise.
 * old_addr: UPDATE, the address of the row it replaces (UINT64_MAX for an INSERT) */
extern bool lt_keys_check_row(LtKeyCheck *kc, TupleTableSlot *slot, uint64 old_addr);
extern void lt_keys_end(LtKeyCheck *kc);
struct ExplainState;
extern void lt_keys_explain(LtKeyCheck *kc, struct ExplainState *es);	/* EXPLAIN ANALYZE */
/* xact.c's PRE_COMMIT: the pending lt_set_primary_key of the dataset, as one UpdateConfig commit */
extern void lt_keys_commit(struct LtXactTable *xt);

#endif
