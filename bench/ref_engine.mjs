// ref_engine.mjs: the reference engine as the bench scripts load it — the pinned @lancedb/lancedb (and its
// apache-arrow) of test/interop — a dataset opened at its own path, and the time of one call.
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../test/interop/package.json"));
process.env.LANCEDB_LOG ??= "error";
export const lancedb = require("@lancedb/lancedb");
export const A = require("apache-arrow");

// lancedb addresses tables as <db>/<name>.lance: the dataset at dir through a symlink in a private temp db
// (removed when the process exits)
const temps = [];
process.on("exit", () => { for (const d of temps) fs.rmSync(d, { recursive: true, force: true }); });
export async function openAt(dir) {
  const db = fs.mkdtempSync(path.join(os.tmpdir(), "lt-bench-"));
  temps.push(db);
  fs.symlinkSync(path.resolve(dir), path.join(db, "t.lance"));
  return (await lancedb.connect(db)).openTable("t");
}

// wall seconds and process CPU seconds (user + system, all threads) of one awaited call
export async function measure(fn) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const res = await fn();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  return { res, wall, cpu: (c.user + c.system) / 1e6 };
}
