/*
 * lt_action_model.c — the manifest model and apply(manifest, actions) (lt_action.h).
 *
 * The model keeps what the conflict rule speaks about: fragments (identity, rows,
 * deleted rows, which file holds each field), indexes (name, field, covered
 * fragments) and config.  lt_txn.c materializes the same changes on the real
 * manifest (deletion files written, ids renumbered, row ids assigned); the unit
 * tests check that both agree and that non-conflicting composites commute here.
 */
#include "txn/lt_action.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_roaring.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"

static void
frag_clear(lt_model_frag *f)
{
	lt_free(f->path);
	if (f->deleted)
		roaring_bitmap_free(f->deleted);
	for (size_t i = 0; i < f->n_fields; i++)
		lt_free(f->field_files[i]);
	lt_free(f->field_files);
	lt_free(f->fields);
	memset(f, 0, sizeof(*f));
}

static void
index_clear(lt_model_index *x)
{
	lt_free(x->name);
	lt_free(x->covered);
	memset(x, 0, sizeof(*x));
}

void
lt_model_clear(lt_model *m)
{
	for (size_t i = 0; i < m->n_frags; i++)
		frag_clear(&m->frags[i]);
	lt_free(m->frags);
	for (size_t i = 0; i < m->n_indexes; i++)
		index_clear(&m->indexes[i]);
	lt_free(m->indexes);
	for (size_t i = 0; i < m->n_config; i++)
	{
		lt_free(m->config_keys[i]);
		lt_free(m->config_values[i]);
	}
	lt_free(m->config_keys);
	lt_free(m->config_values);
	memset(m, 0, sizeof(*m));
}

lt_model_frag *
lt_model_find(const lt_model *m, uint64_t id)
{
	size_t		lo = 0, hi = m->n_frags;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (m->frags[mid].id == id)
			return &m->frags[mid];
		if (m->frags[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static char *
dup_or_null(const char *s, bool *ok)
{
	char	   *p;

	if (!s)
		return NULL;
	if (!(p = lt_strdup(s)))
		*ok = false;
	return p;
}

static bool
frag_copy(const lt_model_frag *src, lt_model_frag *dst)
{
	bool		ok = true;

	memset(dst, 0, sizeof(*dst));
	dst->id = src->id;
	dst->physical_rows = src->physical_rows;
	dst->path = dup_or_null(src->path, &ok);
	dst->deleted = src->deleted ? roaring_bitmap_copy(src->deleted) : roaring_bitmap_create();
	ok &= dst->deleted != NULL;
	if (src->n_fields)
	{
		dst->fields = lt_malloc(src->n_fields * sizeof(int32_t));
		dst->field_files = lt_calloc(src->n_fields, sizeof(char *));
		if (dst->fields && dst->field_files)
		{
			dst->n_fields = src->n_fields;
			memcpy(dst->fields, src->fields, src->n_fields * sizeof(int32_t));
			for (size_t i = 0; i < src->n_fields; i++)
				dst->field_files[i] = dup_or_null(src->field_files[i], &ok);
		}
		else
		{
			lt_free(dst->fields);
			lt_free(dst->field_files);
			dst->fields = NULL;
			dst->field_files = NULL;
			ok = false;
		}
	}
	return ok;
}

lt_code
lt_model_copy(const lt_model *m, lt_model *out, lt_error *err)
{
	bool		ok = true;

	memset(out, 0, sizeof(*out));
	out->next_id = m->next_id;
	out->replaced = m->replaced;
	if (m->n_frags && !(out->frags = lt_calloc(m->n_frags, sizeof(lt_model_frag))))
		ok = false;
	for (size_t i = 0; ok && i < m->n_frags; i++)
	{
		ok = frag_copy(&m->frags[i], &out->frags[i]);
		out->n_frags = i + 1;
	}
	if (ok && m->n_indexes && !(out->indexes = lt_calloc(m->n_indexes, sizeof(lt_model_index))))
		ok = false;
	for (size_t i = 0; ok && i < m->n_indexes; i++)
	{
		lt_model_index *x = &out->indexes[i];

		out->n_indexes = i + 1;
		x->field = m->indexes[i].field;
		x->name = dup_or_null(m->indexes[i].name, &ok);
		if (m->indexes[i].n_covered)
		{
			if (!(x->covered = lt_malloc(m->indexes[i].n_covered * sizeof(uint64_t))))
				ok = false;
			else
			{
				memcpy(x->covered, m->indexes[i].covered, m->indexes[i].n_covered * sizeof(uint64_t));
				x->n_covered = m->indexes[i].n_covered;
			}
		}
	}
	if (ok && m->n_config)
	{
		out->config_keys = lt_calloc(m->n_config, sizeof(char *));
		out->config_values = lt_calloc(m->n_config, sizeof(char *));
		ok = out->config_keys && out->config_values;
		for (size_t i = 0; ok && i < m->n_config; i++)
		{
			out->n_config = i + 1;
			out->config_keys[i] = dup_or_null(m->config_keys[i], &ok);
			out->config_values[i] = dup_or_null(m->config_values[i], &ok);
		}
	}
	if (!ok)
	{
		lt_model_clear(out);
		return lt_nomem(err);
	}
	return LT_OK;
}

/* ---- apply ------------------------------------------------------------------------------- */

static void
remove_frag(lt_model *m, lt_model_frag *f)
{
	size_t		at = (size_t) (f - m->frags);

	frag_clear(f);
	memmove(&m->frags[at], &m->frags[at + 1], (m->n_frags - at - 1) * sizeof(lt_model_frag));
	m->n_frags--;
}

static lt_code
add_frag(lt_model *m, const lt_action *a, uint64_t *new_id, lt_error *err)
{
	lt_model_frag *p = lt_realloc(m->frags, (m->n_frags + 1) * sizeof(lt_model_frag));
	lt_model_frag *f;
	bool		ok = true;

	if (!p)
		return lt_nomem(err);
	m->frags = p;
	f = &m->frags[m->n_frags];
	memset(f, 0, sizeof(*f));
	/* the id the commit gives it: after every fragment there is (ids only grow) */
	f->id = m->next_id++;
	f->physical_rows = a->physical_rows;
	f->path = dup_or_null(a->path ? a->path : "", &ok);
	f->deleted = roaring_bitmap_create();
	ok &= f->deleted != NULL;
	if (ok && a->n_fields)
	{
		f->fields = lt_malloc(a->n_fields * sizeof(int32_t));
		f->field_files = lt_calloc(a->n_fields, sizeof(char *));
		if (!f->fields || !f->field_files)
			ok = false;
		else
		{
			f->n_fields = a->n_fields;
			memcpy(f->fields, a->fields, a->n_fields * sizeof(int32_t));
			for (size_t i = 0; i < a->n_fields; i++)
				f->field_files[i] = dup_or_null(a->path ? a->path : "", &ok);
		}
	}
	m->n_frags++;
	if (!ok)
	{
		remove_frag(m, f);
		return lt_nomem(err);
	}
	*new_id = f->id;
	return LT_OK;
}

static lt_code
set_field_file(lt_model_frag *f, int32_t field, const char *path, lt_error *err)
{
	char	   *copy = lt_strdup(path ? path : "");
	int32_t    *nf;
	char	  **nff;

	if (!copy)
		return lt_nomem(err);
	for (size_t i = 0; i < f->n_fields; i++)
		if (f->fields[i] == field)
		{
			lt_free(f->field_files[i]);
			f->field_files[i] = copy;
			return LT_OK;
		}
	nf = lt_realloc(f->fields, (f->n_fields + 1) * sizeof(int32_t));
	if (nf)
		f->fields = nf;
	nff = nf ? lt_realloc(f->field_files, (f->n_fields + 1) * sizeof(char *)) : NULL;
	if (!nff)
	{
		lt_free(copy);
		return lt_nomem(err);
	}
	f->field_files = nff;
	f->fields[f->n_fields] = field;
	f->field_files[f->n_fields++] = copy;
	return LT_OK;
}

static lt_model_index *
find_index(lt_model *m, const char *name)
{
	for (size_t i = 0; i < m->n_indexes; i++)
		if (strcmp(m->indexes[i].name, name) == 0)
			return &m->indexes[i];
	return NULL;
}

static void
drop_index(lt_model *m, lt_model_index *x)
{
	size_t		at = (size_t) (x - m->indexes);

	index_clear(x);
	memmove(&m->indexes[at], &m->indexes[at + 1], (m->n_indexes - at - 1) * sizeof(lt_model_index));
	m->n_indexes--;
}

static bool
covers(const lt_model_index *x, uint64_t id)
{
	for (size_t i = 0; i < x->n_covered; i++)
		if (x->covered[i] == id)
			return true;
	return false;
}

static lt_code
cover(lt_model_index *x, uint64_t id, lt_error *err)
{
	uint64_t   *p = lt_realloc(x->covered, (x->n_covered + 1) * sizeof(uint64_t));

	if (!p)
		return lt_nomem(err);
	x->covered = p;
	x->covered[x->n_covered++] = id;
	return LT_OK;
}

static lt_code
set_config(lt_model *m, const char *key, const char *value, lt_error *err)
{
	for (size_t i = 0; i < m->n_config; i++)
		if (strcmp(m->config_keys[i], key) == 0)
		{
			if (value)
			{
				char	   *v = lt_strdup(value);

				if (!v)
					return lt_nomem(err);
				lt_free(m->config_values[i]);
				m->config_values[i] = v;
			}
			else
			{
				lt_free(m->config_keys[i]);
				lt_free(m->config_values[i]);
				m->config_keys[i] = m->config_keys[m->n_config - 1];
				m->config_values[i] = m->config_values[m->n_config - 1];
				m->n_config--;
			}
			return LT_OK;
		}
	if (!value)
		return LT_OK;
	{
		char	  **k = lt_realloc(m->config_keys, (m->n_config + 1) * sizeof(char *));
		char	  **v;

		if (k)
			m->config_keys = k;
		v = k ? lt_realloc(m->config_values, (m->n_config + 1) * sizeof(char *)) : NULL;
		if (!v)
			return lt_nomem(err);
		m->config_values = v;
		m->config_keys[m->n_config] = lt_strdup(key);
		m->config_values[m->n_config] = lt_strdup(value);
		if (!m->config_keys[m->n_config] || !m->config_values[m->n_config])
		{
			lt_free(m->config_keys[m->n_config]);
			lt_free(m->config_values[m->n_config]);
			return lt_nomem(err);
		}
		m->n_config++;
	}
	return LT_OK;
}

lt_code
lt_apply(lt_model *m, const lt_composite *c, lt_error *err)
{
	/* indexes that covered fragments a rewrite replaced: its new fragments join them */
	bool	   *remap = NULL;
	lt_code		rc = LT_OK;

	for (size_t i = 0; i < c->n_actions && rc == LT_OK; i++)
	{
		const lt_action *a = &c->actions[i];
		lt_model_frag *f = NULL;

		if (a->kind == LT_ACT_ADD_DATA_FILE || a->kind == LT_ACT_SET_DELETION_FILE ||
			a->kind == LT_ACT_REMOVE_FRAGMENT)
		{
			if (!(f = lt_model_find(m, a->fragment)))
			{
				rc = lt_error_set(err, LT_ECONFLICT, "fragment %llu is gone", (unsigned long long) a->fragment);
				break;
			}
		}
		switch (a->kind)
		{
			case LT_ACT_ADD_FRAGMENT:
				{
					uint64_t	id = 0;

					rc = add_frag(m, a, &id, err);
					for (size_t k = 0; rc == LT_OK && a->moved && remap && k < m->n_indexes; k++)
						if (remap[k])
							rc = cover(&m->indexes[k], id, err);
					break;
				}
			case LT_ACT_ADD_DATA_FILE:
				for (size_t k = 0; rc == LT_OK && k < a->n_fields; k++)
					rc = set_field_file(f, a->fields[k], a->path, err);
				break;
			case LT_ACT_SET_DELETION_FILE:
				if (!a->rows)
				{
					remove_frag(m, f);
					break;
				}
				if (roaring_bitmap_intersect(f->deleted, a->rows))
				{
					rc = lt_error_set(err, LT_ECONFLICT, "rows of fragment %llu are deleted already",
									  (unsigned long long) a->fragment);
					break;
				}
				roaring_bitmap_or_inplace(f->deleted, a->rows);
				if (roaring_bitmap_get_cardinality(f->deleted) >= f->physical_rows)
					remove_frag(m, f);
				break;
			case LT_ACT_REMOVE_FRAGMENT:
				remove_frag(m, f);
				break;
			case LT_ACT_REWRITE_FRAGMENTS:
				lt_free(remap);
				if (!(remap = lt_calloc(m->n_indexes ? m->n_indexes : 1, sizeof(bool))))
				{
					rc = lt_nomem(err);
					break;
				}
				for (size_t k = 0; k < a->n_frags && rc == LT_OK; k++)
				{
					if (!(f = lt_model_find(m, a->frags[k])))
					{
						rc = lt_error_set(err, LT_ECONFLICT, "fragment %llu is gone",
										  (unsigned long long) a->frags[k]);
						break;
					}
					for (size_t x = 0; x < m->n_indexes; x++)
					{
						lt_model_index *ix = &m->indexes[x];

						for (size_t j = 0; j < ix->n_covered; j++)
							if (ix->covered[j] == f->id)
							{
								ix->covered[j--] = ix->covered[--ix->n_covered];
								remap[x] = true;
							}
					}
					remove_frag(m, f);
				}
				break;
			case LT_ACT_REPLACE_ALL:
			case LT_ACT_UNINTERPRETED:
				while (m->n_frags)
					remove_frag(m, &m->frags[m->n_frags - 1]);
				while (m->n_indexes)
					drop_index(m, &m->indexes[m->n_indexes - 1]);
				m->replaced++;
				break;
			case LT_ACT_ADD_INDEX:
				{
					lt_model_index *x = find_index(m, a->name), *p;
					bool		ok = true;

					if (x)
						drop_index(m, x);
					if (!(p = lt_realloc(m->indexes, (m->n_indexes + 1) * sizeof(lt_model_index))))
					{
						rc = lt_nomem(err);
						break;
					}
					m->indexes = p;
					x = &m->indexes[m->n_indexes];
					memset(x, 0, sizeof(*x));
					x->name = dup_or_null(a->name, &ok);
					x->field = a->n_fields ? a->fields[0] : -1;
					m->n_indexes++;
					for (size_t k = 0; ok && k < a->n_frags; k++)
						if (!covers(x, a->frags[k]))
							ok = cover(x, a->frags[k], err) == LT_OK;
					if (!ok)
						rc = lt_nomem(err);
					/* a remap list made before no longer lines up with the indexes */
					lt_free(remap);
					remap = NULL;
					break;
				}
			case LT_ACT_REMOVE_INDEX:
				{
					lt_model_index *x = find_index(m, a->name);

					if (x)
						drop_index(m, x);
					lt_free(remap);
					remap = NULL;
					break;
				}
			case LT_ACT_UPDATE_CONFIG:
				rc = set_config(m, a->name, a->value, err);
				break;
			case LT_ACT_UPDATE_FIELD_METADATA:	/* the model keeps no schema */
			case LT_ACT_ASSERT_UNIQUE_KEYS:
			case LT_ACT_ASSERT_NO_MATCHING_INSERTS:
				break;			/* preconditions on values: nothing in the manifest */
		}
	}
	lt_free(remap);
	return rc;
}

/* ---- equality ---------------------------------------------------------------------------- */

static const lt_model_frag *
by_path(const lt_model *m, const char *path)
{
	for (size_t i = 0; i < m->n_frags; i++)
		if (strcmp(m->frags[i].path, path) == 0)
			return &m->frags[i];
	return NULL;
}

static bool
frag_equal(const lt_model_frag *a, const lt_model_frag *b)
{
	if (a->physical_rows != b->physical_rows || !roaring_bitmap_equals(a->deleted, b->deleted) ||
		a->n_fields != b->n_fields)
		return false;
	for (size_t i = 0; i < a->n_fields; i++)
	{
		size_t		j;

		for (j = 0; j < b->n_fields && b->fields[j] != a->fields[i]; j++)
			;
		if (j == b->n_fields || strcmp(a->field_files[i] ? a->field_files[i] : "",
									   b->field_files[j] ? b->field_files[j] : "") != 0)
			return false;
	}
	return true;
}

/* The identity of a covered fragment: its path when it exists, else its id (a removed one). */
static void
cover_key(const lt_model *m, uint64_t id, char *buf, size_t len)
{
	const lt_model_frag *f = lt_model_find(m, id);

	if (f)
		snprintf(buf, len, "p:%s", f->path);
	else
		snprintf(buf, len, "i:%llu", (unsigned long long) id);
}

static bool
index_equal(const lt_model *ma, const lt_model_index *a, const lt_model *mb, const lt_model_index *b)
{
	if (a->field != b->field || a->n_covered != b->n_covered)
		return false;
	for (size_t i = 0; i < a->n_covered; i++)
	{
		char		ka[300], kb[300];
		bool		found = false;

		cover_key(ma, a->covered[i], ka, sizeof(ka));
		for (size_t j = 0; j < b->n_covered && !found; j++)
		{
			cover_key(mb, b->covered[j], kb, sizeof(kb));
			found = strcmp(ka, kb) == 0;
		}
		if (!found)
			return false;
	}
	return true;
}

bool
lt_model_equal(const lt_model *a, const lt_model *b)
{
	if (a->n_frags != b->n_frags || a->n_indexes != b->n_indexes || a->n_config != b->n_config ||
		a->next_id != b->next_id || a->replaced != b->replaced)
		return false;
	for (size_t i = 0; i < a->n_frags; i++)
	{
		const lt_model_frag *o = by_path(b, a->frags[i].path);

		if (!o || !frag_equal(&a->frags[i], o))
			return false;
	}
	for (size_t i = 0; i < a->n_indexes; i++)
	{
		const lt_model_index *o = NULL;

		for (size_t j = 0; j < b->n_indexes && !o; j++)
			if (strcmp(a->indexes[i].name, b->indexes[j].name) == 0)
				o = &b->indexes[j];
		if (!o || !index_equal(a, &a->indexes[i], b, o))
			return false;
	}
	for (size_t i = 0; i < a->n_config; i++)
	{
		size_t		j;

		for (j = 0; j < b->n_config && strcmp(a->config_keys[i], b->config_keys[j]) != 0; j++)
			;
		if (j == b->n_config || strcmp(a->config_values[i], b->config_values[j]) != 0)
			return false;
	}
	return true;
}

/* ---- the model of a dataset ---------------------------------------------------------------- */

lt_code
lt_model_of_dataset(lt_dataset *ds, lt_model *out, lt_error *err)
{
	const Lt__Pb__Manifest *man = ds->manifest;
	lt_code		rc = LT_OK;

	memset(out, 0, sizeof(*out));
	out->next_id = man->has_max_fragment_id ? (uint64_t) man->max_fragment_id + 1 : 0;
	if (ds->n_fragments && ds->fragments[ds->n_fragments - 1]->id >= out->next_id)
		out->next_id = ds->fragments[ds->n_fragments - 1]->id + 1;
	if (ds->n_fragments && !(out->frags = lt_calloc(ds->n_fragments, sizeof(lt_model_frag))))
		return lt_nomem(err);
	for (size_t i = 0; i < ds->n_fragments && rc == LT_OK; i++)
	{
		const Lt__Pb__DataFragment *pf = ds->fragments[i];
		lt_model_frag *f = &out->frags[out->n_frags++];
		uint32_t   *offs = NULL;
		uint64_t	n = 0;
		size_t		nf = 0;

		f->id = pf->id;
		f->physical_rows = pf->physical_rows;
		if (!(f->path = lt_strdup(pf->n_files ? pf->files[0]->path : "")))
			rc = lt_nomem(err);
		if (rc == LT_OK)
			rc = lt_fragment_deleted_offsets(ds, pf, &offs, &n, err);
		if (rc == LT_OK && !(f->deleted = roaring_bitmap_of_ptr((size_t) n, offs)))
			rc = lt_nomem(err);
		lt_free(offs);
		for (size_t k = 0; k < pf->n_files; k++)
			nf += pf->files[k]->n_fields;
		if (rc == LT_OK && nf)
		{
			f->fields = lt_malloc(nf * sizeof(int32_t));
			f->field_files = lt_calloc(nf, sizeof(char *));
			if (!f->fields || !f->field_files)
				rc = lt_nomem(err);
			for (size_t k = 0; rc == LT_OK && k < pf->n_files; k++)
				for (size_t j = 0; rc == LT_OK && j < pf->files[k]->n_fields; j++)
				{
					if (pf->files[k]->fields[j] < 0)
						continue;
					f->fields[f->n_fields] = pf->files[k]->fields[j];
					if (!(f->field_files[f->n_fields++] = lt_strdup(pf->files[k]->path)))
						rc = lt_nomem(err);
				}
		}
	}
	for (size_t i = 0; rc == LT_OK && ds->index_section && i < ds->index_section->n_indices; i++)
	{
		const Lt__Pb__IndexMetadata *im = ds->index_section->indices[i];
		lt_model_index *x = NULL;
		uint32_t   *ids = NULL;
		uint64_t	n = 0;

		if (!(x = find_index(out, im->name ? im->name : "")))
		{
			lt_model_index *p = lt_realloc(out->indexes, (out->n_indexes + 1) * sizeof(lt_model_index));

			if (!p)
			{
				rc = lt_nomem(err);
				break;
			}
			out->indexes = p;
			x = &out->indexes[out->n_indexes++];
			memset(x, 0, sizeof(*x));
			x->field = im->n_fields ? im->fields[0] : -1;
			if (!(x->name = lt_strdup(im->name ? im->name : "")))
				rc = lt_nomem(err);
		}
		if (rc == LT_OK && im->has_fragment_bitmap)
			rc = lt_roaring_decode_array(im->fragment_bitmap.data, im->fragment_bitmap.len, UINT32_MAX, &ids, &n,
										 NULL, err);
		for (uint64_t k = 0; rc == LT_OK && k < n; k++)
			if (!covers(x, ids[k]))
				rc = cover(x, ids[k], err);
		lt_free(ids);
	}
	for (size_t i = 0; rc == LT_OK && i < man->n_config; i++)
		rc = set_config(out, man->config[i]->key ? man->config[i]->key : "",
						man->config[i]->value ? man->config[i]->value : "", err);
	if (rc != LT_OK)
		lt_model_clear(out);
	return rc;
}
