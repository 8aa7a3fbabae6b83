/*
 * lt_pages.h — `lt-inspect pages`: one JSON line per page of every 2.x data
 * file of a dataset version, naming its layout and encodings (the contract is
 * in test/interop/README.md).
 */
#ifndef LT_PAGES_H
#define LT_PAGES_H

#include "table/lt_dataset.h"

int			inspect_pages(lt_dataset *ds);

#endif
