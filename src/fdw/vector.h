/*
 * vector.h — vector distances in SQL (vector.c) and the exact kNN of a scan (knn.c).
 */
#ifndef LT_FDW_VECTOR_H
#define LT_FDW_VECTOR_H

#include "utils/array.h"

/* ERROR 22000 "different vector dimensions a and b" (pgvector's words) */
extern void ltfdw_vector_dims_error(int a, int b) pg_attribute_noreturn();

/*
 * The items of a smallint[] binary vector as bytes (palloc'd in the current context), checked as
 * hamming_distance checks them: 1-D, no NULL item (22004), every item in 0..255 (22003).
 */
extern uint8 *ltfdw_vector_u8_items(ArrayType *a, uint32 *dim);

#endif
