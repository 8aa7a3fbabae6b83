// test/pg/set-reader-flags.mjs MANIFEST FLAGS — rewrite a Lance manifest so that its reader_feature_flags
// (field 9) are FLAGS: a varint field appended to the manifest protobuf (the last value of a scalar field
// wins), with the length prefix adjusted; the footer keeps pointing at the same offset. Used by
// test/pg/run.sh to build a dataset that needs a reader feature lt_fdw does not know.
import fs from "node:fs";

const [file, flagsArg] = process.argv.slice(2);
if (!file || !flagsArg) {
  console.error("usage: node set-reader-flags.mjs MANIFEST FLAGS");
  process.exit(2);
}
const buf = fs.readFileSync(file);
const len = buf.length;
if (len < 16 || buf.toString("latin1", len - 4) !== "LANC") throw new Error(`${file}: not a Lance manifest`);
const pos = Number(buf.readBigUInt64LE(len - 16));
const dlen = buf.readUInt32LE(pos);
if (pos + 4 + dlen !== len - 16) throw new Error(`${file}: the manifest is not the last section`);
const extra = [0x48];			// field 9, varint
for (let v = BigInt(flagsArg); ; ) {
  const b = Number(v & 0x7fn);
  v >>= 7n;
  if (v === 0n) { extra.push(b); break; }
  extra.push(b | 0x80);
}
const prefix = Buffer.alloc(4);
prefix.writeUInt32LE(dlen + extra.length);
fs.writeFileSync(file, Buffer.concat([buf.subarray(0, pos), prefix, buf.subarray(pos + 4, pos + 4 + dlen),
  Buffer.from(extra), buf.subarray(len - 16)]));
