#!/usr/bin/env node
// bench/ref_vector.mjs — the Lance engine's side of bench/vector.sh.
//
//   node ref_vector.mjs make DIR ROWS DIM PARTITIONS SUBVECTORS   a dataset of clustered float32 vectors (id int64,
//                                                                  cat int32 in 0..99, vec fixed_size_list<float32,
//                                                                  DIM>, note utf8) in fragments of 100,000 rows,
//                                                                  with an IVF_PQ index (8-bit codes) on vec
//   node ref_vector.mjs queries DIR N OUT                          N query vectors (a row's vector plus noise) as JSON
//   node ref_vector.mjs search DIR QUERIES REPEAT                  per setting (exact, nprobes 10 / 20 / 50, filtered
//                                                                  cat = 7): the ids of each query's 10 nearest and the
//                                                                  median of each query's best-of-REPEAT latency and the process's CPU time per query (all threads), JSON
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
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const open = async () => (await lancedb.connect(path.dirname(dir))).openTable(path.basename(dir, ".lance"));

if (cmd === "make") {
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
  const db = await lancedb.connect(path.dirname(dir));
  const name = path.basename(dir, ".lance");
  let tbl = null;
  for (let start = 0; start < rows; start += 100000) {
    const t = new A.Table([batch(start, Math.min(100000, rows - start))]);
    if (tbl) await tbl.add(t); else tbl = await db.createTable(name, t, { schema });
  }
  const t0 = Date.now();
  await tbl.createIndex("vec", { config: lancedb.Index.ivfPq({ numPartitions: parts, numSubVectors: subs, distanceType: "l2" }) });
  console.log(JSON.stringify({ index_build_ms: Date.now() - t0 }));
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
  const [qfile, repeat] = args;
  const qs = JSON.parse(fs.readFileSync(qfile, "utf8"));
  const tbl = await open();
  const settings = {
    exact: (q) => tbl.vectorSearch(q).limit(10).select(["id"]).bypassVectorIndex(),
    np10: (q) => tbl.vectorSearch(q).limit(10).select(["id"]).nprobes(10),
    np20: (q) => tbl.vectorSearch(q).limit(10).select(["id"]).nprobes(20),
    np50: (q) => tbl.vectorSearch(q).limit(10).select(["id"]).nprobes(50),
    np20_refine5: (q) => tbl.vectorSearch(q).limit(10).select(["id"]).nprobes(20).refineFactor(5),
    cat7_np20: (q) => tbl.vectorSearch(q).limit(10).select(["id"]).nprobes(20).where("cat = 7"),
    cat7_exact: (q) => tbl.vectorSearch(q).limit(10).select(["id"]).bypassVectorIndex().where("cat = 7"),
  };
  const out = {};
  for (const [name, mk] of Object.entries(settings)) {
    const ids = [], lat = [];
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
} else {
  console.error("usage: ref_vector.mjs make|queries|search ...");
  process.exit(2);
}
