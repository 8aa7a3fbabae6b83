#!/usr/bin/env bash
# test/interop/blob.sh — blob columns (issue 21) against the real engines: Lance 8 and Lance 12 write legacy blobs
# (storage 2.0 / 2.1), Lance 12 writes blob v2 (2.2: inline, packed and dedicated sidecars), in one fragment or
# several; test/interop/blob.mjs makes them, rows of 0 bytes, NULL and up to 3 MB.
#   1. reads: SELECT of the blob column as bytea and `lt-inspect scan --blobs` give the bytes the engine gives (length
#      and md5 / FNV-1a per row); a query without the blob column reads none of its bytes, WHERE id = 8 and
#      LIMIT 3 read only their rows' blobs (EXPLAIN ANALYZE's Bytes Read, lt-inspect --stats); quals on the blob
#      column stay in PostgreSQL; IMPORT declares bytea; aggregates and ANALYZE; a truncated sidecar is XX001.
#   2. refused writes: every statement that would write data files into a table with a blob column in a way
#      lt_fdw does not write (any form: lt_create_index on the blob column, lt_merge_insert
#      matching on it, a primary key of it) fails with
#      0A000 naming the column, and the dataset's files are byte-identical afterwards;
#      a DELETE (deletion files only), an index on another column, a primary key and lt_cleanup work, and the
#      engine then still scans the table and reads every blob (every sidecar still there).
#   3. written (legacy blobs in 2.0 / 2.1 on copies of leg20 / leg21 / leg21x / leg21m, blob v2 on copies of v2 /
#      v2m): INSERT,
#      COPY, UPDATE (a blob, a key, to NULL), lt_insert_overwrite, the overwrite_where INSERT and lt_merge_insert,
#      each mirrored on a heap table; lt_fdw, Lance 8 (legacy) and Lance 12 read the heap table's bytes (0 bytes,
#      NULL, 2 MiB; v2 by Lance 12's blob API, and its scan reads every row); the engine then appends and deletes,
#      and lt_fdw reads that; TRUNCATE and an INSERT leave just the rows inserted; 64 blobs of 1 MiB in one INSERT
#      make a data file of 64 MiB and less than 64 KiB more (the time is printed).
#   3b. lt_compact of the written copies (legacy 2.0, 2.1 of both engines, v2 of several fragments), as Lance 12
#      compacts them: each blob's bytes rewritten with the new data file (v2: into its own sidecars); one fragment,
#      lt_fdw, Lance 8 (legacy) and Lance 12 read the same bytes; v2: the descriptors and sidecars are those of Lance
#      12's own compaction of a copy; lt_cleanup then removes the old data files and sidecars and both engines still
#      read every blob; the engine appends and deletes on top and a second lt_compact keeps every byte.
#   4. blob v2 placement (v2d, Lance's default thresholds, packs of 6 MiB): the same rows (64 KiB, 64 KiB + 1,
#      4 MiB, 4 MiB + 1, empty, NULL, ...) written by lt_fdw and by Lance 12 into copies get the same descriptors
#      and sidecar files; Lance 12 reads lt_fdw's bytes; a rolled back INSERT commits nothing; DELETE and UPDATE.
#   5. lt_cleanup vs Lance 12's cleanup on copies of a blob v2 table after a rolled back INSERT, TRUNCATE and an
#      INSERT: the same files removed (the old data file's sidecars; the rolled back ones with delete_unverified),
#      the dry run lists them, Lance 12 reads the blobs kept.
#
#   test/interop/blob.sh                 install (private PostgreSQL copy), generate, compare
#   test/interop/blob.sh --no-install    the extension is already installed
#
# Ends with "interop-blob: N passed, M failed"; exits non-zero when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
. "$ROOT/test/pg/step.sh"
lt_step interop-blob 25 "$@"
lt_step_prepare
[ -d "$HERE/lance12/node_modules/@lancedb/lancedb" ] || finish "test/interop/lance12/node_modules is missing (run scripts/setup.sh)"
mkdir -p build
[ -x build/lt-inspect ] || ${MAKE:-make} build/lt-inspect >/dev/null 2>&1 || finish "building build/lt-inspect failed"

lt_step_cluster
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
export PGOPTIONS="-c client_min_messages=warning"
blob() { lt_as_pg node "$HERE/blob.mjs" "$@" 2> >(grep -v -e '^npm WARN' -e 'EBADENGINE' >&2); }
snapshot() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# name, engine, form, storage, appends (fragments), the foreign table's columns
DATASETS=(
	"leg20 8 legacy 2.0 1 id bigint, note text, payload bytea"
	"leg21 8 legacy 2.1 1 id bigint, note text, payload bytea"
	"v2 12 v2 2.2 1 id bigint, note text, payload bytea"
	"leg21x 12 legacy 2.1 1 id bigint, note text, payload bytea"
	"leg21m 8 legacy 2.1 3 id bigint, note text, payload bytea"
	"v2m 12 v2 2.2 3 id bigint, note text, payload bytea"
)
"${PSQL[@]}" -c "CREATE EXTENSION lt_fdw; CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
CREATE TABLE staging (id bigint, note text, payload bytea);
INSERT INTO staging VALUES (100, 'new', '\\x0102'), (1, 'dup', NULL);" || finish "creating the extension failed"
blob expect 12 >"$TMP/expect.jsonl" || finish "blob.mjs expect failed"

for line in "${DATASETS[@]}"; do
	read -r name eng form storage parts cols <<<"$line"
	ds=$LAKE/$name.lance
	blob make "$eng" "$ds" "$form" "$storage" "$parts" >/dev/null || { bad "$name: Lance $eng made no $form dataset"; continue; }
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE $name ($cols) SERVER lake OPTIONS (path '$name.lance');" \
		|| { bad "$name: CREATE FOREIGN TABLE"; continue; }
	check "$name: SELECT id, note (the blob column not projected)" \
		"$("${PSQL[@]}" -At -c "SELECT count(*), sum(id), string_agg(note, ',' ORDER BY id) FILTER (WHERE id < 3) FROM $name" 2>&1)" \
		"12|66|row 0,row 1,row 2"

	# ---- lt-inspect: each blob's bytes (length, FNV-1a 64) vs the engine's; no blob byte read without the column
	if [ "$form" = legacy ] && [ "$parts" -gt 1 ]; then
		blob expect 12 --fnv >"$TMP/ref.fnv"
	else
		blob bytes "$ds" --fnv >"$TMP/ref.fnv" 2>"$TMP/bytes.err"
	fi
	"$ROOT/build/lt-inspect" scan "$ds" --columns id,payload --blobs 2>"$TMP/li.err" | node -e '
for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean)) {
  const r = JSON.parse(l);
  console.log(JSON.stringify({ id: Number(r.id), len: r.payload ? r.payload.len : null, fnv: r.payload ? r.payload.fnv : null }));
}' | sort -t: -k2 -n >"$TMP/li.fnv"
	sort -t: -k2 -n "$TMP/ref.fnv" >"$TMP/ref.sorted"
	if [ -s "$TMP/li.fnv" ] && cmp -s "$TMP/li.fnv" "$TMP/ref.sorted"; then ok "$name: lt-inspect scan --blobs reads every blob's bytes as the reference"
	else bad "$name: lt-inspect's blob bytes differ"; head -c 400 "$TMP/li.err"; diff "$TMP/ref.sorted" "$TMP/li.fnv" | head -n 6; fi
	n=$("$ROOT/build/lt-inspect" scan "$ds" --columns id,note --stats 2>&1 >/dev/null | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).bytes_read)')
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -lt 65536 ] && ok "$name: lt-inspect scan without the blob column reads $n bytes" \
		|| bad "$name: lt-inspect scan without the blob column read $n bytes"

	# ---- 2. reads: the bytes the engine gives, per row; bytes read only for the blobs a query returns ------
	if [ "$form" = legacy ] && [ "$parts" -gt 1 ]; then
		# the harness reads a legacy blob from the one data file of a dataset: here the bytes written stand in
		cp "$TMP/expect.jsonl" "$TMP/bytes.jsonl"
		whose="the bytes written"
	else
		whose="the engine's bytes"
		blob bytes "$ds" >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err" || { cat "$TMP/bytes.err"; bad "$name: the engine's bytes"; }
		check "$name: the engine's blob bytes are the ones written" "$(cmp -s "$TMP/bytes.jsonl" "$TMP/expect.jsonl" && echo same)" same
	fi
	"${PSQL[@]}" -At -c "SELECT format('{\"id\":%s,\"len\":%s,\"md5\":%s}', id, coalesce(length(payload)::text, 'null'),
		coalesce('\"' || md5(payload) || '\"', 'null')) FROM $name ORDER BY id" >"$TMP/sql.jsonl" 2>"$TMP/sql.err"
	if [ -s "$TMP/sql.jsonl" ] && cmp -s "$TMP/sql.jsonl" "$TMP/bytes.jsonl"; then
		ok "$name: SELECT payload gives $whose for every row (0 bytes, NULL, up to 3 MB)"
	else
		bad "$name: SELECT payload differs from $whose"; head -c 600 "$TMP/sql.err"; diff "$TMP/bytes.jsonl" "$TMP/sql.jsonl" | head -n 8
	fi
	bytes_read() { "${PSQL[@]}" -At -c "EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) $1" |
		node -e 'const p = JSON.parse(require("fs").readFileSync(0, "utf8"))[0].Plan;
const find = (n) => n["Bytes Read"] ?? (n.Plans || []).map(find).find((x) => x !== undefined);
console.log(find(p) ?? "none")'; }
	total=$(node -e 'let t = 0; for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)) t += JSON.parse(l).len || 0; console.log(t)' "$TMP/expect.jsonl")
	n=$(bytes_read "SELECT id, note FROM $name")
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -lt 65536 ] && ok "$name: a scan without the blob column reads $n bytes (the blobs: $total)" \
		|| bad "$name: a scan without the blob column read $n bytes (the blobs: $total)"
	n=$(bytes_read "SELECT id, payload FROM $name")
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge "$total" ] && ok "$name: a scan of the blob column reads every blob ($n bytes)" \
		|| bad "$name: a scan of the blob column read $n bytes, fewer than the blobs' $total"
	n=$(bytes_read "SELECT length(payload) FROM $name WHERE id = 8")
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -lt 65536 ] && ok "$name: WHERE id = 8 reads only that row's blob ($n bytes)" \
		|| bad "$name: WHERE id = 8 read $n bytes"
	n=$(bytes_read "SELECT payload FROM $name LIMIT 3")
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -lt 65536 ] && ok "$name: LIMIT 3 reads only three rows' blobs ($n bytes)" \
		|| bad "$name: LIMIT 3 read $n bytes"
	check "$name: a WHERE on the blob column is PostgreSQL's" \
		"$("${PSQL[@]}" -At -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM $name WHERE payload = '\\x' OR length(payload) = 17" 2>&1)" "0,8,9"

	# ---- 1. every write that would add data files is refused, and leaves the files as they were -----------
	snapshot "$ds" >"$TMP/before"
	refused=("SELECT * FROM lt_merge_insert('$name', 'SELECT id, note, payload FROM staging', '{payload}')"
		"SELECT lt_set_primary_key('$name', '{payload}')")
	[[ $cols == *payload* ]] && refused+=("SELECT * FROM lt_create_index('$name', 'payload', 'zonemap')")
	for sql in "${refused[@]}"; do
		out=$(printf '\\set VERBOSITY verbose\n%s;\n' "$sql" | "${PSQL[@]}" 2>&1)
		case $out in
			*"ERROR:  0A000:"*'"payload"'*) ok "$name: refused with 0A000 naming the column: ${sql:0:60}" ;;
			*) bad "$name: not refused as it should be: $sql: ${out:0:300}" ;;
		esac
	done
	snapshot "$ds" >"$TMP/after"
	if cmp -s "$TMP/before" "$TMP/after"; then ok "$name: the refused statements left every file byte-identical ($(wc -l <"$TMP/after") files)"
	else bad "$name: the refused statements changed the dataset's files"; diff "$TMP/before" "$TMP/after" | head -n 10; fi

	# ---- a DELETE writes only a deletion file: allowed, and the engine still reads every other blob -------
	"${PSQL[@]}" -c "DELETE FROM $name WHERE id = 3" || bad "$name: DELETE failed"
	got=$(blob scan "$eng" "$ds" | wc -l)
	check "$name: Lance $eng scans the table after the DELETE" "$got" 11
	grep -v '"id":3,' "$TMP/expect.jsonl" >"$TMP/want.jsonl"
	"${PSQL[@]}" -At -c "SELECT format('{\"id\":%s,\"len\":%s,\"md5\":%s}', id, coalesce(length(payload)::text, 'null'),
		coalesce('\"' || md5(payload) || '\"', 'null')) FROM $name ORDER BY id" >"$TMP/sql.jsonl" 2>&1
	check "$name: after the DELETE, lt_fdw reads every remaining blob as written" "$(cmp -s "$TMP/sql.jsonl" "$TMP/want.jsonl" && echo same)" same
	if [ "$form" = legacy ] && [ "$parts" -gt 1 ]; then
		continue	# no engine bytes for a legacy dataset of several data files (see above)
	fi
	blob bytes "$ds" >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
	if [ -s "$TMP/bytes.jsonl" ] && cmp -s "$TMP/bytes.jsonl" "$TMP/want.jsonl"; then
		ok "$name: after the DELETE, the engine reads every remaining blob's bytes as written"
	else
		bad "$name: the engine's blob bytes after the DELETE differ"; head -c 600 "$TMP/bytes.err"; diff "$TMP/want.jsonl" "$TMP/bytes.jsonl" | head -n 6
	fi
done

# ---- 3. writes of the form lt_fdw writes (legacy blobs in storage 2.1), on copies of the datasets: each
# statement is applied to a heap table too, then lt_fdw, Lance 8 and Lance 12 read the bytes the heap table has;
# then the engine appends and deletes on top and lt_fdw reads that --------------------------------------------
files_of() { (cd "$1" && find . -type f | grep -v '_versions/latest_version_hint' | sort); }
rows_of() { "${PSQL[@]}" -At -c "SELECT format('{\"id\":%s,\"len\":%s,\"md5\":%s}', id, coalesce(length(payload)::text, 'null'),
	coalesce('\"' || md5(payload) || '\"', 'null')) FROM $1 ORDER BY id" 2>&1; }
printf '104,copied,\\x0a0b0c\n105,copied empty,\\x\n106,copied null,\n' >"$TMP/copy.csv"
for name in leg20 leg21 leg21x leg21m v2 v2m; do
	w=${name}w
	engines="8 12"; [[ $name == v2* ]] && engines=12	# Lance 8 has no blob v2
	cp -a "$LAKE/$name.lance" "$LAKE/$w.lance"
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE $w (id bigint, note text, payload bytea) SERVER lake OPTIONS (path '$w.lance');
		CREATE TABLE h_$w AS SELECT * FROM $w;" || { bad "$w: the copy or its heap table"; continue; }
	big="decode(repeat(md5('blob'), 131072), 'hex')"	# 2 MiB
	pairs=(
		"INSERT INTO $w VALUES (100, 'empty', '\\x'), (101, 'null', NULL), (102, 'big', $big), (103, 'small', '\\xdeadbeef')"
		"INSERT INTO h_$w VALUES (100, 'empty', '\\x'), (101, 'null', NULL), (102, 'big', $big), (103, 'small', '\\xdeadbeef')"
		"\\copy $w FROM '$TMP/copy.csv' WITH (FORMAT csv)"
		"\\copy h_$w FROM '$TMP/copy.csv' WITH (FORMAT csv)"
		"UPDATE $w SET payload = decode(repeat('ab', 300000), 'hex') WHERE id = 2"
		"UPDATE h_$w SET payload = decode(repeat('ab', 300000), 'hex') WHERE id = 2"
		"UPDATE $w SET id = id + 200, note = 'moved' WHERE id IN (5, 7)"
		"UPDATE h_$w SET id = id + 200, note = 'moved' WHERE id IN (5, 7)"
		"UPDATE $w SET payload = NULL WHERE id = 8"
		"UPDATE h_$w SET payload = NULL WHERE id = 8"
		"SELECT count(*) FROM lt_insert_overwrite('$w', 'id = 4', 'SELECT 4::bigint, ''over''::text, ''\\x0405''::bytea')"
		"DELETE FROM h_$w WHERE id = 4; INSERT INTO h_$w VALUES (4, 'over', '\\x0405')"
		"BEGIN; SET LOCAL lt_fdw.overwrite_where = 'id = 6'; INSERT INTO $w VALUES (6, 'ow', decode(repeat('cd', 70000), 'hex')); COMMIT"
		"DELETE FROM h_$w WHERE id = 6; INSERT INTO h_$w VALUES (6, 'ow', decode(repeat('cd', 70000), 'hex'))"
		"SELECT count(*) FROM lt_merge_insert('$w', 'SELECT id, note, payload FROM staging', '{id}')"
		"UPDATE h_$w h SET note = s.note, payload = s.payload FROM staging s WHERE h.id = s.id;
		 INSERT INTO h_$w SELECT * FROM staging s WHERE NOT EXISTS (SELECT FROM h_$w h WHERE h.id = s.id)"
	)
	for ((k = 0; k < ${#pairs[@]}; k += 2)); do
		out=$(printf '%s;\n' "${pairs[k]}" | "${PSQL[@]}" 2>&1) && printf '%s;\n' "${pairs[k + 1]}" | "${PSQL[@]}" >/dev/null 2>&1 \
			|| bad "$w: ${pairs[k]:0:70}: ${out:0:300}"
	done
	"$ROOT/build/lt-inspect" info "$LAKE/$w.lance" >"$TMP/info.json" 2>&1
	rows_of "h_$w" >"$TMP/want.jsonl"
	rows_of "$w" >"$TMP/sql.jsonl"
	check "$w: after INSERT, COPY, UPDATE, lt_insert_overwrite, overwrite_where and lt_merge_insert, lt_fdw reads the heap table's bytes ($(wc -l <"$TMP/want.jsonl") rows)" \
		"$(cmp -s "$TMP/sql.jsonl" "$TMP/want.jsonl" && echo same || diff "$TMP/want.jsonl" "$TMP/sql.jsonl" | head -n 6)" same
	for eng in $engines; do
		blob bytes "$LAKE/$w.lance" "$eng" "$TMP/info.json" >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
		check "$w: Lance $eng reads every blob lt_fdw wrote with the same bytes (0 bytes, NULL, 2 MiB)" \
			"$(cmp -s "$TMP/bytes.jsonl" "$TMP/want.jsonl" && echo same || { head -c 300 "$TMP/bytes.err"; diff "$TMP/want.jsonl" "$TMP/bytes.jsonl" | head -n 6; })" same
	done
	if [[ $name == v2* ]]; then
		check "$w: Lance 12 scans every row lt_fdw wrote" "$(blob scan 12 "$LAKE/$w.lance" | wc -l)" "$(wc -l <"$TMP/want.jsonl")"
	fi
	eng=$([ "$name" = leg20 ] || [ "$name" = leg21 ] || [ "$name" = leg21m ] && echo 8 || echo 12)
	if blob append "$eng" "$LAKE/$w.lance" 300 3 102 2>"$TMP/append.err"; then
		{ grep -v '"id":102,' "$TMP/want.jsonl"; blob expect 3 300; } | sort -t: -k2 -n >"$TMP/want2.jsonl"
		rows_of "$w" >"$TMP/sql.jsonl"
		check "$w: after Lance $eng appends and deletes on top, lt_fdw reads every blob" \
			"$(cmp -s "$TMP/sql.jsonl" "$TMP/want2.jsonl" && echo same || diff "$TMP/want2.jsonl" "$TMP/sql.jsonl" | head -n 6)" same
	else
		bad "$w: Lance $eng could not append to the table lt_fdw wrote: $(head -c 300 "$TMP/append.err")"
	fi
	[ "$name" = leg21 ] || continue
	# TRUNCATE writes no data file; the rows inserted after it are the table, for both engines
	vals="(VALUES (1::bigint, 'after truncate', decode(repeat('ef', 50000), 'hex')), (2, 'null', NULL::bytea)) AS v(id, note, payload)"
	"${PSQL[@]}" -c "TRUNCATE $w; INSERT INTO $w SELECT * FROM $vals" || bad "$w: TRUNCATE and INSERT"
	rows_of "$vals" >"$TMP/want.jsonl"
	"$ROOT/build/lt-inspect" info "$LAKE/$w.lance" >"$TMP/info.json" 2>&1
	blob bytes "$LAKE/$w.lance" 12 "$TMP/info.json" >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
	check "$w: after TRUNCATE and an INSERT, Lance 12 reads just the blobs inserted" \
		"$(cmp -s "$TMP/bytes.jsonl" "$TMP/want.jsonl" && echo same || { head -c 300 "$TMP/bytes.err"; diff "$TMP/want.jsonl" "$TMP/bytes.jsonl" | head -n 6; })" same
	# 64 blobs of 1 MiB in one INSERT: the new data file holds their bytes and little more (no padding per blob)
	t0=$(date +%s%N)
	"${PSQL[@]}" -c "INSERT INTO $w SELECT 1000 + g, 'bulk', decode(repeat(lpad(to_hex(g), 32, '0'), 65536), 'hex')
		FROM generate_series(1, 64) g" || bad "$w: the INSERT of 64 blobs of 1 MiB"
	t1=$(date +%s%N)
	"$ROOT/build/lt-inspect" info "$LAKE/$w.lance" >"$TMP/info.json" 2>&1
	size=$(node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const fr = m.fragments.reduce((a, b) => (b.id > a.id ? b : a));
console.log(require("fs").statSync(process.argv[2] + "/data/" + fr.files[0].path).size)' "$TMP/info.json" "$LAKE/$w.lance")
	[[ $size =~ ^[0-9]+$ ]] && [ "$size" -ge 67108864 ] && [ "$size" -lt $((67108864 + 65536)) ] \
		&& ok "$w: 64 MiB of blobs in one INSERT make a data file of $size bytes ($(( (t1 - t0) / 1000000 )) ms)" \
		|| bad "$w: 64 MiB of blobs in one INSERT made a data file of $size bytes"
	check "$w: lt_fdw reads the 64 blobs back" "$("${PSQL[@]}" -At -c "SELECT count(*), sum(length(payload)), count(DISTINCT md5(payload)),
		bool_and(payload = decode(repeat(lpad(to_hex(id - 1000), 32, '0'), 65536), 'hex')) FROM $w WHERE id > 1000" 2>&1)" "64|67108864|64|t"
done

# ---- 3b. lt_compact of the written copies, as Lance 12 compacts them: the blobs' bytes rewritten with the new
# data file (blob v2: into its sidecars), the old files then removable by lt_cleanup ------------------------------
for name in leg20 leg21m leg21x v2m; do
	c=${name}c
	engines="8 12"; [[ $name == v2* ]] && engines=12
	eng=$([ "$name" = leg20 ] || [ "$name" = leg21m ] && echo 8 || echo 12)
	rm -rf "$LAKE/$c.lance" "$LAKE/${c}e.lance"
	cp -a "$LAKE/${name}w.lance" "$LAKE/$c.lance"
	cp -a "$LAKE/${name}w.lance" "$LAKE/${c}e.lance"
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE $c (id bigint, note text, payload bytea) SERVER lake OPTIONS (path '$c.lance')" \
		|| { bad "$c: the foreign table"; continue; }
	rows_of "$c" >"$TMP/want.jsonl"
	nfrag=$("$ROOT/build/lt-inspect" info "$LAKE/$c.lance" | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).fragments.length)')
	files_of "$LAKE/$c.lance" >"$TMP/before"
	got=$("${PSQL[@]}" -At -c "SELECT fragments_removed || ' ' || fragments_added || ' ' || rows_rewritten FROM lt_compact('$c')" 2>&1)
	check "$c: lt_compact rewrites the $nfrag fragments into one" "$got" "$nfrag 1 $(wc -l <"$TMP/want.jsonl")"
	"$ROOT/build/lt-inspect" info "$LAKE/$c.lance" >"$TMP/info.json" 2>&1
	rows_of "$c" >"$TMP/sql.jsonl"
	check "$c: after lt_compact lt_fdw reads every blob as before ($(wc -l <"$TMP/want.jsonl") rows)" \
		"$(cmp -s "$TMP/sql.jsonl" "$TMP/want.jsonl" && echo same || diff "$TMP/want.jsonl" "$TMP/sql.jsonl" | head -n 6)" same
	for e in $engines; do
		blob bytes "$LAKE/$c.lance" "$e" "$TMP/info.json" >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
		check "$c: after lt_compact Lance $e reads every blob's bytes" \
			"$(cmp -s "$TMP/bytes.jsonl" "$TMP/want.jsonl" && echo same || { head -c 300 "$TMP/bytes.err"; diff "$TMP/want.jsonl" "$TMP/bytes.jsonl" | head -n 6; })" same
	done
	if [[ $name == v2* ]]; then
		# Lance 12's own compaction of a copy: the same descriptors, and sidecars of the same sizes
		blob compact "$LAKE/${c}e.lance" 2>"$TMP/compact.err" || bad "$c: Lance 12's compaction failed: $(head -c 300 "$TMP/compact.err")"
		blob desc "$LAKE/$c.lance" >"$TMP/desc.lt" 2>&1
		blob desc "$LAKE/${c}e.lance" >"$TMP/desc.eng" 2>&1
		check "$c: the descriptors after lt_compact are those after Lance 12's compaction ($(grep -c '"kind":[12]' "$TMP/desc.lt") in sidecars)" \
			"$(cmp -s "$TMP/desc.lt" "$TMP/desc.eng" && echo same || diff "$TMP/desc.eng" "$TMP/desc.lt" | head -n 6)" same
		newside() { (cd "$1" && LC_ALL=C comm -13 <(sed 's|^\./||' "$2") <(find . -type f -name '*.blob' | sed 's|^\./||' | sort) | xargs -r stat -c '%s' | sort -n | tr '\n' ' '); }
		check "$c: lt_compact wrote new sidecars of the sizes Lance 12's compaction writes" \
			"$(newside "$LAKE/$c.lance" "$TMP/before")" "$(newside "$LAKE/${c}e.lance" "$TMP/before")"
	fi
	# lt_cleanup: the old data files and their sidecars go; both engines still read every blob
	sleep 1
	"${PSQL[@]}" -At -c "SELECT path FROM lt_cleanup_files('$c', '0 seconds')" >"$TMP/removed" 2>&1 || bad "$c: lt_cleanup failed: $(head -c 300 "$TMP/removed")"
	nold=$(grep -c '^data/.*\.lance$' "$TMP/removed")
	nside=$(grep -c '\.blob$' "$TMP/removed")
	nside_before=$(grep -c '\.blob$' "$TMP/before")
	[ "$nold" -ge "$nfrag" ] && [ "$nside" = "$nside_before" ] \
		&& ok "$c: lt_cleanup removes the $nold old data files and all $nside old sidecars" \
		|| bad "$c: lt_cleanup removed $nold data files (want at least $nfrag) and $nside sidecars (want $nside_before)"
	for e in $engines; do
		blob bytes "$LAKE/$c.lance" "$e" "$TMP/info.json" >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
		check "$c: after lt_cleanup Lance $e reads every blob's bytes" \
			"$(cmp -s "$TMP/bytes.jsonl" "$TMP/want.jsonl" && echo same || { head -c 300 "$TMP/bytes.err"; diff "$TMP/want.jsonl" "$TMP/bytes.jsonl" | head -n 6; })" same
	done
	# the engine appends and deletes on top; a second lt_compact keeps every byte
	if blob append "$eng" "$LAKE/$c.lance" 400 3 0 2>"$TMP/append.err"; then
		{ grep -v '"id":0,' "$TMP/want.jsonl"; blob expect 3 400; } | sort -t: -k2 -n >"$TMP/want2.jsonl"
		got=$("${PSQL[@]}" -At -c "SELECT fragments_removed || ' ' || fragments_added FROM lt_compact('$c')" 2>&1)
		check "$c: a second lt_compact, after Lance $eng appended and deleted, merges the two fragments" "$got" "2 1"
		rows_of "$c" >"$TMP/sql.jsonl"
		"$ROOT/build/lt-inspect" info "$LAKE/$c.lance" >"$TMP/info.json" 2>&1
		blob bytes "$LAKE/$c.lance" 12 "$TMP/info.json" >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
		check "$c: after the engine's append and a second lt_compact, lt_fdw and Lance 12 read every blob" \
			"$(cmp -s "$TMP/sql.jsonl" "$TMP/want2.jsonl" && cmp -s "$TMP/bytes.jsonl" "$TMP/want2.jsonl" && echo same || { head -c 300 "$TMP/bytes.err"; diff "$TMP/want2.jsonl" "$TMP/bytes.jsonl" | head -n 6; })" same
	else
		bad "$c: Lance $eng could not append after lt_compact: $(head -c 300 "$TMP/append.err")"
	fi
done

# ---- 4. blob v2 placement as Lance 12's writer: the same rows written by lt_fdw and by the engine into copies of a
# dataset with Lance's default thresholds (inline up to 64 KiB, packed up to 4 MiB, dedicated above; packed sidecars
# of at most 6 MiB here) get the same descriptors (kind, size, blob id, position in a sidecar) and sidecar files ----
sizes="65536,65537,4194304,4194305,0,5,null,4194304,100000,1"
blob make 12 "$LAKE/v2d.lance" v2d >/dev/null || bad "v2d: Lance 12 made no dataset"
for side in lt eng; do cp -a "$LAKE/v2d.lance" "$LAKE/v2d$side.lance"; done
"${PSQL[@]}" -c "CREATE FOREIGN TABLE v2dlt (id bigint, note text, payload bytea) SERVER lake OPTIONS (path 'v2dlt.lance');
	CREATE TABLE h_v2d AS SELECT * FROM v2dlt;" || bad "v2d: the foreign table"
vals="SELECT 20 + k - 1, 'sized', CASE WHEN n = 'null' THEN NULL ELSE decode(repeat(lpad(to_hex((20 + k - 1) % 251), 2, '0'), n::int), 'hex') END
	FROM unnest(string_to_array('$sizes', ',')) WITH ORDINALITY AS s(n, k)"
"${PSQL[@]}" -c "INSERT INTO v2dlt $vals; INSERT INTO h_v2d $vals" || bad "v2d: the INSERT of sized blobs"
blob addsizes "$LAKE/v2deng.lance" 20 "$sizes" || bad "v2d: Lance 12 appended no sized blobs"
blob desc "$LAKE/v2dlt.lance" >"$TMP/desc.lt" 2>&1
blob desc "$LAKE/v2deng.lance" >"$TMP/desc.eng" 2>&1
if [ "$(grep -c '"kind":2' "$TMP/desc.lt")" -ge 1 ] && [ "$(grep -c '"kind":1' "$TMP/desc.lt")" -ge 3 ] && cmp -s "$TMP/desc.lt" "$TMP/desc.eng"; then
	ok "v2d: Lance 12 reads the descriptors lt_fdw wrote as the ones it writes itself (inline, packed, a second pack past 6 MiB, dedicated)"
else
	bad "v2d: lt_fdw placed blobs unlike Lance 12"; diff "$TMP/desc.eng" "$TMP/desc.lt" | head -n 10
fi
sidecars() { (cd "$1/data" && find . -name '*.blob' -newer "$2" -printf '%s %f\n' | sort); }
check "v2d: the new data file's sidecars are the engine's (names and sizes)" \
	"$(sidecars "$LAKE/v2dlt.lance" "$LAKE/v2d.lance/_versions")" "$(sidecars "$LAKE/v2deng.lance" "$LAKE/v2d.lance/_versions")"
rows_of h_v2d >"$TMP/want.jsonl"
blob bytes "$LAKE/v2dlt.lance" 12 >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
check "v2d: Lance 12's blob API reads every byte lt_fdw wrote (64 KiB, 4 MiB, 4 MiB + 1, 0 bytes, NULL)" \
	"$(cmp -s "$TMP/bytes.jsonl" "$TMP/want.jsonl" && echo same || { head -c 300 "$TMP/bytes.err"; diff "$TMP/want.jsonl" "$TMP/bytes.jsonl" | head -n 6; })" same
rows_of v2dlt >"$TMP/sql.jsonl"
check "v2d: lt_fdw reads back what it wrote" "$(cmp -s "$TMP/sql.jsonl" "$TMP/want.jsonl" && echo same)" same
# a rollback leaves the table as it was (its data file and sidecars are orphans nothing names)
snapshot "$LAKE/v2dlt.lance" | grep -v -e '/data/' -e '_versions/latest' >"$TMP/before"
"${PSQL[@]}" -c "BEGIN; INSERT INTO v2dlt $vals; ROLLBACK;" || bad "v2d: the rolled back INSERT"
snapshot "$LAKE/v2dlt.lance" | grep -v -e '/data/' -e '_versions/latest' >"$TMP/after"
check "v2d: a rolled back INSERT commits nothing" "$(cmp -s "$TMP/before" "$TMP/after" && echo same)" same
blob bytes "$LAKE/v2dlt.lance" 12 >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
check "v2d: after the rollback Lance 12 reads the same blobs" "$(cmp -s "$TMP/bytes.jsonl" "$TMP/want.jsonl" && echo same)" same
# DELETE and UPDATE of blob v2 rows: the engine and lt_fdw read the heap table's bytes
for sql in "DELETE FROM %s WHERE id IN (21, 24)" "UPDATE %s SET payload = decode(repeat('77', 5000000), 'hex') WHERE id = 25" \
	"UPDATE %s SET payload = NULL, note = 'nulled' WHERE id = 23"; do
	"${PSQL[@]}" -c "$(printf "$sql" v2dlt); $(printf "$sql" h_v2d)" || bad "v2d: $sql"
done
rows_of h_v2d >"$TMP/want.jsonl"
blob bytes "$LAKE/v2dlt.lance" 12 >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
rows_of v2dlt >"$TMP/sql.jsonl"
check "v2d: after DELETE and UPDATE (to 5 MB, to NULL) Lance 12 and lt_fdw read the heap table's bytes" \
	"$(cmp -s "$TMP/bytes.jsonl" "$TMP/want.jsonl" && cmp -s "$TMP/sql.jsonl" "$TMP/want.jsonl" && echo same || diff "$TMP/want.jsonl" "$TMP/bytes.jsonl" | head -n 6)" same

# ---- 5. lt_cleanup removes the sidecars of the data files no retained version names, as Lance 12's cleanup does:
# a rolled back INSERT (orphans: removed only with delete_unverified), then TRUNCATE and an INSERT (the old data
# file and its sidecars: verified); lt_cleanup on one copy, the engine's cleanup on another --------------------
blob make 12 "$LAKE/v2cl.lance" v2 >/dev/null || bad "v2cl: Lance 12 made no dataset"
"${PSQL[@]}" -c "CREATE FOREIGN TABLE v2cl (id bigint, note text, payload bytea) SERVER lake OPTIONS (path 'v2cl.lance')" \
	|| bad "v2cl: the foreign table"
"${PSQL[@]}" -c "BEGIN; INSERT INTO v2cl VALUES (50, 'rolled back', decode(repeat('aa', 150000), 'hex')), (51, 'packed', decode(repeat('bb', 5000), 'hex')); ROLLBACK;
	TRUNCATE v2cl; INSERT INTO v2cl VALUES (1, 'kept', decode(repeat('cc', 150000), 'hex')), (2, 'packed', decode(repeat('dd', 5000), 'hex')), (3, 'inline', '\\x01');" \
	|| bad "v2cl: the writes"
sleep 1	# every commit older than the cleanups' "now"
for unverified in false true; do
	for side in a b; do rm -rf "$LAKE/v2cl$side.lance"; cp -a "$LAKE/v2cl.lance" "$LAKE/v2cl$side.lance"; done
	"${PSQL[@]}" -c "CREATE FOREIGN TABLE IF NOT EXISTS v2cla (id bigint, note text, payload bytea) SERVER lake OPTIONS (path 'v2cla.lance')" >/dev/null
	files_of "$LAKE/v2cla.lance" >"$TMP/before"
	"${PSQL[@]}" -At -c "SELECT path FROM lt_cleanup_files('v2cla', '0 seconds', $unverified, dry_run => true)" >"$TMP/dry" 2>&1
	"${PSQL[@]}" -At -c "SELECT path FROM lt_cleanup_files('v2cla', '0 seconds', $unverified)" >"$TMP/real" 2>&1 || bad "v2cl: lt_cleanup failed: $(head -c 300 "$TMP/real")"
	blob cleanup "$LAKE/v2clb.lance" "$unverified" 2>"$TMP/ref.err" || bad "v2cl: the engine's cleanup failed: $(head -c 300 "$TMP/ref.err")"
	files_of "$LAKE/v2cla.lance" | LC_ALL=C comm -23 "$TMP/before" - >"$TMP/removed_a"
	files_of "$LAKE/v2clb.lance" | LC_ALL=C comm -23 "$TMP/before" - >"$TMP/removed_b"
	nblob=$(grep -c '\.blob$' "$TMP/removed_a")
	want=$([ "$unverified" = true ] && echo 6 || echo 4)	# the old pack and dedicated ones (4); the rolled back pack and dedicated one (2)
	if [ "$nblob" = "$want" ] && cmp -s "$TMP/removed_a" "$TMP/removed_b"; then
		ok "v2cl (delete_unverified $unverified): lt_cleanup removes the files the engine's cleanup removes, $nblob sidecars among $(wc -l <"$TMP/removed_a")"
	else
		bad "v2cl (delete_unverified $unverified): $nblob sidecars removed (want $want), or not the engine's files"
		echo "   lt_cleanup removed:"; sed 's/^/     /' "$TMP/removed_a"; echo "   the engine removed:"; sed 's/^/     /' "$TMP/removed_b"
	fi
	check "v2cl (delete_unverified $unverified): the dry run lists what the cleanup then removes" \
		"$(sed 's|^|./|' "$TMP/dry" | sort | cmp -s - <(sed 's|^|./|' "$TMP/real" | sort) && sed 's|^|./|' "$TMP/real" | sort | cmp -s - "$TMP/removed_a" && echo same)" same
	check "v2cl (delete_unverified $unverified): Lance 12 reads the blobs kept" \
		"$(blob bytes "$LAKE/v2cla.lance" 12 | sed 's/,"md5".*//' | tr '\n' ' ')" '{"id":1,"len":150000 {"id":2,"len":5000 {"id":3,"len":1 '
	"${PSQL[@]}" -c "DROP FOREIGN TABLE v2cla" >/dev/null
done

# ---- a parallel scan: each worker reads the blobs of the fragments it claims ---------------------------------
par_sql="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0;"
plan=$("${PSQL[@]}" -At -c "$par_sql EXPLAIN (COSTS OFF) SELECT id, md5(payload) FROM v2m" 2>&1)
"${PSQL[@]}" -At -c "$par_sql SELECT id, coalesce(md5(payload), 'null') FROM v2m" 2>&1 | sort -n >"$TMP/par.txt"
"${PSQL[@]}" -At -c "SET max_parallel_workers_per_gather = 0; SELECT id, coalesce(md5(payload), 'null') FROM v2m" 2>&1 |
	sort -n >"$TMP/ser.txt"
case $plan in
	*Gather*"Foreign Scan"*) [ "$(wc -l <"$TMP/ser.txt")" = 11 ] && cmp -s "$TMP/par.txt" "$TMP/ser.txt" \
		&& ok "v2m: a parallel scan reads the blobs a serial scan reads (11 rows)" \
		|| { bad "v2m: the parallel scan's blobs differ"; diff "$TMP/ser.txt" "$TMP/par.txt" | head -n 6; } ;;
	*) bad "v2m: no parallel plan: ${plan:0:400}" ;;
esac

# ---- statements that write no data file leave the blobs readable by both: an index on another column, the
# primary key (a new manifest with the schema's metadata), cleanup (never a sidecar) ---------------------------
for name in leg21 v2; do
	ds=$LAKE/$name.lance
	"${PSQL[@]}" -c "SELECT count(*) FROM lt_create_index('$name', 'id', 'btree'); SELECT lt_set_primary_key('$name', '{id}');
		SELECT count(*) FROM lt_cleanup('$name', interval '0 seconds', true);" >/dev/null 2>"$TMP/meta.err" \
		|| { cat "$TMP/meta.err"; bad "$name: index, primary key or cleanup failed"; continue; }
	grep -v '"id":3,' "$TMP/expect.jsonl" >"$TMP/want.jsonl"
	blob bytes "$ds" >"$TMP/bytes.jsonl" 2>"$TMP/bytes.err"
	check "$name: after an index on id, a primary key and a cleanup, the engine reads every blob as written" \
		"$(cmp -s "$TMP/bytes.jsonl" "$TMP/want.jsonl" && echo same)" same
	check "$name: the blob sidecar files are all still there" "$(find "$ds/data" -name '*.blob' | wc -l)" \
		"$([ "$name" = v2 ] && echo 4 || echo 0)"
done

# ---- a sidecar shorter than its descriptor says: XX001 naming the file; the other columns still read -------
cp -a "$LAKE/v2.lance" "$LAKE/v2cut.lance"
side=$(find "$LAKE/v2cut.lance/data" -name '*.blob' -size +1000k | head -n 1)
truncate -s 1000 "$side"
"${PSQL[@]}" -c "CREATE FOREIGN TABLE v2cut (id bigint, note text, payload bytea) SERVER lake OPTIONS (path 'v2cut.lance');"
out=$(printf '\\set VERBOSITY verbose\nSELECT id, length(payload) FROM v2cut ORDER BY id;\n' | "${PSQL[@]}" 2>&1)
case $out in
	*"XX001"*"$(basename "$side")"*) ok "v2cut: a truncated sidecar is XX001 naming the file" ;;
	*) bad "v2cut: a truncated sidecar gave: ${out:0:300}" ;;
esac
check "v2cut: the other columns and the other blobs still read" \
	"$("${PSQL[@]}" -At -c "SELECT count(note), (SELECT length(payload) FROM v2cut WHERE id = 8) FROM v2cut" 2>&1)" "11|17"

# ---- over S3 (the test S3 server of test/s3): lt-inspect and SQL read the blobs by ranged GETs ----------------
if [ -d "$HERE/node_modules/@20minutes/s3rver" ]; then
	mkfifo "$TMP/s3ctl" && chmod 0777 "$TMP/s3ctl"
	NODE_OPTIONS=--openssl-legacy-provider node "$ROOT/test/s3/server.mjs" "$TMP/s3objects" lake <"$TMP/s3ctl" >"$TMP/s3port" 2>"$TMP/s3.log" &
	s3pid=$!
	exec 8>"$TMP/s3ctl"
	trap 'exec 8>&- 2>/dev/null; kill $s3pid 2>/dev/null; lt_cluster_stop; rm -rf "$TMP"' EXIT
	for _ in $(seq 100); do [ -s "$TMP/s3port" ] && break; sleep 0.1; done
	port=$(sed -nE 's/.*"port": *([0-9]+).*/\1/p' "$TMP/s3port")
	export LT_S3_ENDPOINT=http://127.0.0.1:$port AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
	up=0
	for name in leg21 v2; do
		(cd "$LAKE/$name.lance" && find . -type f | sed 's|^\./||') | while read -r f; do
			curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user S3RVER:S3RVER -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
				-X PUT --data-binary "@$LAKE/$name.lance/$f" "$LT_S3_ENDPOINT/lake/blobs/$name.lance/$f" >/dev/null || echo "upload $f failed"
		done | grep -q . && up=1
	done
	[ -n "$port" ] && [ "$up" = 0 ] || bad "S3: the test server or the upload failed: $(head -c 300 "$TMP/s3.log")"
	"${PSQL[@]}" -c "CREATE SERVER s3lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root 's3://lake/blobs', endpoint '$LT_S3_ENDPOINT',
		region 'us-east-1', path_style 'true', allow_http 'true');
		CREATE USER MAPPING FOR CURRENT_USER SERVER s3lake OPTIONS (aws_access_key_id 'S3RVER', aws_secret_access_key 'S3RVER');
		CREATE SCHEMA s3; IMPORT FOREIGN SCHEMA \".\" FROM SERVER s3lake INTO s3;" || bad "S3: server, mapping or IMPORT failed"
	grep -v '"id":3,' "$TMP/expect.jsonl" >"$TMP/want.jsonl"
	grep -v '"id":3,' <(blob expect 12 --fnv) >"$TMP/want.fnv"
	for name in leg21 v2; do
		"$ROOT/build/lt-inspect" scan "s3://lake/blobs/$name.lance" --columns id,payload --blobs 2>"$TMP/li.err" | node -e '
for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean)) {
  const r = JSON.parse(l);
  console.log(JSON.stringify({ id: Number(r.id), len: r.payload ? r.payload.len : null, fnv: r.payload ? r.payload.fnv : null }));
}' | sort -t: -k2 -n >"$TMP/li.fnv"
		check "S3 $name: lt-inspect scan --blobs reads every blob as written" "$(cmp -s "$TMP/li.fnv" "$TMP/want.fnv" && echo same || head -c 300 "$TMP/li.err")" same
		"${PSQL[@]}" -At -c "SELECT format('{\"id\":%s,\"len\":%s,\"md5\":%s}', id, coalesce(length(payload)::text, 'null'),
			coalesce('\"' || md5(payload) || '\"', 'null')) FROM s3.$name ORDER BY id" >"$TMP/sql.jsonl" 2>&1
		check "S3 $name: SELECT payload reads every blob as written" "$(cmp -s "$TMP/sql.jsonl" "$TMP/want.jsonl" && echo same || head -c 300 "$TMP/sql.jsonl")" same
		n=$(bytes_read "SELECT id, note FROM s3.$name")
		[[ $n =~ ^[0-9]+$ ]] && [ "$n" -lt 65536 ] && ok "S3 $name: a scan without the blob column reads $n bytes" \
			|| bad "S3 $name: a scan without the blob column read $n bytes"
	done
else
	bad "S3: npm module @20minutes/s3rver is missing (scripts/setup.sh)"
fi

# ---- IMPORT declares blob columns bytea; aggregates and ANALYZE read them as PostgreSQL would -------------
"${PSQL[@]}" -c "CREATE SCHEMA imp; IMPORT FOREIGN SCHEMA \".\" LIMIT TO (leg20, leg21, leg21m, v2, v2cut, v2m) FROM SERVER lake INTO imp;" \
	|| bad "IMPORT FOREIGN SCHEMA of the blob datasets failed"
check "IMPORT: every blob column is bytea" \
	"$("${PSQL[@]}" -At -c "SELECT string_agg(table_name || '.' || data_type, ',' ORDER BY table_name) FROM information_schema.columns
		WHERE table_schema = 'imp' AND column_name = 'payload'")" "leg20.bytea,leg21.bytea,leg21m.bytea,v2.bytea,v2cut.bytea,v2m.bytea"
want=$(node -e 'let t = 0, n = 0; for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)) { const r = JSON.parse(l); if (r.id !== 3 && r.len !== null) { t += r.len; n++; } } console.log(`11|${n}|${t}`)' "$TMP/expect.jsonl")
for name in leg20 leg21 leg21m v2 v2m; do
	check "$name: count(*), count(payload), sum(length(payload)) after the DELETE" \
		"$("${PSQL[@]}" -At -c "SELECT count(*), count(payload), sum(length(payload)) FROM imp.$name" 2>&1)" "$want"
	check "$name: ANALYZE samples the table" "$("${PSQL[@]}" -At -c "ANALYZE imp.$name; SELECT 'analyzed'" 2>&1)" analyzed
done

echo "$LT_STEP: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
