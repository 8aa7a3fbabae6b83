#!/usr/bin/env node
// vector-rq.mjs: lt-inspect's search of the engine's IVF_RQ (RaBitQ) indexes against the engine's own vectorSearch
// through the same index files (LT_REF=8|12 picks the engine, see engine.mjs; both write 1-bit codes, the fast
// rotation and the raw-query estimate).
//
//   node vector-rq.mjs WORKDIR LT_INSPECT
//
// For each distance type (l2, cosine, dot), a dataset of clustered fixed_size_list<float32, 16> vectors (seeded PRNG)
// in three fragments of 1,000 rows indexed by the engine with IVF_RQ (4 partitions, 1-bit codes); then (rq_more) one
// more fragment the index does not cover and deletions in every fragment. The engine draws its rotation and trains
// its IVF without a seed, so every answer is compared with the engine's answer on the same files. For queries between
// two clusters, k = 10: nprobes 1, 2 and 4, refine 2, and exact; lt-inspect vector-search must return the engine's row
// ids in the same order with the same distances (the engine's conventions: l2 the squared distance, and an RQ estimate
// may be negative, so ours is squared with its sign; cosine as it is; 1 - dot). Settings must matter: per dataset some
// query's 1-probe answer differs from its exact one. Ends with "N passed, M failed"; one line per failing comparison.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

import { lancedb, REF } from "./engine.mjs";
import { prng, clusteredVectors, FLOAT_ELEMS } from "./vector-common.mjs";

const [work, inspect, mode = "engine"] = process.argv.slice(2);
if (!work || !inspect || !["engine", "build"].includes(mode)) { console.error("usage: node vector-rq.mjs WORKDIR LT_INSPECT [build]"); process.exit(2); }
// build: lt_fdw builds the IVF_RQ (`lt-inspect create-index --kind ivf_rq`, lt_rq_build.h) where the engine built its
// own, the engine lists it, and its search over lt_fdw's codes must equal lt-inspect's; two builds are byte-identical
const build = mode === "build";
const NAME = build ? "rqb" : "rq";
const DIM = 16, CLUSTERS = 12, NPART = 4, K = 10;

// the vectors' element types (float32 datasets in WORKDIR/<metric>, the others in WORKDIR/<elem>/<metric>)
const ELEMS = (process.env.LT_RQ_ELEMS || "f32,f16,f64").split(/[ ,]+/);
// ours (the SQL operator's scale: L2, cosine distance, negative dot) in the engine's
const engineDistance = (metric, d) => metric === "l2" ? Math.sign(d) * d * d : metric === "dot" ? d + 1 : d;

let passed = 0, failed = 0;
const fail = (msg) => { failed++; console.log("FAIL " + msg); };
const stats = {};
for (const elem of ELEMS) {
// every element type: the same draws (float16 on its grid)
const rnd = prng(777);
const { schema, rows, between } = clusteredVectors(rnd, DIM, CLUSTERS, elem);
const js = FLOAT_ELEMS[elem].js;
for (const metric of ["l2", "cosine", "dot"]) {
  const dbdir = elem === "f32" ? path.join(work, metric) : path.join(work, elem, metric);
  fs.mkdirSync(dbdir, { recursive: true });
  const db = await lancedb.connect(dbdir);
  const saved = rnd.state();
  for (const more of [false, true]) {
    rnd.reset(saved);                             // both datasets of a distance type hold the same rows
    const name = more ? "rq_more" : "rq";
    fs.rmSync(path.join(dbdir, `${name}.lance`), { recursive: true, force: true });
    let tbl = await db.createTable(name, rows(0, 1000), { schema });
    await tbl.add(rows(1000, 1000));
    await tbl.add(rows(2000, 1000));
    if (!build) {
      // both engines build IVF_RQ over float16 and float64 vectors: a refusal is a failure (reported)
      try { await tbl.createIndex("vec", { config: lancedb.Index.ivfRq({ numPartitions: NPART, distanceType: metric }) }); }
      catch (e) { fail(`${elem} ${metric} ${name}: Lance ${REF} refuses IVF_RQ: ${String(e.message).split("\n")[0]}`); continue; }
    }
    else {
      const dsb = path.join(dbdir, `${name}.lance`);
      const mk = (n) => JSON.parse(execFileSync(inspect, ["create-index", dsb, "--column", "vec", "--kind", "ivf_rq", "--num-partitions",
        String(NPART), "--metric", metric, ...(n ? ["--name", n] : [])], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));
      const first = mk(), again = mk("again_idx");
      const same = ["index.idx", "auxiliary.idx"].every((f) => fs.readFileSync(path.join(dsb, "_indices", first.uuid, f))
        .equals(fs.readFileSync(path.join(dsb, "_indices", again.uuid, f))));
      if (same) passed++; else fail(`${elem} ${metric} ${name}: two IVF_RQ builds of the same data differ`);
      const t = await db.openTable(name);
      const idx = (await t.listIndices()).find((i) => i.name === "vec_idx");
      const stat = await t.indexStats("vec_idx");
      const d = idx && idx.indexDetails;
      if (idx && idx.indexType === "IvfRq" && stat && stat.indexType === "IVF_RQ" && stat.numIndexedRows === 3000 && stat.distanceType === metric &&
          (!d || (d.compression && d.compression.type === "rq" && d.compression.num_bits === 1))) passed++;
      else fail(`${elem} ${metric} ${name}: the engine lists ${JSON.stringify(idx)} ${JSON.stringify(stat)}`);
      tbl = t;
    }
    if (more) {
      await tbl.add(rows(3000, 400));             // a fragment the index does not cover
      await tbl.delete("id % 11 = 5");
    }
    const ds = path.join(dbdir, `${name}.lance`);
    execFileSync("chmod", ["-R", "a+rX", dbdir]);
    const st = (stats[elem === "f32" ? name : `${name} ${elem}`] ??= { n: 0, ok: 0, routed: 0, rel: 0 });
    let routed = 0;
    for (let qi = 0; qi < 6; qi++) {
      const answers = {};
      const q = between();
      for (const [np, refine] of [[1, 0], [2, 0], [4, 0], [2, 2], [0, 0]]) {
        let vq = tbl.vectorSearch(js(q)).distanceType(metric).limit(K).withRowId();
        vq = np === 0 ? vq.bypassVectorIndex() : vq.nprobes(np);
        if (refine) vq = vq.refineFactor(refine);
        const ref = (await vq.toArray()).map((r) => ({ id: BigInt(r._rowid).toString(), d: r._distance }));
        answers[`${np}/${refine}`] = ref.map((r) => r.id).join(",");
        const args = ["vector-search", ds, "--column", "vec", "--query", q.join(","), "--k", String(K), "--metric", metric];
        if (np === 0) args.push("--exact"); else args.push("--nprobes", String(np));
        if (refine) args.push("--refine", String(refine));
        // Lance 8 takes the norm of a float16 cosine query in float16 arithmetic (lt_ivf.h f16_engine)
        if (REF === "8") args.push("--hnsw-engine", "8");
        const out = execFileSync(inspect, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
          .trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
        const ours = out.map((r) => ({ id: r._rowid, d: engineDistance(metric, r._distance) }));
        const what = `${elem === "f32" ? "" : elem + " "}${metric} ${name} query ${qi} ${np ? `nprobes ${np}` : "exact"}${refine ? ` refine ${refine}` : ""}`;
        const close = (x, y) => Math.abs(x - y) <= 1e-4 * Math.max(1, Math.abs(y));
        const show = (l) => l.map((r) => `${r.id}:${r.d.toPrecision(7)}`).join(" ");
        st.n++;
        // the largest relative difference of the distances of the same rows (estimates where unrefined)
        for (const [i, r] of ours.entries()) if (ref[i] && r.id === ref[i].id)
          st.rel = Math.max(st.rel, Math.abs(r.d - ref[i].d) / Math.max(1, Math.abs(ref[i].d)));
        if (ours.length !== ref.length || ours.some((r, i) => r.id !== ref[i].id || !close(r.d, ref[i].d))) {
          fail(`${what}:\n     ours   ${show(ours)}\n     engine ${show(ref)}`);
          continue;
        }
        st.ok++;
        passed++;
      }
      if (answers["1/0"] !== answers["0/0"]) routed++;
    }
    if (routed === 0) fail(`${elem} ${metric} ${name}: no query's nprobes 1 answer differs from the exact one (routing untested)`);
    else passed++;
    st.routed += routed;
  }
}
}
for (const [k, s] of Object.entries(stats))
  console.log(`${k}: ${s.ok} of ${s.n} answers equal the engine's (distances within ${s.rel.toExponential(1)} relative); ` +
    `${s.routed} of 18 queries answered differently with 1 probe than exactly`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
