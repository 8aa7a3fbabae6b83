/*
 * vector.h — vector distances in SQL (vector.c) and the exact kNN of a scan (knn.c).
 */
#ifndef LT_FDW_VECTOR_H
#define LT_FDW_VECTOR_H

/* ERROR 22000 "different vector dimensions a and b" (pgvector's words) */
extern void ltfdw_vector_dims_error(int a, int b) pg_attribute_noreturn();

#endif
