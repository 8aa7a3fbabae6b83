import fs from "node:fs"; import path from "node:path"; import os from "node:os";
import { createRequire } from "node:module";
const req = createRequire(path.join(process.cwd(), "test/interop/lance12/package.json"));
const lancedb = req("@lancedb/lancedb");
const dir = process.argv[2];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "x-")); fs.symlinkSync(path.resolve(dir), path.join(tmp, "t.lance"));
const db = await lancedb.connect(tmp); const tbl = await db.openTable("t");
const r = await tbl.optimize({ cleanupOlderThan: new Date(0) });
console.log(JSON.stringify(r, (k,v)=> typeof v === 'bigint' ? Number(v) : v));
