#!/usr/bin/env node
// lt-info.mjs DIR: a deterministic summary of a dataset's latest version for the pg suites (file names
// and timestamps left out), from build/lt-inspect info: the version, the operation that made it, and
// per fragment its id, physical / live rows and whether it has a deletion file.
// lt-info.mjs --data-file FRAG DIR: the path of fragment FRAG's (first) data file.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const frag = args[0] === "--data-file" ? Number(args[1]) : null;
const dir = frag === null ? args[0] : args[2];
const info = JSON.parse(execFileSync(path.join(root, "build/lt-inspect"), ["info", dir], { encoding: "utf8" }));
if (frag !== null) {
  const f = info.fragments.find((x) => x.id === frag);
  if (!f) { console.error(`no fragment ${frag} in ${dir}`); process.exit(1); }
  console.log(path.join(dir, "data", f.files[0].path));
} else {
  const frags = info.fragments.map((f) => `${f.id}:${f.live_rows}/${f.physical_rows}${f.deletion_file ? "d" : ""}`);
  console.log(`version ${info.version} ${info.operation}: fragments ${frags.join(" ")}`);
}
