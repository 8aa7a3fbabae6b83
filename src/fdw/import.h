/*
 * import.h — IMPORT FOREIGN SCHEMA (import.c).
 */
#ifndef LT_FDW_IMPORT_H
#define LT_FDW_IMPORT_H

#include "nodes/parsenodes.h"

extern List *ltImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid);

#endif
