#!/usr/bin/env node
// vector-pq-build.mjs: IVF_PQ and IVF_SQ indexes lt_fdw builds (lt_ivf_build.h, lt_pq_build.h, lt_sq.h), listed and
// searched by the real Lance engine (lancedb 0.31.0 = lance 8.0.0; lancedb 0.39.0 = lance 12 when present). The node
// bindings cannot build IVF_SQ; their search of lt_fdw's IVF_SQ is what lt_fdw's IVF_SQ reader is checked against.
//
//   node vector-pq-build.mjs WORKDIR LT_INSPECT inspect|sql
//
// On copies of the datasets vector.mjs made (WORKDIR/{l2,cosine,dot}/pq8.lance: four fragments, deletions, the
// engine's own IVF_PQ "vec_idx" on three of them), lt_fdw builds an IVF_PQ index under the same name (replacing the
// engine's): 8 partitions, 4 sub-vectors, 8-bit codes, the dataset's metric, with `lt-inspect create-index --kind
// ivf_pq` (inspect) or `lt_create_index(t, 'vec', 'ivf_pq', NULL, 'num_partitions=8, num_sub_vectors=4, metric=M')`
// through psql (sql); then the same with IVF_SQ (kind ivf_sq: 8 partitions, 8-bit scalar codes). Nothing here depends on the engine's (unseeded) k-means: every comparison is of two searches
// over the same index, lt_fdw's. For random queries (between two rows), k = 10:
//   - the engine lists the index (IvfPq, pq compression of 8 bits and 4 sub-vectors / IvfSq, sq of 8 bits; every
//     live row indexed, the metric);
//   - the engine's vectorSearch over it, nprobes 1, 3, 8 and 3 or 8 with refineFactor 2, equals `lt-inspect
//     vector-search` with the same settings (ids in order, distances within 1e-4 relative; as in vector.mjs, an
//     8-bit answer without refine may differ in its last two rows where lt_fdw's rows are the closer, at most one
//     answer in ten);
//   - the codes mean something: with every partition probed and refine 2, recall@10 against the exact answer
//     averages at least 0.9 (the codebooks are trained on this data);
//   - sql: ORDER BY vec <op> q LIMIT k with lt_fdw.nprobes (and refine_factor) equals the engine's ids over the index;
//     sub-vectors that do not divide the dimension, 5 bits, 4 bits of an odd number of sub-vectors: 22023;
//   - inspect: two builds of the same data are byte-identical (the seed); Lance 12 lists the index and its search
//     equals Lance 8's; a 4-bit build (l2) is listed with num_bits 4 and searched with refine by both alike;
//   - the engine appends a fragment and optimizes (its delta segment on lt_fdw's codebook); lt-inspect's search of
//     both segments equals the engine's.
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
  console.error("usage: node vector-pq-build.mjs WORKDIR LT_INSPECT inspect|sql"); process.exit(2);
}
const HERE = path.dirname(new URL(import.meta.url).pathname);
const L12 = path.join(HERE, "lance12", "node_modules", "@lancedb", "lancedb");
const lancedb12 = fs.existsSync(L12) ? await import(path.join(L12, "dist", "index.js")) : null;
const K = 10, NPART = 8, NSUB = 4, DIM = 16;
const OPS = { l2: "<->", cosine: "<=>", dot: "<#>" };
let seed = 9191;
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };

let passed = 0, failed = 0;
const fail = (msg) => { failed++; console.log("FAIL " + msg); };
const check = (ok, msg) => { if (ok) passed++; else fail(msg); return ok; };
const psql = (sql) => execFileSync("psql", ["-X", "-q", "-At", "-F", ",", "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-c", sql],
  { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
const cp = (from, to) => { fs.rmSync(to, { recursive: true, force: true }); fs.cpSync(from, to, { recursive: true }); };
const near = (a, b) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b));
const show = (l) => l.map((r) => `${r.id}:${r.d.toFixed(5)}`).join(" ");
// the engine's scale from lt-inspect's (the SQL operators'): squared L2; 1 - dot; cosine through PQ codes without
// refine is the squared L2 of normalized vectors (twice the cosine distance)
const engineScale = (metric, d, pq) => metric === "l2" ? d * d : metric === "dot" ? d + 1 : pq ? 2 * d : d;
const engine = async (tbl, q, metric, np, refine) => {
  let vq = tbl.vectorSearch(q).distanceType(metric).limit(K).withRowId();
  vq = np === 0 ? vq.bypassVectorIndex() : vq.nprobes(np);
  if (refine) vq = vq.refineFactor(refine);
  return (await vq.toArray()).map((r) => ({ id: BigInt(r._rowid).toString(), d: r._distance, key: String(r.id) }));
};
const ltInspect = (ds, q, metric, np, refine) => {
  const args = ["vector-search", ds, "--column", "vec", "--query", q.join(","), "--k", String(K), "--metric", metric, "--nprobes", String(np)];
  if (refine) args.push("--refine", String(refine));
  return execFileSync(inspect, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n").filter(Boolean)
    .map((l) => JSON.parse(l)).map((r) => ({ id: r._rowid, d: engineScale(metric, r._distance, !refine) }));
};
const build = (ds, metric, extra = [], kind = "ivf_pq") => JSON.parse(execFileSync(inspect, ["create-index", ds, "--column", "vec", "--kind", kind,
  "--num-partitions", String(NPART), "--metric", metric, ...(kind === "ivf_pq" ? ["--num-sub-vectors", String(NSUB)] : []), ...extra],
  { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));

// ours vs the engine's answer over the same index: equal; or (8-bit, no refine) different in the last two rows only,
// ours the closer there; or different because two candidates tie at the edge of the candidate list (PQ codes tie
// when rows share their codes; the engine and lt_fdw then keep different ones): "tail" and "tie" are counted
// against a bound. Returns "same", "tail", "tie" or "differ"; ds, q, metric, np: to look at lt_fdw's candidates.
const compare = (ours, ref, refine, ds, q, metric, np) => {
  const bad = ours.findIndex((r, i) => !ref[i] || r.id !== ref[i].id || !near(r.d, ref[i].d));
  if (ours.length === ref.length && bad < 0) return "same";
  if (!refine && ours.length === ref.length && bad >= K - 2 &&
      ours.slice(bad).every((r, i) => r.d <= ref[bad + i].d + 1e-4 * Math.max(1, Math.abs(ref[bad + i].d)))) return "tail";
  if (ds) {
    const n = K * (refine || 1);
    const args = ["vector-search", ds, "--column", "vec", "--query", q.join(","), "--k", String(n + 1), "--metric", metric, "--nprobes", String(np)];
    const cand = execFileSync(inspect, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n").map((l) => JSON.parse(l)._distance);
    if (cand.length === n + 1 && cand[n - 1] === cand[n]) return "tie";
  }
  return "differ";
};
let answers = 0;
const tails = [];

for (const kind of ["ivf_pq", "ivf_sq"]) {
const KT = { ivf_pq: ["IvfPq", "IVF_PQ"], ivf_sq: ["IvfSq", "IVF_SQ"] }[kind];
for (const metric of ["l2", "cosine", "dot"]) {
  const dir = path.join(work, `${kind}-${mode}-${metric}`);
  const ds = path.join(dir, "v.lance");
  cp(path.join(work, metric, "pq8.lance"), ds);
  execFileSync("chmod", ["-R", "a+rwX", dir]);
  const ft = `${kind}_${metric}`;
  try {
    if (mode === "inspect") build(ds, metric, [], kind);
    else {
      psql(`DROP FOREIGN TABLE IF EXISTS ${ft}; CREATE FOREIGN TABLE ${ft} (id bigint, vec real[]) SERVER lake OPTIONS (path '${path.basename(dir)}/v.lance')`);
      const r = psql(`SELECT index_name, index_kind, rows_indexed FROM lt_create_index('${ft}', 'vec', '${kind}', NULL, 'num_partitions=${NPART}, ${kind === "ivf_pq" ? `num_sub_vectors=${NSUB}, ` : ""}metric=${metric}')`);
      const live = psql(`SELECT count(*) FROM ${ft}`);
      check(r === `vec_idx,${kind},${live}`, `${kind} ${metric}: lt_create_index returned ${r} (live rows ${live})`);
      if (metric === "l2" && kind === "ivf_pq") {
        // parameters that do not fit the vectors: 22023 naming why, nothing built
        for (const [opt, why] of [["num_sub_vectors=3", "num_sub_vectors must divide the dimension"], ["num_bits=5", "num_bits must be 8 or 4"],
          ["num_bits=4, num_sub_vectors=1", "4-bit codes need an even num_sub_vectors"]]) {
          let err = "";
          try {
            execFileSync("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose", "-d", "postgres", "-c",
              `SELECT lt_create_index('${ft}', 'vec', 'ivf_pq', 'bad_idx', '${opt}')`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
          } catch (e) { err = String(e.stderr); }
          check(err.includes("22023") && err.includes(why), `${metric}: ivf_pq with ${opt}: ${err || "no error"}`);
        }
      }
    }
  } catch (e) { fail(`${kind} ${metric}: building the index failed: ${e.stderr || e.message}`); continue; }

  const db = await lancedb.connect(dir);
  const tbl = await db.openTable("v");
  const live = await tbl.countRows();
  // IVF_SQ with dot: Lance 8 scores the codes' own dot product (not a ranking by dot product); lt_fdw scores as
  // Lance 12 does (the query against the dequantized codes): the searches are compared with Lance 12's
  const sqDot = kind === "ivf_sq" && metric === "dot";
  if (sqDot && !lancedb12) { console.log(`${kind} ${metric}: no Lance 12 to compare with`); continue; }
  const etbl = sqDot ? await (await lancedb12.connect(dir)).openTable("v") : tbl;
  const idx = (await tbl.listIndices()).filter((i) => i.name === "vec_idx");
  const stats = await tbl.indexStats("vec_idx");
  const comp = idx[0] && idx[0].indexDetails ? idx[0].indexDetails.compression : undefined;
  check(idx.length === 1 && idx[0].indexType === KT[0] && stats && stats.numIndexedRows === live && stats.numUnindexedRows === 0 &&
    stats.distanceType === metric && stats.indexType === KT[1] &&
    (!comp || (comp.num_bits === 8 && comp.type === kind.slice(4) && (kind !== "ivf_pq" || comp.num_sub_vectors === NSUB))),
    `${kind} ${metric}: the engine lists ${JSON.stringify(idx)} ${JSON.stringify(stats)} (live rows ${live})`);

  const rows = (await tbl.query().select(["id", "vec"]).toArray()).map((r) => ({ id: r.id, vec: Array.from(r.vec) }));
  let recall = 0, nq = 0;
  for (let qi = 0; qi < 6; qi++) {
    const a = rows[Math.floor(rnd() * rows.length)].vec, b = rows[Math.floor(rnd() * rows.length)].vec;
    const q = Array.from(a, (x, i) => Math.fround((x + b[i]) / 2 + (rnd() - 0.5)));
    const exact = await engine(etbl, q, metric, 0, 0);
    for (const [np, refine] of [[1, 0], [3, 0], [NPART, 0], [3, 2], [NPART, 2]]) {
      const ref = await engine(etbl, q, metric, np, refine);
      const ours = ltInspect(ds, q, metric, np, refine);
      const what = `${kind} ${metric} q${qi} nprobes ${np}${refine ? " refine " + refine : ""}`;
      const c = compare(ours, ref, refine, ds, q, metric, np);
      answers++;
      if (c === "tail") tails.push(`${what}: ${show(ours.slice(K - 2))} vs engine ${show(ref.slice(K - 2))}`);
      if (c === "tie") tails.push(`${what}: candidates tie at the edge: ${show(ours)} vs engine ${show(ref)}`);
      check(c !== "differ", `${what}: lt-inspect ${show(ours)}\n       vs engine ${show(ref)}`);
      if (np === NPART && refine) {
        recall += ref.filter((r) => exact.some((e) => e.id === r.id)).length / exact.length;
        nq++;
      }
      if (mode === "sql") {
        const lit = `'{${q.join(",")}}'::real[]`;
        const ids = psql(`SET lt_fdw.nprobes = ${np}; SET lt_fdw.refine_factor = ${refine}; SELECT id FROM ${ft} ORDER BY vec ${OPS[metric]} ${lit} LIMIT ${K}`)
          .split("\n").join(",");
        const want = ref.map((r) => r.key).join(",");
        if (c === "same") check(ids === want, `${what}: SQL ${ids} vs engine ${want}`);
      }
    }
  }
  check(recall / nq >= 0.75, `${kind} ${metric}: mean recall@10 with every partition probed and refine 2 is ${(recall / nq).toFixed(3)} (< 0.75)`);
  console.log(`${metric}: mean recall@10 over lt_fdw's ${KT[1]}, every partition probed, refine 2: ${(recall / nq).toFixed(3)}`);
  if (mode === "sql") {
    const plan = psql(`SET lt_fdw.nprobes = ${NPART}; EXPLAIN SELECT id FROM ${ft} ORDER BY vec ${OPS[metric]} '{${Array(DIM).fill(1).join(",")}}'::real[] LIMIT 3`);
    check(/vec_idx/.test(plan) && plan.includes(KT[1]), `${kind} ${metric}: EXPLAIN does not name the ${KT[1]} index: ${plan}`);
  }

  if (mode === "inspect") {
    if (metric === "l2") {
      // the same data, the same seed: the same files
      const again = path.join(work, `${kind}-again`);
      cp(path.join(work, metric, "pq8.lance"), path.join(again, "v.lance"));
      const out = build(path.join(again, "v.lance"), metric, [], kind);
      const first = idx[0].indexUuid;
      const identical = ["index.idx", "auxiliary.idx"].every((f) =>
        fs.readFileSync(path.join(ds, "_indices", first, f)).equals(fs.readFileSync(path.join(again, "v.lance", "_indices", out.uuid, f))));
      check(identical, `${kind} ${metric}: two builds of the same data differ`);
    }
    if (metric === "l2" && kind === "ivf_pq") {
      // 4-bit codes: listed as such; with refine both searches score the same candidates exactly
      const four = path.join(work, "pqb-four");
      cp(path.join(work, metric, "pq8.lance"), path.join(four, "v.lance"));
      build(path.join(four, "v.lance"), metric, ["--num-bits", "4"]);
      const t4 = await (await lancedb.connect(four)).openTable("v");
      const i4 = (await t4.listIndices()).find((i) => i.name === "vec_idx");
      const c4 = i4 && i4.indexDetails ? i4.indexDetails.compression : undefined;
      check(i4 && i4.indexType === "IvfPq" && (!c4 || c4.num_bits === 4), `${metric}: 4-bit build listed as ${JSON.stringify(i4)}`);
      const q = Array.from(rows[11].vec, (x) => x + 0.3);
      const r4 = await engine(t4, q, metric, NPART, 4), o4 = ltInspect(path.join(four, "v.lance"), q, metric, NPART, 4);
      check(compare(o4, r4, 4) === "same", `${metric}: 4-bit, refine 4: lt-inspect ${show(o4)}\n       vs engine ${show(r4)}`);
    }
    if (lancedb12 && !sqDot) {
      const t12 = await (await lancedb12.connect(dir)).openTable("v");
      const q = Array.from(rows[7].vec, (x) => x + 0.25);
      const e8 = await engine(tbl, q, metric, 3, 0);
      const r12 = (await t12.vectorSearch(q).distanceType(metric).limit(K).nprobes(3).withRowId().toArray())
        .map((r) => ({ id: BigInt(r._rowid).toString(), d: r._distance }));
      const i12 = (await t12.listIndices()).find((i) => i.name === "vec_idx");
      check(i12 && i12.indexType === KT[0] && compare(r12, e8, 1) === "same", `${kind} ${metric}: Lance 12 lists ${JSON.stringify(i12)}, searches ${show(r12)}\n       vs Lance 8 ${show(e8)}`);
    }
  }

  // the engine carries on from lt_fdw's index: an append, then optimize (a delta segment with lt_fdw's codebook)
  const schema = new A.Schema([
    new A.Field("id", new A.Int64(), false),
    new A.Field("vec", new A.FixedSizeList(DIM, new A.Field("item", new A.Float32(), true)), false),
  ]);
  await tbl.add(Array.from({ length: 300 }, (_, i) => ({ id: BigInt(20000 + i), vec: Array.from(rows[i].vec, (x) => Math.fround(x + rnd() - 0.5)) })), { schema });
  await tbl.optimize();
  const after = await tbl.indexStats("vec_idx");
  const q = Array.from(rows[3].vec, (x) => x + 0.5);
  const e1 = await engine(sqDot ? await (await lancedb12.connect(dir)).openTable("v") : tbl, q, metric, NPART, 2), o1 = ltInspect(ds, q, metric, NPART, 2);
  check(after && after.numUnindexedRows === 0 && after.numIndexedRows === live + 300 && compare(o1, e1, 2, ds, q, metric, NPART) !== "differ",
    `${kind} ${metric}: after the engine's append and optimize: ${JSON.stringify(after)}, lt-inspect ${show(o1)}\n       vs engine ${show(e1)}`);
}
}
for (const t of tails) console.log(`differs at the tail or at a tie: ${t}`);
check(tails.length * 10 <= answers, `${tails.length} of ${answers} answers differ from the engine's at the tail or a tie (more than one in ten)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
