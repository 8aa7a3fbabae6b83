#!/usr/bin/env node
// The reference side of bench/lifecycle.sh, on the real Lance engine (the pinned @lancedb/lancedb in
// test/interop): the same rows as lt_fdw's side, because they are read from the datasets lt_fdw wrote.
//
//   node ref_lifecycle.mjs create <src> <dst>   read every row of dataset <src> into memory (Arrow), then time
//                                               createTable() of those rows as a new dataset at <dst>
//   node ref_lifecycle.mjs compact <dir>        time optimize() of the dataset at <dir> (compaction at the
//                                               engine's default target of 1,048,576 rows per fragment, as
//                                               lt_compact's default; nothing to prune or index here)
//
// Prints "RESULT create <seconds> <rows> <cpu seconds>" and
// "RESULT compact <seconds> <rows after> <cpu seconds> <fragments removed> <fragments added> <fragments after>";
// cpu: user + system time of the process during the call, all its threads (the engine works with a pool of
// threads, one per core).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { lancedb, openAt, measure } from "./ref_engine.mjs";


async function create(src, dst) {
  const rows = await (await openAt(src)).query().toArrow({ maxBatchLength: 1 << 20 });
  fs.rmSync(dst, { recursive: true, force: true });
  const db = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-"));
  const conn = await lancedb.connect(db);
  const m = await measure(() => conn.createTable("t", rows));
  fs.renameSync(path.join(db, "t.lance"), dst);
  fs.rmSync(db, { recursive: true, force: true });
  console.log(`RESULT create ${m.wall.toFixed(6)} ${rows.numRows} ${m.cpu.toFixed(6)}`);
}

async function compact(dir) {
  const tbl = await openAt(dir);
  const m = await measure(() => tbl.optimize());
  const rows = await tbl.countRows();
  const frags = (await tbl.stats()).fragmentStats.numFragments;
  const cs = m.res.compaction;
  console.log(`RESULT compact ${m.wall.toFixed(6)} ${rows} ${m.cpu.toFixed(6)} ${cs.fragmentsRemoved} ${cs.fragmentsAdded} ${frags}`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "create" && args[1]) await create(args[0], args[1]);
else if (cmd === "compact" && args[0]) await compact(args[0]);
else {
  console.error("usage: node ref_lifecycle.mjs create <src> <dst> | compact <dir>");
  process.exit(2);
}
