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

// rows (id int64, vec fixed_size_list<float32, dim>) around `clusters` centres drawn from rnd
export function clusteredVectors(rnd, dim, clusters) {
  const centers = Array.from({ length: clusters }, () => Array.from({ length: dim }, () => rnd() * 20 - 10));
  const vecOf = () => { const c = centers[Math.floor(rnd() * clusters)]; return c.map((x) => Math.fround(x + (rnd() - 0.5) * 4)); };
  const schema = new A.Schema([
    new A.Field("id", new A.Int64(), false),
    new A.Field("vec", new A.FixedSizeList(dim, new A.Field("item", new A.Float32(), true)), false),
  ]);
  const rows = (start, n) => Array.from({ length: n }, (_, i) => ({ id: BigInt(start + i), vec: vecOf() }));
  // a query between two random centres
  const between = () => {
    const a = centers[Math.floor(rnd() * clusters)], b = centers[Math.floor(rnd() * clusters)];
    return a.map((x, i) => Math.fround((x + b[i]) / 2 + (rnd() - 0.5) * 2));
  };
  return { centers, vecOf, schema, rows, between };
}

export const OPS = { l2: "<->", cosine: "<=>", dot: "<#>" };

export const psql = (sql) => execFileSync("psql", ["-X", "-q", "-At", "-F", ",", "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-c", sql],
  { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
