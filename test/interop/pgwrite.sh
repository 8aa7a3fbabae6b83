#!/usr/bin/env bash
# test/interop/pgwrite.sh — the Postgres -> reference direction: what lt_fdw writes, the real Lance engine reads.
#
# For each spec (below) and each storage version it has among 2.0 / 2.1 / 2.2, the reference engine makes
# a source dataset (the spec's rows) and an empty copy of its schema. Through PostgreSQL:
#   1. the rows are copied into the empty dataset in one transaction (INSERT ... SELECT, COPY FROM, or a
#      batched INSERT, depending on the variant);
#   2. one more transaction deletes every row with id % 5 = 0 and updates a text column where id % 7 = 1.
# The engine makes the expected dataset itself (the spec with the same delete and update as ops), and
#   - `ref.mjs scan` of the written dataset must print exactly the source rows after step 1 and exactly
#     the expected rows after step 2 (as sorted JSON lines: UPDATE moves rows, so the order may differ),
#     nanoseconds floored to microseconds (PostgreSQL's precision, as reads floor them);
#   - each of the two transactions adds exactly one version;
#   - the engine can append to what lt_fdw wrote, and lt_fdw reads the engine's append (count and sum).
#
#   test/interop/pgwrite.sh                 install (private PostgreSQL copy), generate, compare
#   test/interop/pgwrite.sh --no-install    the extension is already installed
#
# Ends with "interop-pgwrite: N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step interop-pgwrite 18 "$@"
lt_step_prepare

mkdir -p build
[ -x build/lt-inspect ] || ${MAKE:-make} build/lt-inspect >/dev/null 2>&1 || finish "building build/lt-inspect failed"

lt_step_cluster
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
export PGOPTIONS="-c timezone=UTC -c client_min_messages=warning"
ref() { lt_as_pg node "$HERE/ref.mjs" "$@"; }


"${PSQL[@]}" -c "CREATE EXTENSION lt_fdw; CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');" \
	|| finish "creating the extension failed"

# The spec variants: <name> <spec file> <storage>, with a source spec, an empty one, and the expected one.
# Not map: jsonb, which maps are read into and written from, keeps its keys sorted, not in the map's order.
# Not fsl_struct and packed: the file writer refuses fixed-size lists of structs and packed structs for now.
# LT_INTEROP_SPECS / LT_INTEROP_STORAGE narrow them (test/interop/l12.sh runs a subset against Lance 12).
SPECS=(types nulls bigvalues stable_row_ids deletions)
[ -z "${LT_INTEROP_SPECS:-}" ] || read -r -a SPECS <<<"${LT_INTEROP_SPECS//,/ }"
node - "$HERE/specs" "$TMP/specs" "${SPECS[@]}" >"$TMP/variants" <<'JS' || finish "preparing the specs failed"
const fs = require("fs"), [dir, out, ...names] = process.argv.slice(2);
const only = (process.env.LT_INTEROP_STORAGE || "").split(/[\s,]+/).filter(Boolean);
fs.mkdirSync(out, { recursive: true });
for (const n of names) {
  const spec = JSON.parse(fs.readFileSync(`${dir}/${n}.json`, "utf8"));
  // the storage versions the file writer supports
  const storages = (Array.isArray(spec.storage) ? spec.storage : [spec.storage || "2.1"]).filter((s) => ["2.0", "2.1", "2.2"].includes(s) && (!only.length || only.includes(s)));
  const idcol = spec.schema.find((c) => c.name === "id");
  const text = spec.schema.find((c) => c.type === "utf8" && c.name !== "id");
  if (!idcol) continue;
  for (const st of storages) {
    const v = `${n}_v${st.replace(".", "_")}`;
    // as ref.mjs expands a spec: entries with "only" belong to those storage versions
    const keep = (x) => !x.only || x.only.includes(st);
    const base = { ...spec, storage: st, schema: spec.schema.filter(keep), ops: (spec.ops || []).filter(keep) };
    const src = base;
    // the empty copy: no rows, but the same schema changes
    const empty = { ...base, rows: [], generate: undefined,
                    ops: base.ops.filter((o) => ["add_columns", "drop_columns", "rename"].includes(o.op)) };
    const ops = [...base.ops, { op: "delete", where: "id % 5 = 0" }];
    if (text) ops.push({ op: "update", set: { [text.name]: "'updated'" }, where: "id % 7 = 1" });
    const expected = { ...base, ops };
    fs.writeFileSync(`${out}/${v}.src.json`, JSON.stringify(src));
    fs.writeFileSync(`${out}/${v}.dst.json`, JSON.stringify(empty));
    fs.writeFileSync(`${out}/${v}.exp.json`, JSON.stringify(expected));
    console.log(`${v} ${text ? text.name : ""}`);
  }
}
JS
chmod -R a+rX "$TMP/specs"

# sorted rows of a dataset as the engine reads them
rows_of() { ref scan "$1" | LC_ALL=C sort; }
# the same rows as PostgreSQL holds them: nanoseconds floored to microseconds (timestamp, time)
pg_precision() {	# spec.json < rows > rows
	node -e '
const spec = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const ns = new Set(spec.schema.filter((c) => /^(time64|timestamp)\[ns/.test(c.type)).map((c) => c.name));
const lines = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l);
const out = lines.map((l) => {
  const o = JSON.parse(l);
  for (const k of ns) if (typeof o[k] === "string") o[k] = o[k].replace(/(\.\d{6})\d{3}(Z?)$/, "$1000$2");
  return JSON.stringify(o);
});
process.stdout.write(out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((l) => l + "\n").join(""));' "$1"
}
version_of() { ls "$1/_versions" | grep -c '\.manifest$'; }	# versions = manifests (nothing is cleaned up here)

k=0
while read -r v textcol; do
	k=$((k + 1))
	for part in src dst exp; do
		ref make "$LAKE/${v}_$part.lance" "$TMP/specs/$v.$part.json" >/dev/null 2>"$TMP/make.err" \
			|| { cat "$TMP/make.err" >&2; bad "$v: make $part"; continue 2; }
	done
	v0=$(version_of "$LAKE/${v}_dst.lance")
	# foreign tables: the source imported, the target with the same column types
	"${PSQL[@]}" >"$TMP/ddl.out" 2>&1 <<SQL || { cat "$TMP/ddl.out"; bad "$v: foreign tables"; continue; }
CREATE SCHEMA "s_$v";
IMPORT FOREIGN SCHEMA "." LIMIT TO ("${v}_src") FROM SERVER lake INTO "s_$v";
DO \$\$ DECLARE cols text; BEGIN
  SELECT string_agg(format('%I %s', attname, format_type(atttypid, atttypmod)), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute WHERE attrelid = '"s_$v"."${v}_src"'::regclass AND attnum > 0 AND NOT attisdropped;
  EXECUTE format('CREATE FOREIGN TABLE %I.%I (%s) SERVER lake OPTIONS (path %L)', 's_$v', 'dst', cols, '${v}_dst.lance');
END \$\$;
SQL
	# step 1: copy the rows, three ways
	case $((k % 3)) in
		0) load="INSERT INTO \"s_$v\".dst SELECT * FROM \"s_$v\".\"${v}_src\"" ;;
		1) load="COPY (SELECT * FROM \"s_$v\".\"${v}_src\") TO '$TMP/$v.copy'; COPY \"s_$v\".dst FROM '$TMP/$v.copy'" ;;
		2) load="ALTER FOREIGN TABLE \"s_$v\".dst OPTIONS (ADD batch_size '50'); INSERT INTO \"s_$v\".dst SELECT * FROM \"s_$v\".\"${v}_src\"" ;;
	esac
	if ! "${PSQL[@]}" -c "BEGIN; $load; COMMIT;" >"$TMP/load.out" 2>&1; then
		cat "$TMP/load.out"; bad "$v: copy through PostgreSQL"; continue
	fi
	rows_of "$LAKE/${v}_src.lance" | pg_precision "$TMP/specs/$v.src.json" >"$TMP/src.jsonl"; rows_of "$LAKE/${v}_dst.lance" | LC_ALL=C sort >"$TMP/dst.jsonl"
	if [ -s "$TMP/src.jsonl" ] && cmp -s "$TMP/src.jsonl" "$TMP/dst.jsonl"; then
		ok "$v: the engine reads the rows lt_fdw wrote"
	else
		bad "$v: the engine reads other rows than lt_fdw wrote"; ref diff "$TMP/src.jsonl" "$TMP/dst.jsonl" 2>&1 | head -n 12 | cut -c1-400
	fi
	[ "$(version_of "$LAKE/${v}_dst.lance")" = $((v0 + 1)) ] && ok "$v: one version for the copy" \
		|| bad "$v: $(version_of "$LAKE/${v}_dst.lance") versions after the copy, not $((v0 + 1))"

	# step 2: delete and update in one transaction
	upd=""
	[ -n "$textcol" ] && upd="UPDATE \"s_$v\".dst SET \"$textcol\" = 'updated' WHERE id % 7 = 1;"
	if ! "${PSQL[@]}" -c "BEGIN; DELETE FROM \"s_$v\".dst WHERE id % 5 = 0; $upd COMMIT;" >"$TMP/dml.out" 2>&1; then
		cat "$TMP/dml.out"; bad "$v: delete and update through PostgreSQL"; continue
	fi
	rows_of "$LAKE/${v}_exp.lance" | pg_precision "$TMP/specs/$v.src.json" >"$TMP/exp.jsonl"; rows_of "$LAKE/${v}_dst.lance" >"$TMP/dst.jsonl"
	if [ -s "$TMP/exp.jsonl" ] && cmp -s "$TMP/exp.jsonl" "$TMP/dst.jsonl"; then
		ok "$v: the engine reads the rows after DELETE and UPDATE"
	else
		bad "$v: rows after DELETE and UPDATE differ from the engine's own"; ref diff "$TMP/exp.jsonl" "$TMP/dst.jsonl" 2>&1 | head -n 12 | cut -c1-400
	fi
	[ "$(version_of "$LAKE/${v}_dst.lance")" = $((v0 + 2)) ] && ok "$v: one version for the delete and update" \
		|| bad "$v: $(version_of "$LAKE/${v}_dst.lance") versions after the delete and update, not $((v0 + 2))"
done <"$TMP/variants"

# the engine appends to what lt_fdw wrote, and lt_fdw reads it (types_v2_1: its source rows once more)
v=types_v2_1
if [ -d "$LAKE/${v}_dst.lance" ]; then
	before=$("${PSQL[@]}" -At -c "SELECT count(*) FROM \"s_$v\".dst")
	if lt_as_pg node --input-type=module -e '
import fs from "node:fs"; import os from "node:os"; import path from "node:path";
const { lancedb } = await import(process.argv[1] + "/engine.mjs");
const openAt = async (dir) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lt-pgwrite-"));
  fs.symlinkSync(path.resolve(dir), path.join(tmp, "t.lance"));
  return (await lancedb.connect(tmp)).openTable("t");
};
const [, dst, src] = process.argv.slice(1);
const s = await openAt(src), d = await openAt(dst);
await d.add(await s.query().toArrow());' "$HERE" "$LAKE/${v}_dst.lance" "$LAKE/${v}_src.lance" 2>"$TMP/append.err"; then
		after=$("${PSQL[@]}" -At -c "SELECT count(*) FROM \"s_$v\".dst")
		src=$("${PSQL[@]}" -At -c "SELECT count(*) FROM \"s_$v\".\"${v}_src\"")
		[ "$after" = $((before + src)) ] && ok "$v: lt_fdw reads the engine's append on top of its own writes" \
			|| bad "$v: after the engine's append lt_fdw counts $after rows, not $((before + src))"
	else
		cat "$TMP/append.err"; bad "$v: the engine could not append to what lt_fdw wrote"
	fi
fi

# a large delete (a roaring .bin deletion file) and a fragment emptied by a delete (removed from the manifest)
cat >"$TMP/big.json" <<'JSON'
{"storage": "2.1", "schema": [{"name": "id", "type": "int64", "nullable": false}, {"name": "s", "type": "utf8"}], "rows": []}
JSON
chmod a+r "$TMP/big.json"
if ref make "$LAKE/big.lance" "$TMP/big.json" >/dev/null 2>"$TMP/make.err" &&
	"${PSQL[@]}" >"$TMP/big.out" 2>&1 <<'SQL'
CREATE FOREIGN TABLE big (id bigint, s text) SERVER lake OPTIONS (path 'big.lance', max_rows_per_file '15000');
INSERT INTO big SELECT g, 'row ' || g FROM generate_series(1, 20000) g;
DELETE FROM big WHERE id % 5 <> 0 AND id <= 15000;
DELETE FROM big WHERE id > 15000;
SQL
then
	got=$(ref scan "$LAKE/big.lance" | wc -l)
	sum=$(ref scan "$LAKE/big.lance" | sed -E 's/.*"id":"([0-9]+)".*/\1/' | awk '{ s += $1 } END { print s }')
	bins=$(ls "$LAKE/big.lance/_deletions/" 2>/dev/null | grep -c '\.bin$')
	[ "$got" = 3000 ] && [ "$sum" = 22507500 ] && ok "big: the engine reads 3000 rows after deleting 12000 of one fragment and all of another" \
		|| bad "big: the engine reads $got rows (sum $sum), not 3000 (sum 22507500)"
	[ "$bins" -ge 1 ] && ok "big: the large delete wrote a roaring .bin deletion file" || bad "big: no .bin deletion file"
	frags=$(build/lt-inspect info "$LAKE/big.lance" | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).fragments.length)')
	[ "$frags" = 1 ] && ok "big: the emptied fragment is removed from the manifest" || bad "big: the manifest has $frags fragments, not 1"
else
	cat "$TMP/make.err" "$TMP/big.out" 2>/dev/null; bad "big: the large delete through PostgreSQL"
fi

if [ "$failed" -gt 0 ] && grep -q 'TRAP\|terminated by signal\|PANIC' "$LT_PGLOG"; then
	echo "---- server log (last 30 lines)"; tail -n 30 "$LT_PGLOG"
fi
echo "interop-pgwrite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
