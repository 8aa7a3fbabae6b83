#!/usr/bin/env node
// bench/ref_vector.mjs — the Lance engine's side of bench/vector.sh.
//
//   node ref_vector.mjs make DIR ROWS DIM PARTITIONS SUBVECTORS   a dataset of clustered float32 vectors (id int64,
//                                                                  cat int32 in 0..99, vec fixed_size_list<float32,
//                                                                  DIM>, note utf8) in fragments of 100,000 rows,
//                                                                  with an IVF_PQ index (8-bit codes) on vec, and
//                                                                  DIR's copies _base (no index), _hnsw (IVF_HNSW_SQ),
//                                                                  _bm (IVF_PQ + bitmap on cat) beside it; build times
//                                                                  and index bytes as JSON
//   node ref_vector.mjs queries DIR N OUT                          N query vectors (a row's vector plus noise) as JSON
//   node ref_vector.mjs search DIR QUERIES REPEAT                  per setting (exact, IVF_PQ and IVF_HNSW_SQ at nprobes
//                                                                  10 / 20 / 50, filtered cat = 7 with and without the
//                                                                  bitmap): the ids of each query's 10 nearest, the
//                                                                  median of each query's best-of-REPEAT latency and the
//                                                                  process's CPU time per query (all threads), JSON
//   node ref_vector.mjs concurrent DIR QUERIES CLIENTS SECONDS     queries per second with CLIENTS searches in flight
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const here = path.dirname(new URL(import.meta.url).pathname);
const interop = path.join(here, "..", "test", "interop");
const A = require(path.join(interop, "node_modules", "apache-arrow"));
process.env.LANCEDB_LOG ??= "error";
const lancedb = await import(path.join(interop, "node_modules", "@lancedb", "lancedb", "dist", "index.js"));

const [cmd, dir, ...args] = process.argv.slice(2);
let seed = 20261202;
const rnd = () => {	// mulberry32: a 31-bit LCG's low bits repeated whole vectors (rows tied at one distance)
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const open = async () => (await lancedb.connect(path.dirname(dir))).openTable(path.basename(dir, ".lance"));

if (cmd === "make") {
  // DIR is the dataset with the engine's IVF_PQ; beside it (same parent): NAME_bm.lance (the same files plus a bitmap
  // index on cat), NAME_hnsw.lance (the same data with the engine's IVF_HNSW_SQ instead) and NAME_base.lance (no
  // index: lt_fdw's own builds start from copies of it). Copies share the data files (hard links; Lance never
  // rewrites a file) and copy the rest. Prints one JSON object: each build's wall and CPU seconds and index bytes.
  const [rows, dim, parts, subs] = args.map(Number);
  const clusters = 64;
  const centers = Array.from({ length: clusters }, () => Float32Array.from({ length: dim }, () => rnd() * 2 - 1));
  const schema = new A.Schema([
    new A.Field("id", new A.Int64(), false),
    new A.Field("cat", new A.Int32(), false),
    new A.Field("vec", new A.FixedSizeList(dim, new A.Field("item", new A.Float32(), true)), false),
    new A.Field("note", new A.Utf8(), true),
  ]);
  const batch = (start, n) => {
    const ids = new BigInt64Array(n), cats = new Int32Array(n), vals = new Float32Array(n * dim), notes = [];
    for (let i = 0; i < n; i++) {
      const c = centers[Math.floor(rnd() * clusters)];
      ids[i] = BigInt(start + i);
      cats[i] = (start + i) % 100;
      for (let j = 0; j < dim; j++) vals[i * dim + j] = c[j] + (rnd() - 0.5) * 0.6;
      notes.push(`row ${start + i}`);
    }
    const vec = A.makeData({ type: schema.fields[2].type, length: n, nullCount: 0,
      child: A.makeData({ type: new A.Float32(), length: n * dim, data: vals }) });
    return new A.RecordBatch(schema, A.makeData({ type: new A.Struct(schema.fields), length: n, nullCount: 0, children: [
      A.makeData({ type: new A.Int64(), length: n, data: ids }), A.makeData({ type: new A.Int32(), length: n, data: cats }),
      vec, A.vectorFromArray(notes, new A.Utf8()).data[0]] }));
  };
  const root = path.dirname(dir), name = path.basename(dir, ".lance");
  const db = await lancedb.connect(root);
  let tbl = null;
  for (let start = 0; start < rows; start += 100000) {
    const t = new A.Table([batch(start, Math.min(100000, rows - start))]);
    if (tbl) await tbl.add(t); else tbl = await db.createTable(name, t, { schema });
  }
  const copy = (from, to) => {	// data files hard-linked, manifests / indexes / versions copied
    fs.mkdirSync(to, { recursive: true });
    for (const e of fs.readdirSync(from, { withFileTypes: true })) {
      const a = path.join(from, e.name), b = path.join(to, e.name);
      if (e.isDirectory()) copy(a, b);
      else if (path.basename(from) === "data") fs.linkSync(a, b);
      else fs.copyFileSync(a, b);
    }
  };
  const dirBytes = (d) => fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }).reduce((s, e) =>
    s + (e.isDirectory() ? dirBytes(path.join(d, e.name)) : fs.statSync(path.join(d, e.name)).size), 0) : 0;
  copy(dir, path.join(root, `${name}_base.lance`));
  copy(dir, path.join(root, `${name}_hnsw.lance`));
  const timed = async (t, cfg, col = "vec") => {
    const before = dirBytes(path.join(t.ds, "_indices"));
    const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
    await t.tbl.createIndex(col, { config: cfg });
    const cpu = process.cpuUsage(c0);
    return { wall_s: +(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(2), cpu_s: +((cpu.user + cpu.system) / 1e6).toFixed(2),
      bytes: dirBytes(path.join(t.ds, "_indices")) - before };
  };
  const out = { rows, dim, partitions: parts, sub_vectors: subs };
  out.engine_ivf_pq = await timed({ tbl, ds: dir }, lancedb.Index.ivfPq({ numPartitions: parts, numSubVectors: subs, distanceType: "l2" }));
  const hn = path.join(root, `${name}_hnsw.lance`);
  out.engine_ivf_hnsw_sq = await timed({ tbl: await db.openTable(`${name}_hnsw`), ds: hn },
    lancedb.Index.hnswSq({ numPartitions: parts, distanceType: "l2", m: 20, efConstruction: 150 }));
  copy(dir, path.join(root, `${name}_bm.lance`));
  out.engine_bitmap_cat = await timed({ tbl: await db.openTable(`${name}_bm`), ds: path.join(root, `${name}_bm.lance`) }, lancedb.Index.bitmap(), "cat");
  console.log(JSON.stringify(out));
} else if (cmd === "queries") {
  const [n, out] = args;
  const tbl = await open();
  const rows = await tbl.query().select(["vec"]).limit(5000).toArray();
  const qs = [];
  for (let i = 0; i < Number(n); i++) {
    const v = rows[Math.floor(rnd() * rows.length)].vec.toArray();
    qs.push(Array.from(v, (x) => Math.fround(x + (rnd() - 0.5) * 0.4)));
  }
  fs.writeFileSync(out, JSON.stringify(qs));
} else if (cmd === "search") {
  // DIR: the IVF_PQ dataset; its _bm (bitmap on cat) and _hnsw (IVF_HNSW_SQ) copies beside it
  const [qfile, repeat] = args;
  const qs = JSON.parse(fs.readFileSync(qfile, "utf8"));
  const tbl = await open();
  const sib = async (suffix) => (await lancedb.connect(path.dirname(dir))).openTable(path.basename(dir, ".lance") + suffix);
  const bm = await sib("_bm"), hn = await sib("_hnsw");
  const vs = (t, q) => t.vectorSearch(q).limit(10).select(["id"]);
  const settings = {
    exact: (q) => vs(tbl, q).bypassVectorIndex(),
    np10: (q) => vs(tbl, q).nprobes(10),
    np20: (q) => vs(tbl, q).nprobes(20),
    np50: (q) => vs(tbl, q).nprobes(50),
    np20_refine5: (q) => vs(tbl, q).nprobes(20).refineFactor(5),
    hnsw_np10: (q) => vs(hn, q).nprobes(10),
    hnsw_np20: (q) => vs(hn, q).nprobes(20),
    hnsw_np50: (q) => vs(hn, q).nprobes(50),
    cat7_np20: (q) => vs(tbl, q).nprobes(20).where("cat = 7"),
    cat7_exact: (q) => vs(tbl, q).bypassVectorIndex().where("cat = 7"),
    cat7_np20_bm: (q) => vs(bm, q).nprobes(20).where("cat = 7"),
    cat7_exact_bm: (q) => vs(bm, q).bypassVectorIndex().where("cat = 7"),
  };
  const out = {};
  for (const [name, mk] of Object.entries(settings)) {
    const ids = [], lat = [];
    for (const q of qs) await mk(q).toArray();	/* warm, as lt_fdw's loop is */
    const cpu0 = process.cpuUsage();
    for (const q of qs) {
      let best = Infinity, res = null;
      for (let r = 0; r < Number(repeat); r++) {
        const t0 = process.hrtime.bigint();
        res = await mk(q).toArray();
        best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6);
      }
      ids.push(res.map((x) => String(x.id)));
      lat.push(best);
    }
    const cpu = process.cpuUsage(cpu0);	/* every thread of the process: the engine searches on a pool */
    lat.sort((a, b) => a - b);
    out[name] = { ids, median_ms: lat[Math.floor(lat.length / 2)],
      cpu_ms_per_query: (cpu.user + cpu.system) / 1000 / (qs.length * Number(repeat)) };
  }
  console.log(JSON.stringify(out));
} else if (cmd === "concurrent") {
  // CLIENTS queries in flight at once for SECONDS (each a random query of QUERIES), per setting: queries per second
  // and the process's CPU ms per query (all threads)
  const [qfile, clients, seconds] = args;
  const qs = JSON.parse(fs.readFileSync(qfile, "utf8"));
  const tbl = await open();
  const hn = await (await lancedb.connect(path.dirname(dir))).openTable(path.basename(dir, ".lance") + "_hnsw");
  const out = {};
  for (const [name, mk] of Object.entries({
    np20: (q) => tbl.vectorSearch(q).limit(10).select(["id"]).nprobes(20),
    hnsw_np20: (q) => hn.vectorSearch(q).limit(10).select(["id"]).nprobes(20),
  })) {
    for (const q of qs.slice(0, 50)) await mk(q).toArray();
    let done = 0;
    const cpu0 = process.cpuUsage(), t0 = Date.now(), end = t0 + Number(seconds) * 1000;
    await Promise.all(Array.from({ length: Number(clients) }, async () => {
      while (Date.now() < end) { await mk(qs[Math.floor(Math.random() * qs.length)]).toArray(); done++; }
    }));
    const wall = (Date.now() - t0) / 1000, cpu = process.cpuUsage(cpu0);
    out[name] = { qps: done / wall, queries: done, cpu_ms_per_query: (cpu.user + cpu.system) / 1000 / done };
  }
  console.log(JSON.stringify(out));
} else {
  console.error("usage: ref_vector.mjs make|queries|search ...");
  process.exit(2);
}
