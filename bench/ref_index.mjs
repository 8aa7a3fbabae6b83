#!/usr/bin/env node
// The reference side of bench/index.sh, on the real Lance engine (the pinned @lancedb/lancedb in test/interop).
//
//   node ref_index.mjs make <dir> <rows> <fragments> [no-dt-index]
//                                                     id int64 = row number, dt date (100 ascending runs),
//                                                     x float64, s utf8; one fragment per add; then a btree
//                                                     on id and one on dt (the binding cannot build zone maps;
//                                                     no-dt-index: none on dt, for a zone map built elsewhere)
//   node ref_index.mjs queries <dir> <repeat> <queries.json>
//                                                     time each query (best of <repeat> after a warm-up run)
//
// queries.json: [{"name": .., "where": .., "loop": [where, ...] (optional: run these one after the other,
// report the time per query)}]. Prints "RESULT <name> <seconds> <rows>"; with "explain": true also the
// engine's plan on stderr (to check that it uses its scalar index).
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

async function open(dir, create) {
  const db = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-"));
  if (!create) fs.symlinkSync(path.resolve(dir), path.join(db, "t.lance"));
  return { conn: await lancedb.connect(db), db };
}

const DAY0 = 19723;	// 2024-01-01

function batch(start, n, rows) {
  const id = new BigInt64Array(n), dt = new Int32Array(n), x = new Float64Array(n), s = [];
  for (let k = 0; k < n; k++) {
    const i = start + k;
    id[k] = BigInt(i);
    dt[k] = DAY0 + Math.floor(i * 100 / rows);
    x[k] = (i * 7919 % 100003) / 7;
    s.push(`row-${(i * 2654435761) % 1000003}`);
  }
  const v = (t, a) => A.makeVector({ type: t, data: a, length: n });
  return new A.Table({
    id: A.makeVector(id), dt: v(new A.DateDay(), dt), x: A.makeVector(x), s: A.vectorFromArray(s, new A.Utf8()),
  });
}

async function make(dir, rows, fragments, dtIndex) {
  const { conn, db } = await open(dir, true);
  const per = Math.ceil(rows / fragments);
  let tbl = null;
  for (let s = 0; s < rows; s += per) {
    const b = batch(s, Math.min(per, rows - s), rows);
    if (!tbl) tbl = await conn.createTable("t", b);
    else await tbl.add(b);
  }
  await tbl.createIndex("id", { config: lancedb.Index.btree() });
  if (dtIndex) await tbl.createIndex("dt", { config: lancedb.Index.btree() });
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(path.join(db, "t.lance"), dir);
  fs.rmSync(db, { recursive: true, force: true });
}

async function queries(dir, repeat, file) {
  const { conn, db } = await open(dir, false);
  const tbl = await conn.openTable("t");
  const qs = JSON.parse(fs.readFileSync(file, "utf8"));
  const run = async (where) => (await tbl.query().where(where).toArray()).length;
  for (const q of qs) {
    const list = q.loop || [q.where];
    const fn = async () => { let n = 0; for (const w of list) n += await run(w); return n; };
    if (q.explain) console.error(`== ${q.name}\n` + await tbl.query().where(list[0]).explainPlan(true));
    let value = await fn(), best = Infinity;
    for (let r = 0; r < repeat; r++) {
      const t0 = process.hrtime.bigint();
      value = await fn();
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9 / list.length);
    }
    console.log(`RESULT ${q.name} ${best.toFixed(6)} ${value}`);
  }
  fs.rmSync(db, { recursive: true, force: true });
}

const [cmd, dir, a, b, c] = process.argv.slice(2);
if (cmd === "make" && dir && a && b) await make(dir, Number(a), Number(b), c !== "no-dt-index");
else if (cmd === "queries" && dir && b) await queries(dir, Number(a || 5), b);
else {
  console.error("usage: ref_index.mjs make <dir> <rows> <fragments> | queries <dir> <repeat> <queries.json>");
  process.exit(2);
}
