// assign-engines.mjs: what a real Lance engine makes of a dataset with field assignment state (issue 17).
//
//   node assign-engines.mjs <engine dir> <dataset dir> <columns,...>
//
// <engine dir> is a directory whose node_modules holds @lancedb/lancedb (test/interop for Lance 8,
// test/interop/lance12 for Lance 12). Prints the engine's version line, its row count, a digest of the
// rows (the named columns of every row, sorted by the first), then tries to append one row copied from
// the first and says whether the engine refused. The dataset must be read identically and the write refused
// (the writer feature flag it does not know): lt_fdw's pg suite lt_fdw_assign compares the lines.
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [engineDir, dsDir, cols] = process.argv.slice(2);
if (!engineDir || !dsDir || !cols) {
  console.error("usage: node assign-engines.mjs <engine dir> <dataset dir> <columns,...>");
  process.exit(2);
}
process.env.LANCEDB_LOG ??= "error";
const require = createRequire(path.join(path.resolve(engineDir), "package.json"));
const lancedb = require("@lancedb/lancedb");
const pkg = JSON.parse(fs.readFileSync(path.join(path.resolve(engineDir), "node_modules/@lancedb/lancedb/package.json"), "utf8"));
const columns = cols.split(",");

const db = await lancedb.connect(path.dirname(path.resolve(dsDir)));
const table = await db.openTable(path.basename(dsDir).replace(/\.lance$/, ""));
const n = await table.countRows();
const rows = await table.query().select(columns).toArray();
const text = (v) => (v === null || v === undefined ? "null" : typeof v === "bigint" ? v.toString() : JSON.stringify(v));
const lines = rows.map((r) => columns.map((c) => text(r[c])).join("|"));
lines.sort((a, b) => {
  const x = BigInt(a.split("|")[0]), y = BigInt(b.split("|")[0]);
  return x < y ? -1 : x > y ? 1 : 0;
});
const digest = createHash("sha256").update(lines.join("\n")).digest("hex").slice(0, 16);
console.log(`lancedb ${pkg.version === "0.31.0" ? "0.31.0 (lance 8)" : pkg.version === "0.39.0" ? "0.39.0 (lance 12)" : pkg.version}`);
console.log(`rows ${n}, read ${rows.length}, digest ${digest}`);
try {
  const first = (await table.query().limit(1).toArray())[0];
  await table.add([first]);
  console.log("write: accepted");
} catch (e) {
  const msg = String(e.message || e);
  // Lance 8 and 12 say "This dataset cannot be written by this version of Lance ... Flags: <writer flags>"
  const flagged = /cannot be written by this version of Lance/.test(msg) && /Flags: \d+/.test(msg);
  console.log(flagged ? "write: refused (unknown writer feature flag)" : `write: refused otherwise: ${msg.split("\n")[0]}`);
}
