#!/usr/bin/env node
// blob.mjs: blob-column datasets made and read by the real Lance engines (issue 21), for test/interop/blob.sh.
//
//   node blob.mjs make   <8|12> <dir> <form> [storage|urldir] [parts]   write a dataset (in `parts` appends) with an `id` column, a `note` column and a
//                                                         with a blob column `payload` (rows from rowBytes below)
//        forms: legacy  (large_binary with lance-encoding:blob=true; storage 2.0 or 2.1; Lance 12 refuses it in 2.2)
//               v2      (Lance 12: lance.blob.v2, storage 2.2; small rows inline, middle rows packed, large dedicated)
//               v2d     (Lance 12: lance.blob.v2, storage 2.2, Lance's default inline / dedicated thresholds and
//                        packed sidecars of at most 6 MiB)
//               v2uri   (Lance 12: lance.blob.v2 whose rows name external files by URI; argument: a directory that
//                        the URIs point into, made here)
//   node blob.mjs expect <n> [first]                      the rows make writes (or append, from id first), as JSON lines {id, len, md5} (null: len null)
//   node blob.mjs scan   <8|12> <dir>                     the engine's scan of id + note, JSON lines, ordered by id
//   node blob.mjs bytes  <dir> [8|12] [info.json]         the engine's blob bytes of every row: JSON lines {id, len, md5}
//        (legacy blobs: read where the engine's descriptors say, in the data file of the row's fragment; with
//        several data files, info.json is `lt-inspect info` of the dataset, which names each fragment's file)
//   node blob.mjs append <8|12> <dir> <first id> <n> <delete id>   the engine appends rows first..first+n-1 (bytes
//                                                         of rowBytes(id)) and deletes the row `delete id`
//   node blob.mjs desc   <dir>                            Lance 12's scan of the blob v2 descriptors: JSON lines {id, kind, size,
//                                                         blob_id, position} ordered by id (position null for inline blobs,
//                                                         whose offset in the data file depends on its layout)
//   node blob.mjs addsizes <dir> <first id> <size,...>    Lance 12 appends rows first.. with blobs of those sizes ("null": NULL),
//                                                         each byte the id mod 251 (as blob.sh's SQL makes them)
//   node blob.mjs cleanup <dir> <true|false>             Lance 12's cleanup of every version but the latest (optimize with
//                                                         cleanupOlderThan = now, deleteUnverified as given; one fragment: no compaction)
//   node blob.mjs compact <dir>                          Lance 12's compaction (optimize: compacts, removes no file)
//   (scan, bytes (blob v2) and desc also take s3://bucket/prefix/name.lance, on the server LT_S3_ENDPOINT names)
//   (expect and bytes with --fnv: {id, len, fnv}, FNV-1a 64 as `lt-inspect scan --blobs` prints it)
//
// Errors: message on stderr, exit 1.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
process.env.LANCEDB_LOG ??= "error";
const engineDir = (v) => (v === "12" ? path.join(here, "lance12") : here);

async function engine(v) {
  if (v !== "8" && v !== "12") throw new Error(`engine must be 8 or 12, not '${v}'`);
  const req = createRequire(path.join(engineDir(v), "package.json"));
  const A = req("apache-arrow");
  const lancedb = req("@lancedb/lancedb");
  return { A, lancedb };
}

// Row i of a dataset of n rows: a few sizes that matter (empty, NULL, one byte, a page's worth, several MB).
export const ROWS = 12;
function rowSize(i) {
  return [0, null, 1, 100, 5000, 70000, 300000, 3 * 1024 * 1024 + 7, 17, 0, 1024 * 1024, 9][i % 12];
}
function rowBytes(i) {
  const n = rowSize(i);
  if (n === null) return null;
  const b = Buffer.alloc(n);
  let x = (i * 2654435761) >>> 0;
  for (let k = 0; k < n; k++) { x = (Math.imul(x, 1103515245) + 12345) >>> 0; b[k] = x >>> 24; }
  return b;
}
const md5 = (b) => crypto.createHash("md5").update(b).digest("hex");
// FNV-1a 64, as `lt-inspect scan --blobs` prints it (32-bit halves: BigInt per byte is slow on MBs)
function fnv(b) {
  let hi = 0xcbf29ce4, lo = 0x84222325;
  for (let i = 0; i < b.length; i++) {
    lo ^= b[i];
    // (hi:lo) * 0x100000001b3 mod 2^64 = (hi:lo) * 0x1b3 + (lo << 40)
    const l0 = (lo & 0xffff) * 0x1b3, l1 = (lo >>> 16) * 0x1b3;
    const nlo = l0 + (l1 & 0xffff) * 0x10000;
    const carry = Math.floor(nlo / 0x100000000) + Math.floor(l1 / 0x10000);
    hi = (Math.imul(hi, 0x1b3) + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = nlo >>> 0;
  }
  return hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0");
}
const FNV = process.argv.includes("--fnv");
const describe = (id, b) => JSON.stringify(FNV ? { id, len: b === null ? null : b.length, fnv: b === null ? null : fnv(b) }
  : { id, len: b === null ? null : b.length, md5: b === null ? null : md5(b) });

// s3://bucket/prefix/name.lance (test/s3/run.sh): the engine's own S3 storage options, pointed at LT_S3_ENDPOINT
const isS3 = (dir) => dir.startsWith("s3://");
const tname = (dir) => (isS3(dir) ? path.posix.basename(dir).replace(/\.lance$/, "") : "t");
async function connect(lancedb, dir) {
  if (isS3(dir)) {
    return lancedb.connect(path.posix.dirname(dir), { storageOptions: {
      endpoint: process.env.LT_S3_ENDPOINT, region: process.env.AWS_REGION ?? "us-east-1", allow_http: "true",
      aws_access_key_id: process.env.AWS_ACCESS_KEY_ID ?? "S3RVER",
      aws_secret_access_key: process.env.AWS_SECRET_ACCESS_KEY ?? "S3RVER", virtual_hosted_style_request: "false" } });
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lt-blob-"));
  process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
  fs.mkdirSync(path.dirname(path.resolve(dir)), { recursive: true });
  if (!fs.existsSync(dir)) fs.mkdirSync(dir);
  fs.symlinkSync(path.resolve(dir), path.join(tmp, "t.lance"));
  return lancedb.connect(tmp);
}
function chmodReadable(dir) { // lance creates files 0600; the postgres server must be able to read them
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    fs.chmodSync(p, e.isDirectory() ? 0o755 : 0o644);
    if (e.isDirectory()) chmodReadable(p);
  }
}

async function make(v, dir, form, arg, parts) {
  const { A, lancedb } = await engine(v);
  fs.rmSync(dir, { recursive: true, force: true });
  const db = await connect(lancedb, dir);
  const ids = [...Array(ROWS).keys()];
  let schema, rows, storage;
  if (form === "legacy") {
    const meta = new Map([["lance-encoding:blob", "true"]]);
    schema = new A.Schema([new A.Field("id", new A.Int64(), false), new A.Field("note", new A.Utf8(), true),
      new A.Field("payload", new A.LargeBinary(), true, meta)]);
    rows = ids.map((i) => ({ id: BigInt(i), note: `row ${i}`, payload: rowBytes(i) }));
    storage = arg || "2.1";
  } else if (form === "v2" || form === "v2d" || form === "v2uri") {
    if (v !== "12") throw new Error("blob v2 is made by Lance 12");
    const { blob } = require12();
    const field = form === "v2" ? blob("payload", { inlineSizeThreshold: 200, dedicatedSizeThreshold: 100000 })
      : form === "v2d" ? blob("payload", { packFileSizeThreshold: 6 * 1024 * 1024 }) : blob("payload");
    schema = new A.Schema([new A.Field("id", new A.Int64(), false), new A.Field("note", new A.Utf8(), true), field]);
    if (form !== "v2uri") rows = ids.map((i) => ({ id: BigInt(i), note: `row ${i}`, payload: rowBytes(i) }));
    else {
      fs.mkdirSync(arg, { recursive: true });
      rows = ids.map((i) => {
        const b = rowBytes(i);
        if (b === null) return { id: BigInt(i), note: `row ${i}`, payload: null };
        const f = path.resolve(arg, `ext-${i}.bin`);
        fs.writeFileSync(f, b);
        return { id: BigInt(i), note: `row ${i}`, payload: { data: null, uri: `file://${f}` } };
      });
    }
    storage = "2.2";
  } else throw new Error(`unknown form '${form}'`);
  // an empty table first: building a table from rows drops the fields' metadata (the blob marker) in Lance 8's binding
  const storageOptions = { new_table_data_storage_version: storage };
  if (form === "v2uri") storageOptions.allow_external_blob_outside_bases = "true";
  const tbl = await db.createEmptyTable("t", schema, { storageOptions });
  // parts > 1: that many appends, so as many fragments (and data files, each with its own blobs and sidecars)
  const n = Math.max(1, Number(parts || 1));
  for (let k = 0; k < n; k++) await tbl.add(rows.slice(Math.floor((k * rows.length) / n), Math.floor(((k + 1) * rows.length) / n)));
  chmodReadable(dir);
}
async function append(v, dir, first, n, del) {
  const { A, lancedb } = await engine(v);
  const tbl = await (await connect(lancedb, dir)).openTable(tname(dir));
  const schema = await tbl.schema();
  const ids = [...Array(Number(n)).keys()].map((k) => Number(first) + k);
  const rows = ids.map((i) => ({ id: BigInt(i), note: `row ${i}`, payload: rowBytes(i) }));
  await tbl.add(rows);
  await tbl.delete(`id = ${Number(del)}`);
  chmodReadable(dir);
}
async function desc(dir) {
  const tbl = await (await connect(require12(), dir)).openTable(tname(dir));
  const rows = await tbl.query().select(["id", "payload"]).toArray();
  rows.sort((a, b) => Number(a.id) - Number(b.id));
  for (const r of rows) {
    const d = r.payload && r.payload.toJSON();
    console.log(JSON.stringify(d ? { id: Number(r.id), kind: d.kind, size: Number(d.size), blob_id: d.blob_id,
      position: d.kind === 0 ? null : Number(d.position) } : { id: Number(r.id), kind: null }));
  }
}
async function addsizes(dir, first, sizes) {
  const tbl = await (await connect(require12(), dir)).openTable(tname(dir));
  const rows = sizes.split(",").map((n, k) => {
    const id = Number(first) + k;
    return { id: BigInt(id), note: "sized", payload: n === "null" ? null : Buffer.alloc(Number(n), id % 251) };
  });
  await tbl.add(rows);
  chmodReadable(dir);
}
async function cleanup(dir, unverified) {
  const tbl = await (await connect(require12(), dir)).openTable(tname(dir));
  await tbl.optimize({ cleanupOlderThan: new Date(), deleteUnverified: unverified === "true" });
}
async function compact(dir) {
  const tbl = await (await connect(require12(), dir)).openTable(tname(dir));
  await tbl.optimize();
  chmodReadable(dir);
}
function require12() { return createRequire(path.join(engineDir("12"), "package.json"))("@lancedb/lancedb"); }

async function scan(v, dir) {
  const { lancedb } = await engine(v);
  const tbl = await (await connect(lancedb, dir)).openTable(tname(dir));
  const out = await tbl.query().select(["id", "note"]).toArray();
  out.sort((a, b) => Number(a.id) - Number(b.id));
  for (const r of out) console.log(JSON.stringify({ id: Number(r.id), note: r.note }));
}

// Legacy blobs: Lance 12's blob API refuses them and Lance 8 has none, so the bytes are read where Lance 8's own scan
// says they are: its {position, size} descriptor into the row's data file (this harness makes one data file per
// dataset). Blob v2: Lance 12's fetchBlobs.
async function bytes(dir, v = "8", info = null) {
  const { A, lancedb } = await engine(v);
  let tbl = await (await connect(lancedb, dir)).openTable(tname(dir));
  const legacy = (await tbl.schema()).fields.find((f) => f.name === "payload").type.typeId === A.Type.LargeBinary;
  if (legacy) {
    // the data file of each fragment that holds payload (the last field of the schema)
    const fileOf = new Map();
    if (info) {
      const m = JSON.parse(fs.readFileSync(info, "utf8"));
      const pid = m.schema.find((f) => f.name === "payload").id;
      for (const fr of m.fragments) fileOf.set(fr.id, fr.files.find((f) => f.fields.includes(pid)).path);
    } else {
      const files = fs.readdirSync(path.join(dir, "data")).filter((f) => f.endsWith(".lance"));
      if (files.length !== 1) throw new Error(`${dir}: ${files.length} data files and no lt-inspect info to tell them`);
      fileOf.set(0, files[0]);
    }
    const fds = new Map();
    const fdOf = (frag) => {
      if (!fileOf.has(frag)) throw new Error(`no data file known for fragment ${frag}`);
      if (!fds.has(frag)) fds.set(frag, fs.openSync(path.join(dir, "data", fileOf.get(frag)), "r"));
      return fds.get(frag);
    };
    const rows = await tbl.query().select(["id", "payload"]).withRowId().toArray();
    rows.sort((a, b) => Number(a.id) - Number(b.id));
    for (const r of rows) {
      const d = r.payload && r.payload.toJSON();
      let b = null;
      if (d && !(d.position === 1n && d.size === 0n)) { // 2.0 marks a NULL with position 1, size 0
        b = Buffer.alloc(Number(d.size));
        // a row address: fragment id in the high 32 bits (these datasets have no stable row ids)
        if (b.length) fs.readSync(fdOf(info ? Number(BigInt(r._rowid) >> 32n) : 0), b, 0, b.length, Number(d.position));
      }
      console.log(describe(Number(r.id), b));
    }
    return;
  }
  tbl = await (await connect(require12(), dir)).openTable(tname(dir));
  const rows = await tbl.query().select(["id"]).withRowId().toArray();
  rows.sort((a, b) => Number(a.id) - Number(b.id));
  const got = await tbl.fetchBlobs("payload", rows.map((r) => r._rowid));
  rows.forEach((r, k) => console.log(describe(Number(r.id), got[k])));
}

const [cmd, ...args] = process.argv.slice(2).filter((a) => a !== "--fnv");
try {
  if (cmd === "make") await make(args[0], args[1], args[2], args[3], args[4]);
  else if (cmd === "expect") {
    const first = Number(args[1] || 0);
    for (let i = first; i < first + Number(args[0] || ROWS); i++) console.log(describe(i, rowBytes(i)));
  }
  else if (cmd === "scan") await scan(args[0], args[1]);
  else if (cmd === "bytes") await bytes(args[0], args[1], args[2]);
  else if (cmd === "append") await append(args[0], args[1], args[2], args[3], args[4]);
  else if (cmd === "desc") await desc(args[0]);
  else if (cmd === "cleanup") await cleanup(args[0], args[1]);
  else if (cmd === "compact") await compact(args[0]);
  else if (cmd === "addsizes") await addsizes(args[0], args[1], args[2]);
  else { console.error("usage: blob.mjs make|expect|scan|bytes|append|desc|addsizes|cleanup ..."); process.exit(2); }
} catch (e) {
  console.error(`blob.mjs: ${e.message}`);
  process.exit(1);
}
