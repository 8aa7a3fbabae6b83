#!/usr/bin/env node
// The reference side of bench/write.sh and bench/merge.sh, on the real Lance engine (the pinned
// @lancedb/lancedb in test/interop).
//
//   node ref_write.mjs add <src> <dst> <repeat>     read every row of dataset <src> into memory, then time
//                                                   add() of those rows into a new dataset at <dst> with
//                                                   the same schema (best of <repeat>, a fresh dataset each time)
//   node ref_write.mjs merge <base> <work> <modulus> <repeat>
//                                                   read the rows of dataset <base> with id % <modulus> = 0, x + 1
//                                                   (the source, in memory), then time mergeInsert("id")
//                                                   .whenMatchedUpdateAll().whenNotMatchedInsertAll() of them into
//                                                   a copy of <base> at <work> (best of <repeat>, a fresh copy each time)
//
// add prints "RESULT add <seconds> <rows> <cpu seconds>" (cpu: user + system time of the process during that
// add(), all its threads); the last <dst> written stays for the file size comparison. merge prints
// "RESULT merge <seconds> <source rows> <inserted> <updated>".
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { lancedb, openAt, measure } from "./ref_engine.mjs";


async function add(src, dst, repeat) {
  const rows = await (await openAt(src)).query().toArrow({ maxBatchLength: 1 << 20 });
  const schema = rows.schema;
  let best = Infinity, bestCpu = Infinity;
  for (let r = 0; r < repeat; r++) {
    fs.rmSync(dst, { recursive: true, force: true });
    const db = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-"));
    const tbl = await (await lancedb.connect(db)).createEmptyTable("t", schema);
    const m = await measure(() => tbl.add(rows));
    best = Math.min(best, m.wall);
    bestCpu = Math.min(bestCpu, m.cpu);
    fs.renameSync(path.join(db, "t.lance"), dst);
    fs.rmSync(db, { recursive: true, force: true });
  }
  console.log(`RESULT add ${best.toFixed(6)} ${rows.numRows} ${bestCpu.toFixed(6)}`);
}

async function merge(base, work, modulus, repeat) {
  const src = await (await openAt(base)).query().where(`id % ${modulus} = 0`)
    .select({ id: "id", grp: "grp", dt: "dt", x: "x + 1.0", s: "s", t: "t" }).toArrow({ maxBatchLength: 1 << 20 });
  let best = Infinity, res = null;
  for (let r = 0; r < repeat; r++) {
    fs.rmSync(work, { recursive: true, force: true });
    fs.cpSync(base, work, { recursive: true });
    const tbl = await openAt(work);
    const m = await measure(() => tbl.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(src));
    res = m.res;
    best = Math.min(best, m.wall);
  }
  console.log(`RESULT merge ${best} ${src.numRows} ${res.numInsertedRows} ${res.numUpdatedRows}`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "add") await add(args[0], args[1], Number(args[2] || 3));
else if (cmd === "merge" && args[2]) await merge(args[0], args[1], Number(args[2]), Number(args[3] || 3));
else {
  console.error("usage: node ref_write.mjs add <src> <dst> <repeat> | merge <base> <work> <modulus> <repeat>");
  process.exit(2);
}
