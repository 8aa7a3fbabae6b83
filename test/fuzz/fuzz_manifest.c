/* Fuzz target: manifest files (trailer, sections, protobufs, schema tree). */
#include <stddef.h>
#include <stdint.h>

#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "types/lt_schema.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Lt__Pb__Manifest *m;
	Lt__Pb__IndexSection *ix;
	Lt__Pb__Transaction *txn;
	lt_error	err;

	if (lt_manifest_parse(data, size, "fuzz.manifest", &m, &ix, &txn, &err) != LT_OK)
		return 0;
	{
		lt_schema  *s;

		if (lt_schema_from_pb(m->fields, m->n_fields, &s, &err) == LT_OK)
			lt_schema_free(s);
	}
	lt__pb__manifest__free_unpacked(m, lt_protobuf_allocator());
	if (ix)
		lt__pb__index_section__free_unpacked(ix, lt_protobuf_allocator());
	if (txn)
		lt__pb__transaction__free_unpacked(txn, lt_protobuf_allocator());
	return 0;
}
