#!/usr/bin/env node
// poll.mjs DIR STOPFILE WHERE: until STOPFILE exists, open the latest version of DIR with the real Lance
// engine and print "count sum" of the ids of the rows where WHERE holds, one line per read.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { lancedb } from "../engine.mjs"; // LT_REF=8|12 picks the engine
const [dir, stop, where] = process.argv.slice(2);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lt-poll-"));
fs.symlinkSync(path.resolve(dir), path.join(tmp, "t.lance"));
const db = await lancedb.connect(tmp);
while (!fs.existsSync(stop)) {
  const t = await db.openTable("t");
  const ids = (await t.query().where(where).select(["id"]).toArray()).map((r) => Number(r.id));
  console.log(`${ids.length} ${ids.reduce((a, b) => a + b, 0)}`);
}
fs.rmSync(tmp, { recursive: true, force: true });
