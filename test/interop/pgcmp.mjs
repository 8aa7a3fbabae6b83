#!/usr/bin/env node
// pgcmp.mjs — the interop matrix through PostgreSQL: every scan case of test/interop/run.sh's generated datasets
// (build/interop/<hash>/<name>.cases), read with SELECT ... ORDER BY _rowid from lt_fdw foreign tables and compared
// value for value with the reference engine's scan; plus filtered scans (WHERE in Postgres vs the engine's own
// .where()), at the latest and at older versions. Run by test/interop/pg.sh, which starts the cluster.
//
//   node pgcmp.mjs <datadir> [--only REGEX]
//
// Environment: PSQL (psql binary), LT_INSPECT (lt-inspect, for the schema of each version), PGHOST/PGPORT/PGUSER.
//
// Tables: IMPORT FOREIGN SCHEMA (import_row_id 'true') into schema m for the latest version; for `--version N` and
// `--tag T` cases an explicit CREATE FOREIGN TABLE in schema v with the `version` / `tag` option, the columns of that
// version (from lt-inspect info) mapped as DESIGN.md §1 says (structs to composite types created here), and _rowaddr.
//
// Comparison: the Postgres side is `SELECT to_jsonb(q) FROM (SELECT cols FROM t ORDER BY _rowid) q`, the reference
// side the scan format of README.md. Both are parsed with numbers kept as their exact text, then each value is put
// into one canonical form chosen by the field's Lance type:
//   integers, uint64            exact decimal integers (BigInt)
//   float64, decimal            exact decimals (digits and exponent; -0 = 0); "NaN", "Infinity", "-Infinity"
//   float16/32                  the float32 value the text names, as an exact decimal
//   utf8                        the string
//   binary                      hex (reference: base64; Postgres: \x hex)
//   date                        YYYY-MM-DD
//   time, timestamp[tz]         microseconds (of the day / since the epoch, after the UTC offset); the reference's
//                               ns digits are floored to µs, as the mapping does
//   list / fixed_size_list      arrays, item by item;   struct: fields by name;   map: sorted (key, value) pairs
// The _rowid of every row must match; for version/tag tables of datasets without stable row ids _rowaddr = _rowid.
// Prints "ok"/"FAIL"/"skip" per case and ends with "interop-pg: N passed, M failed" (skips are listed, not counted).
import crypto from "node:crypto";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PSQL = process.env.PSQL || "psql";
const INSPECT = process.env.LT_INSPECT || path.join(HERE, "../../build/lt-inspect");

// ------------------------------------------------------------------------------------------ filters
// Filtered scans: WHERE text that the engine's SQL (DataFusion) and Postgres read the same way. `at`: extra
// versions/tags to run it at (besides the latest). Avoid -0 and NaN boundaries and string collation subtleties.
// `exclude`: columns left out of both projections because the engine's filtered scan (which takes the non-filter
// columns by row address) disagrees with its own full scan there; `why` is printed with the case.
const TAKE_NULL_STRUCT = "lance 8 take loses the validity of an all-null struct in 2.1+ (full scan: null, filtered: {x:null,y:null})";
const TAKE_VAR_PACKED = "lance 8 take panics on a variable packed struct (\"StringArray data should contain 2 buffers\")";
const FILTERS = [
  { ds: /^types_/, where: "i32 > 0 AND s IS NOT NULL" },
  { ds: /^types_/, where: "(id % 7 = 3 OR u8 < 10) AND b" },
  { ds: /^types_/, where: "d32 < DATE '1970-01-01' OR ts_us >= TIMESTAMP '2000-01-01 00:00:00'" },
  { ds: /^types_/, where: "i64 IN (0, -1, 9223372036854775807) OR dec38 IS NULL OR f64 BETWEEN 100 AND 1000000" },
  { ds: /^types_/, where: "s LIKE 'a%' OR ls = '' OR NOT (i16 >= -100)", at: ["--version 1"] },
  { ds: /^nulls_/, where: "half_i64 IS NULL AND all_i32 IS NULL", exclude: ["st_all_null"], why: TAKE_NULL_STRUCT },
  { ds: /^nulls_/, where: "later_null IS NOT NULL OR nn_i32 > 100", at: ["--version 1"], exclude: ["st_all_null"], why: TAKE_NULL_STRUCT },
  { ds: /^deletions_/, where: "id % 3 = 0", at: ["--version 2", "--version 5"] },
  { ds: /^timetravel_/, where: "score > 0.5 AND score < 1000000", at: ["--version 3", "--tag mid"] },
  { ds: /^stable_row_ids_/, where: "v % 2 = 0 OR id > 160", at: ["--version 2"] },
  { ds: /^multipage_/, where: "id >= 1000 AND id < 30000 AND n % 5 = 1" },
  { ds: /^encodings_/, where: "id % 11 = 0 AND text_fsst IS NOT NULL", exclude: ["packed_var"], why: TAKE_VAR_PACKED },
  { ds: /^fragments_/, where: "id < 50 OR id > 2900", at: ["--version 2"] },
  { ds: /^compaction_/, where: "x > 0 AND x < 1e30", at: ["--version 2"] },
  { ds: /^v1_manifests_/, where: "s IS NOT NULL AND id % 2 = 1", at: ["--tag t1"] },
  // Lance 12 (test/interop/l12/features.json): columns under btree, bitmap, FTS and FM indexes, the engine planning
  // with them; on main, at a tag, on a branch (whose manifests carry main's indexes through base paths)
  { ds: /^features$/, where: "id = 17 OR id BETWEEN 100 AND 130 OR id >= 5090", at: ["--tag before_branch", "--branch dev"] },
  { ds: /^features$/, where: "grp = 3 AND f > 0", at: ["--branch dev", "--branch dev --version 11"] },
  { ds: /^features$/, where: "txt LIKE '%lance%' OR grp IS NULL", at: ["--branch dev --tag on_dev"] },
];

// ------------------------------------------------------------------------------------------ helpers
const args = process.argv.slice(2);
const DATA = args[0];
const only = args.indexOf("--only") >= 0 ? new RegExp(args[args.indexOf("--only") + 1]) : null;
if (!DATA || !fs.existsSync(DATA)) { console.error("usage: node pgcmp.mjs <datadir> [--only REGEX]"); process.exit(2); }

const qi = (s) => `"${String(s).replace(/"/g, '""')}"`;
const ql = (s) => `'${String(s).replace(/'/g, "''")}'`;
function psql(sql) {
  const r = spawnSync(PSQL, ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-c", sql],
    { encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return { ok: r.status === 0, out: r.stdout, err: (r.stderr || "").trim() };
}
function inspectInfo(dir, extra) {
  const r = spawnSync(INSPECT, ["info", dir, ...extra], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`lt-inspect info ${extra.join(" ")}: ${(r.stderr || "").trim()}`);
  return JSON.parse(r.stdout);
}
// JSON with every number kept as its text: numbers outside strings become "\u0000#<text>" before JSON.parse
const NUM = "\u0000#";
const parseExact = (line) => JSON.parse(line.replace(/"(?:[^"\\]|\\.)*"|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g,
  (m, num) => (num === undefined ? m : `"\\u0000#${num}"`)));
const isNum = (v) => typeof v === "string" && v.startsWith(NUM);
const show = (v) => JSON.stringify(v, (k, x) => (isNum(x) ? `#${x.slice(2)}` : x));

// ------------------------------------------------------------------------------------------- types
// A Lance type tree from lt-inspect info's schema: {k: "scalar", lt} | {k: "list", item} | {k: "struct", fields:
// [{name, t}]} | {k: "map", key, value}
function typeTrees(schema) {
  const kids = new Map();
  for (const f of schema) { if (!kids.has(f.parent_id)) kids.set(f.parent_id, []); kids.get(f.parent_id).push(f); }
  const fslItem = (lt) => { // "fixed_size_list:<inner>:<N>"
    const inner = lt.slice("fixed_size_list:".length, lt.lastIndexOf(":"));
    return inner.startsWith("fixed_size_list:") ? { k: "list", item: fslItem(inner) } : { k: "scalar", lt: inner };
  };
  const tree = (f) => {
    const ch = kids.get(f.id) || [], lt = f.logical_type;
    if (lt === "struct") return { k: "struct", fields: ch.map((c) => ({ name: c.name, t: tree(c) })) };
    if (/^(large_)?list/.test(lt)) return { k: "list", item: ch.length ? tree(ch[0]) : { k: "scalar", lt: "?" } };
    if (lt.startsWith("fixed_size_list:")) return { k: "list", fixed: true, item: ch.length ? tree(ch[0]) : fslItem(lt) };
    if (lt.startsWith("map")) {
      const e = ch.length ? tree(ch[0]) : null;
      return { k: "map", key: e?.fields?.[0]?.t, value: e?.fields?.[1]?.t };
    }
    if (lt.startsWith("dict:")) return { k: "scalar", lt: lt.split(":")[1] };
    return { k: "scalar", lt };
  };
  return (kids.get(-1) || []).map((f) => ({ name: f.name, t: tree(f) }));
}

// The Postgres type DESIGN.md §1 maps a scalar Lance type to (null when none)
function pgScalar(lt) {
  const head = lt.split(":")[0];
  switch (head) {
    case "bool": return "boolean";
    case "int8": case "int16": case "uint8": return "smallint";
    case "int32": case "uint16": return "integer";
    case "int64": case "uint32": return "bigint";
    case "uint64": return "numeric(20,0)";
    case "halffloat": case "float": return "real";
    case "double": return "double precision";
    case "string": case "large_string": return "text";
    case "binary": case "large_binary": case "fixed_size_binary": return "bytea";
    case "date32": case "date64": return "date";
    case "time32": case "time64": return "time";
    case "timestamp": return lt.split(":")[2] === "-" ? "timestamp" : "timestamptz";
    case "decimal": { const [, , p, s] = lt.split(":"); return `numeric(${p},${s})`; }
    case "duration": return "interval";
    default: return null;
  }
}
// DDL type of a column; structs get composite types named <prefix>_<path> (created through `ddl`)
function pgType(t, prefix, ddl) {
  if (t.k === "scalar") return pgScalar(t.lt) || "jsonb";
  if (t.k === "list") return t.item.k === "scalar" && pgScalar(t.item.lt) ? `${pgScalar(t.item.lt)}[]` : "jsonb";
  if (t.k === "struct" && t.fields.length) {
    const name = `${prefix}`.slice(0, 63);
    ddl.push(`CREATE TYPE v.${qi(name)} AS (${t.fields.map((f) => `${qi(f.name)} ${pgType(f.t, `${prefix}_${f.name}`, ddl)}`).join(", ")})`);
    return `v.${qi(name)}`;
  }
  return "jsonb";
}

// ------------------------------------------------------------------------------------ canonical form
function canonDec(text) {
  const m = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return `bad-number:${text}`;
  let digits = (m[2] || "") + (m[3] || ""), exp = Number(m[4] || 0) - (m[3] || "").length;
  digits = digits.replace(/^0+/, "");
  if (!digits) return "0";
  while (digits.endsWith("0")) { digits = digits.slice(0, -1); exp++; }
  return `${m[1] === "-" ? "-" : ""}${digits}e${exp}`;
}
function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400), yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}
const micros = (frac) => BigInt(((frac || "") + "000000").slice(0, 6)); // digits after the point, floored to µs
function timeOfDay(s) {
  const m = /^(\d\d):(\d\d):(\d\d)(?:\.(\d+))?$/.exec(s);
  if (!m) return `bad-time:${s}`;
  return String(BigInt((+m[1] * 60 + +m[2]) * 60 + +m[3]) * 1000000n + micros(m[4]));
}
function epochMicros(s) {
  const m = /^(\d{4,})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d(?::?\d\d(?::?\d\d)?)?)?$/.exec(s);
  if (!m) return `bad-timestamp:${s}`;
  let off = 0;
  if (m[8] && m[8] !== "Z") {
    const sign = m[8][0] === "-" ? -1 : 1, p = m[8].slice(1).replace(/:/g, "");
    off = sign * ((+p.slice(0, 2) * 60 + +(p.slice(2, 4) || 0)) * 60 + +(p.slice(4, 6) || 0));
  }
  const sec = BigInt(daysFromCivil(+m[1], +m[2], +m[3])) * 86400n + BigInt((+m[4] * 60 + +m[5]) * 60 + +m[6] - off);
  return String(sec * 1000000n + micros(m[7]));
}
function canonScalar(lt, v) {
  const head = lt.split(":")[0], text = isNum(v) ? v.slice(2) : v;
  const bad = () => `bad-${head}:${show(v)}`;
  switch (head) {
    case "bool": return typeof v === "boolean" ? v : bad();
    case "int8": case "int16": case "int32": case "int64": case "uint8": case "uint16": case "uint32": case "uint64":
      try { return typeof text === "string" ? BigInt(text).toString() : bad(); } catch { return bad(); }
    case "halffloat": case "float": case "double":
      if (v === "NaN" || v === "Infinity" || v === "-Infinity") return v;
      if (!isNum(v)) return bad();
      // a float32 value has two shortest decimals at times (-1.6289062 / -1.6289063): the value it names counts
      return head === "double" ? canonDec(text) : canonDec(String(Math.fround(Number(text))));
    case "decimal": return typeof text === "string" ? canonDec(text) : bad();
    case "string": case "large_string": return typeof v === "string" && !isNum(v) ? v : bad();
    case "binary": case "large_binary": case "fixed_size_binary":
      if (typeof v !== "string" || isNum(v)) return bad();
      return v.startsWith("\\x") ? `hex:${v.slice(2).toLowerCase()}` : `hex:${Buffer.from(v, "base64").toString("hex")}`;
    case "date32": case "date64": return typeof v === "string" ? v : bad();
    case "time32": case "time64": return typeof v === "string" ? timeOfDay(v) : bad();
    case "timestamp": return typeof v === "string" ? epochMicros(v) : bad();
    default: return `${head}:${show(v)}`;
  }
}
function canon(t, v) {
  if (v === null || v === undefined) return null;
  switch (t?.k) {
    case "scalar": return canonScalar(t.lt, v);
    case "list": return Array.isArray(v) ? v.map((x) => canon(t.item, x)) : `bad-list:${show(v)}`;
    case "struct": {
      if (typeof v !== "object" || Array.isArray(v)) return `bad-struct:${show(v)}`;
      const o = {};
      for (const f of t.fields) o[f.name] = canon(f.t, v[f.name]);
      for (const k of Object.keys(v)) if (!t.fields.some((f) => f.name === k)) o[`extra:${k}`] = show(v[k]);
      return o;
    }
    case "map": { // reference: [{key, value}, ...]; Postgres jsonb: {"key": value} (keys as text)
      let pairs;
      if (Array.isArray(v)) pairs = v.map((e) => [canonScalar(t.key.lt, e?.key), canon(t.value, e?.value)]);
      else if (typeof v === "object") pairs = Object.entries(v).map(([k, x]) => [canonScalar(t.key.lt, t.key.lt.startsWith("string") || t.key.lt.startsWith("large_string") ? k : `${NUM}${k}`), canon(t.value, x)]);
      else return `bad-map:${show(v)}`;
      return pairs.map((p) => JSON.stringify(p)).sort();
    }
    default: return show(v);
  }
}

// ------------------------------------------------------------------------------------------- checks
let passed = 0, failed = 0;
const failures = [], skips = [], typeDiffs = new Map();
const ok = (label, note = "") => { passed++; console.log(`ok   ${label}${note ? ` (${note})` : ""}`); };
const ko = (label, ...detail) => {
  failed++; failures.push(label); console.log(`FAIL ${label}`);
  for (const d of detail.flat()) if (d) console.log(`       ${d}`);
};
const skip = (label, why) => { skips.push(`${label}: ${why}`); console.log(`skip ${label}: ${why}`); };
const clip = (s, n = 240) => (s.length > n ? s.slice(0, n) + "..." : s);
const ltName = (t) => (t?.k === "scalar" ? t.lt : t?.k === "list" ? `list<${ltName(t.item)}>` : t?.k || "?");

// compare one case: expected lines vs Postgres lines; cols = [{name, t}], withRowid, rowaddr: check _rowaddr = _rowid
function compare(label, expLines, gotLines, cols, { withRowid, rowaddr }) {
  const details = [];
  if (expLines.length !== gotLines.length) details.push(`rows: expected ${expLines.length}, got ${gotLines.length}`);
  const n = Math.min(expLines.length, gotLines.length), perCol = new Map();
  let first = null;
  for (let i = 0; i < n; i++) {
    const e = parseExact(expLines[i]), g = parseExact(gotLines[i]);
    const keys = [...(withRowid ? [{ name: "_rowid", t: { k: "scalar", lt: "int64" } }] : []), ...cols];
    for (const c of keys) {
      const a = JSON.stringify(canon(c.t, e[c.name])), b = JSON.stringify(canon(c.t, g[c.name]));
      if (a === b && (c.name in g)) continue;
      perCol.set(c.name, (perCol.get(c.name) || 0) + 1);
      if (!first) first = [i, e._rowid, c.name, show(e[c.name]), c.name in g ? show(g[c.name]) : "(no such key)", a, b];
    }
    if (rowaddr && g._rowaddr !== g._rowid) {
      perCol.set("_rowaddr", (perCol.get("_rowaddr") || 0) + 1);
      if (!first) first = [i, e._rowid, "_rowaddr", show(g._rowid), show(g._rowaddr), "", ""];
    }
  }
  if (first) {
    details.push(`first difference at row ${first[0] + 1}${first[1] !== undefined ? ` (_rowid ${show(first[1])})` : ""}, column ${first[2]}:`,
      `  reference ${clip(first[3])}`, `  postgres  ${clip(first[4])}`);
    if (first[5] !== first[3]) details.push(`  canonical: ${clip(first[5], 120)} vs ${clip(first[6], 120)}`);
    details.push(`  rows differing per column: ${[...perCol].map(([k, x]) => `${k} ${x}`).join(", ")}`);
    for (const [k] of perCol) {
      const t = ltName(cols.find((c) => c.name === k)?.t);
      typeDiffs.set(t, (typeDiffs.get(t) || new Set()).add(label.split(" ")[0]));
    }
  }
  if (details.length) ko(label, details); else ok(label, `${n} rows`);
}

const splitLines = (s) => s.split("\n").filter((l) => l !== "");
function selectSql(table, cols, { withRowid, rowaddr }, where) {
  const list = [...(withRowid ? ["_rowid"] : []), ...(rowaddr ? ["_rowaddr"] : []), ...cols.map((c) => qi(c.name))];
  return `SELECT to_jsonb(q) FROM (SELECT ${list.join(", ")} FROM ${table}${where ? ` WHERE ${where}` : ""} ORDER BY _rowid) q`;
}

// ------------------------------------------------------------------------------------------- main
const setup = psql(`
  SET client_min_messages = warning;
  DROP SCHEMA IF EXISTS m CASCADE; DROP SCHEMA IF EXISTS v CASCADE;
  DROP SERVER IF EXISTS interop CASCADE;
  CREATE EXTENSION IF NOT EXISTS lt_fdw;
  CREATE SERVER interop FOREIGN DATA WRAPPER lt_fdw OPTIONS (root ${ql(path.resolve(DATA))});
  CREATE SCHEMA m; CREATE SCHEMA v;`);
if (!setup.ok) { ko("setup", setup.err); }

const names = fs.readdirSync(DATA).filter((f) => f.endsWith(".cases")).map((f) => f.slice(0, -6)).sort()
  .filter((n) => !only || only.test(n));
const t0 = Date.now();
for (const name of setup.ok ? names : []) {
  const dir = path.join(DATA, `${name}.lance`);
  let latest;
  try { latest = inspectInfo(dir, []); } catch (e) { ko(`${name}: lt-inspect info`, e.message); continue; }
  const stable = (latest.reader_feature_flags & 2) !== 0;
  const imp = psql(`IMPORT FOREIGN SCHEMA "." LIMIT TO (${qi(name)}) FROM SERVER interop INTO m OPTIONS (import_row_id 'true')`);
  const imported = imp.ok;
  if (!imp.ok) {
    if (/cannot map|HV004/.test(imp.err)) skip(`${name} (latest)`, `IMPORT cannot map a type: ${imp.err.split("\n")[0]}`);
    else ko(`${name}: IMPORT FOREIGN SCHEMA`, imp.err);
  }
  const versionTables = new Map(); // "--version N" / "--tag T" -> {table, cols} or {error}
  const tableFor = (sel) => {
    if (!sel) return imported ? { table: `m.${qi(name)}`, cols: typeTrees(latest.schema) } : { error: "not imported" };
    if (versionTables.has(sel)) return versionTables.get(sel);
    let res;
    try {
      // sel: "--version N", "--tag T", "--branch B" (Lance 12), or a branch with a version or tag
      const words = sel.split(" "), pairs = [];
      for (let k = 0; k + 1 < words.length; k += 2) pairs.push([words[k].slice(2), words[k + 1]]);
      const info = inspectInfo(dir, words), cols = typeTrees(info.schema), ddl = [];
      const tname = `${name}@${pairs.map(([o, v]) => `${o === "version" ? "v" : o + "_"}${v}`).join("@")}`;
      const colDdl = cols.map((c) => `${qi(c.name)} ${pgType(c.t, `${tname}_${c.name}`, ddl)}`);
      ddl.push(`CREATE FOREIGN TABLE v.${qi(tname)} (_rowid bigint, _rowaddr bigint${colDdl.map((c) => `, ${c}`).join("")}) ` +
        `SERVER interop OPTIONS (path ${ql(`${name}.lance`)}${pairs.map(([o, v]) => `, ${o} ${ql(v)}`).join("")})`);
      const r = psql(ddl.join(";\n"));
      res = r.ok ? { table: `v.${qi(tname)}`, cols } : { error: `CREATE FOREIGN TABLE: ${r.err}` };
    } catch (e) { res = { error: e.message }; }
    versionTables.set(sel, res);
    return res;
  };

  for (const line of splitLines(fs.readFileSync(path.join(DATA, `${name}.cases`), "utf8"))) {
    const [label, expected, argText] = line.split("\t"), a = argText.split(" ");
    const o = { withRowid: a.includes("--with-rowid") };
    const colsArg = a.includes("--columns") ? a[a.indexOf("--columns") + 1].split(",") : null;
    const sel = a.flatMap((x, k) => (["--branch", "--version", "--tag"].includes(x) ? [x, a[k + 1]] : [])).join(" ") || null;
    const tl = `${name} ${label}`;
    const tab = tableFor(sel);
    if (tab.error) { if (!(tab.error === "not imported" && !imported && skips.some((s) => s.startsWith(name)))) ko(tl, tab.error); continue; }
    o.rowaddr = !!sel && !stable;
    const cols = colsArg ? colsArg.map((c) => tab.cols.find((x) => x.name === c) || { name: c, t: null }) : tab.cols;
    const r = psql(selectSql(tab.table, cols, { withRowid: o.withRowid, rowaddr: o.rowaddr }));
    if (!r.ok) { ko(tl, `query failed: ${r.err}`); continue; }
    compare(tl, splitLines(fs.readFileSync(path.join(DATA, expected), "utf8")), splitLines(r.out), cols, o);
  }

  // filtered scans
  for (const f of FILTERS.filter((x) => x.ds.test(name))) {
    for (const sel of [null, ...(f.at || [])]) {
      const tl = `${name} filter [${f.where}]${sel ? ` ${sel}` : ""}`;
      const tab = tableFor(sel);
      if (tab.error) { ko(tl, tab.error); continue; }
      const cols = tab.cols.filter((c) => !(f.exclude || []).includes(c.name));
      if (cols.length < tab.cols.length) console.log(`note ${tl}: without ${f.exclude.join(", ")}: ${f.why}`);
      const key = crypto.createHash("sha1").update(JSON.stringify([name, sel, f.where, cols.map((c) => c.name)])).digest("hex").slice(0, 16);
      const cache = path.join(DATA, "pg-filters", `${name}.${key}.expected.jsonl`);
      if (!fs.existsSync(cache)) {
        fs.mkdirSync(path.dirname(cache), { recursive: true });
        const r = spawnSync("node", [path.join(HERE, "ref.mjs"), "scan", dir, "--with-rowid", "--columns", cols.map((c) => c.name).join(","), "--filter", f.where, ...(sel ? sel.replace("--tag", "--version").split(" ") : [])],
          { encoding: "utf8", maxBuffer: 1 << 30 });
        if (r.status !== 0) { ko(tl, `reference scan failed: ${(r.stderr || "").trim()}`); continue; }
        fs.writeFileSync(cache + ".tmp", r.stdout);
        fs.renameSync(cache + ".tmp", cache);
      }
      const r = psql(selectSql(tab.table, cols, { withRowid: true, rowaddr: !!sel && !stable }, f.where));
      if (!r.ok) { ko(tl, `query failed: ${r.err}`); continue; }
      compare(tl, splitLines(fs.readFileSync(cache, "utf8")), splitLines(r.out), cols, { withRowid: true, rowaddr: !!sel && !stable });
    }
  }
}

console.log(`== ${names.length} datasets, ${passed + failed} cases in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
if (typeDiffs.size) {
  console.log("differing Lance types (datasets):");
  for (const [t, ds] of typeDiffs) console.log(`  ${t}: ${[...ds].join(" ")}`);
}
if (skips.length) { console.log(`skipped (${skips.length}):`); for (const s of skips) console.log(`  ${s}`); }
if (failures.length) { console.log("failed cases:"); for (const f of failures) console.log(`  ${f}`); }
console.log(`interop-pg: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
