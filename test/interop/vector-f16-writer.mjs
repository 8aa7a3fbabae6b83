#!/usr/bin/env node
// vector-f16-writer.mjs: whose arithmetic lt_fdw scores a float16 IVF_PQ with when another engine committed later.
// Lance 8 and Lance 12 score float16 PQ codes differently (Lance 8 normalizes a cosine query in float16 arithmetic
// and multiplies and adds separately; Lance 12 fuses them), and their index files are alike: lt_fdw takes the writer
// of the manifest of the version that added the index (lt_vsearch.c). Three steps, each with its engine (LT_REF):
//
//   LT_REF=8  node vector-f16-writer.mjs DIR build          Lance 8 builds DIR/pq.lance: float16 vectors (16-d, three
//                                                           fragments), IVF_PQ cosine (8 partitions, 4 sub-vectors)
//   LT_REF=12 node vector-f16-writer.mjs DIR delete         Lance 12 deletes a row: the latest manifest is Lance 12's,
//                                                           the index still covers every fragment
//   LT_REF=8  node vector-f16-writer.mjs DIR compare LT_INSPECT
//                                                           Lance 8's code scores (unrefined, nprobes 1 and 3, 20
//                                                           queries) against lt-inspect's at the latest version: the
//                                                           same rows in order, the same floats (3e-8 relative)
//
// Prints "N passed, M failed" (compare) and exits 1 on a failure.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { A, lancedb, REF } from "./engine.mjs";
import { prng } from "./vector-common.mjs";

const [dir, mode, inspect] = process.argv.slice(2);
if (!dir || !["build", "delete", "compare"].includes(mode) || (mode === "compare" && !inspect)) {
  console.error("usage: node vector-f16-writer.mjs DIR build|delete|compare [LT_INSPECT]");
  process.exit(2);
}
const DIM = 16, K = 10;
const rnd = prng(4711);
const centers = Array.from({ length: 12 }, () => Array.from({ length: DIM }, () => rnd() * 20 - 10));
// float16 values (a grid of 1/64 below 16), so the engine's rounding of a query to float16 keeps it
const grid = (x) => Math.round(x * 64) / 64;
const rows = (start, n) => Array.from({ length: n }, (_, i) => {
  const c = centers[Math.floor(rnd() * centers.length)];
  return { id: BigInt(start + i), vec: c.map((x) => grid(x + (rnd() - 0.5) * 4)) };
});
const ds = path.join(dir, "pq.lance");

if (mode === "build") {
  if (REF !== "8") { console.error("build with LT_REF=8"); process.exit(2); }
  fs.rmSync(dir, { recursive: true, force: true });
  const schema = new A.Schema([new A.Field("id", new A.Int64(), false),
    new A.Field("vec", new A.FixedSizeList(DIM, new A.Field("item", new A.Float16(), true)), false)]);
  const db = await lancedb.connect(dir);
  const t = await db.createTable("pq", rows(0, 1000), { schema });
  await t.add(rows(1000, 1000));
  await t.add(rows(2000, 1000));
  await t.createIndex("vec", { config: lancedb.Index.ivfPq({ numPartitions: 8, numSubVectors: 4, distanceType: "cosine" }) });
  console.log(`Lance ${REF} built ${ds} at version ${await t.version()}`);
  process.exit(0);
}
const t = await (await lancedb.connect(dir)).openTable("pq");
if (mode === "delete") {
  if (REF !== "12") { console.error("delete with LT_REF=12"); process.exit(2); }
  await t.delete("id = 0");
  console.log(`Lance ${REF} deleted a row: version ${await t.version()}`);
  process.exit(0);
}
if (REF !== "8") { console.error("compare with LT_REF=8"); process.exit(2); }
let passed = 0, failed = 0;
const q_rnd = prng(99);
for (let qi = 0; qi < 20; qi++) {
  const q = Array.from({ length: DIM }, () => grid(q_rnd() * 16 - 8));
  for (const np of [1, 3]) {
    const ref = (await t.vectorSearch(Float32Array.from(q)).distanceType("cosine").limit(K).nprobes(np).withRowId()
      .select(["id"]).toArray()).map((r) => ({ id: String(r.id), d: r._distance }));
    const out = execFileSync(inspect, ["vector-search", ds, "--column", "vec", "--query", q.join(","), "--k", String(K),
      "--metric", "cosine", "--nprobes", String(np)], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
      .trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    // row ids are addresses: fragment << 32 | offset, 1000 rows a fragment; cosine PQ scores are twice the distance
    const ours = out.map((r) => { const a = BigInt(r._rowid); return { id: String((a >> 32n) * 1000n + (a & 0xffffffffn)), d: 2 * r._distance }; });
    const last = ref.length ? ref[ref.length - 1].d : 0;
    if (ours.length === ref.length && ours.every((r, i) => Math.abs(r.d - ref[i].d) <= 3e-8 * Math.abs(ref[i].d) &&
      (r.id === ref[i].id || ref[i].d === last))) passed++;
    else {
      failed++;
      console.log(`FAIL query ${qi} nprobes ${np} (${q.join(",")}):\n     ours   ${ours.map((r) => `${r.id}:${r.d}`).join(" ")}\n` +
        `     engine ${ref.map((r) => `${r.id}:${r.d}`).join(" ")}`);
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
