// vector-common.mjs: what the vector interop scripts share — a seeded generator (the same linear congruential
// sequence in every script, so datasets and queries are reproducible), clustered vector rows, the tally of checks
// and psql.
import { execFileSync } from "node:child_process";

import { A } from "./engine.mjs";

// rnd() in [0, 1); rnd.state() and rnd.reset(s) replay a stretch (datasets that must hold the same rows)
export function prng(seed) {
  let s = seed;
  const rnd = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648; };
  rnd.state = () => s;
  rnd.reset = (v) => { s = v; };
  return rnd;
}

// The element types of float vector columns: Arrow type, how a row's value is drawn (float16: on a grid of 1/64, so
// every value below 16 is exact) and how a query's is (the engine's JavaScript binding takes a query as float32 and
// rounds it to the column's type: float16 queries on the same grid, float64 ones float32 values)
export const FLOAT_ELEMS = {
  f32: { type: () => new A.Float32(), row: Math.fround, query: Math.fround, sql: "real[]", js: (q) => Float32Array.from(q) },
  f16: { type: () => new A.Float16(), row: (x) => Math.round(x * 64) / 64, query: (x) => Math.round(x * 64) / 64, sql: "real[]",
    js: (q) => Float32Array.from(q) },
  f64: { type: () => new A.Float64(), row: (x) => x, query: Math.fround, sql: "double precision[]", js: (q) => Float64Array.from(q) },
};

// rows (id int64, vec fixed_size_list<float32 (or elem: float16 / float64), dim>) around `clusters` centres drawn
// from rnd (the same draws for every element type)
export function clusteredVectors(rnd, dim, clusters, elem = "f32") {
  const e = FLOAT_ELEMS[elem];
  const centers = Array.from({ length: clusters }, () => Array.from({ length: dim }, () => rnd() * 20 - 10));
  const vecOf = () => { const c = centers[Math.floor(rnd() * clusters)]; return c.map((x) => e.row(x + (rnd() - 0.5) * 4)); };
  const schema = new A.Schema([
    new A.Field("id", new A.Int64(), false),
    new A.Field("vec", new A.FixedSizeList(dim, new A.Field("item", e.type(), true)), false),
  ]);
  const rows = (start, n) => Array.from({ length: n }, (_, i) => ({ id: BigInt(start + i), vec: vecOf() }));
  // a query between two random centres
  const between = () => {
    const a = centers[Math.floor(rnd() * clusters)], b = centers[Math.floor(rnd() * clusters)];
    return a.map((x, i) => e.query((x + b[i]) / 2 + (rnd() - 0.5) * 2));
  };
  return { centers, vecOf, schema, rows, between };
}

export const OPS = { l2: "<->", cosine: "<=>", dot: "<#>" };

export const psql = (sql) => execFileSync("psql", ["-X", "-q", "-At", "-F", ",", "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-c", sql],
  { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
