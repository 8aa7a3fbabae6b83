#!/usr/bin/env node
// lt-info.mjs DIR: a deterministic summary of a dataset's latest version for the pg suites (file names
// and timestamps left out), from build/lt-inspect info: the version, the operation that made it, and
// per fragment its id, physical / live rows and whether it has a deletion file; then the indexes.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const info = JSON.parse(execFileSync(path.join(root, "build/lt-inspect"), ["info", process.argv[2]], { encoding: "utf8" }));
const frags = info.fragments.map((f) => `${f.id}:${f.live_rows}/${f.physical_rows}${f.deletion_file ? "d" : ""}`);
console.log(`version ${info.version} ${info.operation}: fragments ${frags.join(" ")}`);
