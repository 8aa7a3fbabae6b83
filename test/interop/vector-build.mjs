#!/usr/bin/env node
// vector-build.mjs: IVF_FLAT indexes lt_fdw builds (lt_ivf_build.h), opened and searched by the real Lance engine
// (lancedb 0.31.0 = lance 8.0.0; lancedb 0.39.0 = lance 12 when present).
//
//   node vector-build.mjs WORKDIR LT_INSPECT inspect|sql
//
// On copies of the datasets vector.mjs made (WORKDIR/{l2,cosine,dot}/v.lance: four fragments, deletions, the
// engine's own IVF_FLAT "vec_idx"), lt_fdw builds an IVF_FLAT index of 8 partitions under the same name (which
// replaces the engine's) with the dataset's metric: `lt-inspect create-index --kind ivf_flat` (inspect) or
// `lt_create_index(t, 'vec', 'ivf_flat', NULL, 'num_partitions=8, metric=M')` through psql (sql: PGHOST etc. name a
// cluster with lt_fdw and the server "lake" with root WORKDIR). Then, for random queries (between two clusters), k = 10:
//   - the engine lists the index (IvfFlat, every live row indexed, the metric) and its vectorSearch with nprobes 8
//     (every partition) equals its exact search (bypassVectorIndex): ids in order, distances;
//   - with 1 probe, every row the engine returns has its true distance (recomputed here from its vector);
//   - `lt-inspect vector-search` over the same index with 1 and 8 probes equals the engine's (the same partitions
//     are routed to, read from lt_fdw's files by both);
//   - sql: ORDER BY vec <op> q LIMIT k with lt_fdw.nprobes = 8 equals lt_fdw's exact answer (vector_index off);
//   - inspect: two builds of the same data are byte-identical (the fixed seed); Lance 12 opens and searches the index;
//   - the engine then appends a fragment and optimizes the index (a delta segment on top of lt_fdw's), and its
//     search with every partition probed still equals its exact search.
// Prints one line per failing check and ends with "N passed, M failed".
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
process.env.LANCEDB_LOG ??= "error";
process.env.LANCE_INCLUDE_VECTOR_CENTROIDS ??= "false";
const lancedb = await import("@lancedb/lancedb");
const A = require("apache-arrow");

const [work, inspect, mode] = process.argv.slice(2);
if (!work || !inspect || !["inspect", "sql"].includes(mode)) {
  console.error("usage: node vector-build.mjs WORKDIR LT_INSPECT inspect|sql"); process.exit(2);
}
const HERE = path.dirname(new URL(import.meta.url).pathname);
const K = 10, NPART = 8, DIM = 16;
const OPS = { l2: "<->", cosine: "<=>", dot: "<#>" };
let seed = 4242;
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };

let passed = 0, failed = 0;
const fail = (msg) => { failed++; console.log("FAIL " + msg); };
const check = (ok, msg) => { if (ok) passed++; else fail(msg); return ok; };
const psql = (sql) => execFileSync("psql", ["-X", "-q", "-At", "-F", ",", "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-c", sql],
  { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
const cp = (from, to) => { fs.rmSync(to, { recursive: true, force: true }); fs.cpSync(from, to, { recursive: true }); };

// the engine's distance conventions: squared L2, 1 - cosine similarity, 1 - dot
const trueDist = (metric, v, q) => {
  let dot = 0, nv = 0, nq = 0, l2 = 0;
  for (let i = 0; i < q.length; i++) { dot += v[i] * q[i]; nv += v[i] * v[i]; nq += q[i] * q[i]; l2 += (v[i] - q[i]) ** 2; }
  return metric === "l2" ? l2 : metric === "cosine" ? 1 - dot / Math.sqrt(nv * nq) : 1 - dot;
};
const near = (a, b) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b));
const same = (ours, ref) => ours.length === ref.length && ours.every((r, i) => r.id === ref[i].id && near(r.d, ref[i].d));
const show = (l) => l.map((r) => `${r.id}:${r.d.toFixed(5)}`).join(" ");
const engine = async (tbl, q, metric, np) => {
  let vq = tbl.vectorSearch(q).distanceType(metric).limit(K).withRowId();
  vq = np === 0 ? vq.bypassVectorIndex() : vq.nprobes(np);
  return (await vq.toArray()).map((r) => ({ id: BigInt(r._rowid).toString(), d: r._distance, vec: Array.from(r.vec), key: String(r.id) }));
};
const ltInspect = (ds, q, metric, np) =>
  execFileSync(inspect, ["vector-search", ds, "--column", "vec", "--query", q.join(","), "--k", String(K), "--metric", metric, "--nprobes", String(np)],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n").filter(Boolean).map((l) => JSON.parse(l))
    .map((r) => ({ id: r._rowid, d: metric === "l2" ? r._distance * r._distance : metric === "dot" ? r._distance + 1 : r._distance }));

for (const metric of ["l2", "cosine", "dot"]) {
  const dir = path.join(work, `ivfb-${mode}-${metric}`);
  const ds = path.join(dir, "v.lance");
  cp(path.join(work, metric, "v.lance"), ds);
  execFileSync("chmod", ["-R", "a+rwX", dir]);
  const ft = `ivfb_${metric}`;
  try {
    if (mode === "inspect") {
      execFileSync(inspect, ["create-index", ds, "--column", "vec", "--kind", "ivf_flat", "--num-partitions", String(NPART), "--metric", metric],
        { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } else {
      psql(`DROP FOREIGN TABLE IF EXISTS ${ft}; CREATE FOREIGN TABLE ${ft} (id bigint, vec real[]) SERVER lake OPTIONS (path '${path.basename(dir)}/v.lance')`);
      const r = psql(`SELECT index_name, index_kind, rows_indexed FROM lt_create_index('${ft}', 'vec', 'ivf_flat', NULL, 'num_partitions=${NPART}, metric=${metric}')`);
      const live = psql(`SELECT count(*) FROM ${ft}`);
      check(r === `vec_idx,ivf_flat,${live}`, `${metric}: lt_create_index returned ${r} (live rows ${live})`);
    }
  } catch (e) { fail(`${metric}: building the index failed: ${e.stderr || e.message}`); continue; }

  const db = await lancedb.connect(dir);
  const tbl = await db.openTable("v");
  const live = await tbl.countRows();
  const idx = (await tbl.listIndices()).filter((i) => i.name === "vec_idx");
  const stats = await tbl.indexStats("vec_idx");
  check(idx.length === 1 && idx[0].indexType === "IvfFlat" && stats && stats.numIndexedRows === live && stats.numUnindexedRows === 0 &&
    stats.distanceType === metric, `${metric}: the engine lists ${JSON.stringify(idx)} ${JSON.stringify(stats)} (live rows ${live})`);

  const rows = (await tbl.query().select(["id", "vec"]).toArray()).map((r) => ({ id: r.id, vec: Array.from(r.vec) }));
  let routed = 0;
  for (let qi = 0; qi < 6; qi++) {
    const a = rows[Math.floor(rnd() * rows.length)].vec, b = rows[Math.floor(rnd() * rows.length)].vec;
    const q = Array.from(a, (x, i) => Math.fround((x + b[i]) / 2 + (rnd() - 0.5)));
    const exact = await engine(tbl, q, metric, 0);
    const all = await engine(tbl, q, metric, NPART);
    check(same(all, exact), `${metric} q${qi}: engine nprobes ${NPART} ${show(all)}\n       vs exact ${show(exact)}`);
    const one = await engine(tbl, q, metric, 1);
    const wrong = one.find((r) => !near(r.d, trueDist(metric, r.vec, q)));
    check(one.length === K && !wrong, `${metric} q${qi}: nprobes 1 returned ${one.length} rows${wrong ? `, row ${wrong.id} at ${wrong.d} (true ${trueDist(metric, wrong.vec, q)})` : ""}`);
    if (one.map((r) => r.id).join() !== exact.map((r) => r.id).join()) routed++;
    for (const np of [1, NPART]) {
      const ours = ltInspect(ds, q, metric, np), ref = np === 1 ? one : all;
      check(same(ours, ref), `${metric} q${qi}: lt-inspect nprobes ${np} ${show(ours)}\n       vs engine ${show(ref)}`);
    }
    if (mode === "sql") {
      const lit = `'{${q.join(",")}}'::real[]`, op = OPS[metric];
      const sql = (set) => psql(`${set} SELECT id FROM ${ft} ORDER BY vec ${op} ${lit} LIMIT ${K}`).split("\n").join(",");
      const viaIndex = sql(`SET lt_fdw.nprobes = ${NPART};`), viaScan = sql("SET lt_fdw.vector_index = off;");
      check(viaIndex === viaScan && viaIndex === exact.map((r) => r.key).join(","),
        `${metric} q${qi}: SQL through the index ${viaIndex} vs exact ${viaScan} vs engine ${exact.map((r) => r.key).join(",")}`);
    }
  }
  console.log(`${metric}: ${routed} of 6 queries answered differently with 1 probe than exactly`);
  if (mode === "sql") {
    const plan = psql(`SET lt_fdw.nprobes = ${NPART}; EXPLAIN SELECT id FROM ${ft} ORDER BY vec ${OPS[metric]} '{${Array(DIM).fill(1).join(",")}}'::real[] LIMIT 3`);
    check(/vec_idx/.test(plan), `${metric}: EXPLAIN does not name the index: ${plan}`);
  }

  if (mode === "inspect") {
    if (metric === "l2") {
      // the same data, the same seed: the same files
      const again = path.join(work, "ivfb-again");
      cp(path.join(work, metric, "v.lance"), path.join(again, "v.lance"));
      const out = JSON.parse(execFileSync(inspect, ["create-index", path.join(again, "v.lance"), "--column", "vec", "--kind", "ivf_flat",
        "--num-partitions", String(NPART), "--metric", metric], { encoding: "utf8" }));
      const first = (await tbl.listIndices()).find((i) => i.name === "vec_idx").indexUuid;
      const identical = ["index.idx", "auxiliary.idx"].every((f) =>
        fs.readFileSync(path.join(ds, "_indices", first, f)).equals(fs.readFileSync(path.join(again, "v.lance", "_indices", out.uuid, f))));
      check(identical, `${metric}: two builds of the same data differ`);
    }
    const l12 = path.join(HERE, "lance12", "node_modules", "@lancedb", "lancedb");
    if (fs.existsSync(l12)) {
      const lancedb12 = await import(path.join(l12, "dist", "index.js"));
      const t12 = await (await lancedb12.connect(dir)).openTable("v");
      const q = Array.from(rows[7].vec, (x) => x + 0.25);
      const e8 = await engine(tbl, q, metric, 0);
      const r12 = (await t12.vectorSearch(q).distanceType(metric).limit(K).nprobes(NPART).withRowId().toArray())
        .map((r) => ({ id: BigInt(r._rowid).toString(), d: r._distance }));
      const i12 = (await t12.listIndices()).find((i) => i.name === "vec_idx");
      check(i12 && i12.indexType === "IvfFlat" && same(r12, e8), `${metric}: Lance 12 lists ${JSON.stringify(i12)}, searches ${show(r12)}\n       vs exact ${show(e8)}`);
    }
  }

  // the engine carries on from lt_fdw's index: an append, then optimize (a delta segment)
  const schema = new A.Schema([
    new A.Field("id", new A.Int64(), false),
    new A.Field("vec", new A.FixedSizeList(DIM, new A.Field("item", new A.Float32(), true)), false),
  ]);
  await tbl.add(Array.from({ length: 300 }, (_, i) => ({ id: BigInt(10000 + i), vec: Array.from(rows[i].vec, (x) => Math.fround(x + rnd() - 0.5)) })), { schema });
  await tbl.optimize();
  const after = await tbl.indexStats("vec_idx");
  const q = Array.from(rows[3].vec, (x) => x + 0.5);
  const e1 = await engine(tbl, q, metric, NPART), e0 = await engine(tbl, q, metric, 0);
  check(after && after.numUnindexedRows === 0 && after.numIndexedRows === live + 300 && same(e1, e0),
    `${metric}: after the engine's append and optimize: ${JSON.stringify(after)}, ${show(e1)}\n       vs exact ${show(e0)}`);
  if (mode === "sql") {
    execFileSync("chmod", ["-R", "a+rwX", dir]);      // the engine's new files are its user's alone
    const lit = `'{${q.join(",")}}'::real[]`, op = OPS[metric];
    const ids = psql(`SET lt_fdw.nprobes = ${NPART}; SELECT id FROM ${ft} ORDER BY vec ${op} ${lit} LIMIT ${K}`).split("\n").join(",");
    check(ids === e0.map((r) => r.key).join(","), `${metric}: SQL after the engine's optimize ${ids} vs engine ${e0.map((r) => r.key).join(",")}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
