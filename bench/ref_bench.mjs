#!/usr/bin/env node
// The reference side of bench/run.sh, on the real Lance engine (the pinned @lancedb/lancedb in test/interop).
//
//   node ref_bench.mjs make <dir> <rows>            write the benchmark table (6 columns: ints, floats, strings)
//   node ref_bench.mjs scan <dir> <repeat> [cols]   time full scans (toArrow) per column and of the whole table
//   node ref_bench.mjs make-scan <dir> <rows>       write the bench/scan.sh table (id, grp, dt, x, s, t; issue 3)
//   node ref_bench.mjs index <dir> [column]         add a btree index on column (dt) to <dir> (a copy: bench/scan.sh,
//                                                   bench/merge.sh)
//   node ref_bench.mjs queries <dir> <repeat> <lo> <hi>   time the bench/scan.sh queries ([lo, hi]: the dt range)
//
// scan prints "RESULT column <name> <seconds> <rows>" and "RESULT table <seconds> <rows>", best of <repeat>.
// queries prints "RESULT <query> <seconds> <value>" (best of <repeat> after one warm-up run; value: the
// query's answer, so that bench/scan.sh can check it against PostgreSQL's).
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

// --- bench/scan.sh: the table of issue 3 -------------------------------------------------------------
// id int64 = i; grp int32 = i % 1000; dt date in 100 ascending runs from 2024-01-01 (ROWS/100 rows a day);
// x float64 pseudo-random; s 8-12 chars; t exactly 80 chars. Plain Utf8 (not dictionary) for s and t.
export const DAY0 = Date.UTC(2024, 0, 1) / 86400000;

function scanBatch(start, n, rows) {
  const id = new BigInt64Array(n), grp = new Int32Array(n), dt = new Int32Array(n), x = new Float64Array(n);
  const s = new Array(n), t = new Array(n);
  let r = Math.imul(start, 2654435761) >>> 0;
  const next = () => (r = (Math.imul(r, 1664525) + 1013904223) >>> 0) >>> 8;	// 24-bit LCG output
  for (let k = 0; k < n; k++) {
    const i = start + k;
    id[k] = BigInt(i);
    grp[k] = i % 1000;
    dt[k] = DAY0 + Math.floor((i * 100) / rows);
    x[k] = next() / 1000 - 8000;
    s[k] = `${WORDS[next() % 20]}-${String(i % 1000).padStart(3, "0")}`.padEnd(8, "x").slice(0, 12);
    let u = `${i}`;
    while (u.length < 80) u += " " + WORDS[next() % 20];
    t[k] = u.slice(0, 80);
  }
  const v = (type, data) => A.makeVector(A.makeData({ type, length: n, data }));
  return new A.Table({
    id: v(new A.Int64(), id), grp: v(new A.Int32(), grp), dt: v(new A.DateDay(), dt), x: v(new A.Float64(), x),
    s: A.vectorFromArray(s, new A.Utf8()), t: A.vectorFromArray(t, new A.Utf8()),
  });
}

async function makeScan(dir, rows) {
  const { conn, db } = await open(dir, true);
  const step = 1 << 20;
  let tbl = null;
  for (let s = 0; s < rows; s += step) {
    const b = scanBatch(s, Math.min(step, rows - s), rows);
    if (!tbl) tbl = await conn.createTable("t", b);
    else await tbl.add(b);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(path.join(db, "t.lance"), dir);
  fs.rmSync(db, { recursive: true, force: true });
}

async function index(dir, column) {
  const { conn, db } = await open(dir, false);
  const tbl = await conn.openTable("t");
  await tbl.createIndex(column, { config: lancedb.Index.btree() });
  fs.rmSync(db, { recursive: true, force: true });
}

function sumColumn(table, name) {
  let sum = 0;
  const col = table.getChild(name);
  if (!col) return 0;
  for (const d of col.data) {
    const v = d.values;
    for (let k = d.offset, e = d.offset + d.length; k < e; k++) sum += v[k];
  }
  return sum;
}

async function queries(dir, repeat, lo, hi) {
  const { conn, db } = await open(dir, false);
  const tbl = await conn.openTable("t");
  const names = (await tbl.schema()).fields.map((f) => f.name);
  const opts = { maxBatchLength: BATCH };
  const where = `dt >= CAST('${lo}' AS DATE) AND dt <= CAST('${hi}' AS DATE)`;
  const qs = {
    count: async () => await tbl.countRows(),
    sum_grp: async () => sumColumn(await tbl.query().select(["grp"]).toArrow(opts), "grp"),
    sum_x: async () => sumColumn(await tbl.query().select(["x"]).toArrow(opts), "x"),
    sum_x_dt: async () => sumColumn(await tbl.query().select(["x"]).where(where).toArrow(opts), "x"),
    limit10: async () => (await tbl.query().limit(10).toArrow()).getChild("id").get(0),	// the first id, like psql
    full: async () => (await tbl.query().select(names).toArrow(opts)).numRows,
  };
  for (const [name, fn] of Object.entries(qs)) {
    let value = await fn(), best = Infinity;
    for (let r = 0; r < repeat; r++) {
      const t0 = process.hrtime.bigint();
      value = await fn();
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
    }
    console.log(`RESULT ${name} ${best.toFixed(6)} ${value}`);
  }
  fs.rmSync(db, { recursive: true, force: true });
}

const [cmd, dir, a, b, c] = process.argv.slice(2);
if (cmd === "make" && dir && a) await make(dir, Number(a));
else if (cmd === "scan" && dir) await scan(dir, Number(a || 3), b);
else if (cmd === "make-scan" && dir && a) await makeScan(dir, Number(a));
else if (cmd === "index" && dir) await index(dir, a || "dt");
else if (cmd === "queries" && dir && b && c) await queries(dir, Number(a || 3), b, c);
else {
  console.error("usage: ref_bench.mjs make <dir> <rows> | scan <dir> [repeat] [cols] | make-scan <dir> <rows>\n" +
    "       | index <dir> [column] | queries <dir> <repeat> <lo> <hi>");
  process.exit(2);
}
