/*
 * lt_writer20.c — pages of Lance 2.0 data files (footer 0.3).
 */
#include "lt_writer_int.h"

int
lt_w20_columns(const lt_field *f, int32_t *ids, int cap)
{
	int			n = 1;

	if (ids && cap > 0)
		ids[0] = f->id;
	if (f->type == LT_TYPE_FIXED_LIST)
		return 1;
	for (int i = 0; i < f->n_children; i++)
		n += lt_w20_columns(f->children[i], ids ? ids + n : NULL, cap - n);
	return n;
}

lt_code
lt_w20_check(const lt_field *f, lt_error *err)
{
	return lt_error_set(err, LT_EUNSUPPORTED, "writing 2.0 data files is not implemented yet (field \"%s\")", f->name);
}

lt_code
lt_w20_encode(lt_file_writer *w, const lt_field *f, const lt_array *a, int col, uint64_t row0, lt_error *err)
{
	return lt_error_set(err, LT_EUNSUPPORTED, "writing 2.0 data files is not implemented yet");
}
