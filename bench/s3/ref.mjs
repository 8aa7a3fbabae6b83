#!/usr/bin/env node
// bench/s3/ref.mjs — the reference engine (@lancedb/lancedb) on the bench/s3 dataset, over S3 or a local path:
//   node bench/s3/ref.mjs <s3://bucket/prefix/name.lance | /local/name.lance> <repeat>
// prints "RESULT <query> <seconds> <value>" (best of <repeat> after a warm-up) for count, sum, point, range.
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../test/interop/package.json"));
process.env.LANCEDB_LOG ??= "error";
const lancedb = require("@lancedb/lancedb");
const [uri, repeatArg] = process.argv.slice(2);
const repeat = Number(repeatArg || 3);

async function open() {
  if (uri.startsWith("s3://")) {
    const opts = {
      endpoint: process.env.LT_S3_ENDPOINT, region: "us-east-1", allow_http: "true",
      aws_access_key_id: "S3RVER", aws_secret_access_key: "S3RVER", virtual_hosted_style_request: "false",
    };
    const db = await lancedb.connect(path.posix.dirname(uri), { storageOptions: opts });
    return db.openTable(path.posix.basename(uri).replace(/\.lance$/, ""));
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-s3-"));
  fs.symlinkSync(path.resolve(uri), path.join(tmp, "t.lance"));
  return (await lancedb.connect(tmp)).openTable("t");
}

const queries = {
  count: async (t) => t.countRows(),
  sum: async (t) => {
    let s = 0;
    for (const b of (await t.query().select(["x"]).toArrow()).batches) for (const v of b.getChild("x")) s += v;
    return s.toFixed(3);
  },
  point: async (t) => (await t.query().where("id = 123457").select(["id", "s"]).toArray()).length,
  range: async (t) => (await t.query().where("id >= 200000 AND id < 201000").select(["id", "x"]).toArray()).length,
};

for (const [name, q] of Object.entries(queries)) {
  let best = Infinity, value;
  const t0 = await open();
  value = await q(t0);
  for (let i = 0; i < repeat; i++) {
    const t = await open();	// a fresh table handle: no cached metadata beyond the engine's own session cache
    const s = process.hrtime.bigint();
    value = await q(t);
    best = Math.min(best, Number(process.hrtime.bigint() - s) / 1e9);
  }
  console.log(`RESULT ${name} ${best.toFixed(4)} ${value}`);
}
