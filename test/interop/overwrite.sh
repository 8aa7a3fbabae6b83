#!/usr/bin/env bash
# test/interop/overwrite.sh — INSERT OVERWRITE … WHERE against the real Lance engine and a real server.
#
# The engine makes parts.lance: fragments of one day each (08-01, 08-02), one mixing 08-03 and 08-04, a bitmap
# index on dt, a btree on id and an IVF_FLAT vector index on v, then an append of 08-05 the indexes do not
# cover. Through PostgreSQL (lt_insert_overwrite and lt_fdw.overwrite_where):
#   1. replacing 08-01: the index proves fragment 0 fully matched, so it is removed by id without being read
#      (its data file is made unreadable to the server first) and EXPLAIN says so; one new version (Update);
#   2. replacing 08-05 (the unindexed fragment: scanned) and 08-03 (half of a fragment: a deletion vector);
#      after each, the engine reads exactly the rows PostgreSQL reads, and its indexes still answer right
#      (test/interop/overwrite/check.mjs: scalar queries and exact vector searches against a plain scan);
#   3. a slow replace of 08-02 while two readers poll (the engine, and another PostgreSQL session): every
#      observation is all old or all new rows;
#   4. the engine as the concurrent writer: its append of matching rows makes the replace fail with 40001,
#      its append of other rows lands with it;
#   5. a backend SIGKILLed in the middle of a replace, and at commit points (lt_fdw.crash_at_commit_point):
#      the old version stays intact and readable by both, and the next replace works.
#
#   test/interop/overwrite.sh [--no-install]
#
# Ends with "interop-overwrite: N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step interop-overwrite 21 "$@"
lt_step_prepare
[ -x build/lt-inspect ] || ${MAKE:-make} build/lt-inspect >/dev/null 2>&1 || finish "building build/lt-inspect failed"

lt_step_cluster
export PGOPTIONS="-c timezone=UTC -c client_min_messages=warning -c DateStyle=ISO"
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres -At)
ref() { lt_as_pg node "$HERE/ref.mjs" "$@"; }
D=$LAKE/parts.lance
versions() { ls "$D/_versions" | grep -c '\.manifest$'; }
op_of() { build/lt-inspect info "$D" | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).operation)'; }
# the rows as the engine and as PostgreSQL read them: id|dt|s|region|sum of v, sorted
ref_rows() { ref scan "$D" --columns id,dt,s,region,v | node -e '
for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean)) {
  const o = JSON.parse(l);
  console.log(`${o.id}|${o.dt ?? ""}|${o.s ?? ""}|${o.region ?? ""}|${o.v ? o.v.reduce((a, b) => a + b, 0).toFixed(2) : ""}`);
}' | LC_ALL=C sort; }
pg_rows() { "${PSQL[@]}" -c "SELECT id || '|' || coalesce(dt::text, '') || '|' || coalesce(s, '') || '|' || coalesce(region, '') || '|' ||
  coalesce(to_char((SELECT sum(x::float8) FROM unnest(v) x), 'FM9999990.00'), '') FROM parts" | LC_ALL=C sort; }
same_rows() {	# label
	ref_rows >"$TMP/ref.rows"; pg_rows >"$TMP/pg.rows"
	if cmp -s "$TMP/ref.rows" "$TMP/pg.rows" && [ -s "$TMP/ref.rows" ]; then ok "$1: the engine reads the rows PostgreSQL reads ($(wc -l <"$TMP/ref.rows"))"
	else bad "$1: the engine and PostgreSQL read different rows"; diff "$TMP/ref.rows" "$TMP/pg.rows" | head -5; fi
}
engine_checks() {	# label indexes dt-index-used probes...: the engine's indexes against a plain scan
	local label=$1; shift
	lt_as_pg node "$HERE/overwrite/check.mjs" "$D" "$@" >"$TMP/check.out" 2>&1 || { bad "$label: check.mjs failed"; cat "$TMP/check.out"; return; }
	local n_ok n_bad
	n_ok=$(grep -c '^ok' "$TMP/check.out"); n_bad=$(grep -c '^FAIL' "$TMP/check.out")
	if [ "$n_bad" -eq 0 ] && [ "$n_ok" -gt 0 ]; then ok "$label: the engine's btree, bitmap and vector indexes answer as a scan ($n_ok checks)"
	else bad "$label: $n_bad of $((n_ok + n_bad)) index checks failed"; grep '^FAIL' "$TMP/check.out" | head -5; fi
}
# a vector of 8 floats for row i, the same formula in JavaScript and SQL (exact in float32; distinct for i < 9973)
VEC_SQL="ARRAY(SELECT (((g * (2 * j + 3)) % 9973) / 64.0 - 78)::real FROM generate_series(0, 7) j)"

# ---- the dataset ---------------------------------------------------------------------------------------
node - "$TMP/parts.json" "$TMP/append.json" <<'JS' || finish "writing the spec failed"
const fs = require("fs");
const vec = (i) => Array.from({ length: 8 }, (_, j) => ((i * (2 * j + 3)) % 9973) / 64 - 78);
const row = (i, dt) => ({ id: String(i), dt, s: `row ${i}`, region: ["north", "south", "east", "west"][i % 4], v: vec(i) });
const rows = [];
for (let i = 0; i < 400; i++) rows.push(row(i, "2026-08-01"));
for (let i = 400; i < 800; i++) rows.push(row(i, "2026-08-02"));
for (let i = 800; i < 1200; i++) rows.push(row(i, i % 2 ? "2026-08-04" : "2026-08-03"));
fs.writeFileSync(process.argv[2], JSON.stringify({
  description: "overwrite.sh: a day per fragment (08-03/08-04 mixed), indexes on dt, id and v, then 08-05 unindexed",
  storage: "2.1",
  schema: [{ name: "id", type: "int64", nullable: false }, { name: "dt", type: "date32" }, { name: "s", type: "utf8" }, { name: "region", type: "utf8" },
           { name: "v", type: "fixed_size_list<float32,8>" }],
  rows, fragment_sizes: [400, 400, 400],
  ops: [{ op: "create_index", column: "dt", kind: "btree", name: "dt_idx" },
        { op: "create_index", column: "region", kind: "bitmap", name: "region_idx" },
        { op: "create_index", column: "id", kind: "btree", name: "id_idx" },
        { op: "create_index", column: "v", kind: "ivf_flat", partitions: 2, name: "v_idx" },
        { op: "append", rows: Array.from({ length: 200 }, (_, k) => row(1200 + k, "2026-08-05")) }],
}));
fs.writeFileSync(process.argv[3], JSON.stringify({ ops: [] }));
JS
chmod a+r "$TMP"/*.json
ref make "$D" "$TMP/parts.json" >/dev/null 2>"$TMP/make.err" || { cat "$TMP/make.err"; finish "the engine could not make parts.lance"; }
"${PSQL[@]}" >/dev/null <<SQL || finish "creating the foreign table failed"
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
CREATE FOREIGN TABLE parts (id bigint, dt date, s text, region text, v real[]) SERVER lake OPTIONS (path 'parts.lance');
SQL
same_rows "made by the engine"
engine_checks "made by the engine" dt_idx,id_idx,region_idx,v_idx yes 0 399 500 1300

# ---- 1. 08-01: fragment 0, proved fully matched by the btree index, is removed without a read --------------
frag0_file=$D/data/$(build/lt-inspect info "$D" | node -e '
const i = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(i.fragments.find((f) => f.id === 0).files[0].path)')
chmod 000 "$frag0_file"
if lt_as_pg cat "$frag0_file" >/dev/null 2>&1; then bad "the server's user can still read $frag0_file"; fi
plan=$("${PSQL[@]}" -c "SET lt_fdw.overwrite_where = \$\$dt = '2026-08-01'\$\$;
  EXPLAIN (COSTS OFF) INSERT INTO parts SELECT g, DATE '2026-08-01', 'new ' || g, 'east', $VEC_SQL FROM generate_series(2000, 2099) g")
grep -q "Metadata-Only Removals: 1" <<<"$plan" && grep -q "dt_idx (btree)" <<<"$plan" \
	&& ok "EXPLAIN: the btree index finds the delete set, one metadata-only removal" || { bad "EXPLAIN of the 08-01 replace"; echo "$plan"; }
v0=$(versions)
out=$("${PSQL[@]}" -c "SELECT * FROM lt_insert_overwrite('parts', \$\$dt = '2026-08-01'\$\$,
  \$\$SELECT g, DATE '2026-08-01', 'new ' || g, 'east', $VEC_SQL FROM generate_series(2000, 2099) g\$\$)" 2>&1)
check "08-01 replaced with fragment 0 unreadable (rows_deleted|inserted|removed|updated|added)" "$out" "400|100|1|0|1"
chmod 644 "$frag0_file"
check "08-01: one new version" "$(( $(versions) - v0 ))" 1
check "08-01: the version is an Update" "$(op_of)" Update
same_rows "after replacing 08-01"
engine_checks "after replacing 08-01" dt_idx,id_idx,region_idx,v_idx yes 2000 2099 "gone-0:$(node -e 'console.log(Array.from({length:8},(_, j) => ((0*(2*j+3))%9973)/64-78).join(","))')" 500

# ---- 2. 08-05 lives in the fragment no index covers; 08-03 in half of one -----------------------------------
plan=$("${PSQL[@]}" -c "SET lt_fdw.overwrite_where = \$\$dt = '2026-08-05'\$\$;
  EXPLAIN (COSTS OFF) INSERT INTO parts SELECT 1, DATE '2026-08-05', NULL, NULL, NULL WHERE false")
grep -q "Fragments Pruned: 2" <<<"$plan" && grep -q "scan of 2 fragments" <<<"$plan" \
	&& ok "EXPLAIN: 08-05 prunes the indexed fragments and scans the two unindexed ones" || { bad "EXPLAIN of the 08-05 replace"; echo "$plan"; }
out=$("${PSQL[@]}" -c "BEGIN; SET LOCAL lt_fdw.overwrite_where = \$\$dt = '2026-08-05'\$\$;
  INSERT INTO parts SELECT g, DATE '2026-08-05', 'new ' || g, 'east', $VEC_SQL FROM generate_series(2100, 2149) g; COMMIT;
  SELECT count(*) FROM parts WHERE dt = '2026-08-05'" 2>&1)
check "08-05 replaced through lt_fdw.overwrite_where" "$out" 50
out=$("${PSQL[@]}" -c "SELECT * FROM lt_insert_overwrite('parts', \$\$dt = '2026-08-03'\$\$,
  \$\$SELECT g, DATE '2026-08-03', 'new ' || g, 'east', $VEC_SQL FROM generate_series(2150, 2159) g\$\$)" 2>&1)
check "08-03 replaced: half of a fragment gets a deletion vector" "$out" "200|10|0|1|1"
same_rows "after replacing 08-05 and 08-03"
engine_checks "after replacing 08-05 and 08-03" dt_idx,id_idx,region_idx,v_idx yes 2100 2155 801 "gone-1250:$(node -e 'console.log(Array.from({length:8},(_, j) => ((1250*(2*j+3))%9973)/64-78).join(","))')"
# a second replace of the same day through the index path is idempotent
before=$(pg_rows | md5sum)
"${PSQL[@]}" -c "SELECT * FROM lt_insert_overwrite('parts', \$\$dt = '2026-08-01'\$\$,
  \$\$SELECT g, DATE '2026-08-01', 'new ' || g, 'east', $VEC_SQL FROM generate_series(2000, 2099) g\$\$)" >/dev/null
check "re-running the 08-01 replace changes no row" "$(pg_rows | md5sum)" "$before"
idx=$(build/lt-inspect index "$D" | node -e '
console.log(require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l).name).sort().join(","))')
check "lt-inspect still lists the four indexes" "$idx" "dt_idx,id_idx,region_idx,v_idx"
# the index lookups of lt-inspect (the format library) agree with its plain scans
for w in "dt = '2026-08-03'" "dt = '2026-08-01'" "id < 500" "id >= 2000" "region = 'east'"; do
	# both must succeed (two copies of one error message would agree)
	if a=$(build/lt-inspect index-query "$D" --where "$w" 2>&1) && b=$(build/lt-inspect index-query "$D" --where "$w" --no-index 2>&1); then
		check "lt-inspect index-query \"$w\" with and without the index ($(grep -c . <<<"$a") rows)" "$(sort <<<"$a" | md5sum)" "$(sort <<<"$b" | md5sum)"
	else
		check "lt-inspect index-query \"$w\" with and without the index" "failed: $(head -c 200 <<<"$a${b:-}")" "success"
	fi
done

# ---- 3. readers polling during a slow replace see all old or all new rows ---------------------------------------
old=$("${PSQL[@]}" -c "SELECT count(*) || ' ' || sum(id) FROM parts WHERE dt = '2026-08-02'")
rm -f "$TMP/stop"
( while [ ! -e "$TMP/stop" ]; do "${PSQL[@]}" -c "SELECT count(*) || ' ' || sum(id) FROM parts WHERE dt = '2026-08-02'" 2>&1; done ) >"$TMP/poll.pg" &
pg_poller=$!
lt_as_pg node "$HERE/overwrite/poll.mjs" "$D" "$TMP/stop" "dt = date '2026-08-02'" >"$TMP/poll.ref" 2>&1 &
ref_poller=$!
sleep 1
"${PSQL[@]}" -c "SELECT rows_deleted FROM lt_insert_overwrite('parts', \$\$dt = '2026-08-02'\$\$,
  \$\$SELECT g, DATE '2026-08-02', 'slow ' || g, 'west', $VEC_SQL FROM generate_series(3000, 3299) g, LATERAL (SELECT pg_sleep(0.01 + 0 * g)) s\$\$)" >/dev/null
sleep 1
touch "$TMP/stop"; wait "$pg_poller" "$ref_poller"
new=$("${PSQL[@]}" -c "SELECT count(*) || ' ' || sum(id) FROM parts WHERE dt = '2026-08-02'")
check "the slow replace changed 08-02" "$new" "300 $(( (3000 + 3299) * 300 / 2 ))"
for who in pg ref; do
	n=$(wc -l <"$TMP/poll.$who"); torn=$(grep -vxF -e "$old" -e "$new" "$TMP/poll.$who" | head -3)
	n_old=$(grep -cxF "$old" "$TMP/poll.$who"); n_new=$(grep -cxF "$new" "$TMP/poll.$who")
	if [ -z "$torn" ] && [ "$n_old" -gt 1 ] && [ "$n_new" -gt 0 ]; then ok "$who reader: $n observations, $n_old all old then $n_new all new, none torn"
	else bad "$who reader: $n observations ($n_old old, $n_new new), other: $torn"; fi
done

# ---- 4. the engine appends while a replace is open ----------------------------------------------------------
node -e 'const fs = require("fs"); const vec = (i) => Array.from({ length: 8 }, (_, j) => ((i * (2 * j + 3)) % 9973) / 64 - 78);
fs.writeFileSync(process.argv[1], JSON.stringify({ ops: [{ op: "append", rows: [{ id: "4000", dt: "2026-08-04", s: "engine, matching", region: "south", v: vec(4000) }] }] }));
fs.writeFileSync(process.argv[2], JSON.stringify({ ops: [{ op: "append", rows: [{ id: "4001", dt: "2026-08-09", s: "engine, other day", region: "south", v: vec(4001) }] }] }));' \
	"$TMP/app-match.json" "$TMP/app-other.json" && chmod a+r "$TMP"/app-*.json
v0=$(versions)
out=$("${PSQL[@]}" -v ON_ERROR_STOP=0 2>&1 <<SQL
\set VERBOSITY verbose
BEGIN;
SELECT rows_deleted FROM lt_insert_overwrite('parts', \$\$dt = '2026-08-04'\$\$, \$\$SELECT 4100, DATE '2026-08-04', 'replaced', 'north', NULL::real[]\$\$);
\! node "$HERE/ref.mjs" apply "$D" "$TMP/app-match.json" >/dev/null
COMMIT;
SQL
)
grep -q "ERROR:  40001:.*concurrent" <<<"$out" && grep -q "added rows matching the replace predicate" <<<"$out" \
	&& ok "a concurrent append of a matching row fails the replace with 40001" || { bad "concurrent matching append"; echo "$out" | head -5; }
check "the engine's row is there, the replace is not" "$("${PSQL[@]}" -c "SELECT count(*) FILTER (WHERE id = 4000) || ' ' || count(*) FILTER (WHERE id = 4100) FROM parts")" "1 0"
out=$("${PSQL[@]}" 2>&1 <<SQL
BEGIN;
SELECT rows_deleted FROM lt_insert_overwrite('parts', \$\$dt = '2026-08-04'\$\$, \$\$SELECT 4100, DATE '2026-08-04', 'replaced', 'north', NULL::real[]\$\$);
\! node "$HERE/ref.mjs" apply "$D" "$TMP/app-other.json" >/dev/null
COMMIT;
SELECT count(*) FILTER (WHERE id = 4001) || ' ' || count(*) FILTER (WHERE dt = '2026-08-04') FROM parts;
SQL
)
check "a concurrent append of another day lands with the replace" "$(echo "$out" | tail -1)" "1 1"
check "versions: the engine's two appends and one replace" "$(( $(versions) - v0 ))" 3
same_rows "after the concurrent appends"

# ---- 5. crashes ------------------------------------------------------------------------------------------------
wait_ready() { for _ in $(seq 1 100); do "$LT_PGBIN/pg_isready" -q && "${PSQL[@]}" -c "SELECT 1" >/dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }
ref_rows >"$TMP/before.rows"; v0=$(versions)
"${PSQL[@]}" -c "SELECT * FROM lt_insert_overwrite('parts', \$\$dt = '2026-08-02'\$\$,
  \$\$SELECT g, DATE '2026-08-02', 'killed ' || g, NULL, $VEC_SQL FROM generate_series(5000, 5299) g, LATERAL (SELECT pg_sleep(0.01 + 0 * g)) s\$\$)" >/dev/null 2>&1 &
client=$!
pid=
for _ in $(seq 1 50); do
	pid=$("${PSQL[@]}" -c "SELECT pid FROM pg_stat_activity WHERE query LIKE '%killed%' AND pid <> pg_backend_pid()" 2>/dev/null)
	[ -n "$pid" ] && break; sleep 0.1
done
sleep 1
if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || lt_as_pg kill -9 "$pid"; fi
wait "$client"
wait_ready || finish "the server did not come back after the kill"
check "killed during the replace: no new version" "$(( $(versions) - v0 ))" 0
ref_rows >"$TMP/after.rows"
cmp -s "$TMP/before.rows" "$TMP/after.rows" && ok "killed during the replace: the engine reads the old rows" || bad "killed during the replace: the rows changed"
same_rows "killed during the replace"
for point in after_deletion_files after_txn_file mid_manifest; do
	"${PSQL[@]}" -c "SET lt_fdw.crash_at_commit_point = '$point'; SELECT * FROM lt_insert_overwrite('parts', \$\$dt = '2026-08-02'\$\$,
	  \$\$SELECT g, DATE '2026-08-02', 'crash ' || g, NULL, $VEC_SQL FROM generate_series(6000, 6009) g\$\$)" >/dev/null 2>&1
	wait_ready || finish "the server did not come back after the crash at $point"
	check "crash at $point: no new version" "$(( $(versions) - v0 ))" 0
	ref_rows >"$TMP/after.rows"
	cmp -s "$TMP/before.rows" "$TMP/after.rows" && ok "crash at $point: the engine reads the old rows" || bad "crash at $point: the rows changed"
done
same_rows "after the crashes"
out=$("${PSQL[@]}" -c "SELECT rows_deleted || ' ' || rows_inserted FROM lt_insert_overwrite('parts', \$\$dt = '2026-08-02'\$\$,
  \$\$SELECT g, DATE '2026-08-02', 'after ' || g, 'north', $VEC_SQL FROM generate_series(7000, 7009) g\$\$)" 2>&1)
check "the next replace commits" "$out" "300 10"
same_rows "the replace after the crashes"
# every fragment the indexes were built over is gone now: as Lance 8 does, the vector index is dropped and the
# scalar indexes stay (covering nothing, so the engine's planner no longer uses them)
idx=$(build/lt-inspect index "$D" | node -e '
console.log(require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l).name).sort().join(","))')
check "the indexes once no fragment they cover is left" "$idx" "dt_idx,id_idx,region_idx"
engine_checks "the replace after the crashes" dt_idx,id_idx,region_idx no 7000 7005 4001

echo "interop-overwrite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
