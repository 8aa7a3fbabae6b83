#!/usr/bin/env bash
# test/pg/cleanup.sh — lt_cleanup against the real Lance engine's own cleanup of the same dataset.
#
# The engine makes a dataset (one fragment); lt_fdw changes it through PostgreSQL: two deletes, an
# aborted INSERT (an orphan data file), an INSERT whose rows a later DELETE removes (a fragment emptied:
# its data file only old versions name), one more delete. Then, for each scenario (with or without a tag
# on version 2, with or without delete_unverified), two identical copies (cp -a, same mtimes): lt_cleanup
# cleans one, the engine's cleanup (optimize with cleanupOlderThan = now; compaction has nothing to do
# on one fragment with 3% deletions) the other. Checked:
#   - both remove exactly the same files (old manifests, deletion / data / transaction files);
#   - the engine reads identical rows from both, equal to the rows before; lt_fdw reads them too;
#   - a tagged version stays readable by the engine after lt_cleanup.
#
#   test/pg/cleanup.sh                install (private PostgreSQL copy), run
#   test/pg/cleanup.sh --no-install   the extension is already installed
# Ends with "cleanup: N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step cleanup 16 "$@"
lt_step_prepare

lt_step_cluster
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
ref() { lt_as_pg node "$ROOT/test/interop/ref.mjs" "$@"; }


cat >"$TMP/spec.json" <<'JSON'
{"storage": "2.1",
 "schema": [{"name": "id", "type": "int64", "nullable": false}, {"name": "value", "type": "utf8"}],
 "generate": {"n": 100}}
JSON
echo '{"ops": [{"op": "tag", "tag": "kept", "version": 2}]}' >"$TMP/tag.json"
echo '{"ops": [{"op": "cleanup", "older_than_ms": 0, "delete_unverified": false}]}' >"$TMP/clean0.json"
echo '{"ops": [{"op": "cleanup", "older_than_ms": 0, "delete_unverified": true}]}' >"$TMP/clean1.json"
chmod a+r "$TMP"/*.json
ref make "$LAKE/base.lance" "$TMP/spec.json" >/dev/null 2>"$TMP/make.err" || { cat "$TMP/make.err" >&2; finish "ref make failed"; }
chown -R "$LT_PG_OSUSER" "$LAKE/base.lance" 2>/dev/null
"${PSQL[@]}" >"$TMP/setup.out" 2>&1 <<SQL || { cat "$TMP/setup.out"; finish "the changes through lt_fdw failed"; }
CREATE EXTENSION lt_fdw;
CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
CREATE FOREIGN TABLE base (id bigint, value text) SERVER lake OPTIONS (path 'base.lance');
DELETE FROM base WHERE id = (SELECT min(id) FROM base);
DELETE FROM base WHERE id = (SELECT max(id) FROM base);
BEGIN;
INSERT INTO base VALUES (1000, 'rolled back');
ROLLBACK;
INSERT INTO base VALUES (1001, 'new'), (1002, 'new');
DELETE FROM base WHERE value = 'new';
DELETE FROM base WHERE id = (SELECT min(id) FROM base);
SQL
sleep 1	# every commit is then older than the cleanups' "now"
ref scan "$LAKE/base.lance" | LC_ALL=C sort >"$TMP/rows.jsonl"
ref scan "$LAKE/base.lance" --version 2 | LC_ALL=C sort >"$TMP/rows_v2.jsonl"
files_of() { (cd "$1" && find . -type f ! -name latest_version_hint.json | sed 's|^\./||' | LC_ALL=C sort); }
files_of "$LAKE/base.lance" >"$TMP/files_before"

k=0
for tag in no yes; do
	for unverified in false true; do
		k=$((k + 1))
		label="tag on version 2: $tag, delete_unverified: $unverified"
		rm -rf "$LAKE/a$k.lance" "$LAKE/b$k.lance"
		cp -a "$LAKE/base.lance" "$LAKE/a$k.lance"
		[ "$tag" = yes ] && { ref apply "$LAKE/a$k.lance" "$TMP/tag.json" >/dev/null || { bad "$label: tag"; continue; }; }
		cp -a "$LAKE/a$k.lance" "$LAKE/b$k.lance"
		chown -R "$LT_PG_OSUSER" "$LAKE/a$k.lance" "$LAKE/b$k.lance" 2>/dev/null
		files_of "$LAKE/a$k.lance" >"$TMP/before"
		"${PSQL[@]}" -At -c "CREATE FOREIGN TABLE a$k (id bigint, value text) SERVER lake OPTIONS (path 'a$k.lance')" \
			|| { bad "$label: foreign table"; continue; }
		"${PSQL[@]}" -At -c "SELECT old_versions || ' versions, ' || files_removed || ' files' FROM lt_cleanup('a$k', '0 seconds', delete_unverified => $unverified)" \
			>"$TMP/lt.out" 2>&1
		lt_rc=$?
		ref apply "$LAKE/b$k.lance" "$TMP/clean$([ "$unverified" = true ] && echo 1 || echo 0).json" >/dev/null 2>"$TMP/ref.err"
		ref_rc=$?
		if [ "$tag" = yes ]; then
			# a tag on an old version: the engine's cleanup refuses (error_if_tagged_old_versions), so does ours
			if [ "$lt_rc" -ne 0 ] && grep -q 'tagged versions are older than the cutoff: "kept" (version 2)' "$TMP/lt.out" &&
				[ "$ref_rc" -ne 0 ] && grep -q "tagged version" "$TMP/ref.err"; then
				ok "$label: both refuse to clean up past the tagged version"
			else
				cat "$TMP/lt.out" "$TMP/ref.err"; bad "$label: both refuse to clean up past the tagged version"
			fi
		elif [ "$lt_rc" -ne 0 ] || [ "$ref_rc" -ne 0 ]; then
			cat "$TMP/lt.out" "$TMP/ref.err"; bad "$label: the cleanups"; continue
		fi
		files_of "$LAKE/a$k.lance" >"$TMP/after_a"
		files_of "$LAKE/b$k.lance" >"$TMP/after_b"
		LC_ALL=C comm -23 "$TMP/before" "$TMP/after_a" >"$TMP/removed_a"
		LC_ALL=C comm -23 "$TMP/before" "$TMP/after_b" >"$TMP/removed_b"
		if cmp -s "$TMP/removed_a" "$TMP/removed_b"; then
			ok "$label: lt_cleanup ($(cat "$TMP/lt.out")) removes the files the engine's cleanup removes ($(wc -l <"$TMP/removed_a") files)"
		else
			echo "   lt_cleanup removed:"; sed 's/^/     /' "$TMP/removed_a"
			echo "   the engine removed:"; sed 's/^/     /' "$TMP/removed_b"
			bad "$label: the same files removed"
		fi
		if ref scan "$LAKE/a$k.lance" | LC_ALL=C sort | cmp -s - "$TMP/rows.jsonl" &&
			ref scan "$LAKE/b$k.lance" | LC_ALL=C sort | cmp -s - "$TMP/rows.jsonl"; then
			ok "$label: the engine reads the same rows from both"
		else
			bad "$label: the engine reads the same rows from both"
		fi
		if [ "$("${PSQL[@]}" -At -c "SELECT count(*) FROM a$k")" -eq "$(wc -l <"$TMP/rows.jsonl")" ]; then
			ok "$label: lt_fdw reads them"
		else
			bad "$label: lt_fdw reads them"
		fi
		if [ "$tag" = yes ]; then
			if ref scan "$LAKE/a$k.lance" --version kept | LC_ALL=C sort | cmp -s - "$TMP/rows_v2.jsonl"; then
				ok "$label: the tagged version stays readable"
			else
				bad "$label: the tagged version stays readable"
			fi
		fi
	done
done

# ---- field assignment state: the _assignment/ files no kept version names go, as data files do ----------------------
# (the engine does not know the state, so there is no engine cleanup to compare with: the checks are that the dry run
# lists what the cleanup then removes, that exactly the kept version's root stays, and that both read the same after)
cp -a "$LAKE/base.lance" "$LAKE/t.lance"
chown -R "$LT_PG_OSUSER" "$LAKE/t.lance" 2>/dev/null
"${PSQL[@]}" >"$TMP/assign.out" 2>&1 <<SQL || { cat "$TMP/assign.out"; finish "the assignment changes through lt_fdw failed"; }
CREATE FOREIGN TABLE t (id bigint, value text, v_assigned boolean OPTIONS (is_assigned 'value')) SERVER lake OPTIONS (path 't.lance');
SELECT lt_track_assignment('t', 'value', 'assigned');
UPDATE t SET v_assigned = false WHERE id < 10;
UPDATE t SET v_assigned = false WHERE id < 20;
SQL
sleep 1
assigned_of() { "${PSQL[@]}" -At -c "SELECT count(*) FILTER (WHERE v_assigned) || '/' || count(*) || ' ' || coalesce(string_agg(id::text, ',' ORDER BY id) FILTER (WHERE NOT v_assigned), '') FROM t"; }
state_before=$(assigned_of)
files_of "$LAKE/t.lance" >"$TMP/t_before"
"${PSQL[@]}" -At -c "SELECT path FROM lt_cleanup_files('t', '0 seconds', dry_run => true) WHERE kind = 'assignment' ORDER BY 1" \
	>"$TMP/t_dry" 2>&1 || { cat "$TMP/t_dry"; bad "assignment: the dry run"; }
files_of "$LAKE/t.lance" >"$TMP/t_after_dry"
if [ -s "$TMP/t_dry" ] && cmp -s "$TMP/t_before" "$TMP/t_after_dry" && grep -q '\.root$' "$TMP/t_dry"; then
	ok "assignment: the dry run lists $(wc -l <"$TMP/t_dry") _assignment/ files of old versions and removes nothing"
else
	cat "$TMP/t_dry"; bad "assignment: the dry run lists old roots and removes nothing"
fi
"${PSQL[@]}" -At -c "SELECT files_removed FROM lt_cleanup('t', '0 seconds')" >"$TMP/t_clean" 2>&1 \
	|| { cat "$TMP/t_clean"; bad "assignment: lt_cleanup"; }
files_of "$LAKE/t.lance" >"$TMP/t_after"
LC_ALL=C comm -23 "$TMP/t_before" "$TMP/t_after" | grep '^_assignment/' >"$TMP/t_removed"
if cmp -s "$TMP/t_removed" "$TMP/t_dry"; then
	ok "assignment: lt_cleanup removes the _assignment/ files the dry run listed"
else
	echo "   removed:"; sed 's/^/     /' "$TMP/t_removed"; bad "assignment: lt_cleanup removes what the dry run listed"
fi
check "assignment: one root (the newest version's) stays" "$(grep -c '^_assignment/.*\.root$' "$TMP/t_after")" 1
check "assignment: lt_fdw reads the same state after the cleanup" "$(assigned_of)" "$state_before"
check "assignment: the engine reads the same rows" "$(ref scan "$LAKE/t.lance" | wc -l)" "$(echo "$state_before" | sed 's|^[0-9]*/\([0-9]*\) .*|\1|')"

# ---- auto-cleanup: the dataset's lance.auto_cleanup.* config, run after lt_fdw's commits as the engine's writers run it --
# The same six commits (single-row INSERTs and a DELETE that empties a fragment) by lt_fdw on one copy and by the
# engine on the other, with interval 3 and retain_versions 2 set (lt-inspect set-config: the engines' JS APIs cannot
# set a dataset's config): each cleans up after versions 6 and 9, and both keep the same versions and remove the same
# files of the versions before (the new files' names differ: compared per directory by count).
INSPECT="$ROOT/build/lt-inspect"
rm -rf "$LAKE/auto_a.lance"
ref make "$LAKE/auto_a.lance" "$TMP/spec.json" >/dev/null 2>"$TMP/make.err" || { cat "$TMP/make.err" >&2; finish "ref make failed"; }
"$INSPECT" set-config "$LAKE/auto_a.lance" lance.auto_cleanup.retain_versions 2 >/dev/null &&
	"$INSPECT" set-config "$LAKE/auto_a.lance" lance.auto_cleanup.interval 3 >/dev/null || finish "lt-inspect set-config failed"
cp -a "$LAKE/auto_a.lance" "$LAKE/auto_b.lance"
chown -R "$LT_PG_OSUSER" "$LAKE/auto_a.lance" "$LAKE/auto_b.lance" 2>/dev/null
files_of "$LAKE/auto_a.lance" >"$TMP/auto_before"
"${PSQL[@]}" >"$TMP/auto.out" 2>&1 <<SQL || { cat "$TMP/auto.out"; finish "the commits through lt_fdw failed"; }
CREATE FOREIGN TABLE auto_a (id bigint, value text) SERVER lake OPTIONS (path 'auto_a.lance');
INSERT INTO auto_a VALUES (1001, 'a');
INSERT INTO auto_a VALUES (1002, 'b');
DELETE FROM auto_a WHERE id = 1001;
INSERT INTO auto_a VALUES (1003, 'c');
INSERT INTO auto_a VALUES (1004, 'd');
INSERT INTO auto_a VALUES (1005, 'e');
SQL
cat >"$TMP/auto_ops.json" <<'JSON'
{"ops": [{"op": "append", "rows": [{"id": 1001, "value": "a"}]}, {"op": "append", "rows": [{"id": 1002, "value": "b"}]},
 {"op": "delete", "where": "id = 1001"}, {"op": "append", "rows": [{"id": 1003, "value": "c"}]},
 {"op": "append", "rows": [{"id": 1004, "value": "d"}]}, {"op": "append", "rows": [{"id": 1005, "value": "e"}]}]}
JSON
chmod a+r "$TMP/auto_ops.json"
ref apply "$LAKE/auto_b.lance" "$TMP/auto_ops.json" >/dev/null 2>"$TMP/auto_ref.err" || { cat "$TMP/auto_ref.err"; bad "auto-cleanup: the engine's commits"; }
versions_of() { (cd "$1/_versions" && ls | grep '\.manifest$' | LC_ALL=C sort | tr '\n' ' '); }
check "auto-cleanup: lt_fdw's commits keep the versions the engine's keep" "$(versions_of "$LAKE/auto_a.lance")" "$(versions_of "$LAKE/auto_b.lance")"
check "auto-cleanup: two versions stay (retain_versions 2, cleaned after version 9)" "$(versions_of "$LAKE/auto_a.lance" | wc -w)" 2
files_of "$LAKE/auto_a.lance" >"$TMP/auto_after_a"
files_of "$LAKE/auto_b.lance" >"$TMP/auto_after_b"
LC_ALL=C comm -23 "$TMP/auto_before" "$TMP/auto_after_a" >"$TMP/auto_removed_a"
LC_ALL=C comm -23 "$TMP/auto_before" "$TMP/auto_after_b" >"$TMP/auto_removed_b"
if [ -s "$TMP/auto_removed_a" ] && cmp -s "$TMP/auto_removed_a" "$TMP/auto_removed_b"; then
	ok "auto-cleanup: the same $(wc -l <"$TMP/auto_removed_a") files of the versions before removed"
else
	echo "   lt_fdw's commits removed:"; sed 's/^/     /' "$TMP/auto_removed_a"
	echo "   the engine's removed:"; sed 's/^/     /' "$TMP/auto_removed_b"
	bad "auto-cleanup: the same files of the versions before removed"
fi
per_dir() { cut -d/ -f1 "$1" | LC_ALL=C sort | uniq -c | tr -s ' ' | tr '\n' ';'; }
# lt_fdw's Appends write no transaction file (the manifest carries it inline), the engine's do: the two kept
# versions (8, 9) are Appends, so only the engine's copy keeps their _transactions/ files
check "auto-cleanup: as many files stay in each directory (but _transactions/)" \
	"$(grep -v '^_transactions/' "$TMP/auto_after_a" | per_dir /dev/stdin)" "$(grep -v '^_transactions/' "$TMP/auto_after_b" | per_dir /dev/stdin)"
check "auto-cleanup: no transaction file stays of lt_fdw's kept Appends, two of the engine's" \
	"$(grep -c '^_transactions/' "$TMP/auto_after_a") $(grep -c '^_transactions/' "$TMP/auto_after_b")" "0 2"
check "auto-cleanup: the engine reads the same rows from both" \
	"$(ref scan "$LAKE/auto_a.lance" | LC_ALL=C sort | md5sum)" "$(ref scan "$LAKE/auto_b.lance" | LC_ALL=C sort | md5sum)"
check "auto-cleanup: lt_fdw reads them" \
	"$("${PSQL[@]}" -At -c "SELECT count(*) || ' ' || string_agg(id::text, ',' ORDER BY id) FILTER (WHERE id BETWEEN 1001 AND 1005) FROM auto_a")" \
	"$(($(ref scan "$LAKE/auto_b.lance" | wc -l))) 1002,1003,1004,1005"
# a config Lance's hook cannot parse: a WARNING after the commit, which stays committed
cp -a "$LAKE/auto_b.lance" "$LAKE/auto_c.lance"
"$INSPECT" set-config "$LAKE/auto_c.lance" lance.auto_cleanup.interval x >/dev/null || finish "lt-inspect set-config failed"
chown -R "$LT_PG_OSUSER" "$LAKE/auto_c.lance" 2>/dev/null
"${PSQL[@]}" -c "CREATE FOREIGN TABLE auto_c (id bigint, value text) SERVER lake OPTIONS (path 'auto_c.lance')" \
	-c "INSERT INTO auto_c VALUES (2000, 'w')" >"$TMP/auto_c.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'WARNING:  lt_fdw: auto-cleanup of foreign table "auto_c" failed: invalid lance.auto_cleanup.interval "x"' "$TMP/auto_c.out" &&
	[ "$("${PSQL[@]}" -At -c "SELECT count(*) FROM auto_c WHERE id = 2000")" = 1 ]; then
	ok "auto-cleanup: an unparsable config is a WARNING after the commit, which stays committed"
else
	cat "$TMP/auto_c.out"; bad "auto-cleanup: an unparsable config is a WARNING after the commit"
fi

# ---- auto_compact: after each committed write, Lance's compaction plan (tiered) runs when it rewrites >= N fragments
# 100 rows in one fragment (left out of every group: 100 >= the rest), then ten single-row INSERTs (each its own
# transaction) with auto_compact '4'. The plan leaves out a leading fragment at least as large as the rest of its
# group: the 4th INSERT's compaction merges 1,1,1,1 into 4; 4,1,1,1 waits (4 >= 3), the 8th merges the four 1s
# (4 >= 4 left out); the 10th merges 4,4,1,1 (4 < 6) into 10: Rewrite versions after the 4th, 8th and 10th.
rm -rf "$LAKE/auto_d.lance"
ref make "$LAKE/auto_d.lance" "$TMP/spec.json" >/dev/null 2>"$TMP/make.err" || { cat "$TMP/make.err" >&2; finish "ref make failed"; }
chown -R "$LT_PG_OSUSER" "$LAKE/auto_d.lance" 2>/dev/null
"${PSQL[@]}" >"$TMP/auto_d.out" 2>&1 <<'SQL' || { cat "$TMP/auto_d.out"; finish "the auto_compact INSERTs failed"; }
CREATE FOREIGN TABLE auto_d (id bigint, value text) SERVER lake OPTIONS (path 'auto_d.lance', auto_compact '4');
SELECT format('INSERT INTO auto_d VALUES (%s, %L)', 3000 + i, 'autoc-' || i) FROM generate_series(1, 10) i \gexec
SQL
check "auto_compact: fragments of 100 and 10 rows after ten single-row INSERTs" \
	"$("${PSQL[@]}" -At -c "SELECT string_agg(physical_rows::text, ',' ORDER BY fragment_id) FROM lt_fragments('auto_d')")" "100,10"
check "auto_compact: three Rewrite versions" "$("${PSQL[@]}" -At -c "SELECT count(*) FROM lt_versions('auto_d') WHERE operation = 'Rewrite'")" 3
check "auto_compact: lt_fdw reads the rows" \
	"$("${PSQL[@]}" -At -c "SELECT count(*) || ' ' || string_agg(id::text, ',' ORDER BY id) FILTER (WHERE value LIKE 'autoc-%') FROM auto_d")" \
	"110 3001,3002,3003,3004,3005,3006,3007,3008,3009,3010"
ref scan "$LAKE/auto_d.lance" >"$TMP/auto_d.jsonl" 2>&1
check "auto_compact: the engine reads the rows" "$(wc -l <"$TMP/auto_d.jsonl") $(grep -c 'autoc-' "$TMP/auto_d.jsonl")" "110 10"
if "${PSQL[@]}" -c "ALTER FOREIGN TABLE auto_d OPTIONS (SET auto_compact '1')" 2>"$TMP/auto_d.err"; then
	bad "auto_compact: '1' refused"
else
	check "auto_compact: '1' refused" "$(grep -c 'invalid value for option "auto_compact"' "$TMP/auto_d.err")" 1
fi

echo "cleanup: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
