// engine.mjs — which reference Lance engine the interop drivers load: LT_REF=8 (the default) is
// @lancedb/lancedb 0.31.0 = lance 8.0.0 in test/interop/node_modules; LT_REF=12 is @lancedb/lancedb 0.39.0 =
// lance 12.0.0 in test/interop/lance12/node_modules. Every driver imports lancedb and apache-arrow from here, so one
// variable switches them all.
//
//   import { A, lancedb, REF } from "./engine.mjs";
//
// apache-arrow is the CommonJS instance the chosen lancedb itself loads (its instanceof checks need that one).
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const REF = process.env.LT_REF || "8";
const roots = { 8: here, 12: path.join(here, "lance12") };
if (!roots[REF]) {
  console.error(`engine.mjs: LT_REF must be 8 or 12, not '${REF}'`);
  process.exit(2);
}
const require = createRequire(path.join(roots[REF], "package.json"));
process.env.LANCEDB_LOG ??= "error";
export const A = require("apache-arrow");
export const lancedb = await import(pathToFileURL(require.resolve("@lancedb/lancedb")).href);
// the engine's version, from its package (lance 8 is lancedb 0.31, lance 12 is lancedb 0.39)
export const LANCEDB_VERSION = JSON.parse(fs.readFileSync(path.join(roots[REF], "node_modules/@lancedb/lancedb/package.json"), "utf8")).version;
