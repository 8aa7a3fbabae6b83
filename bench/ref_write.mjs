#!/usr/bin/env node
// The reference side of bench/write.sh, on the real Lance engine (the pinned @lancedb/lancedb in test/interop).
//
//   node ref_write.mjs add <src> <dst> <repeat>     read every row of dataset <src> into memory, then time
//                                                   add() of those rows into a new dataset at <dst> with
//                                                   the same schema (best of <repeat>, a fresh dataset each time)
//
// prints "RESULT add <seconds> <rows> <cpu seconds>" (cpu: user + system time of the process during that
// add(), all its threads); the last <dst> written stays for the file size comparison.
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../test/interop/package.json"));
process.env.LANCEDB_LOG ??= "error";
const lancedb = require("@lancedb/lancedb");

// lancedb addresses tables as <db>/<name>.lance: reach a dataset through a symlink in a private temp db
async function openAt(dir) {
  const db = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-"));
  fs.symlinkSync(path.resolve(dir), path.join(db, "t.lance"));
  return (await lancedb.connect(db)).openTable("t");
}

async function add(src, dst, repeat) {
  const rows = await (await openAt(src)).query().toArrow({ maxBatchLength: 1 << 20 });
  const schema = rows.schema;
  let best = Infinity, bestCpu = Infinity;
  for (let r = 0; r < repeat; r++) {
    fs.rmSync(dst, { recursive: true, force: true });
    const db = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-"));
    const tbl = await (await lancedb.connect(db)).createEmptyTable("t", schema);
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await tbl.add(rows);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
    const c = process.cpuUsage(c0);
    bestCpu = Math.min(bestCpu, (c.user + c.system) / 1e6);
    fs.renameSync(path.join(db, "t.lance"), dst);
    fs.rmSync(db, { recursive: true, force: true });
  }
  console.log(`RESULT add ${best.toFixed(6)} ${rows.numRows} ${bestCpu.toFixed(6)}`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "add") await add(args[0], args[1], Number(args[2] || 3));
else { console.error("usage: node ref_write.mjs add <src> <dst> <repeat>"); process.exit(2); }
