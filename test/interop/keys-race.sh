#!/usr/bin/env bash
# test/interop/keys-race.sh — a keyed dataset written at the same time by two PostgreSQL sessions and the real
# Lance engine, on a real server.
#
# The engine makes race.lance (primary key id). Then, all at once:
#   - PostgreSQL sessions A and B insert the contested keys 1000.. one per transaction (B also with ON CONFLICT
#     DO NOTHING every other key);
#   - the engine (test/interop/keys/race.mjs) runs its mergeInsert on the key (insert-only) for the same keys,
#     and every third key adds a row of its own range (100000..) and deletes one of the initial rows.
# At the end, read by the engine and by PostgreSQL: no key twice; every write reported as committed is there
# (and every reported delete is gone); every PostgreSQL failure is 40001 (a concurrent commit) or 23505 (the
# key existed when the statement ran), every engine failure the engine's own commit conflict; the engine and
# PostgreSQL read the same rows.
#
#   test/interop/keys-race.sh [--no-install]
#
# Ends with "interop-keys-race: N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step interop-keys-race 17 "$@"
lt_step_prepare

N=${LT_KEYS_RACE_KEYS:-40}
lt_step_cluster
PSQL=("$LT_PGBIN/psql" -X -q -d postgres -At -v VERBOSITY=sqlstate)
ref() { lt_as_pg node "$HERE/ref.mjs" "$@"; }
D=$LAKE/race.lance

node - "$TMP/race.json" "$N" <<'JS' || finish "writing the spec failed"
const fs = require("fs");
const n = Number(process.argv[3]);
const rows = Array.from({ length: Math.ceil(n / 3) + 2 }, (_, i) => ({ id: String(i), who: "initial", n: "0" }));
fs.writeFileSync(process.argv[2], JSON.stringify({
  description: "keys-race.sh: a keyed table (id), the initial rows the engine deletes during the race",
  storage: "2.1",
  schema: [{ name: "id", type: "int64", nullable: false, metadata: { "lance-schema:unenforced-primary-key:position": "1" } },
           { name: "who", type: "utf8" }, { name: "n", type: "int64" }],
  rows,
}));
JS
chmod a+r "$TMP/race.json"
ref make "$D" "$TMP/race.json" >/dev/null 2>"$TMP/make.err" || { cat "$TMP/make.err"; finish "the engine could not make race.lance"; }
"${PSQL[@]}" -v ON_ERROR_STOP=1 >/dev/null <<SQL || finish "creating the foreign table failed"
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
CREATE FOREIGN TABLE r (id bigint, who text, n bigint) SERVER lake OPTIONS (path 'race.lance');
SQL

# one PostgreSQL writer: "KEY ok" or "KEY SQLSTATE" per key
pg_writer() {	# name do-nothing-every-other
	local who=$1 dn=$2 i k sql out
	for ((i = 0; i < N; i++)); do
		k=$((1000 + i))
		sql="INSERT INTO r VALUES ($k, '$who', $i)"
		[ "$dn" = yes ] && [ $((i % 2)) -eq 1 ] && sql="$sql ON CONFLICT DO NOTHING"
		if out=$("${PSQL[@]}" -c "$sql" 2>&1); then echo "$k ok"
		else echo "$k $(grep -o 'ERROR:  [0-9A-Z]*' <<<"$out" | head -n 1 | cut -c9-) ${out//$'\n'/ }"; fi
	done
}

pg_writer pgA no >"$TMP/a.log" &
pa=$!
pg_writer pgB yes >"$TMP/b.log" &
pb=$!
lt_as_pg node "$HERE/keys/race.mjs" "$D" 1000 "$N" 100000 >"$TMP/engine.log" 2>"$TMP/engine.err" &
pe=$!
wait $pa; wait $pb; wait $pe || { bad "the engine's writer failed: $(head -n 3 "$TMP/engine.err")"; }

# ---- what each writer saw ------------------------------------------------------------------------------------
a_ok=$(grep -c ' ok$' "$TMP/a.log"); b_ok=$(grep -c ' ok$' "$TMP/b.log")
a_bad=$(grep -v ' ok$' "$TMP/a.log" | grep -vcE '^[0-9]+ (40001|23505) ')
b_bad=$(grep -v ' ok$' "$TMP/b.log" | grep -vcE '^[0-9]+ (40001|23505) ')
check "session A: every failure is 40001 or 23505" "$a_bad" 0
check "session B: every failure is 40001 or 23505" "$b_bad" 0
[ "$a_bad" -eq 0 ] || grep -v ' ok$' "$TMP/a.log" | grep -vE '^[0-9]+ (40001|23505) ' | head -n 3
[ "$b_bad" -eq 0 ] || grep -v ' ok$' "$TMP/b.log" | grep -vE '^[0-9]+ (40001|23505) ' | head -n 3
e_lines=$(wc -l <"$TMP/engine.log")
e_bad=$(node -e '
const ls = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
console.log(ls.filter((o) => !o.ok && !/conflict/i.test(o.error)).length)' "$TMP/engine.log")
check "the engine ran every operation ($N merges, $(( (N + 2) / 3 )) adds and deletes)" "$e_lines" $((N + 2 * ((N + 2) / 3)))
check "the engine: every failure is its own commit conflict" "$e_bad" 0
echo "     outcomes: A $a_ok ok / $((N - a_ok)) refused, B $b_ok ok / $((N - b_ok)) refused (incl. DO NOTHING skips)," \
	"engine $(grep -c '"ok":false' "$TMP/engine.log") failed of $e_lines;" \
	"40001: $(cat "$TMP/a.log" "$TMP/b.log" | grep -c ' 40001 '), 23505: $(cat "$TMP/a.log" "$TMP/b.log" | grep -c ' 23505 ')"

# ---- the end state ------------------------------------------------------------------------------------------
ref scan "$D" --columns id,who >"$TMP/ref.jsonl" 2>"$TMP/ref.err" || bad "the engine cannot read race.lance: $(head -n 2 "$TMP/ref.err")"
node -e '
for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)) {
  const o = JSON.parse(l); console.log(`${o.id}|${o.who}`);
}' "$TMP/ref.jsonl" | LC_ALL=C sort >"$TMP/ref.rows"
"${PSQL[@]}" -c "SELECT id || '|' || who FROM r" | LC_ALL=C sort >"$TMP/pg.rows"
check "no key twice (the engine's scan)" "$(cut -d'|' -f1 "$TMP/ref.rows" | sort | uniq -d | wc -l)" 0
check "no key twice (PostgreSQL)" "$(cut -d'|' -f1 "$TMP/pg.rows" | sort | uniq -d | wc -l)" 0
if cmp -s "$TMP/ref.rows" "$TMP/pg.rows"; then ok "the engine and PostgreSQL read the same $(wc -l <"$TMP/pg.rows") rows"
else bad "the engine and PostgreSQL read different rows"; diff "$TMP/ref.rows" "$TMP/pg.rows" | head -n 5; fi

# every committed write is there, every committed delete is gone, nothing else appeared
{
	sed -n 's/^\([0-9]*\) ok$/\1|pgA/p' "$TMP/a.log"
	sed -n 's/^\([0-9]*\) ok$/\1|pgB/p' "$TMP/b.log"
	node -e '
for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)) {
  const o = JSON.parse(l);
  if (o.ok && o.op === "merge" && o.inserted === 1) console.log(`${o.key}|engine merge`);
  if (o.ok && o.op === "add") console.log(`${o.key}|engine add`);
}' "$TMP/engine.log"
} | LC_ALL=C sort >"$TMP/committed.rows"
# a B insert that DO NOTHING skipped reports ok too: it is there as somebody else's row
lost=$(LC_ALL=C comm -23 "$TMP/committed.rows" "$TMP/pg.rows" | while IFS='|' read -r k w; do
	if [ "$w" = pgB ] && [ $(((k - 1000) % 2)) -eq 1 ] && grep -q "^$k|" "$TMP/pg.rows"; then continue; fi
	echo "$k|$w"; done)
check "every write reported committed is there" "$lost" ""
deleted=$(node -e '
for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)) {
  const o = JSON.parse(l); if (o.ok && o.op === "delete") console.log(o.key);
}' "$TMP/engine.log")
still=0
for k in $deleted; do grep -q "^$k|" "$TMP/pg.rows" && still=$((still + 1)); done
check "every delete reported committed is gone ($(wc -w <<<"$deleted"))" "$still" 0
stray=$(LC_ALL=C comm -13 "$TMP/committed.rows" "$TMP/pg.rows" | grep -v '|initial$')
check "no row without a writer that reported it" "$stray" ""
echo "     contested keys present: $(cut -d'|' -f1 "$TMP/pg.rows" | awk -v n="$N" '$1 >= 1000 && $1 < 1000 + n' | wc -l) of $N"

echo "$LT_STEP: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
