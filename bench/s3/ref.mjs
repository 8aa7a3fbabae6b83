#!/usr/bin/env node
// bench/s3/ref.mjs — the reference engine (@lancedb/lancedb) on the bench/s3 dataset, over S3 or a local path:
//   node bench/s3/ref.mjs <s3://bucket/prefix/name.lance | /local/name.lance> <repeat> [default|strong]
// prints "RESULT <query> <cold seconds> <warm seconds> <value> cold <requests> <bytes> warm <requests> <bytes>"
// for count, sum, point, range:
//   default  a fresh table handle each run (the engine's session cache still answers what it holds; it checks
//            for a newer version only when a handle is opened)
//   strong   one connection with readConsistencyInterval 0 and one handle: the engine checks for a newer version
//            before every read, as READ COMMITTED does
// cold: the first run on a new connection (table open included); warm: best of <repeat> after it. requests /
// bytes: what the test S3 server (LT_S3_ENDPOINT) saw during the cold run and one warm run (0 on a local path).
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../test/interop/package.json"));
process.env.LANCEDB_LOG ??= "error";
const lancedb = require("@lancedb/lancedb");
const [uri, repeatArg, modeArg] = process.argv.slice(2);
const repeat = Number(repeatArg || 3);
const strong = modeArg === "strong";

async function open() {
  if (uri.startsWith("s3://")) {
    const opts = {
      endpoint: process.env.LT_S3_ENDPOINT, region: "us-east-1", allow_http: "true",
      aws_access_key_id: "S3RVER", aws_secret_access_key: "S3RVER", virtual_hosted_style_request: "false",
    };
    const db = await lancedb.connect(path.posix.dirname(uri),
      { storageOptions: opts, ...(strong ? { readConsistencyInterval: 0 } : {}) });
    return db.openTable(path.posix.basename(uri).replace(/\.lance$/, ""));
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-s3-"));
  fs.symlinkSync(path.resolve(uri), path.join(tmp, "t.lance"));
  return (await lancedb.connect(tmp, strong ? { readConsistencyInterval: 0 } : {})).openTable("t");
}

// the test S3 server's counters (its unsigned control path)
async function admin(what) {
  if (!uri.startsWith("s3://") || !process.env.LT_S3_ENDPOINT) return {};
  return (await fetch(`${process.env.LT_S3_ENDPOINT}/__admin/${what}`)).json();
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
  await admin("reset-stats");
  let s = process.hrtime.bigint();
  const t0 = await open();
  value = await q(t0);
  const cold = Number(process.hrtime.bigint() - s) / 1e9;
  const coldStats = await admin("stats");
  let stats = {};
  for (let i = 0; i < repeat; i++) {
    const t = strong ? t0 : await open();	// default: a fresh handle (no metadata beyond the session cache)
    if (i === repeat - 1) await admin("reset-stats");
    s = process.hrtime.bigint();
    value = await q(t);
    best = Math.min(best, Number(process.hrtime.bigint() - s) / 1e9);
    if (i === repeat - 1) stats = await admin("stats");
  }
  console.log(`RESULT ${name} ${cold.toFixed(4)} ${best.toFixed(4)} ${value} cold ${coldStats.requests ?? 0} req ` +
              `${coldStats.bytes_out ?? 0} B, warm ${stats.requests ?? 0} req ${stats.bytes_out ?? 0} B`);
}
