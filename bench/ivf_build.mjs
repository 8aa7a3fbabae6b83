#!/usr/bin/env node
// bench/ivf_build.mjs [ROWS] [DIM] [PARTITIONS] [KIND] [SUB_VECTORS] — IVF_FLAT (KIND ivf_flat, the default) or
// IVF_PQ (ivf_pq, 8-bit codes, SUB_VECTORS default DIM / 16) build time, size and recall@10: lt_fdw
// (`lt-inspect create-index --kind KIND`) beside the Lance engine (createIndex ivfFlat / ivfPq, lancedb 0.31.0), on
// the same clustered float32 vectors (64 clusters, seeded), l2. Recall: 30 queries, the engine's search of each index
// at nprobes 1, 5, 20 (ivf_pq: also 20 with refine 5) against its exact search. Prints one JSON line per builder.
// Default 100000 x 128, 316 partitions.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const require = createRequire(path.join(ROOT, "test/interop/x.mjs"));
const A = require("apache-arrow");
process.env.LANCEDB_LOG ??= "error";
process.env.LANCE_INCLUDE_VECTOR_CENTROIDS ??= "false";
const lancedb = await import(path.join(ROOT, "test/interop/node_modules/@lancedb/lancedb/dist/index.js"));
const [N = 100000, DIM = 128, NP = 316] = process.argv.slice(2, 5).map(Number);
const KIND = process.argv[5] || "ivf_flat";
const NSUB = Number(process.argv[6] || DIM / 16);
let seed = 99;
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const centers = Array.from({ length: 64 }, () => Array.from({ length: DIM }, () => rnd() * 20 - 10));
const vec = () => centers[Math.floor(rnd() * 64)].map((x) => x + (rnd() - 0.5) * 8);
const schema = new A.Schema([new A.Field("id", new A.Int64(), false),
  new A.Field("vec", new A.FixedSizeList(DIM, new A.Field("item", new A.Float32(), true)), false)]);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "lt-ivfbench."));
try {
  for (const who of ["engine", "lt_fdw"]) {
    const dir = path.join(work, who);
    seed = 99;
    const db = await lancedb.connect(dir);
    const t = await db.createTable("v", Array.from({ length: N }, (_, i) => ({ id: BigInt(i), vec: vec() })), { schema });
    const t0 = Date.now();
    if (who === "engine") await t.createIndex("vec", { config: KIND === "ivf_pq" ?
      lancedb.Index.ivfPq({ numPartitions: NP, numSubVectors: NSUB }) : lancedb.Index.ivfFlat({ numPartitions: NP }) });
    else execFileSync(path.join(ROOT, "build/lt-inspect"), ["create-index", path.join(dir, "v.lance"), "--column", "vec",
      "--kind", KIND, "--num-partitions", String(NP), "--max-memory-mb", "4096",
      ...(KIND === "ivf_pq" ? ["--num-sub-vectors", String(NSUB)] : [])]);
    const ms = Date.now() - t0;
    const t2 = await db.openTable("v");
    const recall = {};
    seed = 5;
    for (const [np, rf] of KIND === "ivf_pq" ? [[1, 0], [5, 0], [20, 0], [20, 5]] : [[1, 0], [5, 0], [20, 0]]) {
      let hit = 0;
      for (let q = 0; q < 30; q++) {
        const qv = vec();
        const exact = new Set((await t2.vectorSearch(qv).limit(10).bypassVectorIndex().toArray()).map((r) => String(r.id)));
        let vq = t2.vectorSearch(qv).limit(10).nprobes(np);
        if (rf) vq = vq.refineFactor(rf);
        hit += (await vq.toArray()).filter((r) => exact.has(String(r.id))).length;
      }
      recall[rf ? `${np}_refine${rf}` : np] = +(hit / 300).toFixed(3);
    }
    const ix = (await t2.listIndices())[0];
    console.log(JSON.stringify({ builder: who, kind: KIND, rows: N, dim: DIM, partitions: NP, build_ms: ms, bytes: ix.sizeBytes, recall_at_10: recall }));
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
