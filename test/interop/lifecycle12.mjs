// test/interop/lifecycle12.mjs — Lance 12 (test/interop/lance12, @lancedb/lancedb 0.39.0) reads a dataset:
//   node lifecycle12.mjs DIR [FILTER]   prints {"rows": N, "sum_id": "S", "version": V} (id summed as BigInt)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, "lance12", "package.json"));
const lancedb = require("@lancedb/lancedb");
const [dir, filter] = process.argv.slice(2);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lt-l12-"));
try {
  fs.symlinkSync(path.resolve(dir), path.join(tmp, "t.lance"));
  const tbl = await (await lancedb.connect(tmp)).openTable("t");
  let q = tbl.query().select(["id"]);
  if (filter) q = q.where(filter);
  let rows = 0, sum = 0n;
  for (const b of (await q.toArrow()).batches) {
    const col = b.getChild("id");
    for (let i = 0; i < b.numRows; i++) { rows++; sum += BigInt(col.get(i)); }
  }
  console.log(JSON.stringify({ rows, sum_id: String(sum), version: await tbl.version() }));
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
