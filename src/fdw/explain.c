/*
 * explain.c — what EXPLAIN shows of a scan: the table's identifier when a namespace resolved it, the
 * dataset (its URI, never credentials), the version
 * read, the storage version, fragments in the version and fragments to scan; under ANALYZE, the
 * fragments actually opened, rows dropped by deletion vectors and by the pushed filter (shown as
 * "Lance Filter"), and the bytes and read requests the
 * store served to this scan. When an index answered part of the filter (index.c): the indexes used
 * and what they were asked, the fragments by verdict, the rows they selected, and under ANALYZE
 * the lookups, index pages and index bytes read. With is_assigned quals (assign.c): how many masks the scan
 * applies, and under ANALYZE the fragments they proved empty (never opened).
 */
#include "postgres.h"

#include "commands/explain.h"

#include "explain.h"
#include "index.h"
#include "quals.h"
#include "scan.h"
#include "knn.h"
#include "table/lt_scan.h"

void
ltfdw_explain_dataset(const LtTableOptions *opts, ExplainState *es)
{
	if (opts->identifier)
		ExplainPropertyText("Lance Table Identifier", opts->identifier, es);
	ExplainPropertyText("Lance Dataset", opts->uri, es);
}

void
ltExplainForeignScan(ForeignScanState *node, ExplainState *es)
{
	LtScanState *st = node->fdw_state;
	lt_dataset *ds;
	StringInfoData frag;

	if (st == NULL || st->entry == NULL)
		return;
	ds = st->entry->ds;
	ltfdw_explain_dataset(&st->opts, es);
	ExplainPropertyUInteger("Lance Version", NULL, st->entry->version, es);
	if (st->opts.tag)
		ExplainPropertyText("Lance Tag", st->opts.tag, es);
	ExplainPropertyText("Storage Version", ds->storage_version ? ds->storage_version : "unknown", es);
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		initStringInfo(&frag);
		appendStringInfo(&frag, "%zu total, " UINT64_FORMAT " to scan", ds->n_fragments,
						 (uint64) ds->n_fragments - ltfdw_index_pruned(st->index));
		ExplainPropertyText("Fragments", frag.data, es);
	}
	else
	{
		ExplainPropertyUInteger("Fragments Total", NULL, ds->n_fragments, es);
		ExplainPropertyUInteger("Fragments To Scan", NULL, (uint64) ds->n_fragments - ltfdw_index_pruned(st->index), es);
	}
	if (st->filter && ltfdw_filter_text(st->filter))
		ExplainPropertyText("Lance Filter", ltfdw_filter_text(st->filter), es);
	ltfdw_index_explain(st->index, es);
	if (st->knn)
		ltfdw_knn_explain(st->knn, es);
	if (st->amask.n > 0)
		ExplainPropertyInteger("Assignment Masks", NULL, st->amask.n, es);
	if (es->analyze)
	{
		ExplainPropertyUInteger("Fragments Scanned", NULL, st->fragments_scanned, es);
		if (st->amask.n > 0)
			ExplainPropertyUInteger("Fragments Skipped by Assignment", NULL, st->fragments_masked, es);
		ExplainPropertyUInteger("Rows Removed by Deletion Vectors", NULL, st->rows_deleted, es);
		if (st->filter && ltfdw_filter_text(st->filter))
		{
			uint64		filtered = st->rows_filtered;

			if (st->scanner)	/* still open (LIMIT) */
			{
				lt_scan_stats stats;

				lt_fragment_scanner_stats(st->scanner, &stats);
				filtered += stats.rows_filtered;
			}
			ExplainPropertyUInteger("Rows Removed by Lance Filter", NULL, filtered, es);
		}
		ExplainPropertyUInteger("Bytes Read", NULL, st->bytes_read, es);
		ExplainPropertyUInteger("Read Requests", NULL, st->read_requests, es);
	}
}
