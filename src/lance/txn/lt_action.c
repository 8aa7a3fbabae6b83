/*
 * lt_action.c — composites of actions, their footprints and the conflict rule
 * (lt_action.h has the contract; lifting and lowering are in lt_action_lift.c,
 * the manifest model and apply in lt_action_model.c).
 */
#include "txn/lt_action.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"

/* ---- composites ------------------------------------------------------------------------- */

void
lt_composite_init(lt_composite *c)
{
	memset(c, 0, sizeof(*c));
}

void
lt_composite_clear(lt_composite *c)
{
	for (size_t i = 0; i < c->n_actions; i++)
	{
		lt_action  *a = &c->actions[i];

		lt_free(a->path);
		lt_free(a->fields);
		lt_free(a->frags);
		lt_free(a->name);
		lt_free(a->value);
		if (a->rows)
			roaring_bitmap_free(a->rows);
	}
	for (size_t i = 0; i < c->n_owned_keys; i++)
		lt_key_filter_free(c->owned_keys[i]);
	lt_free(c->owned_keys);
	lt_free(c->actions);
	lt_free(c->users);
	memset(c, 0, sizeof(*c));
}

static bool
grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t		ncap;
	void	   *p;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	if (!(p = lt_realloc(*arr, ncap * elem)))
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

lt_code
lt_composite_begin(lt_composite *c, const char *what, lt_error *err)
{
	if (!grow((void **) &c->users, &c->cap_users, c->n_users + 1, sizeof(lt_user_action)))
		return lt_nomem(err);
	c->users[c->n_users].what = what;
	c->users[c->n_users].first = c->n_actions;
	c->users[c->n_users].n = 0;
	c->n_users++;
	return LT_OK;
}

/* A new zeroed action at the end, in the current user action (one is started when none is). */
static lt_action *
push(lt_composite *c, lt_action_kind kind, lt_error *err)
{
	lt_action  *a;

	if (c->n_users == 0 && lt_composite_begin(c, "change", err) != LT_OK)
		return NULL;
	if (!grow((void **) &c->actions, &c->cap_actions, c->n_actions + 1, sizeof(lt_action)))
	{
		lt_nomem(err);
		return NULL;
	}
	a = &c->actions[c->n_actions++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	c->users[c->n_users - 1].n++;
	return a;
}

/* Copy of an array (NULL for none; *ok false on no memory). */
static void *
dup_array(const void *src, size_t n, size_t elem, bool *ok)
{
	void	   *p;

	if (!src || n == 0)
		return NULL;
	if (!(p = lt_malloc(n * elem)))
	{
		*ok = false;
		return NULL;
	}
	memcpy(p, src, n * elem);
	return p;
}

static char *
dup_str(const char *s, bool *ok)
{
	char	   *p;

	if (!s)
		return NULL;
	if (!(p = lt_strdup(s)))
		*ok = false;
	return p;
}

/* The last action failed to copy its arguments: undo it. */
static lt_code
pop_nomem(lt_composite *c, lt_error *err)
{
	lt_action  *a = &c->actions[--c->n_actions];

	lt_free(a->path);
	lt_free(a->fields);
	lt_free(a->frags);
	lt_free(a->name);
	lt_free(a->value);
	c->users[c->n_users - 1].n--;
	return lt_nomem(err);
}

lt_code
lt_add_fragment(lt_composite *c, uint64_t id, uint64_t physical_rows, const char *path, const int32_t *fields,
				size_t n_fields, bool moved, lt_key_filter *keys, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_ADD_FRAGMENT, err);
	bool		ok = true;

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->fragment = id;
	a->physical_rows = physical_rows;
	a->path = dup_str(path, &ok);
	a->fields = dup_array(fields, n_fields, sizeof(int32_t), &ok);
	a->n_fields = a->fields ? n_fields : 0;
	a->moved = moved;
	a->keys = keys;
	return ok ? LT_OK : pop_nomem(c, err);
}

lt_code
lt_add_data_file(lt_composite *c, uint64_t fragment, const char *path, const int32_t *fields, size_t n_fields,
				 lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_ADD_DATA_FILE, err);
	bool		ok = true;

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->fragment = fragment;
	a->path = dup_str(path, &ok);
	a->fields = dup_array(fields, n_fields, sizeof(int32_t), &ok);
	a->n_fields = a->fields ? n_fields : 0;
	return ok ? LT_OK : pop_nomem(c, err);
}

lt_code
lt_set_deletion_file(lt_composite *c, uint64_t fragment, roaring_bitmap_t *rows, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_SET_DELETION_FILE, err);

	if (!a)
	{
		if (rows)
			roaring_bitmap_free(rows);
		return err ? err->code : LT_ENOMEM;
	}
	a->fragment = fragment;
	a->rows = rows;
	return LT_OK;
}

lt_code
lt_remove_fragment(lt_composite *c, uint64_t fragment, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_REMOVE_FRAGMENT, err);

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->fragment = fragment;
	return LT_OK;
}

lt_code
lt_rewrite_fragments(lt_composite *c, const uint64_t *old, size_t n_old, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_REWRITE_FRAGMENTS, err);
	bool		ok = true;

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->frags = dup_array(old, n_old, sizeof(uint64_t), &ok);
	a->n_frags = a->frags ? n_old : 0;
	return ok ? LT_OK : pop_nomem(c, err);
}

lt_code
lt_replace_all(lt_composite *c, lt_error *err)
{
	return push(c, LT_ACT_REPLACE_ALL, err) ? LT_OK : (err ? err->code : LT_ENOMEM);
}

lt_code
lt_add_index(lt_composite *c, const char *name, const int32_t *fields, size_t n_fields, const uint64_t *covered,
			 size_t n_covered, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_ADD_INDEX, err);
	bool		ok = true;

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->name = dup_str(name ? name : "", &ok);
	a->fields = dup_array(fields, n_fields, sizeof(int32_t), &ok);
	a->n_fields = a->fields ? n_fields : 0;
	a->frags = dup_array(covered, n_covered, sizeof(uint64_t), &ok);
	a->n_frags = a->frags ? n_covered : 0;
	return ok ? LT_OK : pop_nomem(c, err);
}

lt_code
lt_remove_index(lt_composite *c, const char *name, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_REMOVE_INDEX, err);
	bool		ok = true;

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->name = dup_str(name ? name : "", &ok);
	return ok ? LT_OK : pop_nomem(c, err);
}

lt_code
lt_update_config(lt_composite *c, const char *key, const char *value, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_UPDATE_CONFIG, err);
	bool		ok = true;

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->name = dup_str(key ? key : "", &ok);
	a->value = dup_str(value, &ok);
	return ok ? LT_OK : pop_nomem(c, err);
}

lt_code
lt_update_field_metadata(lt_composite *c, const int32_t *fields, size_t n_fields, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_UPDATE_FIELD_METADATA, err);
	bool		ok = true;

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->fields = dup_array(fields, n_fields, sizeof(int32_t), &ok);
	a->n_fields = a->fields ? n_fields : 0;
	return ok ? LT_OK : pop_nomem(c, err);
}

lt_code
lt_assert_unique_keys(lt_composite *c, lt_key_filter *keys, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_ASSERT_UNIQUE_KEYS, err);

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->keys = keys;
	return LT_OK;
}

lt_code
lt_assert_key_checked(lt_composite *c, const int32_t *fields, size_t n_fields, const uint64_t *checked,
					  size_t n_checked, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_ASSERT_UNIQUE_KEYS, err);
	bool		ok = true;

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->fields = dup_array(fields, n_fields, sizeof(int32_t), &ok);
	a->n_fields = a->fields ? n_fields : 0;
	a->frags = dup_array(checked, n_checked, sizeof(uint64_t), &ok);
	a->n_frags = a->frags ? n_checked : 0;
	return ok ? LT_OK : pop_nomem(c, err);
}

lt_code
lt_assert_no_matching_inserts(lt_composite *c, lt_error *err)
{
	return push(c, LT_ACT_ASSERT_NO_MATCHING_INSERTS, err) ? LT_OK : (err ? err->code : LT_ENOMEM);
}

lt_code
lt_uninterpreted(lt_composite *c, const char *what, lt_error *err)
{
	lt_action  *a = push(c, LT_ACT_UNINTERPRETED, err);

	if (!a)
		return err ? err->code : LT_ENOMEM;
	a->what = what;
	return LT_OK;
}

/* ---- footprints ------------------------------------------------------------------------- */

void
lt_footprint_clear(lt_footprint *f)
{
	lt_free(f->writes);
	lt_free(f->deps);
	memset(f, 0, sizeof(*f));
}

static lt_code
coord(lt_footprint *f, bool write, lt_coord_kind kind, uint64_t fragment, int32_t field, size_t action,
	  lt_error *err)
{
	lt_coord  **arr = write ? &f->writes : &f->deps;
	size_t	   *n = write ? &f->n_writes : &f->n_deps;
	size_t	   *cap = write ? &f->cap_writes : &f->cap_deps;
	lt_coord   *c;

	if (!grow((void **) arr, cap, *n + 1, sizeof(lt_coord)))
		return lt_nomem(err);
	c = &(*arr)[(*n)++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->fragment = fragment;
	c->field = field;
	c->action = action;
	return LT_OK;
}

/* The coordinate just added (to set rows, name, keys). */
static lt_coord *
last(lt_footprint *f, bool write)
{
	return write ? &f->writes[f->n_writes - 1] : &f->deps[f->n_deps - 1];
}

static int
cmp_coord(const void *x, const void *y)
{
	const lt_coord *a = x, *b = y;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->fragment != b->fragment)
		return a->fragment < b->fragment ? -1 : 1;
	if (a->action != b->action)
		return a->action < b->action ? -1 : 1;
	return 0;
}

/* Action i read the values of its fields in its fragments: it depends on their layout and data. */
static lt_code
reads_values(const lt_action *a, size_t i, lt_footprint *f, lt_error *err)
{
	for (size_t j = 0; j < a->n_frags; j++)
	{
		LT_TRY(coord(f, false, LT_CO_LAYOUT, a->frags[j], -1, i, err));
		for (size_t k = 0; k < a->n_fields; k++)
			LT_TRY(coord(f, false, LT_CO_DATA, a->frags[j], a->fields[k], i, err));
	}
	return LT_OK;
}

/* What one action writes and depends on (lt_action.h). */
static lt_code
action_footprint(const lt_action *a, size_t i, lt_footprint *f, lt_error *err)
{
	switch (a->kind)
	{
		case LT_ACT_ADD_FRAGMENT:
			if (!a->moved)
			{
				LT_TRY(coord(f, true, LT_CO_INSERT, a->fragment, -1, i, err));
				last(f, true)->keys = a->keys;
			}
			for (size_t k = 0; k < a->n_fields; k++)
				LT_TRY(coord(f, false, LT_CO_FIELD, 0, a->fields[k], i, err));
			break;
		case LT_ACT_ADD_DATA_FILE:
			for (size_t k = 0; k < a->n_fields; k++)
			{
				LT_TRY(coord(f, true, LT_CO_DATA, a->fragment, a->fields[k], i, err));
				LT_TRY(coord(f, false, LT_CO_FIELD, 0, a->fields[k], i, err));
			}
			if (a->n_fields == 0)
				LT_TRY(coord(f, true, LT_CO_DATA, a->fragment, -1, i, err));
			LT_TRY(coord(f, false, LT_CO_EXISTS, a->fragment, -1, i, err));
			LT_TRY(coord(f, false, LT_CO_LAYOUT, a->fragment, -1, i, err));
			break;
		case LT_ACT_SET_DELETION_FILE:
			LT_TRY(coord(f, true, LT_CO_ROWS, a->fragment, -1, i, err));
			last(f, true)->rows = a->rows;
			if (a->new_layout)
				LT_TRY(coord(f, true, LT_CO_LAYOUT, a->fragment, -1, i, err));
			else
				LT_TRY(coord(f, false, LT_CO_LAYOUT, a->fragment, -1, i, err));
			break;
		case LT_ACT_REMOVE_FRAGMENT:
			LT_TRY(coord(f, true, LT_CO_ROWS, a->fragment, -1, i, err));
			LT_TRY(coord(f, true, LT_CO_EXISTS, a->fragment, -1, i, err));
			break;
		case LT_ACT_REWRITE_FRAGMENTS:
			for (size_t k = 0; k < a->n_frags; k++)
			{
				LT_TRY(coord(f, true, LT_CO_LAYOUT, a->frags[k], -1, i, err));
				LT_TRY(coord(f, true, LT_CO_EXISTS, a->frags[k], -1, i, err));
			}
			break;
		case LT_ACT_REPLACE_ALL:
		case LT_ACT_UNINTERPRETED:
			LT_TRY(coord(f, true, LT_CO_EVERYTHING, 0, -1, i, err));
			break;
		case LT_ACT_ADD_INDEX:
			LT_TRY(coord(f, true, LT_CO_INDEX, 0, -1, i, err));
			last(f, true)->name = a->name;
			for (size_t k = 0; k < a->n_fields; k++)
				LT_TRY(coord(f, false, LT_CO_FIELD, 0, a->fields[k], i, err));
			LT_TRY(reads_values(a, i, f, err));
			break;
		case LT_ACT_REMOVE_INDEX:
			LT_TRY(coord(f, true, LT_CO_INDEX, 0, -1, i, err));
			last(f, true)->name = a->name;
			break;
		case LT_ACT_UPDATE_CONFIG:
			LT_TRY(coord(f, true, LT_CO_CONFIG, 0, -1, i, err));
			last(f, true)->name = a->name;
			break;
		case LT_ACT_UPDATE_FIELD_METADATA:
			for (size_t k = 0; k < a->n_fields; k++)
				LT_TRY(coord(f, true, LT_CO_FIELD_META, 0, a->fields[k], i, err));
			if (a->n_fields == 0)
				LT_TRY(coord(f, true, LT_CO_FIELD_META, 0, -1, i, err));
			break;
		case LT_ACT_ASSERT_UNIQUE_KEYS:
			LT_TRY(coord(f, false, LT_CO_KEYS, 0, -1, i, err));
			last(f, false)->keys = a->keys;
			/* the key itself is marked in field metadata: a concurrent change of it voids the claim */
			LT_TRY(coord(f, false, LT_CO_FIELD_META, 0, -1, i, err));
			/* the rows whose keys were checked: where they are and their key values */
			LT_TRY(reads_values(a, i, f, err));
			break;
		case LT_ACT_ASSERT_NO_MATCHING_INSERTS:
			LT_TRY(coord(f, false, LT_CO_PREDICATE, 0, -1, i, err));
			break;
	}
	return LT_OK;
}

lt_code
lt_footprint_of(const lt_composite *c, lt_footprint *out, lt_error *err)
{
	lt_code		rc = LT_OK;

	memset(out, 0, sizeof(*out));
	out->of = c;
	for (size_t i = 0; i < c->n_actions && rc == LT_OK; i++)
		rc = action_footprint(&c->actions[i], i, out, err);
	if (rc != LT_OK)
	{
		lt_footprint_clear(out);
		return rc;
	}
	if (out->n_writes)
		qsort(out->writes, out->n_writes, sizeof(lt_coord), cmp_coord);
	if (out->n_deps)
		qsort(out->deps, out->n_deps, sizeof(lt_coord), cmp_coord);
	return LT_OK;
}

/* ---- where coordinates meet -------------------------------------------------------------- */

static bool
keys_may_share(lt_key_filter *a, lt_key_filter *b)
{
	/*
	 * an insert that does not say which keys it added may have added any, a claim on every key
	 * meets any insert, and incomparable filters may share a key
	 */
	if (!a || !b)
		return true;
	return lt_key_filter_overlap(a, b) != LT_KEYS_DISJOINT;
}

/* Does write w meet coordinate x (a write or a dependency of the other side)? */
static bool
meets(const lt_coord *w, const lt_coord *x)
{
	if (w->kind == LT_CO_EVERYTHING || x->kind == LT_CO_EVERYTHING)
		return true;
	if (w->kind == LT_CO_INSERT || x->kind == LT_CO_INSERT)
	{
		const lt_coord *ins = w->kind == LT_CO_INSERT ? w : x,
				   *other = ins == w ? x : w;

		if (other->kind == LT_CO_KEYS)
			return keys_may_share(ins->keys, other->keys);
		return other->kind == LT_CO_PREDICATE;
	}
	if (w->kind != x->kind)
		return false;
	switch (w->kind)
	{
		case LT_CO_ROWS:
			/* rows NULL: all of the fragment's rows */
			if (w->fragment != x->fragment)
				return false;
			if (!w->rows || !x->rows)
				return (!w->rows || !roaring_bitmap_is_empty(w->rows)) && (!x->rows || !roaring_bitmap_is_empty(x->rows));
			return roaring_bitmap_intersect(w->rows, x->rows);
		case LT_CO_EXISTS:
		case LT_CO_LAYOUT:
			return w->fragment == x->fragment;
		case LT_CO_DATA:
			return w->fragment == x->fragment && (w->field < 0 || x->field < 0 || w->field == x->field);
		case LT_CO_FIELD:
		case LT_CO_FIELD_META:
			return w->field < 0 || x->field < 0 || w->field == x->field;
		case LT_CO_INDEX:
		case LT_CO_CONFIG:
			return strcmp(w->name ? w->name : "", x->name ? x->name : "") == 0;
		default:
			return false;
	}
}

/* The first coordinate of kind k (and fragment, when by_fragment) in sorted list l, and one past the last. */
static void
range_of(const lt_coord *l, size_t n, lt_coord_kind k, bool by_fragment, uint64_t fragment, size_t *lo,
		 size_t *hi)
{
	size_t		a = 0, b = n;

	/* lower bound */
	while (a < b)
	{
		size_t		m = a + (b - a) / 2;

		if (l[m].kind < k || (l[m].kind == k && by_fragment && l[m].fragment < fragment))
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	b = n;
	while (a < b)
	{
		size_t		m = a + (b - a) / 2;

		if (l[m].kind < k || (l[m].kind == k && (!by_fragment || l[m].fragment <= fragment)))
			a = m + 1;
		else
			b = m;
	}
	*hi = a;
}

static bool
by_fragment(lt_coord_kind k)
{
	return k == LT_CO_ROWS || k == LT_CO_EXISTS || k == LT_CO_LAYOUT || k == LT_CO_DATA;
}

/*
 * The candidates of x in list l that may meet it: up to three ranges (everything in l when x
 * is EVERYTHING).  Returns the number of ranges.
 */
static int
candidates(const lt_coord *x, const lt_coord *l, size_t n, size_t lo[3], size_t hi[3])
{
	int			r = 0;

	if (x->kind == LT_CO_EVERYTHING)
	{
		lo[0] = 0;
		hi[0] = n;
		return 1;
	}
	range_of(l, n, LT_CO_EVERYTHING, false, 0, &lo[r], &hi[r]);
	r++;
	if (x->kind == LT_CO_INSERT)
	{
		range_of(l, n, LT_CO_KEYS, false, 0, &lo[r], &hi[r]);
		r++;
		range_of(l, n, LT_CO_PREDICATE, false, 0, &lo[r], &hi[r]);
		r++;
	}
	else if (x->kind == LT_CO_KEYS || x->kind == LT_CO_PREDICATE)
	{
		range_of(l, n, LT_CO_INSERT, false, 0, &lo[r], &hi[r]);
		r++;
	}
	else
	{
		range_of(l, n, x->kind, by_fragment(x->kind), x->fragment, &lo[r], &hi[r]);
		r++;
	}
	return r;
}

/*
 * The clashes in a fixed order: a's writes x b's writes, a's writes x b's deps, a's deps x
 * b's writes.  *cursor counts the clashes returned so far; the scan skips past them (few
 * are ever asked for: the first, or one per fragment a predicate check clears).
 */
bool
lt_next_clash(const lt_footprint *a, const lt_footprint *b, size_t *cursor, lt_clash *why)
{
	size_t		seen = 0;

	for (int phase = 0; phase < 3; phase++)
	{
		const lt_coord *left = phase < 2 ? a->writes : a->deps;
		size_t		n_left = phase < 2 ? a->n_writes : a->n_deps;
		const lt_coord *right = phase == 1 ? b->deps : b->writes;
		size_t		n_right = phase == 1 ? b->n_deps : b->n_writes;

		for (size_t i = 0; i < n_left; i++)
		{
			size_t		lo[3], hi[3];
			int			nr = candidates(&left[i], right, n_right, lo, hi);

			for (int r = 0; r < nr; r++)
				for (size_t j = lo[r]; j < hi[r]; j++)
				{
					/* ranges may repeat a coordinate (EVERYTHING x EVERYTHING): count each pair once */
					if (r > 0 && right[j].kind == LT_CO_EVERYTHING)
						continue;
					if (!meets(phase < 2 ? &left[i] : &right[j], phase < 2 ? &right[j] : &left[i]))
						continue;
					if (seen++ < *cursor)
						continue;
					(*cursor)++;
					if (why)
					{
						why->a = &left[i];
						why->b = &right[j];
						why->a_writes = phase < 2;
					}
					return true;
				}
		}
	}
	return false;
}

bool
lt_conflicts(const lt_footprint *a, const lt_footprint *b, lt_clash *why)
{
	size_t		cursor = 0;

	return lt_next_clash(a, b, &cursor, why);
}

/* ---- clashes in words -------------------------------------------------------------------- */

static const char *
article(const char *op)
{
	return op && strchr("AEIOUaeiou", op[0]) ? "an" : "a";
}

void
lt_clash_describe(const lt_clash *why, const lt_composite *a, const lt_composite *b, uint64_t version,
				  const char *name, char *buf, size_t len)
{
	const lt_coord *ca = why->a, *cb = why->b;
	const lt_action *aa = &a->actions[ca->action], *ab = &b->actions[cb->action];
	const char *op = b->op ? b->op : "commit";
	char		who[600];

	if (ab->kind == LT_ACT_UNINTERPRETED && ab->what && strcmp(ab->what, "unreadable") == 0)
	{
		snprintf(buf, len, "version %llu of %s was committed concurrently and its transaction cannot be read",
				 (unsigned long long) version, name);
		return;
	}
	snprintf(who, sizeof(who), "concurrent commit (version %llu of %s, %s %s)", (unsigned long long) version, name,
			 article(op), op);
	if (ca->kind == LT_CO_EVERYTHING || cb->kind == LT_CO_EVERYTHING)
	{
		if (cb->kind == LT_CO_EVERYTHING)
			snprintf(buf, len, "%s conflicts with this transaction", who);
		else
			snprintf(buf, len, "%s conflicts with this transaction, which replaces the whole table", who);
		return;
	}
	switch (ca->kind == LT_CO_INSERT ? cb->kind : ca->kind)
	{
		case LT_CO_ROWS:
			if (ab->kind == LT_ACT_REMOVE_FRAGMENT)
				snprintf(buf, len, "%s deleted every row of fragment %llu, which this transaction deletes from", who,
						 (unsigned long long) cb->fragment);
			else
				snprintf(buf, len, "%s deleted or updated some of the same rows of fragment %llu", who,
						 (unsigned long long) cb->fragment);
			return;
		case LT_CO_EXISTS:
			snprintf(buf, len, "%s %s fragment %llu, which this transaction %s", who,
					 ab->kind == LT_ACT_REMOVE_FRAGMENT ? "deleted every row of" :
					 ab->kind == LT_ACT_REWRITE_FRAGMENTS ? "rewrote" : "depends on",
					 (unsigned long long) cb->fragment,
					 aa->kind == LT_ACT_ADD_DATA_FILE ? "adds a data file to" :
					 aa->kind == LT_ACT_REWRITE_FRAGMENTS ? "rewrites" :
					 aa->kind == LT_ACT_REMOVE_FRAGMENT ? "removes" : "changes");
			return;
		case LT_CO_LAYOUT:
			if (why->a_writes)
				snprintf(buf, len, "%s changed fragment %llu, which this transaction rewrites", who,
						 (unsigned long long) cb->fragment);
			else if (aa->kind == LT_ACT_ADD_INDEX)
				snprintf(buf, len, "%s moved the rows of fragment %llu, which index \"%s\" covers", who,
						 (unsigned long long) cb->fragment, aa->name);
			else if (aa->kind == LT_ACT_ASSERT_UNIQUE_KEYS)
				snprintf(buf, len, "%s %s fragment %llu, whose keys this transaction checked", who,
						 ab->kind == LT_ACT_REWRITE_FRAGMENTS ? "rewrote" : "rewrote the data files of",
						 (unsigned long long) cb->fragment);
			else if (ab->kind == LT_ACT_REWRITE_FRAGMENTS)
				snprintf(buf, len, "%s rewrote fragment %llu, which this transaction %s", who,
						 (unsigned long long) cb->fragment,
						 aa->kind == LT_ACT_ADD_DATA_FILE ? "adds a data file to" : "deletes from");
			else
				snprintf(buf, len, "%s rewrote the data files of fragment %llu, which this transaction %s", who,
						 (unsigned long long) cb->fragment,
						 aa->kind == LT_ACT_ADD_DATA_FILE ? "adds a data file to" : "deletes from");
			return;
		case LT_CO_DATA:
			if (aa->kind == LT_ACT_ADD_INDEX)
				snprintf(buf, len, "%s modified the indexed column of \"%s\" in fragment %llu", who, aa->name,
						 (unsigned long long) cb->fragment);
			else if (aa->kind == LT_ACT_ASSERT_UNIQUE_KEYS)
				snprintf(buf, len, "%s modified key field %d in fragment %llu, whose keys this transaction checked",
						 who, (int) ca->field, (unsigned long long) cb->fragment);
			else
				snprintf(buf, len, "%s modified field %d of fragment %llu, which this transaction modifies or indexes",
						 who, (int) (ca->field >= 0 ? ca->field : cb->field), (unsigned long long) cb->fragment);
			return;
		case LT_CO_FIELD:
			snprintf(buf, len, "%s changed the definition of field %d, which this transaction writes", who,
					 (int) (ca->field >= 0 ? ca->field : cb->field));
			return;
		case LT_CO_FIELD_META:
			snprintf(buf, len, "%s changed field metadata, where the table's primary key is marked", who);
			return;
		case LT_CO_INDEX:
			if (ab->kind == LT_ACT_REMOVE_INDEX && aa->kind != LT_ACT_REMOVE_INDEX)
				snprintf(buf, len, "%s removed the index named \"%s\"", who, cb->name);
			else
				snprintf(buf, len, "%s created an index named \"%s\" too", who, cb->name);
			return;
		case LT_CO_CONFIG:
			snprintf(buf, len, "%s changed table config key \"%s\" too", who, cb->name);
			return;
		case LT_CO_KEYS:
			if (ca->kind == LT_CO_KEYS)
				snprintf(buf, len, cb->keys ? "%s inserted keys that may be among the keys this transaction inserts"
						 : "%s inserted rows without saying which keys, and this transaction's keys must be new", who);
			else
				snprintf(buf, len, ca->keys ? "%s inserted keys it claims are new that may be among the keys this transaction inserts"
						 : "%s inserted keys it claims are new, and this transaction inserts rows without saying which keys",
						 who);
			return;
		case LT_CO_PREDICATE:
			snprintf(buf, len, "%s added rows (fragment %llu) that may match the replace predicate", who,
					 (unsigned long long) (ca->kind == LT_CO_INSERT ? ca->fragment : cb->fragment));
			return;
		default:
			snprintf(buf, len, "%s conflicts with this transaction", who);
			return;
	}
}
