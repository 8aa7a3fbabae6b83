#!/usr/bin/env bash
# test/interop/keys.sh — keyed tables (src/lance/txn/lt_keys.c) against the real Lance engine (ref.mjs):
#   - the engine creates datasets whose schema marks an unenforced primary key (field metadata, single and
#     composite keys, positions); lt-inspect info reports the key columns in the engine's order;
#   - the engine's mergeInsert on the key writes a KeyExistenceFilter into its Update transaction; lt-inspect
#     key-filter decodes it and rebuilds the filter from the inserted keys with lt_keys.c: the bloom bitmaps,
#     sizes and parameters must be identical bit for bit (int32 / int64 / uint64 / utf8 / binary keys, long
#     strings, composite keys, more keys than the filter is sized for).
# The specs are test/interop/keys/*.json: a "make" spec (schema, rows, ops with one merge_insert) plus
# "inserted": the key columns of the rows that merge_insert inserted (not the ones it updated).
# Prints ok/FAIL per check and "interop-keys: N passed, M failed"; exit code 1 on any failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SPECS=$HERE/keys
. "$HERE/checks.sh"
lt_checks interop-keys jq

# ------------------------------------------------------------------ the engine's filters, rebuilt here
for spec in "$SPECS"/*.json; do
	name=$(basename "$spec" .json)
	d=$TMP/$name.lance
	if ! REF make "$d" "$spec" >"$TMP/make.out" 2>&1; then
		ko "$name: engine creates the keyed dataset" "$(head -n 3 "$TMP/make.out")"; continue
	fi
	# the key columns, as lt-inspect info reports them, in key order
	want=$(jq -c '[.schema[] | select(.metadata != null) | select((.metadata | has("lance-schema:unenforced-primary-key")) or (.metadata | has("lance-schema:unenforced-primary-key:position")))] | sort_by(.metadata["lance-schema:unenforced-primary-key:position"] // "999999" | tonumber) | map(.name)' "$spec")
	got=$("$INSPECT" info "$d" | jq -c '[.schema[] | select(has("primary_key_position"))] | sort_by(if .primary_key_position > 0 then [0, .primary_key_position] else [1, .id] end) | map(.name)')
	if [ "$want" = "$got" ]; then ok "$name: lt-inspect info reports the key $got"; else ko "$name: key columns" "want $want" "got  $got"; fi

	txn=$(ls "$d"/_transactions/1-*.txn 2>/dev/null | head -n 1)
	[ -n "$txn" ] || { ko "$name: the merge_insert's transaction file"; continue; }
	jq -c '.inserted[]' "$spec" >"$TMP/$name.keys"
	if ! "$INSPECT" key-filter "$txn" --dataset "$d" --keys "$TMP/$name.keys" >"$TMP/kf.json" 2>"$TMP/kf.err"; then
		ko "$name: lt-inspect key-filter" "$(head -n 3 "$TMP/kf.err")"; continue
	fi
	n=$(jq -r '.inserted | length' "$spec")
	if jq -e --argjson n "$n" '.kind == "bloom" and .bitmap_bytes == 32768 and .number_of_items == 8192 and .rebuilt_keys == $n and .rebuilt_identical == true' "$TMP/kf.json" >/dev/null; then
		ok "$name: the engine's bloom filter of $n inserted keys rebuilt bit for bit ($(jq -r .bits_set "$TMP/kf.json") bits set)"
	else
		ko "$name: filter rebuilt identically" "$(cat "$TMP/kf.json")"
	fi
done

finish
