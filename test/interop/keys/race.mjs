// test/interop/keys/race.mjs — the reference engine's side of test/interop/keys-race.sh: one process that opens a
// keyed dataset once and, for each contested key in turn, runs the engine's mergeInsert on the key (insert-only),
// and every third key also adds a row of its own (a disjoint key range) and deletes one of the initial rows.
// Prints one JSON line per operation: {op, key, ok, error} (error: the engine's message when it failed).
//
//   node race.mjs DIR FIRST_KEY N_KEYS ADD_BASE
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { lancedb } from "../engine.mjs"; // LT_REF=8|12 picks the engine
const [dir, first, n, addBase] = process.argv.slice(2);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lt-race-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
fs.symlinkSync(path.resolve(dir), path.join(tmp, "t.lance"));
const tbl = await (await lancedb.connect(tmp)).openTable("t");
const schema = await tbl.schema();
const rows = (list) => lancedb.makeArrowTable(list, { schema });
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
async function attempt(op, key, fn) {
  try { const r = await fn(); out({ op, key, ok: true, ...(r && r.numInsertedRows !== undefined ? { inserted: Number(r.numInsertedRows) } : {}) }); }
  catch (e) { out({ op, key, ok: false, error: String(e.message || e).split("\n")[0].slice(0, 300) }); }
}
for (let i = 0; i < Number(n); i++) {
  const k = Number(first) + i;
  await attempt("merge", k, () => tbl.mergeInsert("id").whenNotMatchedInsertAll()
    .execute(rows([{ id: BigInt(k), who: "engine merge", n: BigInt(i) }])));
  if (i % 3 === 0) {
    const a = Number(addBase) + i;
    await attempt("add", a, () => tbl.add(rows([{ id: BigInt(a), who: "engine add", n: BigInt(i) }])));
    await attempt("delete", i / 3, () => tbl.delete(`id = ${i / 3}`));
  }
}
