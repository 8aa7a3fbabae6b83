#!/usr/bin/env node
// The reference side of bench/run.sh, on the real Lance engine (the pinned @lancedb/lancedb in test/interop).
//
//   node ref_bench.mjs make <dir> <rows>            write the benchmark table (6 columns: ints, floats, strings)
//   node ref_bench.mjs scan <dir> <repeat> [cols]   time full scans (toArrow) per column and of the whole table
//
// scan prints "RESULT column <name> <seconds> <rows>" and "RESULT table <seconds> <rows>", best of <repeat>.
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../test/interop/package.json"));
const A = require("apache-arrow");
process.env.LANCEDB_LOG ??= "error";
const lancedb = require("@lancedb/lancedb");

// lancedb addresses tables as <db>/<name>.lance: reach <dir> through a symlink in a private temp db
async function open(dir, create) {
  const db = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-"));
  if (!create) fs.symlinkSync(path.resolve(dir), path.join(db, "t.lance"));
  return { conn: await lancedb.connect(db), db };
}

// Large batches: the default (1024 rows) spends most of its time crossing into JS, not decoding.
const BATCH = 1 << 17;

const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
  "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"];

function batch(start, n) {
  const i32 = new Int32Array(n), i64 = new BigInt64Array(n), f32 = new Float32Array(n), f64 = new Float64Array(n);
  const cat = [], text = [];
  let x = start * 2654435761 % 4294967296;
  for (let k = 0; k < n; k++) {
    const i = start + k;
    x = (x * 1103515245 + 12345) % 2147483648;
    i32[k] = i % 100000;
    i64[k] = BigInt(i) * 3n + 1000000000n;
    f32[k] = (x % 1000000) / 1000;
    f64[k] = i * 0.25 - x / 7;
    cat.push(WORDS[x % WORDS.length]);
    text.push(`${WORDS[i % 20]}-${WORDS[(x >> 5) % 20]} #${x % 100000}`);
  }
  return A.tableFromArrays({ i32, i64, f32, f64, cat, text });
}

async function make(dir, rows) {
  const { conn, db } = await open(dir, true);
  const step = 1 << 20;
  let tbl = null;
  for (let s = 0; s < rows; s += step) {
    const b = batch(s, Math.min(step, rows - s));
    if (!tbl) tbl = await conn.createTable("t", b);
    else await tbl.add(b);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(path.join(db, "t.lance"), dir);
  fs.rmSync(db, { recursive: true, force: true });
}

async function time(fn, repeat) {
  let best = Infinity, rows = 0;
  for (let r = 0; r < repeat; r++) {
    const t0 = process.hrtime.bigint();
    rows = await fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return [best, rows];
}

async function scan(dir, repeat, only) {
  const { conn, db } = await open(dir, false);
  const tbl = await conn.openTable("t");
  const names = (await tbl.schema()).fields.map((f) => f.name).filter((n) => !only || only.split(",").includes(n));
  for (const name of names) {
    const [s, rows] = await time(async () => (await tbl.query().select([name]).toArrow({ maxBatchLength: BATCH })).numRows, repeat);
    console.log(`RESULT column ${name} ${s.toFixed(6)} ${rows}`);
  }
  const [s, rows] = await time(async () => (await tbl.query().select(names).toArrow({ maxBatchLength: BATCH })).numRows, repeat);
  console.log(`RESULT table ${s.toFixed(6)} ${rows}`);
  fs.rmSync(db, { recursive: true, force: true });
}

const [cmd, dir, a, b] = process.argv.slice(2);
if (cmd === "make" && dir && a) await make(dir, Number(a));
else if (cmd === "scan" && dir) await scan(dir, Number(a || 3), b);
else { console.error("usage: ref_bench.mjs make <dir> <rows> | scan <dir> [repeat] [cols]"); process.exit(2); }
