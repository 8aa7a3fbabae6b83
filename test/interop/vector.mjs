#!/usr/bin/env node
// vector.mjs: lt-inspect's IVF search against the real Lance engine's (lancedb 0.31.0 = lance 8.0.0).
//
//   node vector.mjs WORKDIR LT_INSPECT
//
// For each distance type (l2, cosine, dot): a dataset of clustered fixed_size_list<float32, 16> vectors in three
// fragments (seeded PRNG) with an IVF_FLAT index of 8 partitions built by the engine, then one more fragment the
// index does not cover and deletions in every fragment. For random queries, k = 10 and nprobes 1, 3 and 8, the
// engine's vectorSearch (withRowId) is compared with `lt-inspect vector-search --nprobes N`: the same row ids in the
// same order, distances equal within 1e-4 (relative) after the engine's conventions (squared L2, 1 - dot).
// The exact search (`--exact` / bypassVectorIndex) is compared too; queries lie between two clusters, and at least one
// query per distance type must get another answer with one probe than exactly (else the routing went untested). Prints one line per failing query and ends
// with "N passed, M failed".
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

import { A, lancedb } from "./engine.mjs"; // LT_REF=8|12 picks the engine

const [work, inspect] = process.argv.slice(2);
if (!work || !inspect) { console.error("usage: node vector.mjs WORKDIR LT_INSPECT"); process.exit(2); }
const DIM = 16, CLUSTERS = 12, NPART = 8, K = 10;

let seed = 12345;
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const centers = Array.from({ length: CLUSTERS }, () => Array.from({ length: DIM }, () => rnd() * 20 - 10));
const vecOf = () => { const c = centers[Math.floor(rnd() * CLUSTERS)]; return c.map((x) => Math.fround(x + (rnd() - 0.5) * 4)); };
const schema = new A.Schema([
  new A.Field("id", new A.Int64(), false),
  new A.Field("vec", new A.FixedSizeList(DIM, new A.Field("item", new A.Float32(), true)), false),
]);
const rows = (start, n) => Array.from({ length: n }, (_, i) => ({ id: BigInt(start + i), vec: vecOf() }));

let passed = 0, failed = 0;
const fail = (msg) => { failed++; console.log("FAIL " + msg); };

for (const metric of ["l2", "cosine", "dot"]) {
  const dbdir = path.join(work, metric);
  fs.rmSync(dbdir, { recursive: true, force: true });
  const db = await lancedb.connect(dbdir);
  const tbl = await db.createTable("v", rows(0, 1000), { schema });
  await tbl.add(rows(1000, 1000));
  await tbl.add(rows(2000, 1000));
  await tbl.createIndex("vec", { config: lancedb.Index.ivfFlat({ numPartitions: NPART, distanceType: metric }) });
  await tbl.add(rows(3000, 400));                 // a fragment the index does not cover
  await tbl.delete("id % 11 = 5");
  const ds = path.join(dbdir, "v.lance");
  execFileSync("chmod", ["-R", "a+rX", dbdir]);

  let routed = 0;                                 // queries whose nprobes 1 answer is not the exact one
  for (let qi = 0; qi < 8; qi++) {
    // between two clusters: which partitions are probed decides the answer
    const a = centers[Math.floor(rnd() * CLUSTERS)], b = centers[Math.floor(rnd() * CLUSTERS)];
    const q = a.map((x, i) => Math.fround((x + b[i]) / 2 + (rnd() - 0.5) * 2));
    const answers = {};
    for (const np of [1, 3, 8, 0]) {
      let vq = tbl.vectorSearch(q).distanceType(metric).limit(K).withRowId();
      vq = np === 0 ? vq.bypassVectorIndex() : vq.nprobes(np);
      const ref = (await vq.toArray()).map((r) => ({ id: BigInt(r._rowid).toString(), d: r._distance }));
      const args = ["vector-search", ds, "--column", "vec", "--query", q.join(","), "--k", String(K), "--metric", metric];
      if (np === 0) args.push("--exact"); else args.push("--nprobes", String(np));
      const out = execFileSync(inspect, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
        .trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const ours = out.map((r) => ({ id: r._rowid, d: metric === "l2" ? r._distance * r._distance : metric === "dot" ? r._distance + 1 : r._distance }));
      const what = `${metric} query ${qi} nprobes ${np || "exact"}`;
      const ids = (l) => l.map((r) => r.id).join(",");
      answers[np] = ids(ref);
      if (ids(ours) !== ids(ref)) { fail(`${what}: ids ${ids(ours)} vs engine ${ids(ref)}`); continue; }
      const bad = ours.findIndex((r, i) => Math.abs(r.d - ref[i].d) > 1e-4 * Math.max(1, Math.abs(ref[i].d)));
      if (bad >= 0) { fail(`${what}: distance of row ${ours[bad].id} ${ours[bad].d} vs engine ${ref[bad].d}`); continue; }
      passed++;
    }
    if (answers[1] !== answers[0]) routed++;
  }
  // the test must be able to fail: with one probe some answers differ from the exact ones
  if (routed === 0) fail(`${metric}: no query's nprobes 1 answer differs from the exact one (routing untested)`);
  else { passed++; console.log(`${metric}: ${routed} of 8 queries answered differently with 1 probe than exactly`); }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
