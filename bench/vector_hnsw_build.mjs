#!/usr/bin/env node
// bench/vector_hnsw_build.mjs — IVF_HNSW_SQ build time and index size: lt_fdw (`lt-inspect create-index --kind
// ivf_hnsw_sq`) beside the Lance engine's own build of the same rows (Lance 8, and Lance 12 when installed), the
// same parameters (PARTITIONS partitions, m 20, ef_construction 150, l2). Then recall@10 at every partition over 20
// queries (dataset vectors plus noise; exact answer by lt-inspect --exact), each index searched by its engine.
//
//   node bench/vector_hnsw_build.mjs WORKDIR LT_INSPECT [ROWS] [DIM] [PARTITIONS]   (defaults 200000 128 64)
//
// Prints one JSON line per build: wall seconds, CPU seconds (lt-inspect: user + sys of the child from
// /usr/bin/time; the engine: process.cpuUsage() of this node process, all its threads), bytes of the index files.
// Nothing is asserted.
import fs from "node:fs";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const HERE = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(HERE, "..", "test", "interop", "package.json"));
process.env.LANCEDB_LOG ??= "error";
const lancedb = await import(require.resolve("@lancedb/lancedb"));
const A = require("apache-arrow");
const L12 = path.join(HERE, "..", "test", "interop", "lance12", "node_modules", "@lancedb", "lancedb");
const lancedb12 = fs.existsSync(L12) ? await import(path.join(L12, "dist", "index.js")) : null;

const [work, inspect, rowsArg, dimArg, partArg] = process.argv.slice(2);
if (!work || !inspect) { console.error("usage: vector_hnsw_build.mjs WORKDIR LT_INSPECT [ROWS] [DIM] [PARTITIONS]"); process.exit(2); }
const ROWS = Number(rowsArg || 200000), DIM = Number(dimArg || 128), NPART = Number(partArg || 64), K = 10;
let seed = 12345;
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const centers = Array.from({ length: 64 }, () => Float32Array.from({ length: DIM }, () => rnd() * 20 - 10));
const schema = new A.Schema([new A.Field("id", new A.Int64(), false),
  new A.Field("vec", new A.FixedSizeList(DIM, new A.Field("item", new A.Float32(), true)), false)]);
const batch = (start, n) => {
  const vals = new Float32Array(n * DIM), ids = new BigInt64Array(n);
  for (let i = 0; i < n; i++) {
    ids[i] = BigInt(start + i);
    const c = centers[Math.floor(rnd() * centers.length)];
    for (let d = 0; d < DIM; d++) vals[i * DIM + d] = c[d] + (rnd() - 0.5) * 6;
  }
  const vec = A.makeData({ type: schema.fields[1].type, length: n, nullCount: 0, child: A.makeData({ type: new A.Float32(), length: n * DIM, data: vals }) });
  return new A.RecordBatch(schema, A.makeData({ type: new A.Struct(schema.fields), length: n, nullCount: 0, children: [
    A.makeData({ type: new A.Int64(), length: n, data: ids }), vec] }));
};
const base = path.join(work, "base");
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(base, { recursive: true });
{
  const db = await lancedb.connect(base);
  let tbl = null;
  for (let at = 0; at < ROWS; at += 50000) {
    const b = batch(at, Math.min(50000, ROWS - at));
    const t = new A.Table([b]);
    if (!tbl) tbl = await db.createTable("v", t, { schema }); else await tbl.add(t);
  }
}
const dirSize = (d) => fs.readdirSync(d).reduce((s, f) => s + fs.statSync(path.join(d, f)).size, 0);
const indexBytes = (ds) => fs.readdirSync(path.join(ds, "_indices")).reduce((s, u) => s + dirSize(path.join(ds, "_indices", u)), 0);
const results = {};

// lt_fdw
{
  const dir = path.join(work, "lt");
  fs.cpSync(base, dir, { recursive: true });
  const ds = path.join(dir, "v.lance");
  const t0 = process.hrtime.bigint();
  const p = spawnSync("/usr/bin/time", ["-f", "TIME %U %S %M", inspect, "create-index", ds, "--column", "vec", "--kind", "ivf_hnsw_sq",
    "--num-partitions", String(NPART), "--metric", "l2", "--max-memory-mb", "4096"], { encoding: "utf8" });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (p.status !== 0) { console.error(p.stderr); process.exit(1); }
  const r = JSON.parse(p.stdout);
  const [u, sy, rss] = p.stderr.split("\n").find((l) => l.startsWith("TIME ")).split(" ").slice(1).map(Number);
  results.lt = { ds, engine: null };
  console.log(JSON.stringify({ who: "lt_fdw", rows: ROWS, dim: DIM, partitions: NPART, wall_s: +wall.toFixed(2), cpu_s: +(u + sy).toFixed(2),
    max_rss_mb: Math.round(rss / 1024), bytes: indexBytes(ds) }));
}
// the engines
for (const [who, ldb] of [["lance8", lancedb], ["lance12", lancedb12]]) {
  if (!ldb) continue;
  const dir = path.join(work, who);
  fs.cpSync(base, dir, { recursive: true });
  const tbl = await (await ldb.connect(dir)).openTable("v");
  const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
  await tbl.createIndex("vec", { config: ldb.Index.hnswSq({ numPartitions: NPART, distanceType: "l2", m: 20, efConstruction: 150 }) });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9, cpu = process.cpuUsage(c0);
  results[who] = { ds: path.join(dir, "v.lance"), tbl };
  console.log(JSON.stringify({ who, rows: ROWS, dim: DIM, partitions: NPART, wall_s: +wall.toFixed(2), cpu_s: +((cpu.user + cpu.system) / 1e6).toFixed(2), bytes: indexBytes(path.join(dir, "v.lance")) }));
}
// recall@10 at every partition, default ef and ef 100
const qs = Array.from({ length: 20 }, () => { const c = centers[Math.floor(rnd() * centers.length)]; return Array.from(c, (x) => Math.fround(x + (rnd() - 0.5) * 6)); });
const lt = (ds, q, extra) => execFileSync(inspect, ["vector-search", ds, "--column", "vec", "--query", q.join(","), "--k", String(K), ...extra],
  { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim().split("\n").map((l) => JSON.parse(l)._rowid);
for (const ef of [0, 100]) {
  const rec = {};
  for (const q of qs) {
    const ex = new Set(lt(results.lt.ds, q, ["--exact"]));
    const add = (k, ids) => { rec[k] = (rec[k] ?? 0) + ids.filter((x) => ex.has(x)).length / K / qs.length; };
    add("lt_fdw", lt(results.lt.ds, q, ["--nprobes", String(NPART), ...(ef ? ["--ef", String(ef)] : [])]));
    for (const who of ["lance8", "lance12"]) {
      if (!results[who]) continue;
      let vq = results[who].tbl.vectorSearch(q).distanceType("l2").limit(K).nprobes(NPART).withRowId();
      if (ef) vq = vq.ef(ef);
      add(who, (await vq.toArray()).map((r) => BigInt(r._rowid).toString()));
    }
  }
  console.log(JSON.stringify({ recall_at_10: Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, +v.toFixed(3)])), nprobes: NPART, ef: ef || "default" }));
}
