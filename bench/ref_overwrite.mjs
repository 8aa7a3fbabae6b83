#!/usr/bin/env node
// The reference side of bench/overwrite.sh, on the real Lance engine (the pinned @lancedb/lancedb).
//
//   node ref_overwrite.mjs empty <dir>                     an empty dataset (id int64, dt date32, s utf8, x float64), 2.1
//   node ref_overwrite.mjs index <dir> <column> <kind>     createIndex (btree | bitmap)
//   node ref_overwrite.mjs replace <dir> <day> <rows> <first_id> [repeat]
//        the engine's own replace of one partition: delete("dt = <day>") then add(<rows> new rows of that day):
//        two commits. The rows are built in memory before the clock starts. Prints
//        "RESULT replace <delete s> <add s> <total s>" (best total of <repeat>, each on the next day: <day> + k).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { A, lancedb, openAt } from "./ref_engine.mjs";

const schema = new A.Schema([new A.Field("id", new A.Int64(), false), new A.Field("dt", new A.DateDay(), true),
  new A.Field("s", new A.Utf8(), true), new A.Field("x", new A.Float64(), true)]);
const dayMs = (d) => Date.parse(`${d}T00:00:00Z`);
const addDays = (d, k) => new Date(dayMs(d) + k * 86400000).toISOString().slice(0, 10);
function rowsOf(day, n, first) {
  const id = new BigInt64Array(n), x = new Float64Array(n), s = [], dt = new Int32Array(n).fill(dayMs(day) / 86400000);
  for (let i = 0; i < n; i++) { id[i] = BigInt(first + i); x[i] = (first + i) * 0.5; s.push(`row ${first + i}`); }
  return new A.Table(schema, { id: A.makeVector(id), dt: A.makeVector({ type: new A.DateDay(), data: dt }) ?? null,
    s: A.vectorFromArray(s, new A.Utf8()), x: A.makeVector(x) });
}
const [cmd, dir, ...a] = process.argv.slice(2);
if (cmd === "empty") {
  const db = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-"));
  await (await lancedb.connect(db)).createEmptyTable("t", schema, { storageOptions: { new_table_data_storage_version: "2.1" } });
  fs.renameSync(path.join(db, "t.lance"), dir);
} else if (cmd === "index") {
  const t = await openAt(dir);
  await t.createIndex(a[0], { config: lancedb.Index[a[1]]() });
} else if (cmd === "replace") {
  const [day, n, first, repeat = "1"] = a;
  let best = null;
  for (let k = 0; k < Number(repeat); k++) {
    const d = addDays(day, k), t = await openAt(dir), rows = rowsOf(d, Number(n), Number(first) + k * Number(n));
    const t0 = process.hrtime.bigint();
    await t.delete(`dt = date '${d}'`);
    const t1 = process.hrtime.bigint();
    await t.add(rows);
    const t2 = process.hrtime.bigint();
    const r = [Number(t1 - t0) / 1e9, Number(t2 - t1) / 1e9, Number(t2 - t0) / 1e9];
    if (!best || r[2] < best[2]) best = r;
  }
  console.log(`RESULT replace ${best.map((x) => x.toFixed(4)).join(" ")}`);
} else {
  console.error("usage: ref_overwrite.mjs empty|index|replace ..."); process.exit(2);
}
