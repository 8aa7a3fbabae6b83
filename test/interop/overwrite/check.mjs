#!/usr/bin/env node
// check.mjs DIR INDEXES yes|no PROBES...: the real Lance engine's indexes of an overwritten dataset still answer correctly.
// The truth is a plain scan of every live row; against it:
//   - scalar queries (dt = each day present or replaced, region = each value, id ranges) through the engine's planner, which uses
//     the btree (id, dt) and bitmap (region) indexes for the fragments they cover and scans the others; the dt queries' plans must
//     name a scalar index;
//   - vector searches (IVF_FLAT, every partition probed: exact) for the vectors of sample rows and of rows
//     that are gone: the nearest rows by L2 distance, ties by id.
// INDEXES: the index names expected (comma-separated); yes|no: whether the dt queries' plans name an index.
// Prints "ok<TAB>label" or "FAIL<TAB>label<TAB>why" per check; exit 0 (the caller counts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { lancedb } from "../engine.mjs"; // LT_REF=8|12 picks the engine
const [dir, wantIndexes, dtIndexUsed, ...probeArgs] = process.argv.slice(2);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lt-ow-"));
fs.symlinkSync(path.resolve(dir), path.join(tmp, "t.lance"));
const tbl = await (await lancedb.connect(tmp)).openTable("t");
const say = (ok, label, why = "") => console.log(ok ? `ok\t${label}` : `FAIL\t${label}\t${why}`);

const day = (d) => { const x = new Date(Number(d)); return x.toISOString().slice(0, 10); };
const rows = (await tbl.query().select(["id", "dt", "region", "v"]).toArray()).map((r) => ({
  id: Number(r.id), region: r.region, dt: r.dt === null ? null : day(r.dt instanceof Date ? r.dt.getTime() : r.dt), v: Array.from(r.v ?? []),
}));
const ids = (rs) => rs.map((r) => Number(r.id)).sort((a, b) => a - b);
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

const indices = (await tbl.listIndices()).map((i) => i.name).sort();
say(same(indices, wantIndexes.split(",")), `indexes ${indices.join(",")}`, `want ${wantIndexes}`);

const days = [...new Set(rows.map((r) => r.dt).concat(["2026-08-01", "2026-08-02", "2026-08-05"]))].filter(Boolean).sort();
for (const d of days) {
  const where = `dt = date '${d}'`;
  const got = ids(await tbl.query().where(where).select(["id"]).toArray());
  const want = ids(rows.filter((r) => r.dt === d));
  say(same(got, want), `${where}: ${got.length} rows`, `engine ${got.length}, scan ${want.length}`);
  const plan = await tbl.query().where(where).select(["id"]).explainPlan(true);
  const used = /ScalarIndex|MaterializeIndex/i.test(plan);
  say(used === (dtIndexUsed === "yes"), `${where}: the plan ${used ? "uses" : "does not use"} the dt index`, plan.replace(/\n/g, " "));
}
for (const g of ["north", "south", "east", "west"]) {
  const where = `region = '${g}'`;
  const got = ids(await tbl.query().where(where).select(["id"]).toArray());
  const want = ids(rows.filter((r) => r.region === g));
  say(same(got, want), `${where}: ${got.length} rows`, `engine ${got.length}, scan ${want.length}`);
}
for (const [lo, hi] of [[0, 100], [350, 450], [1150, 1250], [2000, 2600], [5000, 5100]]) {
  const where = `id >= ${lo} AND id < ${hi}`;
  const got = ids(await tbl.query().where(where).select(["id"]).toArray());
  const want = ids(rows.filter((r) => r.id >= lo && r.id < hi));
  say(same(got, want), `${where}: ${got.length} rows`, `engine ${got.length}, scan ${want.length}`);
}
// vector searches: probes are "id:v0,...,v7" (vectors of rows that may be gone) or ids of live rows
const l2 = (a, b) => a.reduce((s, x, i) => s + (x - b[i]) * (x - b[i]), 0);
const probes = probeArgs.map((p) => p.includes(":") ? { label: p.split(":")[0], v: p.split(":")[1].split(",").map(Number) }
  : { label: p, v: (rows.find((r) => r.id === Number(p)) || { v: null }).v });
for (const p of probes) {
  if (!p.v) { say(false, `vector probe ${p.label}`, "no such row"); continue; }
  const got = (await tbl.search(p.v).nprobes(2).limit(5).select(["id"]).toArray()).map((r) => Number(r.id));
  const byDist = rows.filter((r) => r.v.length === p.v.length).map((r) => ({ id: r.id, d: l2(r.v, p.v) })).sort((a, b) => a.d - b.d || a.id - b.id);
  const want = byDist.slice(0, 5).map((r) => r.id);
  const dist = new Map(byDist.map((r) => [r.id, r.d]));
  // ties at equal distance may come in any order, also across the cut at 5: every row the engine returns must be
  // at most the 5th exact distance, every row nearer than that must be among them, and the nearest comes first
  const cut = byDist.length >= 5 ? byDist[4].d : Infinity;
  const ok = got.length === want.length && new Set(got).size === got.length && got.every((id) => dist.has(id) && dist.get(id) <= cut) &&
    byDist.filter((r) => r.d < cut).every((r) => got.includes(r.id)) && dist.get(got[0]) === dist.get(want[0]);
  say(ok, `vector search near ${p.label}: ${got.join(",")}`,
      `engine ${got.map((id) => `${id}(${dist.get(id)})`).join(",")}, scan ${want.map((id) => `${id}(${dist.get(id)})`).join(",")}`);
}
fs.rmSync(tmp, { recursive: true, force: true });
