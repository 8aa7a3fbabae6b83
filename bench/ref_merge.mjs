#!/usr/bin/env node
// The reference side of bench/merge.sh, on the real Lance engine (the pinned @lancedb/lancedb in test/interop).
//
//   node ref_merge.mjs merge <base> <work> <modulus> <repeat>
//
// Reads the rows of dataset <base> with id % <modulus> = 0, x + 1 (the source, in memory before the clock
// starts), then times mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll() of them into a
// fresh copy of <base> at <work> (best of <repeat>, a fresh copy each time).
// prints "RESULT merge <seconds> <source rows> <inserted> <updated>".
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

async function merge(base, work, modulus, repeat) {
  const src = await (await openAt(base)).query().where(`id % ${modulus} = 0`)
    .select({ id: "id", grp: "grp", dt: "dt", x: "x + 1.0", s: "s", t: "t" }).toArrow({ maxBatchLength: 1 << 20 });
  let best = Infinity, res = null;
  for (let r = 0; r < repeat; r++) {
    fs.rmSync(work, { recursive: true, force: true });
    fs.cpSync(base, work, { recursive: true });
    const tbl = await openAt(work);
    const t0 = process.hrtime.bigint();
    res = await tbl.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(src);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  console.log(`RESULT merge ${best} ${src.numRows} ${res.numInsertedRows} ${res.numUpdatedRows}`);
}

const [cmd, base, work, modulus, repeat] = process.argv.slice(2);
if (cmd === "merge" && base && work && modulus) await merge(base, work, Number(modulus), Number(repeat || 3));
else {
  console.error("usage: ref_merge.mjs merge <base> <work> <modulus> <repeat>");
  process.exit(2);
}
