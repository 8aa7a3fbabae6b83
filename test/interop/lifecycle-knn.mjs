// test/interop/lifecycle-knn.mjs — an engine's vector search on a dataset, through its index and without:
//   node lifecycle-knn.mjs <engine dir> <dataset dir> <column> <q1,q2,...> <k> <nprobes> [<ef>]
// <engine dir> holds node_modules/@lancedb/lancedb (test/interop for Lance 8, test/interop/lance12 for Lance 12).
// Prints "index: <ids>" (vectorSearch with nprobes, and ef for HNSW indexes when given; l2), "exact: <ids>" (bypassVectorIndex), ids ascending,
// and "plan: ann" when the indexed search's plan names the ANN index (else "plan: flat").
import path from "node:path";
import { createRequire } from "node:module";

const [engineDir, dsDir, column, qText, kText, npText, efText] = process.argv.slice(2);
if (!npText) {
  console.error("usage: node lifecycle-knn.mjs <engine dir> <dataset dir> <column> <q1,q2,...> <k> <nprobes>");
  process.exit(2);
}
process.env.LANCEDB_LOG ??= "error";
const require = createRequire(path.join(path.resolve(engineDir), "package.json"));
const lancedb = require("@lancedb/lancedb");
const db = await lancedb.connect(path.dirname(path.resolve(dsDir)));
const tbl = await db.openTable(path.basename(dsDir).replace(/\.lance$/, ""));
const q = qText.split(",").map(Number);
const k = Number(kText);
const ids = async (vq) => (await vq.select(["id"]).toArray()).map((r) => BigInt(r.id)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(",");
const withEf = (vq) => (efText ? vq.ef(Number(efText)) : vq);
const indexed = withEf(tbl.vectorSearch(q).column(column).distanceType("l2").limit(k).nprobes(Number(npText)));
console.log("index: " + (await ids(indexed)));
console.log("exact: " + (await ids(tbl.vectorSearch(q).column(column).distanceType("l2").limit(k).bypassVectorIndex())));
const plan = await withEf(tbl.vectorSearch(q).column(column).distanceType("l2").limit(k).nprobes(Number(npText))).explainPlan(true);
console.log("plan: " + (/ANN(SubIndex|Ivf)/.test(plan) ? "ann" : "flat"));
