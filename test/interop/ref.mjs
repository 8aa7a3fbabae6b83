#!/usr/bin/env node
// ref.mjs: lt_fdw's interop harness around the real Lance engine (@lancedb/lancedb 0.31.0, which is lance 8.0.0;
// with LT_REF=12, @lancedb/lancedb 0.39.0 = lance 12.0.0: engine.mjs).
//
//   node ref.mjs make  <dir> <spec.json>                                      create a dataset from a spec
//   node ref.mjs apply <dir> <spec.json>                                     run the spec's ops on an existing dataset ("report_merge": true adds the last merge_insert's counts)
//   node ref.mjs scan  <dir> [--columns a,b] [--version N|TAG] [--branch B] [--with-rowid] [--filter SQL] [--exprs JSON]
//                                                                             rows as JSON lines (README.md)
//   node ref.mjs pages <dir> [--version N|TAG]                                page encodings, decoded here
//   node ref.mjs schema <dir> [--version N|TAG]                               fields and their metadata, one JSON line each
//   node ref.mjs filters <dir> <filters.txt> --version BASE                  each filter's rows at the latest version
//                                                                             and at BASE (an index built since: same rows?)
//   node ref.mjs gen   <spec.json>                                            the rows a spec generates
//   node ref.mjs build <outdir> <spec.json>...                                make + expected scans + cases
//   node ref.mjs check-pages <spec.json> <ref-pages.jsonl> <lt-pages.jsonl>   pages: expectations and cross-check
//   node ref.mjs check-info <datadir> <infodir>                               lt-inspect info outputs
//   node ref.mjs diff <expected.jsonl> <actual.jsonl>                         explain how two scans differ
//
// Output formats and the spec language are described in README.md. Errors: message on stderr, exit 1; usage: 2.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { A, lancedb, REF } from "./engine.mjs"; // LT_REF=8|12 picks the engine
const T = A.Type;

class UsageError extends Error {}
const fail = (msg) => { throw new Error(msg); };

// =============================================================================================== types
const SCALARS = {
  bool: () => new A.Bool(), int8: () => new A.Int8(), int16: () => new A.Int16(), int32: () => new A.Int32(),
  int64: () => new A.Int64(), uint8: () => new A.Uint8(), uint16: () => new A.Uint16(), uint32: () => new A.Uint32(),
  uint64: () => new A.Uint64(), float16: () => new A.Float16(), float32: () => new A.Float32(),
  float64: () => new A.Float64(), utf8: () => new A.Utf8(), large_utf8: () => new A.LargeUtf8(),
  binary: () => new A.Binary(), large_binary: () => new A.LargeBinary(), date32: () => new A.DateDay(),
  date64: () => new A.DateMillisecond(),
};
const UNIT_NAMES = ["s", "ms", "us", "ns"];
const UNIT_SCALE = [1n, 1000n, 1000000n, 1000000000n];
const UNIT_DIGITS = [0, 3, 6, 9];

// Type grammar: scalar names above, fixed_size_binary(N), time32[s|ms], time64[us|ns], timestamp[unit] or
// timestamp[unit, TZ], decimal128(P,S), list<T>, fixed_size_list<T,N>, struct<name:T,...>, map<K,V> (entries
// struct<key: K not null, value: V>).
function parseType(src) {
  const toks = src.match(/[A-Za-z_][A-Za-z0-9_/+-]*|\d+|[<>(),:\[\]]/g) || [];
  let k = 0;
  const peek = () => toks[k];
  const next = () => (k < toks.length ? toks[k++] : fail(`type '${src}': unexpected end`));
  const expect = (t) => (next() === t ? t : fail(`type '${src}': expected '${t}'`));
  const num = () => { const t = next(); return /^\d+$/.test(t) ? Number(t) : fail(`type '${src}': expected a number, got '${t}'`); };
  const item = (t) => new A.Field("item", t, true);
  function one() {
    const w = next().toLowerCase();
    switch (w) {
      case "list": { expect("<"); const t = one(); expect(">"); return new A.List(item(t)); }
      case "fixed_size_list": { expect("<"); const t = one(); expect(","); const n = num(); expect(">"); return new A.FixedSizeList(n, item(t)); }
      case "map": {
        expect("<"); const k = one(); expect(","); const v = one(); expect(">");
        return new A.Map_(new A.Field("entries", new A.Struct([new A.Field("key", k, false), new A.Field("value", v, true)]), false));
      }
      case "struct": {
        expect("<"); const fields = [];
        for (;;) { const n = next(); expect(":"); fields.push(new A.Field(n, one(), true)); if (peek() === ",") { next(); continue; } break; }
        expect(">"); return new A.Struct(fields);
      }
      case "fixed_size_binary": { expect("("); const n = num(); expect(")"); return new A.FixedSizeBinary(n); }
      case "decimal128": { expect("("); const p = num(); expect(","); const s = num(); expect(")"); return new A.Decimal(s, p, 128); }
      case "time32": case "time64": case "timestamp": {
        expect("["); const u = UNIT_NAMES.indexOf(next()); if (u < 0) fail(`type '${src}': bad unit`);
        let tz = null;
        if (peek() === ",") { next(); tz = next(); }
        expect("]");
        if (w === "timestamp") return new A.Timestamp(u, tz);
        if (w === "time32" && u <= 1) return new A.Time(u, 32);
        if (w === "time64" && u >= 2) return new A.Time(u, 64);
        return fail(`type '${src}': ${w} cannot have unit ${UNIT_NAMES[u]}`);
      }
      default: return (SCALARS[w] || fail(`type '${src}': unknown type '${w}'`))();
    }
  }
  const t = one();
  if (k !== toks.length) fail(`type '${src}': trailing '${toks.slice(k).join("")}'`);
  return t;
}
const isInt64 = (t) => t.typeId === T.Int && t.bitWidth === 64;

// ================================================================================ dates and numbers
// days since 1970-01-01 <-> proleptic Gregorian civil date (valid far beyond the years we use)
function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400), yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}
function civilFromDays(z) {
  z += 719468;
  const era = Math.floor(z / 146097), doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100)), mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1, m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}
const pad = (v, n) => String(v).padStart(n, "0");
const fmtDate = (days) => { const [y, m, d] = civilFromDays(days); return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`; };
function parseDate(v) {
  if (typeof v === "number") return v;
  const m = /^(\d{4})-(\d\d)-(\d\d)$/.exec(v) || fail(`bad date '${v}'`);
  return daysFromCivil(+m[1], +m[2], +m[3]);
}
const floorDiv = (a, b) => { const q = a / b; return a % b < 0n ? q - 1n : q; };
function fmtClock(secOfDay, frac, digits) {
  const s = Number(secOfDay);
  return `${pad(Math.floor(s / 3600), 2)}:${pad(Math.floor(s / 60) % 60, 2)}:${pad(s % 60, 2)}` + (digits ? "." + pad(frac, digits) : "");
}
function fmtTimestamp(v, unit, tz) {
  const scale = UNIT_SCALE[unit], sec = floorDiv(v, scale), frac = v - sec * scale;
  const days = floorDiv(sec, 86400n);
  return `${fmtDate(Number(days))}T${fmtClock(sec - days * 86400n, frac, UNIT_DIGITS[unit])}${tz ? "Z" : ""}`;
}
function parseClockFrac(hms, frac, unit) {
  const [h, mi, s] = hms.split(":").map(Number);
  const f = (frac || "").padEnd(9, "0");
  if (f.length > 9) fail(`too many fraction digits in '${hms}.${frac}'`);
  return BigInt(h * 3600 + mi * 60 + s) * UNIT_SCALE[unit] + BigInt(f) / (1000000000n / UNIT_SCALE[unit]);
}
function parseTimestamp(v, unit) {
  if (typeof v === "number" || typeof v === "bigint" || /^-?\d+$/.test(v)) return BigInt(v);
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d+))?Z?$/.exec(v) || fail(`bad timestamp '${v}'`);
  return BigInt(parseDate(m[1])) * 86400n * UNIT_SCALE[unit] + parseClockFrac(m[2], m[3], unit);
}
function parseTime(v, unit) {
  if (typeof v === "number" || /^-?\d+$/.test(v)) return BigInt(v);
  const m = /^(\d\d:\d\d:\d\d)(?:\.(\d+))?$/.exec(v) || fail(`bad time '${v}'`);
  return parseClockFrac(m[1], m[2], unit);
}
const fmtTime = (v, unit) => { const sec = floorDiv(v, UNIT_SCALE[unit]); return fmtClock(sec, v - sec * UNIT_SCALE[unit], UNIT_DIGITS[unit]); };

function fmtDecimal(v, scale) {
  const neg = v < 0n, digits = (neg ? -v : v).toString().padStart(scale + 1, "0");
  return (neg ? "-" : "") + (scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits);
}
function parseDecimal(v, scale) {
  const m = /^([-+]?)(\d*)(?:\.(\d*))?$/.exec(String(v)) || fail(`bad decimal '${v}'`);
  const frac = (m[3] || "").padEnd(scale, "0");
  if (frac.length > scale) fail(`decimal '${v}' has more than ${scale} fraction digits`);
  const u = BigInt((m[2] || "0") + frac);
  return m[1] === "-" ? -u : u;
}
// float32: the shortest decimal that reads back as the same float32; then ECMAScript number formatting
function shortestF32(x) {
  if (!Number.isFinite(x) || x === 0) return x;
  for (let p = 1; p < 10; p++) { const y = Number(x.toPrecision(p)); if (Math.fround(y) === x) return y; }
  return x;
}
function halfToNumber(h) {
  const sign = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, f = h & 1023;
  if (e === 31) return f ? NaN : sign * Infinity;
  return sign * (e ? (1 + f / 1024) * 2 ** (e - 15) : f * 2 ** -24);
}
function numberToHalf(x) {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0, a = Math.abs(x);
  if (a === Infinity || a >= 65520) return sign | 0x7c00;
  if (a < 2 ** -14) return sign | Math.round(a * 2 ** 24); // subnormal (round half to even is moot for our values)
  let e = Math.floor(Math.log2(a)), f = Math.round((a / 2 ** e - 1) * 1024);
  if (f === 1024) { e++; f = 0; }
  return sign | ((e + 15) << 10) | f;
}
const floatOut = (x) => (Number.isNaN(x) ? "NaN" : x === Infinity ? "Infinity" : x === -Infinity ? "-Infinity" : x);
// "NaN", "-NaN" (the sign bit set: Arrow's total order puts it below -Infinity), "Infinity", "-Infinity", or digits
const floatIn = (v) => (v === "-NaN" ? -NaN : typeof v === "string" ? Number(v) : v);

// ============================================================================ JSON values -> arrow
function buildData(type, vals) {
  const n = vals.length;
  let nullCount = 0;
  const validity = new Uint8Array((n + 7) >> 3);
  // a struct value {$null: true, ...fields} is a null struct whose children still hold those fields
  const isNullVal = (v) => v === null || v === undefined || (type.typeId === T.Struct && v.$null === true);
  for (let i = 0; i < n; i++) if (isNullVal(vals[i])) nullCount++; else validity[i >> 3] |= 1 << (i & 7);
  const common = { type, length: n, nullCount, nullBitmap: nullCount ? validity : undefined };
  const each = (conv, dflt) => vals.map((v) => (v === null || v === undefined ? dflt : conv(v)));
  const enc = new TextEncoder();
  const varBinary = (large, toBytes) => {
    const parts = each(toBytes, new Uint8Array(0)), offs = large ? new BigInt64Array(n + 1) : new Int32Array(n + 1);
    let o = 0;
    parts.forEach((p, i) => { o += p.length; offs[i + 1] = large ? BigInt(o) : o; });
    if (!large && o > 0x7fffffff) fail("more than 2 GiB in a 32-bit offset column");
    return A.makeData({ ...common, valueOffsets: offs, data: Buffer.concat(parts) });
  };
  const b64 = (v) => Buffer.from(v, "base64");
  switch (type.typeId) {
    case T.Bool: {
      // apache-arrow 18 serializes an all-null bool array with an empty values buffer, which lance rejects
      if (n > 0 && nullCount === n) fail("an all-null bool column cannot be sent through apache-arrow JS; create it with add_columns 'CAST(NULL AS BOOLEAN)'");
      const bits = new Uint8Array((n + 7) >> 3);
      vals.forEach((v, i) => { if (v) bits[i >> 3] |= 1 << (i & 7); });
      return A.makeData({ ...common, data: bits });
    }
    case T.Int: return A.makeData({ ...common, data: type.bitWidth === 64 ? type.ArrayType.from(each(BigInt, 0n)) : type.ArrayType.from(each(Number, 0)) });
    case T.Float:
      if (type.precision === 0) return A.makeData({ ...common, data: Uint16Array.from(each((v) => numberToHalf(floatIn(v)), 0)) });
      {
        // V8 may canonicalize a NaN kept in a plain array of numbers: the sign of "-NaN" is set on the bits
        const data = type.ArrayType.from(each(floatIn, 0)), dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
        vals.forEach((v, i) => { if (v === "-NaN") type.precision === 1 ? dv.setUint32(4 * i, 0xffc00000, true) : dv.setBigUint64(8 * i, 0xfff8000000000000n, true); });
        return A.makeData({ ...common, data });
      }
    case T.Utf8: case T.LargeUtf8: return varBinary(type.typeId === T.LargeUtf8, (v) => enc.encode(v));
    case T.Binary: case T.LargeBinary: return varBinary(type.typeId === T.LargeBinary, b64);
    case T.FixedSizeBinary: {
      const w = type.byteWidth, out = new Uint8Array(n * w);
      vals.forEach((v, i) => { if (v === null || v === undefined) return; const b = b64(v); if (b.length !== w) fail(`fixed_size_binary(${w}) value of ${b.length} bytes`); out.set(b, i * w); });
      return A.makeData({ ...common, data: out });
    }
    case T.Date:
      if (type.unit === 0) return A.makeData({ ...common, data: Int32Array.from(each(parseDate, 0)) });
      return A.makeData({ ...common, data: BigInt64Array.from(each((v) => BigInt(parseDate(v)) * 86400000n, 0n)) });
    case T.Time:
      if (type.bitWidth === 32) return A.makeData({ ...common, data: Int32Array.from(each((v) => Number(parseTime(v, type.unit)), 0)) });
      return A.makeData({ ...common, data: BigInt64Array.from(each((v) => parseTime(v, type.unit), 0n)) });
    case T.Timestamp: return A.makeData({ ...common, data: BigInt64Array.from(each((v) => parseTimestamp(v, type.unit), 0n)) });
    case T.Decimal: {
      const words = new Uint32Array(n * 4);
      vals.forEach((v, i) => {
        if (v === null || v === undefined) return;
        let u = BigInt.asUintN(128, parseDecimal(v, type.scale));
        for (let k = 0; k < 4; k++, u >>= 32n) words[i * 4 + k] = Number(u & 0xffffffffn);
      });
      return A.makeData({ ...common, data: words });
    }
    case T.FixedSizeList: {
      const k = type.listSize, items = [];
      for (const v of vals) {
        if (v === null || v === undefined) for (let j = 0; j < k; j++) items.push(null);
        else if (v.length !== k) fail(`fixed_size_list of size ${k} given ${v.length} items`);
        else items.push(...v);
      }
      return A.makeData({ ...common, child: buildData(type.children[0].type, items) });
    }
    case T.List: case T.Map: { // a map value is a list of {key, value}
      const offs = new Int32Array(n + 1), items = [];
      vals.forEach((v, i) => { if (v) items.push(...v); offs[i + 1] = items.length; });
      return A.makeData({ ...common, valueOffsets: offs, child: buildData(type.children[0].type, items) });
    }
    case T.Struct:
      return A.makeData({ ...common, children: type.children.map((f) => buildData(f.type, vals.map((v) => (v == null ? null : v[f.name] ?? null)))) });
    default: return fail(`cannot build values of type ${type}`);
  }
}
function arrowTable(schema, rows, batchRows = 0) { // batchRows > 0: several record batches (lance then cuts pages)
  const batch = (part) => {
    const cols = schema.fields.map((f) => buildData(f.type, part.map((r) => (f.name in r ? r[f.name] : null))));
    return new A.RecordBatch(schema, A.makeData({ type: new A.Struct(schema.fields), length: part.length, nullCount: 0, children: cols }));
  };
  const size = batchRows > 0 ? batchRows : Math.max(rows.length, 1), batches = [];
  for (let k = 0; k < rows.length || k === 0; k += size) batches.push(batch(rows.slice(k, k + size)));
  return new A.Table(batches);
}

// ============================================================================ arrow -> JSON values
const dec = new TextDecoder("utf-8", { fatal: true });
function jsonValue(d, i) {
  if (d.offset !== 0) fail("unexpected sliced arrow data from lance"); // all indexing below assumes offset 0
  if (!d.getValid(i)) return null;
  const t = d.type;
  switch (t.typeId) {
    case T.Bool: return ((d.values[i >> 3] >> (i & 7)) & 1) === 1;
    case T.Int: return t.bitWidth === 64 ? d.values[i].toString() : d.values[i];
    case T.Float:
      if (t.precision === 0) return floatOut(shortestF32(halfToNumber(d.values[i])));
      return floatOut(t.precision === 1 ? shortestF32(d.values[i]) : d.values[i]);
    case T.Utf8: case T.LargeUtf8: case T.Binary: case T.LargeBinary: {
      const bytes = d.values.subarray(Number(d.valueOffsets[i]), Number(d.valueOffsets[i + 1]));
      return t.typeId === T.Utf8 || t.typeId === T.LargeUtf8 ? dec.decode(bytes) : Buffer.from(bytes).toString("base64");
    }
    case T.FixedSizeBinary: return Buffer.from(d.values.subarray(i * t.byteWidth, (i + 1) * t.byteWidth)).toString("base64");
    case T.Date: return fmtDate(t.unit === 0 ? d.values[i] : Number(floorDiv(BigInt(d.values[i]), 86400000n)));
    case T.Time: return fmtTime(BigInt(d.values[i]), t.unit);
    case T.Timestamp: return fmtTimestamp(BigInt(d.values[i]), t.unit, t.timezone);
    case T.Decimal: {
      const w = t.bitWidth / 32;
      let v = 0n;
      for (let k = w - 1; k >= 0; k--) v = (v << 32n) | BigInt(d.values[i * w + k]);
      return fmtDecimal(BigInt.asIntN(t.bitWidth, v), t.scale);
    }
    case T.List: case T.Map: {
      const out = [];
      for (let k = d.valueOffsets[i]; k < d.valueOffsets[i + 1]; k++) out.push(jsonValue(d.children[0], k));
      return out;
    }
    case T.FixedSizeList: {
      const out = [], k = t.listSize;
      for (let j = i * k; j < (i + 1) * k; j++) out.push(jsonValue(d.children[0], j));
      return out;
    }
    case T.Struct: {
      const out = {};
      t.children.forEach((f, j) => { out[f.name] = jsonValue(d.children[j], i); });
      return out;
    }
    default: return fail(`no JSON format for arrow type ${t}`);
  }
}

// ========================================================================== deterministic generator
// hash of (row, column, salt) -> uint32
function h32(i, c, s = 0) {
  let x = (Math.imul(i, 0x9e3779b1) ^ Math.imul(c + 1, 0x85ebca77) ^ Math.imul(s + 7, 0xc2b2ae3d)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d); x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}
const h64 = (i, c, s) => (BigInt(h32(i, c, s)) << 32n) | BigInt(h32(i, c, s + 101));
const WORDS = ["lance", "column", "page", "fragment", "manifest", "postgres", "vector", "arrow", "zstd", "delta",
  "mini", "block", "zip", "row", "version", "table", "index", "schema", "query", "batch", "offset", "value"];
function text(i, c, len) { // deterministic word salad of exactly len bytes (ASCII); compressible by FSST and zstd
  let s = "", k = 0;
  while (s.length < len) s += WORDS[h32(i, c, k++) % WORDS.length] + (k % 7 ? " " : ". ");
  return s.slice(0, len);
}
const STRINGS = ["", "a", "héllo wörld", "日本語テキスト", "emoji 🦀🐘", "quote \" and \\ backslash", "tab\tnew\nline\r",
  "ctl \u0001\u001f\u007f", "sep \u2028\u2029", "   spaces   ", "NULL", "null"];
const DATE_EDGES = ["1970-01-01", "1969-12-31", "2000-02-29", "1900-03-01", "0001-01-01", "9999-12-31", "2024-12-31"];

function defaultValue(t, i, c) {
  const e = i % 101, r = h32(i, c);
  switch (t.typeId) {
    case T.Bool: return r % 3 !== 0;
    case T.Int: {
      const w = BigInt(t.bitWidth), max = t.isSigned ? (1n << (w - 1n)) - 1n : (1n << w) - 1n, min = t.isSigned ? -max - 1n : 0n;
      let v = e === 1 ? max : e === 2 ? min : e === 3 ? 0n : e === 4 && t.isSigned ? -1n : null;
      if (v === null) v = t.isSigned ? BigInt.asIntN(Number(w), h64(i, c, 0)) : BigInt.asUintN(Number(w), h64(i, c, 0));
      return t.bitWidth === 64 ? v.toString() : Number(v);
    }
    case T.Float: {
      const specials = [null, "NaN", "Infinity", "-Infinity", -0, 0];
      if (e >= 1 && e <= 5) return specials[e];
      if (t.precision === 0) { // float16: range edges and multiples of 1/16 below 64, all exact
        const v = e === 6 ? 65504 : e === 7 ? 6.103515625e-5 : e === 8 ? 5.960464477539063e-8 : ((r % 2049) - 1024) / 16;
        return shortestF32(v);
      }
      if (t.precision === 1) {
        const v = e === 6 ? 3.4028234663852886e38 : e === 7 ? 1.401298464324817e-45 : e === 8 ? 1e-7 : ((r % 2000001) - 1000000) / 997;
        return shortestF32(Math.fround(v));
      }
      const edges = { 6: 1.7976931348623157e308, 7: 5e-324, 8: 1e21, 9: 1e-7, 10: 123456789012345680000, 11: 0.1 + 0.2, 12: -1.5e-300 };
      if (e in edges) return edges[e];
      return (r - 2147483648) / 65536 + h32(i, c, 1) / 4294967296;
    }
    case T.Utf8: case T.LargeUtf8:
      if (e < STRINGS.length) return STRINGS[e];
      if (t.typeId === T.LargeUtf8 && r % 9 === 0) return text(i, c, 200 + (r % 200));
      return `v${c}_${i}_${(r % 100000).toString(36)}`;
    case T.Binary: case T.LargeBinary:
      return Buffer.from(Array.from({ length: r % 9 }, (_, k) => h32(i, c, k + 3) & 255)).toString("base64");
    case T.FixedSizeBinary: return Buffer.from(Array.from({ length: t.byteWidth }, (_, k) => (e === 1 ? 0 : h32(i, c, k + 3) & 255))).toString("base64");
    case T.Date: return e < DATE_EDGES.length ? DATE_EDGES[e] : fmtDate((r % 60000) - 20000);
    case T.Time: {
      const scale = UNIT_SCALE[t.unit], day = 86400n * scale;
      const v = e === 1 ? 0n : e === 2 ? day - 1n : (BigInt(r) * 1000003n + BigInt(h32(i, c, 2))) % day;
      return fmtTime(v, t.unit);
    }
    case T.Timestamp: {
      const scale = UNIT_SCALE[t.unit], sec = BigInt((r % 6000000000) - 2200000000); // about 1900-2160
      const v = e === 1 ? 0n : e === 2 ? -1n : e === 3 ? 951782400n * scale : sec * scale + (BigInt(h32(i, c, 4)) % scale);
      return fmtTimestamp(v, t.unit, t.timezone);
    }
    case T.Decimal: {
      const lim = 10n ** BigInt(t.precision) - 1n;
      const v = e === 1 ? lim : e === 2 ? -lim : e === 3 ? 0n : e === 4 ? -1n : (h64(i, c, 5) * h64(i, c, 6)) % lim * (r & 1 ? -1n : 1n);
      return fmtDecimal(v, t.scale);
    }
    default: return fail(`no default generator for ${t}`);
  }
}

// Column spec: {name, type, nullable, null_every, gen, metadata, item_metadata, item_null_every, child_null_every,
// null_children}.
// A nullable value at row i of column c is null when null_every == 1, or k = null_every > 1 and (i + 3c) % k == 0.
// A null struct has null children, or with null_children "values" generated children under its null (as arrow
// writers that take a validity mask make them; lance packs such structs, it cannot pack null children).
const isNull = (k, i, c) => k === 1 || (k > 1 && (i + 3 * c) % k === 0);
const nullValue = (col, t, i, c, k) => (t.typeId === T.Struct && col.null_children === "values" ? { ...genNested(col, t, i, c, k), $null: true } : null);
function genColumnValue(col, t, i, c, dflt) {
  const g = col.gen, nullEvery = col.null_every ?? dflt;
  if (g === "seq" || (g && g.seq !== undefined)) {
    const v = (g.seq ?? 0) + i * (g.step ?? 1);
    return isInt64(t) ? String(v) : t.typeId === T.Utf8 || t.typeId === T.LargeUtf8 ? `row-${v}` : v;
  }
  if (col.nullable !== false && isNull(nullEvery, i, c)) return nullValue(col, t, i, c, nullEvery);
  if (g?.const !== undefined) return g.const;
  if (g?.cycle) return g.cycle[i % g.cycle.length];
  if (g?.runs) {
    let k = i % g.runs.reduce((a, [, m]) => a + m, 0);
    for (const [v, m] of g.runs) { if (k < m) return v; k -= m; }
  }
  if (g?.segments) { // [[count, gen], ...]: rows [0, count) by the first gen (counted from 0), the next count by the next, ...
    let k = i;
    for (const [m, sub] of g.segments) { if (k < m) return genColumnValue({ ...col, gen: sub, null_every: 0 }, t, k, c, 0); k -= m; }
    return null;
  }
  return genNested(col, t, g?.card ? i % g.card : i, c, nullEvery);
}
function genNested(col, t, i, c, nullEvery) {
  const g = col.gen || {}, r = h32(i, c, 9);
  const len = Array.isArray(g.len) ? g.len[0] + (r % (g.len[1] - g.len[0] + 1)) : g.len;
  switch (t.typeId) {
    case T.List: case T.FixedSizeList: {
      const n = t.typeId === T.FixedSizeList ? t.listSize : len ?? r % 5;
      const it = t.children[0].type, ie = col.item_null_every ?? (t.typeId === T.List ? 6 : 0);
      // lance rejects NaN in fixed_size_list<float> (vector) columns: finite floats there unless told otherwise
      const sub = { ...col, gen: g.item ?? (t.typeId === T.FixedSizeList && it.typeId === T.Float ? { finite: true } : undefined), null_every: ie };
      return Array.from({ length: n }, (_, k) => (isNull(ie, i * 5 + k, c) ? nullValue(sub, it, i * 5 + k, c + 1, ie) : genNested(sub, it, i * 5 + k, c + 1, ie)));
    }
    case T.Map: { // entries and keys are never null; values are, every child_null_every
      const n = len ?? r % 5, [kf, vf] = t.children[0].type.children, ce = col.child_null_every ?? 5;
      return Array.from({ length: n }, (_, k) => ({
        [kf.name]: genNested({ gen: g.key }, kf.type, i * 5 + k, c + 1, 0),
        [vf.name]: isNull(ce, i * 5 + k, c + 2) ? null : genNested({ ...col, gen: g.value, null_every: ce }, vf.type, i * 5 + k, c + 2, ce),
      }));
    }
    case T.Struct: {
      const ce = col.child_null_every ?? 5, out = {};
      t.children.forEach((f, j) => {
        const sub = { ...col, gen: g.fields?.[f.name], null_every: ce };
        out[f.name] = isNull(ce, i, c + j + 1) ? null : genNested(sub, f.type, i, c + j + 1, ce);
      });
      return out;
    }
    case T.Int:
      if (g.bits !== undefined) { const v = BigInt(h32(i, c) % 2 ** Math.min(g.bits, 31)); return isInt64(t) ? v.toString() : Number(v); }
      break;
    case T.Float: if (g.finite) return defaultValue(t, i * 101 + 13, c); break; // rows whose i % 101 is 13: plain values
    case T.Utf8: case T.LargeUtf8: if (len !== undefined) return text(i, c, len); break;
    case T.Binary: case T.LargeBinary: if (len !== undefined) return Buffer.from(text(i, c, len)).toString("base64"); break;
  }
  return defaultValue(t, i, c);
}
function generate(schema, cols, { n, start = 0, null_every = 7 }) {
  const rows = [];
  for (let i = start; i < start + n; i++) {
    const row = {};
    schema.fields.forEach((f, c) => { row[f.name] = genColumnValue(cols.find((x) => x.name === f.name) || {}, f.type, i, c, f.nullable ? null_every : 0); });
    rows.push(row);
  }
  return rows;
}
// item_metadata: field metadata of a list's or fixed-size list's item (e.g. to pack a list's structs)
function withItemMetadata(t, md) {
  if (!md) return t;
  if (t.typeId !== T.List && t.typeId !== T.FixedSizeList) fail(`item_metadata on a ${t} column`);
  const f = t.children[0], item = new A.Field(f.name, f.type, f.nullable, new Map(Object.entries(md)));
  return t.typeId === T.List ? new A.List(item) : new A.FixedSizeList(t.listSize, item);
}
function specSchema(spec) {
  return new A.Schema(spec.schema.map((c) => new A.Field(c.name, withItemMetadata(parseType(c.type), c.item_metadata), c.nullable !== false, new Map(Object.entries(c.metadata || {})))));
}

// =========================================================================================== datasets
// lancedb only opens <db>/<name>.lance and writes <db>/__manifest/; reach every dataset through a symlink in a
// private temp dir so that nothing is ever written next to it.
const scratch = [];
process.on("exit", () => scratch.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
// s3://bucket/prefix/name.lance (test/s3): the engine's own S3 storage options, pointed at LT_S3_ENDPOINT
const isS3 = (dir) => dir.startsWith("s3://");
const s3Options = () => ({
  endpoint: process.env.LT_S3_ENDPOINT, region: process.env.AWS_REGION ?? "us-east-1", allow_http: "true",
  aws_access_key_id: process.env.AWS_ACCESS_KEY_ID ?? "S3RVER", aws_secret_access_key: process.env.AWS_SECRET_ACCESS_KEY ?? "S3RVER",
  virtual_hosted_style_request: "false",
});
const tableName = (dir) => (isS3(dir) || inPlace(dir) ? path.posix.basename(dir).replace(/\.lance$/, "") : "t");
// LT_REF_IN_PLACE=1: connect to the dataset's own parent directory instead (the dataset must be named <name>.lance;
// the engine may write <parent>/__manifest). Lance 12 branches need it: a branch's manifests record the path through
// which the root dataset was opened, and a scratch symlink is gone when the next process reads the branch.
const inPlace = (dir) => process.env.LT_REF_IN_PLACE === "1" && !isS3(dir);
async function connect(dir) {
  if (isS3(dir)) return lancedb.connect(path.posix.dirname(dir), { storageOptions: s3Options() });
  if (inPlace(dir)) {
    if (!dir.endsWith(".lance")) fail(`${dir}: LT_REF_IN_PLACE needs a dataset named <name>.lance`);
    return lancedb.connect(path.dirname(path.resolve(dir)));
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lt-interop-"));
  scratch.push(tmp);
  fs.symlinkSync(path.resolve(dir), path.join(tmp, "t.lance"));
  return lancedb.connect(tmp);
}
// version: a number or a tag; branch (Lance 12): the branch's line of versions instead of main's
async function open(dir, version, branch) {
  if (!isS3(dir) && !fs.existsSync(path.join(dir, "_versions"))) fail(`${dir}: not a Lance dataset`);
  let tbl = await (await connect(dir)).openTable(tableName(dir));
  const pinned = version !== undefined && version !== null, numbered = pinned && /^\d+$/.test(String(version));
  if (branch) {
    if (!tbl.branches) fail(`this engine (LT_REF=${REF}) has no branches`);
    tbl = await (await tbl.branches()).checkout(branch, numbered ? Number(version) : undefined);
    if (pinned && !numbered) await tbl.checkout(String(version)); // a tag of that branch
    return tbl;
  }
  if (pinned) await tbl.checkout(numbered ? Number(version) : String(version));
  return tbl;
}
function chmodReadable(dir) { // lance creates files 0600; the postgres server must be able to read them
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) { fs.chmodSync(p, 0o755); chmodReadable(p); } else fs.chmodSync(p, 0o644);
  }
  fs.chmodSync(dir, 0o755);
}

function fragmentSizes(spec, total) {
  if (spec.fragment_sizes) {
    if (spec.fragment_sizes.reduce((a, b) => a + b, 0) !== total) fail("fragment_sizes must add up to generate.n");
    return spec.fragment_sizes;
  }
  const k = spec.fragments || 1;
  return Array.from({ length: k }, (_, j) => Math.floor((total * (j + 1)) / k) - Math.floor((total * j) / k));
}
async function rowsFor(src, tbl, spec) {
  if (src.rows) return src.rows;
  const schema = await tbl.schema();
  return generate(schema, spec.schema, src.generate || fail("op needs rows or generate"));
}
let lastMerge = null; // the MergeResult of the last merge_insert op (apply prints it)
async function applyOp(tbl, op, spec) {
  switch (op.op) {
    case "append": return tbl.add(arrowTable(await tbl.schema(), await rowsFor(op, tbl, spec)));
    case "overwrite": return tbl.add(arrowTable(await tbl.schema(), await rowsFor(op, tbl, spec)), { mode: "overwrite" });
    case "delete": return tbl.delete(op.where);
    case "update": return tbl.update({ valuesSql: op.set, ...(op.where ? { where: op.where } : {}) });
    case "merge_insert": { // on; when_matched update_all (default) | do_nothing; when_not_matched insert_all (default)
      // | do_nothing; delete_not_matched_by_source; use_index (default true); insert_only = when_matched do_nothing;
      // columns (a partial source).
      // The engine's MergeResult goes to lastMerge.
      let b = tbl.mergeInsert(op.on);
      if ((op.when_matched ?? (op.insert_only ? "do_nothing" : "update_all")) === "update_all") b = b.whenMatchedUpdateAll();
      if ((op.when_not_matched ?? "insert_all") === "insert_all") b = b.whenNotMatchedInsertAll();
      if (op.delete_not_matched_by_source) b = b.whenNotMatchedBySourceDelete();
      if (op.use_index === false) b = b.useIndex(false);
      // columns: a partial source (those of the table's columns only)
      const full = await tbl.schema();
      const schema = op.columns ? new A.Schema(full.fields.filter((f) => op.columns.includes(f.name))) : full;
      lastMerge = await b.execute(arrowTable(schema, await rowsFor(op, tbl, spec)));
      return lastMerge;
    }
    case "add_columns": return tbl.addColumns(Object.entries(op.columns).map(([name, valueSql]) => ({ name, valueSql })));
    case "drop_columns": return tbl.dropColumns(op.columns);
    case "rename": return tbl.alterColumns([{ path: op.from, rename: op.to }]);
    case "optimize": return tbl.optimize();
    // the engine's cleanup (optimize also compacts: callers keep compaction a no-op, e.g. one fragment)
    case "cleanup": return tbl.optimize({ cleanupOlderThan: new Date(Date.now() - (op.older_than_ms ?? 0)),
                                          deleteUnverified: !!op.delete_unverified });
    case "create_index": { // kind (or type): btree | bitmap | label_list | ivf_flat, and with LT_REF=12 also fts | fm |
      // ivf_pq | ivf_rq | hnsw_pq | hnsw_sq (vector kinds take partitions, sub_vectors); the node binding cannot build zonemaps
      const kind = op.kind ?? op.type, named = op.name ? { name: op.name } : {};
      if (!kind) return tbl.createIndex(op.column, named);
      const vector = { ivf_flat: "ivfFlat", ivf_pq: "ivfPq", ivf_rq: "ivfRq", hnsw_pq: "hnswPq", hnsw_sq: "hnswSq" }[kind];
      if (vector) // ivf_flat is exact when every partition is probed
        return tbl.createIndex(op.column, { config: lancedb.Index[vector]({ numPartitions: op.partitions ?? 2, ...(op.sub_vectors ? { numSubVectors: op.sub_vectors } : {}) }), ...named });
      if (kind === "fts") return tbl.createIndex(op.column, { config: lancedb.Index.fts(op.options ?? {}), ...named });
      const make = { btree: "btree", bitmap: "bitmap", label_list: "labelList", labelList: "labelList", fm: "fm" }[kind] || fail(`unknown index kind '${kind}'`);
      if (!lancedb.Index[make]) fail(`this engine cannot build '${kind}' indexes`);
      return tbl.createIndex(op.column, { config: lancedb.Index[make](), ...named });
    }
    // Lance 12: the unenforced primary key the engine records in the schema (one column; it cannot change once set)
    case "primary_key": return tbl.setUnenforcedPrimaryKey(op.columns);
    // Lance 12: the MemWAL LSM write path (a MemWAL index in the manifest); spec as the binding's LsmWriteSpec
    case "lsm_write_spec": return tbl.setLsmWriteSpec(op.spec ?? { specType: "unsharded", maintainedIndexes: [] });
    // Lance 12: a branch forked from the current version (or op.version of op.from), then op.ops applied on it
    case "branch": {
      const br = await (await tbl.branches()).create(op.name, op.from, op.version);
      for (const sub of op.ops || []) await applyOp(br, sub, spec);
      return br;
    }
    case "restore": await tbl.checkout(op.version); return tbl.restore();
    case "tag": return (await tbl.tags()).create(op.tag, op.version ?? (await tbl.version()));
    default: return fail(`unknown op '${op.op}'`);
  }
}
async function make(dir, spec) {
  if (!isS3(dir) && fs.existsSync(dir)) fail(`${dir} already exists`);
  const saved = {};
  for (const [k, v] of Object.entries(spec.env || {})) { saved[k] = process.env[k]; process.env[k] = String(v); }
  try {
    const schema = specSchema(spec), rows = spec.rows || generate(schema, spec.schema, spec.generate || { n: 0 });
    const storageOptions = {};
    if (spec.storage) storageOptions.new_table_data_storage_version = spec.storage;
    if (spec.stable_row_ids) storageOptions.new_table_enable_stable_row_ids = "true";
    if (spec.v2_manifest_paths === false) storageOptions.new_table_enable_v2_manifest_paths = "false";
    if (!isS3(dir)) fs.mkdirSync(dir, { recursive: true });
    const db = await connect(dir);
    let tbl = null, at = 0;
    for (const n of rows.length ? fragmentSizes(spec, rows.length) : []) {
      const chunk = arrowTable(schema, rows.slice(at, (at += n)), spec.batch_rows);
      if (tbl) await tbl.add(chunk); else tbl = await db.createTable(tableName(dir), chunk, { storageOptions });
    }
    tbl ??= await db.createEmptyTable(tableName(dir), schema, { storageOptions });
    for (const op of spec.ops || []) await applyOp(tbl, op, spec);
    if (!isS3(dir)) chmodReadable(dir);
    return tbl;
  } catch (e) {
    if (!isS3(dir)) fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
}

// ============================================================================================== scan
async function scanLines(dir, { columns, version, branch, withRowid, filter, exprs }) {
  // exprs: {column: SQL} projected by the engine instead of the columns, without asking for the schema: apache-arrow
  // JS cannot decode a LargeList, so such a column is scanned as arrow_cast(col, 'List(...)') (interop/old.sh)
  const proj = exprs ? JSON.parse(exprs) : null, tbl = await open(dir, version, branch);
  const schema = proj ? { fields: Object.keys(proj).map((name) => ({ name })) } : await tbl.schema();
  const cols = columns ? columns.split(",") : schema.fields.map((f) => f.name);
  for (const c of cols) if (!schema.fields.some((f) => f.name === c)) fail(`no column '${c}' in ${dir}`);
  let q = tbl.query().withRowId().select(proj ?? cols);
  if (filter) q = q.where(filter); // the engine's own SQL filter (DataFusion), evaluated by lance
  const result = await q.toArrow();
  const rows = [];
  for (const batch of result.batches) {
    const idx = Object.fromEntries(batch.schema.fields.map((f, j) => [f.name, j])), kids = batch.data.children;
    for (let i = 0; i < batch.numRows; i++) {
      const o = {};
      if (withRowid) o._rowid = jsonValue(kids[idx._rowid], i);
      for (const c of cols) o[c] = jsonValue(kids[idx[c]], i);
      rows.push([kids[idx._rowid].values[i], o]);
    }
  }
  rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const lines = rows.map(([, o]) => JSON.stringify(o));
  lines.schemaNames = schema.fields.map((f) => f.name);
  lines.version = await tbl.version();
  return lines;
}

// ============================================================ file facts, decoded here without lance
// A minimal protobuf reader: message -> Map(field number -> [values]); varints as BigInt, len-delimited as Buffer.
function pb(buf) {
  const m = new Map();
  let p = 0;
  const varint = () => {
    let v = 0n, s = 0n, b;
    do { if (p >= buf.length) fail("protobuf: truncated varint"); b = buf[p++]; v |= BigInt(b & 0x7f) << s; s += 7n; } while (b & 0x80);
    return v;
  };
  while (p < buf.length) {
    const key = varint(), f = Number(key >> 3n), wt = Number(key & 7n);
    let v;
    if (wt === 0) v = varint();
    else if (wt === 1) { v = buf.readBigUInt64LE(p); p += 8; }
    else if (wt === 2) { const n = Number(varint()); if (p + n > buf.length) fail("protobuf: truncated field"); v = buf.subarray(p, p + n); p += n; }
    else if (wt === 5) { v = BigInt(buf.readUInt32LE(p)); p += 4; }
    else fail(`protobuf: wire type ${wt}`);
    if (!m.has(f)) m.set(f, []);
    m.get(f).push(v);
  }
  return m;
}
const pbMsg = (m, f) => (m.has(f) ? pb(m.get(f)[0]) : null);
const pbMsgs = (m, f) => (m.get(f) || []).map(pb);
const pbNum = (m, f, d = 0) => (m.has(f) ? Number(m.get(f)[0]) : d);
const pbStr = (m, f) => (m.has(f) ? m.get(f)[0].toString("utf8") : "");
function pbInts(m, f) { // repeated int32, packed or not
  const out = [];
  for (const v of m.get(f) || []) {
    if (typeof v === "bigint") { out.push(Number(BigInt.asIntN(32, v))); continue; }
    for (let p = 0; p < v.length;) {
      let x = 0n, s = 0n, b;
      do { b = v[p++]; x |= BigInt(b & 0x7f) << s; s += 7n; } while (b & 0x80);
      out.push(Number(BigInt.asIntN(32, x)));
    }
  }
  return out;
}

const U64_MAX = (1n << 64n) - 1n;
function manifestFiles(dir) {
  return fs.readdirSync(path.join(dir, "_versions")).filter((f) => /^\d+\.manifest$/.test(f)).map((f) => {
    const n = BigInt(f.slice(0, -9)), v2 = f.length === 29 && n > U64_MAX / 2n;
    return { file: f, version: Number(v2 ? U64_MAX - n : n) };
  }).sort((a, b) => a.version - b.version);
}
function readManifest(dir, version) {
  if (version !== undefined && version !== null && !/^\d+$/.test(String(version))) {
    const tag = JSON.parse(fs.readFileSync(path.join(dir, "_refs", "tags", `${version}.json`), "utf8"));
    if (tag.branch) dir = path.join(dir, "tree", tag.branch); // a tag on a Lance 12 branch
    version = tag.version;
  }
  const all = manifestFiles(dir), mf = version == null ? all.at(-1) : all.find((x) => x.version === Number(version));
  if (!mf) fail(`${dir}: no manifest for version ${version}`);
  const buf = fs.readFileSync(path.join(dir, "_versions", mf.file));
  const pos = Number(buf.readBigUInt64LE(buf.length - 16)), m = pb(buf.subarray(pos + 4, pos + 4 + buf.readUInt32LE(pos)));
  const fields = pbMsgs(m, 1).map((f) => ({ id: pbNum(f, 3), parent: f.has(4) ? Number(BigInt.asIntN(32, f.get(4)[0])) : -1, name: pbStr(f, 2) }));
  const byId = new Map(fields.map((f) => [f.id, f]));
  const fieldPath = (id) => {
    const parts = [];
    for (let f = byId.get(id); f && parts.length <= fields.length; f = byId.get(f.parent)) parts.unshift(f.name);
    return parts.length > fields.length ? fail(`${dir}: field ${id} has cyclic parents`) : parts.join(".");
  };
  const fragments = pbMsgs(m, 2).map((fr) => ({
    id: pbNum(fr, 1),
    files: pbMsgs(fr, 2).map((df) => ({ path: pbStr(df, 1), fields: pbInts(df, 2), columns: pbInts(df, 3), version: `${pbNum(df, 4)}.${pbNum(df, 5)}` })),
  }));
  const naming = mf.file.length === 29 && BigInt(mf.file.slice(0, -9)) > U64_MAX / 2n ? "V2" : "V1";
  return { version: pbNum(m, 3), fragments, fieldPath, storage: m.has(15) ? pbStr(pbMsg(m, 15), 2) : "", naming };
}

// Page report: one object per page of every 2.x data file of the version (0.x files are skipped).
const CE_NAMES = { 1: "flat", 2: "variable", 3: "constant", 4: "out_of_line_bitpacking", 5: "inline_bitpacking", 6: "fsst",
  7: "dictionary", 8: "rle", 9: "byte_stream_split", 10: "general", 11: "fixed_size_list", 12: "packed_struct", 13: "variable_packed_struct" };
// per CompressiveEncoding kind: which sub-fields are CompressiveEncodings (ce) or BufferCompressions (bc)
const CE_KIDS = { 1: { bc: [2] }, 2: { ce: [1], bc: [2] }, 4: { ce: [3] }, 5: { bc: [2] }, 6: { ce: [2] }, 7: { ce: [1, 2] },
  8: { ce: [1, 2] }, 9: { ce: [1] }, 10: { ce: [3], bc: [1] }, 11: { ce: [2] }, 12: { ce: [2] } };
const SCHEMES = { 1: "lz4", 2: "zstd" };
function walkCE(buf, names) { // CompressiveEncoding (2.1+): returns the outermost name, adds every name to `names`
  const m = pb(buf), [f] = [...m.keys()];
  if (f === undefined) return "unset";
  const name = CE_NAMES[f] || `unknown_${f}`, inner = pb(m.get(f)[0]), kids = CE_KIDS[f] || {};
  names.add(name);
  for (const k of kids.ce || []) for (const b of inner.get(k) || []) walkCE(b, names);
  for (const k of kids.bc || []) for (const b of inner.get(k) || []) { const s = SCHEMES[pbNum(pb(b), 1)]; if (s) names.add(s); }
  if (f === 13) for (const fe of pbMsgs(inner, 1)) for (const b of fe.get(1) || []) walkCE(b, names);
  return name;
}
const LAYOUTS = { 1: "miniblock", 2: "constant", 3: "fullzip", 4: "blob" };
const LAYER_NAMES = { 1: "all_valid_item", 2: "all_valid_list", 3: "nullable_item", 4: "nullable_list", 5: "emptyable_list", 6: "null_and_empty_list" };
function describeLayout(buf) { // PageLayout (2.1+)
  const m = pb(buf), [f] = [...m.keys()], l = pb(m.get(f)[0]), names = new Set(), repdef = new Set();
  const layout = LAYOUTS[f] || `unknown_${f}`;
  const ce = (k, set) => (l.has(k) ? walkCE(l.get(k)[0], set) : null);
  const layers = (k) => pbInts(l, k).map((x) => LAYER_NAMES[x] || `unknown_${x}`);
  let compression = null, lay = [];
  if (f === 1) { ce(1, repdef); ce(2, repdef); const v = ce(3, names); if (l.has(4)) { ce(4, names); names.add("dictionary"); } compression = l.has(4) ? "dictionary" : v; lay = layers(6); }
  else if (f === 3) { compression = ce(7, names); lay = layers(8); }
  else if (f === 2) { ce(7, repdef); ce(8, repdef); compression = l.has(6) ? "inline_value" : "none"; lay = layers(5); }
  else if (f === 4) { const inner = describeLayout(l.get(1)[0]); inner.encodings.forEach((n) => names.add(n)); inner.repdef.forEach((n) => repdef.add(n)); compression = inner.layout; lay = layers(2); }
  return { layout, compression, encodings: [...names].sort(), repdef: [...repdef].sort(), layers: lay };
}
const AE_NAMES = { 1: "flat", 2: "nullable", 3: "fixed_size_list", 4: "list", 5: "struct", 6: "binary", 7: "dictionary", 8: "fsst",
  9: "packed_struct", 10: "bitpacked", 11: "fixed_size_binary", 12: "bitpacked_for_non_neg", 13: "constant", 14: "inline_bitpacking",
  15: "out_of_line_bitpacking", 16: "variable", 17: "packed_struct_fixed_width_mini_block", 18: "block", 19: "rle",
  20: "general_mini_block", 21: "byte_stream_split" };
const AE_KIDS = { 3: [2], 4: [1], 6: [1, 2], 7: [1, 2], 8: [1], 9: [1], 11: [1], 17: [1], 20: [1] };
function walkAE(buf, names, repdef) { // ArrayEncoding (2.0): returns the outermost name below `nullable`
  const m = pb(buf), [f] = [...m.keys()];
  if (f === undefined) return "unset";
  const inner = pb(m.get(f)[0]);
  if (f === 2) { // Nullable: no_nulls{values=1} | some_nulls{validity=1, values=2} | all_nulls; validity goes to repdef
    const [kind] = [...inner.keys()], body = pb(inner.get(kind)[0]);
    if (kind === 1) return walkAE(body.get(1)[0], names, repdef);
    if (kind === 2) { walkAE(body.get(1)[0], repdef, repdef); return walkAE(body.get(2)[0], names, repdef); }
    return "all_null";
  }
  names.add(AE_NAMES[f] || `unknown_${f}`);
  for (const k of AE_KIDS[f] || []) for (const b of inner.get(k) || []) walkAE(b, names, repdef);
  const scheme = f === 1 ? pbMsg(inner, 3) : f === 20 ? pbMsg(inner, 2) : null;
  if (scheme && pbStr(scheme, 1)) names.add(pbStr(scheme, 1));
  if (f === 18 && pbStr(inner, 1)) names.add(pbStr(inner, 1));
  return AE_NAMES[f] || `unknown_${f}`;
}
function filePages(file) {
  const fd = fs.openSync(file, "r");
  try {
    const size = fs.fstatSync(fd).size, read = (pos, len) => { const b = Buffer.alloc(len); fs.readSync(fd, b, 0, len, pos); return b; };
    const foot = read(size - 40, 40);
    if (foot.toString("latin1", 36) !== "LANC") fail(`${file}: no LANC magic`);
    let major = foot.readUInt16LE(32), minor = foot.readUInt16LE(34);
    if (major === 0 && minor < 3) return { version: `0.${minor}`, pages: [] };
    if (major === 0 && minor === 3) { major = 2; minor = 0; }
    const cmo = Number(foot.readBigUInt64LE(8)), ncols = foot.readUInt32LE(28), table = read(cmo, 16 * ncols), pages = [];
    for (let c = 0; c < ncols; c++) {
      const cm = pb(read(Number(table.readBigUInt64LE(16 * c)), Number(table.readBigUInt64LE(16 * c + 8))));
      pbMsgs(cm, 2).forEach((pg, k) => {
        const ref = pbMsg(pg, 4);
        let any = null;
        if (ref?.has(2)) any = pb(pbMsg(ref, 2).get(1)[0]);
        else if (ref?.has(1)) { const d = pbMsg(ref, 1); any = pb(read(pbNum(d, 1), pbNum(d, 2))); }
        const url = any ? pbStr(any, 1) : "", val = any?.get(2)?.[0] || Buffer.alloc(0);
        let desc;
        if (url.endsWith("encodings21.PageLayout")) desc = describeLayout(val);
        else if (url.endsWith("encodings.ArrayEncoding")) {
          const names = new Set(), repdef = new Set(), top = walkAE(val, names, repdef);
          desc = { layout: "v2.0", compression: top, encodings: [...names].sort(), repdef: [...repdef].sort(), layers: [] };
        } else desc = { layout: `unknown(${url})`, compression: null, encodings: [], repdef: [], layers: [] };
        pages.push({ column_index: c, page: k, rows: pbNum(pg, 3), buffers: pbInts(pg, 1).length, ...desc });
      });
    }
    return { version: `${major}.${minor}`, pages };
  } finally { fs.closeSync(fd); }
}
function pageReport(dir, version) {
  const mf = readManifest(dir, version), out = [];
  for (const fr of mf.fragments) for (const df of fr.files) {
    const { pages } = filePages(path.join(dir, "data", df.path));
    const fieldOf = new Map(); // column index -> field id (2.1+ parents of lists and structs have no column)
    df.fields.forEach((id, j) => { const ci = df.columns.length ? df.columns[j] : j; if (ci >= 0 && !fieldOf.has(ci)) fieldOf.set(ci, id); });
    for (const p of pages) {
      const id = fieldOf.get(p.column_index) ?? null;
      out.push({ fragment: fr.id, file: df.path, field_id: id, column: id === null ? null : mf.fieldPath(id), column_index: p.column_index, page: p.page,
        rows: p.rows, file_version: df.version, layout: p.layout, compression: p.compression, encodings: p.encodings, repdef: p.repdef, layers: p.layers, buffers: p.buffers });
    }
  }
  return out;
}

// Checks of `lt-inspect pages` output: (1) every spec.expect_pages entry is met by some page of the reference
// report (else the spec fails to produce that encoding: a defect of the matrix) and of lt-inspect's report;
// (2) lt-inspect's report lists the same pages as the reference report.
const PAGE_KEYS = ["fragment", "file", "field_id", "column", "column_index", "page", "rows", "file_version", "layout", "compression", "encodings", "repdef", "layers", "buffers"];
function checkPages(spec, refLines, ltLines) {
  const parse = (lines, who) => lines.filter((l) => l.trim()).map((l) => { try { return JSON.parse(l); } catch { return fail(`${who}: not JSON: ${l.slice(0, 200)}`); } });
  const ref = parse(refLines, "reference"), lt = ltLines === null ? null : parse(ltLines, "lt-inspect");
  const results = [];
  // an expectation {column, encodings: [...], repdef: [...], <any other page key>: value} is met by a page of that
  // column whose encodings and repdef include all the listed names and whose other keys are equal
  const subset = (want, have) => (want || []).every((e) => (have || []).includes(e));
  const match = (p, x) => p.column === x.column && subset(x.encodings, p.encodings) && subset(x.repdef, p.repdef)
    && Object.entries(x).every(([k, v]) => ["column", "encodings", "repdef", "only", "engines"].includes(k) || JSON.stringify(p[k]) === JSON.stringify(v));
  const seen = (pages, col) => [...new Set(pages.filter((p) => p.column === col).map((p) => `${p.layout}/${p.compression}[${(p.encodings || []).join(",")}]`))].join(" ") || "no pages";
  // "engines": ["8"]: a choice of that engine's writer only (LT_REF); Lance 12 encodes that data otherwise
  for (const x of (spec.expect_pages || []).filter((e) => !e.engines || e.engines.includes(REF))) {
    const what = `${x.column}: ${Object.entries(x).filter(([k]) => !["column", "only", "engines"].includes(k)).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("+") : v}`).join(" ")}`;
    const inRef = ref.some((p) => match(p, x));
    if (!inRef) results.push({ ok: false, label: `encoding ${what}`, detail: `the generated data does not produce it (reference decoder sees: ${seen(ref, x.column)}); fix the spec` });
    else if (lt === null) results.push({ ok: false, label: `encoding ${what}`, detail: "lt-inspect pages gave no report" });
    else results.push(lt.some((p) => match(p, x)) ? { ok: true, label: `encoding ${what}` } : { ok: false, label: `encoding ${what}`, detail: `lt-inspect pages reports: ${seen(lt, x.column)}` });
  }
  if (lt !== null) {
    const key = (p) => JSON.stringify([p.fragment, p.file, p.column_index, p.page]);
    const norm = (p, k) => (k === "encodings" || k === "repdef" ? [...(p[k] || [])].sort() : p[k] === undefined ? "(absent)" : p[k]);
    const canon = (p) => JSON.stringify(PAGE_KEYS.map((k) => norm(p, k)));
    const ltBy = new Map(lt.map((p) => [key(p), p])), diffs = [];
    for (const p of ref) { const q = ltBy.get(key(p)); if (!q) diffs.push(`missing page ${key(p)}`); else if (canon(p) !== canon(q)) diffs.push(`page ${key(p)} (${p.column}): ` + PAGE_KEYS.filter((k) => JSON.stringify(norm(p, k)) !== JSON.stringify(norm(q, k))).map((k) => `${k} reference ${JSON.stringify(norm(p, k))}, lt-inspect ${JSON.stringify(norm(q, k))}`).join("; ")); ltBy.delete(key(p)); }
    for (const k of ltBy.keys()) diffs.push(`extra page ${k}`);
    results.push(diffs.length ? { ok: false, label: "pages match reference decoder", detail: `${diffs.length} page(s) differ (keys: ${PAGE_KEYS.join(",")})\n` + diffs.slice(0, 3).join("\n") + (diffs.length > 3 ? `\n... ${diffs.length - 3} more` : "") } : { ok: true, label: "pages match reference decoder" });
  }
  return results;
}

// Explains how two scan outputs differ: row counts, the first differing line and its differing keys, and, when
// the row counts agree, how many rows differ per key. Lines that are not JSON are compared as text.
function firstDiff(expLines, gotLines, max = 300) {
  const clip = (t) => (t.length > max ? t.slice(0, max) + "..." : t);
  const cut = (x) => (x === undefined ? "(absent)" : clip(JSON.stringify(x)));
  const parse = (l) => { try { return JSON.parse(l); } catch { return undefined; } };
  const out = [];
  const [e, g] = [expLines.filter((l) => l !== ""), gotLines.filter((l) => l !== "")];
  if (e.length !== g.length) out.push(`rows: expected ${e.length}, got ${g.length}`);
  const k = e.findIndex((l, i) => l !== g[i]);
  const at = k >= 0 ? k : e.length < g.length ? e.length : -1;
  if (at < 0) return out;
  const a = parse(e[at]), b = parse(g[at]);
  out.push(`first difference at row ${at + 1}:`);
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a).join(","), kb = Object.keys(b).join(",");
    if (ka !== kb) out.push(`  keys: expected [${clip(ka)}], got [${clip(kb)}]`);
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((x) => JSON.stringify(a[x]) !== JSON.stringify(b[x])).slice(0, 4))
      out.push(`  ${key}: expected ${cut(a[key])}`, `  ${" ".repeat(key.length)}  got      ${cut(b[key])}`);
    if (a._rowid !== undefined) out.push(`  (_rowid ${a._rowid})`);
  } else out.push(`  expected ${clip(e[at] ?? "(end of output)")}`, `  got      ${clip(g[at] ?? "(end of output)")}`);
  if (e.length === g.length) {
    const bad = new Map();
    e.forEach((l, i) => {
      if (l === g[i]) return;
      const x = parse(l), y = parse(g[i]);
      for (const key of x && y ? [...new Set([...Object.keys(x), ...Object.keys(y)])].filter((q) => JSON.stringify(x[q]) !== JSON.stringify(y[q])) : ["(line)"]) bad.set(key, (bad.get(key) || 0) + 1);
    });
    out.push(`  rows differing per key: ${[...bad].map(([key, n]) => `${key} ${n}`).join(", ")}`);
  }
  return out;
}

// Checks `lt-inspect info` outputs (<infodir>/<dataset>.<case>.json) against <data>/<dataset>.info.jsonl: the
// version, the live row count, the top-level columns in order, the storage version and the manifest naming.
function checkInfo(data, infodir) {
  const res = [];
  for (const f of fs.readdirSync(data).filter((x) => x.endsWith(".info.jsonl")).sort()) {
    const name = f.slice(0, -".info.jsonl".length);
    for (const want of fs.readFileSync(path.join(data, f), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))) {
      const label = `info ${name} ${want.label}`, file = path.join(infodir, `${name}.${want.label}.json`);
      if (!fs.existsSync(file)) continue; // lt-inspect info failed; run.sh has reported it
      let got;
      try { got = JSON.parse(fs.readFileSync(file, "utf8")); } catch (e) { res.push({ ok: false, label, detail: `not JSON: ${e.message}` }); continue; }
      const have = { version: got.version, rows: got.rows, storage_version: got.storage_version, manifest_naming: got.manifest_naming,
        columns: Array.isArray(got.schema) ? got.schema.filter((x) => x.parent_id === -1).map((x) => x.name) : "(no schema array)" };
      const bad = Object.keys(have).filter((k) => JSON.stringify(have[k]) !== JSON.stringify(want[k]));
      res.push(bad.length ? { ok: false, label, detail: bad.map((k) => `${k}: expected ${JSON.stringify(want[k])}, got ${JSON.stringify(have[k])}`).join("\n") } : { ok: true, label });
    }
  }
  return res;
}

// ============================================================================================= build
// For each spec: <out>/<name>.lance, the expected scans <out>/<name>.<case>.expected.jsonl, the reference page
// report <out>/<name>.pages.jsonl, and <out>/<name>.cases: "<case>\t<expected file>\t<lt-inspect scan args>" lines.
// A spec whose "storage" is a list stands for one dataset per storage version, named <spec>_v2_1, <spec>_legacy, ...;
// schema columns, ops and expect_pages entries with "only": [versions] are kept only in those variants.
// LT_INTEROP_STORAGE (e.g. "2.1,2.2"): only those variants; a spec with one storage version outside it is left out,
// one without a storage version (the engine's default) is kept.
const storageFilter = (process.env.LT_INTEROP_STORAGE || "").split(/[\s,]+/).filter(Boolean);
const storageKept = (st) => !storageFilter.length || st === undefined || storageFilter.includes(st);
function expandSpec(spec, base) {
  if (!Array.isArray(spec.storage)) return storageKept(spec.storage) ? [[base, spec]] : [];
  return spec.storage.filter(storageKept).map((st) => {
    const keep = (x) => !x.only || x.only.includes(st);
    const v = { ...spec, storage: st, schema: spec.schema.filter(keep), ops: (spec.ops || []).filter(keep), expect_pages: (spec.expect_pages || []).filter(keep) };
    return [`${base}_${st === "legacy" ? "legacy" : "v" + st.replace(".", "_")}`, v];
  });
}
async function build(out, specFiles) {
  fs.mkdirSync(out, { recursive: true });
  const all = specFiles.flatMap((f) => expandSpec(JSON.parse(fs.readFileSync(f, "utf8")), path.basename(f).replace(/\.json$/, "")));
  for (const [name, spec] of all) {
    const t0 = Date.now();
    const dir = path.join(out, `${name}.lance`);
    fs.rmSync(dir, { recursive: true, force: true });
    const tbl = await make(dir, spec);
    const cases = [];
    const add = async (label, args) => {
      const o = { withRowid: args.includes("--with-rowid") };
      for (let k = 0; k < args.length; k++) if (args[k] === "--columns") o.columns = args[k + 1]; else if (args[k] === "--version" || args[k] === "--tag") o.version = args[k + 1]; else if (args[k] === "--branch") o.branch = args[k + 1];
      const exp = path.join(out, `${name}.${label}.expected.jsonl`), lines = await scanLines(dir, o);
      fs.writeFileSync(exp, lines.map((l) => l + "\n").join(""));
      cases.push([label, path.basename(exp), args.join(" ")].join("\t"));
      if (!o.columns) { // what `lt-inspect info` must say about this version
        const tagged = o.version !== undefined && !/^\d+$/.test(o.version); // a tag may name a version of a branch
        const mf = tagged ? readManifest(dir, o.version) : readManifest(o.branch ? path.join(dir, "tree", o.branch) : dir, lines.version);
        infos.push(JSON.stringify({ label, args: args.filter((a, k) => a !== "--with-rowid"), version: lines.version, rows: lines.length,
          columns: lines.schemaNames, storage_version: mf.storage, manifest_naming: mf.naming }));
      }
    };
    const infos = [];
    await add("latest", ["--with-rowid"]);
    const names = (await tbl.schema()).fields.map((f) => f.name);
    if (names.length > 1) await add("proj", ["--columns", [names.at(-1), names[0]].join(",")]);
    for (const [k, cols] of (spec.projections || []).entries()) await add(`proj${k + 1}`, ["--columns", cols, "--with-rowid"]);
    const versions = (await tbl.listVersions()).map((v) => v.version);
    if (versions.length > 1) for (const v of versions) await add(`v${v}`, ["--version", String(v), "--with-rowid"]);
    // a tag of a Lance 12 branch is read with the branch named (as lt_fdw's tables do)
    for (const tag of Object.keys(await (await tbl.tags()).list())) {
      const file = path.join(dir, "_refs", "tags", `${tag}.json`); // the binding does not say a tag's branch
      const branch = !isS3(dir) && fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")).branch : null;
      await add(`tag_${tag}`, [...(branch ? ["--branch", branch] : []), "--tag", tag, "--with-rowid"]);
    }
    // Lance 12 branches: each one's latest version and every version of its own line
    for (const b of tbl.branches ? Object.keys(await (await tbl.branches()).list()).sort() : []) {
      await add(`branch_${b}`, ["--branch", b, "--with-rowid"]);
      for (const v of (await (await (await tbl.branches()).checkout(b)).listVersions()).map((x) => x.version))
        await add(`branch_${b}_v${v}`, ["--branch", b, "--version", String(v), "--with-rowid"]);
    }
    fs.writeFileSync(path.join(out, `${name}.cases`), cases.map((c) => c + "\n").join(""));
    fs.writeFileSync(path.join(out, `${name}.info.jsonl`), infos.map((c) => c + "\n").join(""));
    fs.writeFileSync(path.join(out, `${name}.pages.jsonl`), pageReport(dir).map((p) => JSON.stringify(p) + "\n").join(""));
    fs.writeFileSync(path.join(out, `${name}.spec.json`), JSON.stringify(spec, null, 1));
    process.stderr.write(`built ${name}: ${versions.length} version(s), ${cases.length} scan case(s), ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  }
}

// =============================================================================================== CLI
function parseArgs(argv, flags) {
  const pos = [], opt = {};
  for (let k = 0; k < argv.length; k++) {
    const a = argv[k];
    if (!a.startsWith("--")) { pos.push(a); continue; }
    const name = a.slice(2);
    if (!(name in flags)) throw new UsageError(`unknown option ${a}`);
    if (flags[name]) { if (k + 1 >= argv.length) throw new UsageError(`${a} needs a value`); opt[name] = argv[++k]; } else opt[name] = true;
  }
  return [pos, opt];
}
const USAGE = `usage: node ref.mjs make <dir> <spec.json>
       node ref.mjs apply <dir> <spec.json>
       node ref.mjs scan <dir> [--columns a,b] [--version N|TAG] [--branch B] [--with-rowid] [--filter SQL]
       node ref.mjs pages <dir> [--version N|TAG]
       node ref.mjs indexes <dir>
       node ref.mjs plan <dir> --filter SQL [--analyze]
       node ref.mjs filters <dir> <filters.txt> --version BASE
       node ref.mjs gen <spec.json>
       node ref.mjs build <outdir> <spec.json>...
       node ref.mjs expand <outdir> <spec.json>...
       node ref.mjs check-pages <spec.json> <ref-pages.jsonl> <lt-pages.jsonl|->
       node ref.mjs check-info <datadir> <infodir>
       node ref.mjs diff <expected.jsonl> <actual.jsonl>`;
async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  const readJson = (f) => JSON.parse(fs.readFileSync(f, "utf8"));
  const print = (lines) => process.stdout.write(lines.map((l) => l + "\n").join(""));
  switch (cmd) {
    case "make": {
      const [[dir, spec]] = parseArgs(rest, {});
      if (!spec) throw new UsageError("make needs <dir> <spec.json>");
      const tbl = await make(dir, readJson(spec));
      return print([JSON.stringify({ dataset: dir, version: await tbl.version(), rows: await tbl.countRows() })]);
    }
    case "apply": {
      const [[dir, spec]] = parseArgs(rest, {});
      if (!spec) throw new UsageError("apply needs <dir> <spec.json>");
      const s = readJson(spec), tbl = await open(dir);
      for (const op of s.ops || []) await applyOp(tbl, op, s);
      if (!isS3(dir)) chmodReadable(dir);
      const merged = lastMerge && s.report_merge ? { inserted: lastMerge.numInsertedRows, updated: lastMerge.numUpdatedRows, deleted: lastMerge.numDeletedRows } : {};
      return print([JSON.stringify({ dataset: dir, version: await tbl.version(), rows: await tbl.countRows(), ...merged })]);
    }
    case "scan": {
      const [[dir], o] = parseArgs(rest, { columns: true, version: true, branch: true, "with-rowid": false, filter: true, exprs: true });
      if (!dir) throw new UsageError("scan needs <dir>");
      return print(await scanLines(dir, { columns: o.columns, version: o.version, branch: o.branch, withRowid: !!o["with-rowid"], filter: o.filter, exprs: o.exprs }));
    }
    case "indexes": { // the engine's view of the indexes: listIndices + indexStats, one JSON line each
      const [[dir]] = parseArgs(rest, {});
      if (!dir) throw new UsageError("indexes needs <dir>");
      const tbl = await open(dir), out = [];
      for (const ix of await tbl.listIndices()) out.push(JSON.stringify({ ...ix, stats: (await tbl.indexStats(ix.name)) ?? null }));
      return print(out);
    }
    case "schema": { // the engine's schema: one JSON line per top-level field, with its metadata (the primary key marks)
      const [[dir], o] = parseArgs(rest, { version: true });
      if (!dir) throw new UsageError("schema needs <dir>");
      const sch = await (await open(dir, o.version)).schema();
      return print(sch.fields.map((f) => JSON.stringify({ name: f.name, nullable: f.nullable, metadata: Object.fromEntries([...f.metadata].sort()) })));
    }
    case "filters": { // each filter (a line of FILE) at the latest version and at --version BASE: row ids, equal?
      const [[dir, file], o] = parseArgs(rest, { version: true });
      if (!file || !o.version) throw new UsageError("filters needs <dir> <filters.txt> --version BASE");
      const cur = await open(dir), base = await open(dir, o.version), out = [];
      const ids = async (t, w) => (await t.query().where(w).withRowId().select([]).toArray()).map((r) => BigInt(r._rowid)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (const w of fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim())) {
        const a = await ids(cur, w), b = await ids(base, w), A = new Set(a);
        const missing = b.filter((x) => !A.has(x)), B = new Set(b), extra = a.filter((x) => !B.has(x));
        const plan = await cur.query().where(w).withRowId().explainPlan(true);
        out.push(JSON.stringify({ where: w, rows: a.length, base_rows: b.length, same: !missing.length && !extra.length, index_used: /ScalarIndexQuery/.test(plan),
          missing: missing.slice(0, 5).map(String), extra: extra.slice(0, 5).map(String) }));
      }
      return print(out);
    }
    case "plan": { // the engine's plan for a filtered scan (--analyze: executed, with metrics)
      const [[dir], o] = parseArgs(rest, { filter: true, analyze: false });
      if (!dir || !o.filter) throw new UsageError("plan needs <dir> --filter SQL");
      const q = (await open(dir)).query().where(o.filter).withRowId();
      return print([o.analyze ? await q.analyzePlan() : await q.explainPlan(true)]);
    }
    case "pages": {
      const [[dir], o] = parseArgs(rest, { version: true });
      if (!dir) throw new UsageError("pages needs <dir>");
      return print(pageReport(dir, o.version).map((p) => JSON.stringify(p)));
    }
    case "gen": {
      const spec = readJson(rest[0] || fail("gen needs <spec.json>"));
      return print(generate(specSchema(spec), spec.schema, spec.generate || { n: 0 }).map((r) => JSON.stringify(r)));
    }
    case "expand": { // one spec file per storage variant (test/s3 makes them on S3 itself)
      if (rest.length < 2) throw new UsageError("expand needs <outdir> <spec.json>...");
      fs.mkdirSync(rest[0], { recursive: true });
      for (const f of rest.slice(1))
        for (const [name, v] of expandSpec(readJson(f), path.basename(f).replace(/\.json$/, "")))
          fs.writeFileSync(path.join(rest[0], `${name}.json`), JSON.stringify(v));
      return;
    }
    case "build": {
      if (rest.length < 2) throw new UsageError("build needs <outdir> <spec.json>...");
      return build(rest[0], rest.slice(1));
    }
    case "check-pages": {
      const [spec, refFile, ltFile] = rest;
      if (!ltFile) throw new UsageError("check-pages needs <spec.json> <ref-pages.jsonl> <lt-pages.jsonl|->");
      const lines = (f) => fs.readFileSync(f, "utf8").split("\n");
      const res = checkPages(readJson(spec), lines(refFile), ltFile === "-" ? null : lines(ltFile));
      // one "ok<TAB>label" or "FAIL<TAB>label" line per check, each detail line as "...<TAB>text"
      return print(res.flatMap((r) => [`${r.ok ? "ok" : "FAIL"}\t${r.label}`, ...(r.detail ? r.detail.split("\n").map((d) => `...\t${d.trim()}`) : [])]));
    }
    case "check-info": {
      if (rest.length !== 2) throw new UsageError("check-info needs <datadir> <infodir>");
      return print(checkInfo(rest[0], rest[1]).flatMap((r) => [`${r.ok ? "ok" : "FAIL"}\t${r.label}`, ...(r.detail ? r.detail.split("\n").map((d) => `...\t${d}`) : [])]));
    }
    case "diff": {
      if (rest.length !== 2) throw new UsageError("diff needs <expected> <actual>");
      const lines = (f) => fs.readFileSync(f, "utf8").split("\n");
      return print(firstDiff(lines(rest[0]), lines(rest[1])));
    }
    default: throw new UsageError(cmd ? `unknown command '${cmd}'` : "no command");
  }
}
process.stdout.on("error", (e) => process.exit(e.code === "EPIPE" ? 0 : 1));
main().catch((e) => {
  if (e instanceof UsageError) { console.error(`ref.mjs: ${e.message}\n${USAGE}`); process.exit(2); }
  console.error(`ref.mjs: ${String(e?.message || e).split("\n")[0]}`);
  process.exit(1);
});
