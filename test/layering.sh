#!/usr/bin/env bash
# test/layering.sh — the architecture holds (docs/architecture.md): includes and calls run one way.
#
#   test/layering.sh        after `make all tools` (reads the objects under build/opt and build/pg)
#
# Checks, each counted:
#   - every project include in src/lance/ names a header of a room at or below its own (rooms, lowest first, are
#     LANCE_ROOMS in the Makefile), and the header exists;
#   - src/lance/ includes no PostgreSQL header (a name found in PostgreSQL's server include directory);
#   - src/fdw/'s files include only headers of their own layer or below (FDW_LAYERS below, lowest first);
#   - no two files of src/lance/ or of src/fdw/ call each other, directly or around a loop (from the objects'
#     defined and undefined symbols, ordered with tsort), and no call goes up a room or a layer.
# Ends with "N passed, M failed".
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

rooms=($(sed -nE 's/^LANCE_ROOMS := //p' Makefile))
# src/fdw, lowest layer first: a file may include and call files of its own layer and of the layers below
# (a header of src/fdw/ belongs to the layer of its .c file; within a layer the calls must not loop)
FDW_LAYERS=(
	"store spill progress"
	"option"
	"dataset"
	"namespace maintain"
	"xact"
	"convert convert_write quals vector"
	"index index_build keys assign"
	"scan explain analyze import admin knn ann"
	"overwrite upper"
	"modify upper_exec"
	"merge lifecycle"
	"lt_fdw"
)

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# ranks looked up in tables, not by a function per call: the call graphs have hundreds of edges
declare -A ROOM_RANK FDW_RANK LANCE_FILE_RANK
for i in "${!rooms[@]}"; do ROOM_RANK[${rooms[$i]}]=$i; done
for i in "${!FDW_LAYERS[@]}"; do for f in ${FDW_LAYERS[$i]}; do FDW_RANK[$f]=$i; done; done
# each sets RANK (no subshell per lookup): -1 for a name in no room or layer
rank_of_room() { RANK=${ROOM_RANK[$1]:--1}; }
rank_of_fdw() { RANK=${FDW_RANK[$1]:--1}; }

# --- includes of src/lance -------------------------------------------------------------------------------------
[ ${#rooms[@]} -gt 0 ] || { bad "no LANCE_ROOMS in the Makefile"; echo "$passed passed, $failed failed"; exit 1; }
problems=()
for f in $(find src/lance -name '*.[ch]' | sort); do
	room=${f#src/lance/}; room=${room%%/*}
	rank_of_room "$room"; r=$RANK
	if [ "$r" -lt 0 ]; then problems+=("$f: its folder '$room' is not a room of LANCE_ROOMS"); continue; fi
	while read -r inc; do
		iroom=${inc%%/*}
		[ "$iroom" != "$inc" ] || { problems+=("$f: #include \"$inc\" names no room"); continue; }
		rank_of_room "$iroom"; ir=$RANK
		if [ "$ir" -lt 0 ]; then problems+=("$f: #include \"$inc\": '$iroom' is not a room"); continue; fi
		[ "$ir" -le "$r" ] || problems+=("$f ($room) includes $inc, a higher room ($iroom)")
		[ "$iroom" = proto ] || [ -f "src/lance/$inc" ] || problems+=("$f: #include \"$inc\" does not exist")
	done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/p' "$f")
done
if [ ${#problems[@]} -eq 0 ]; then ok "src/lance: every include names a room at or below its own"; else
	bad "src/lance: includes that run up or nowhere:"; printf '       %s\n' "${problems[@]}"; fi

pg_inc=$("$PG_CONFIG" --includedir-server)
problems=()
while read -r f inc; do
	[ -e "$pg_inc/$inc" ] && [ ! -e "/usr/include/$inc" ] && problems+=("$f includes $inc (PostgreSQL)")
done < <(grep -rHoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+[<"][^>"]+[>"]' src/lance --include='*.[ch]' |
	sed -E 's/^([^:]+):.*include[[:space:]]+[<"]([^>"]+)[>"]/\1 \2/')
if [ ${#problems[@]} -eq 0 ]; then ok "src/lance: no PostgreSQL header"; else
	bad "src/lance: PostgreSQL headers:"; printf '       %s\n' "${problems[@]}"; fi

# --- includes of src/fdw ---------------------------------------------------------------------------------------
problems=()
for f in src/fdw/*.[ch]; do
	b=$(basename "$f"); b=${b%.*}
	rank_of_fdw "$b"; r=$RANK
	[ "$r" -ge 0 ] || { problems+=("$f is in no layer of FDW_LAYERS (test/layering.sh)"); continue; }
	while read -r inc; do
		case $inc in */*) continue ;; esac # a room of src/lance or a PostgreSQL header
		[ -f "src/fdw/$inc" ] || continue
		ib=${inc%.h}
		rank_of_fdw "$ib"; ir=$RANK
		[ "$ir" -ge 0 ] || { problems+=("$f includes $inc, which is in no layer"); continue; }
		[ "$ir" -le "$r" ] || problems+=("$f includes $inc, a higher layer")
	done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/p' "$f")
done
if [ ${#problems[@]} -eq 0 ]; then ok "src/fdw: every include names a layer at or below its own"; else
	bad "src/fdw: includes that run up:"; printf '       %s\n' "${problems[@]}"; fi

# --- calls, from the objects --------------------------------------------------------------------------------------
# call_graph NAME RANKFN OBJ...: an edge per (caller file, callee file) through a global symbol; fails on a loop
# or on a call to a higher room/layer
call_graph() {
	local name=$1 rankfn=$2; shift 2
	local defs edges o src problems=() a b ra rb loop
	defs=$(mktemp) edges=$(mktemp)
	# one nm over every object: "path/x.o:ADDR T sym" for a definition, "path/x.o: U sym" for a use
	nm -g -A "$@" | awk -v defs="$defs" '{
		src = $1; sub(/:.*/, "", src); sub(/.*\//, "", src); sub(/\.o$/, "", src)
		if ($(NF - 1) == "U") print $NF, src
		else if ($(NF - 1) ~ /^[TDBR]$/) print $NF, src > defs
	}' | sort -u >"$edges.uses"
	sort -u -o "$defs" "$defs"
	join "$edges.uses" "$defs" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$edges"
	rm -f "$edges.uses"
	while read -r a b; do
		$rankfn "$a"; ra=$RANK
		$rankfn "$b"; rb=$RANK
		[ "$rb" -le "$ra" ] || problems+=("$a calls $b, a higher one")
	done <"$edges"
	loop=$(tsort "$edges" 2>&1 >/dev/null | sed -nE 's/^tsort: .*input contains a loop:$/|/p; s/^tsort: ([^ ]+)$/\1/p' |
		tr '\n' ' ' | sed -E 's/^\| //; s/ \| /; /g')
	[ -z "$loop" ] || problems+=("a call loop: $loop")
	if [ ! -s "$edges" ]; then bad "$name: no calls read (build first: make all tools)"
	elif [ ${#problems[@]} -eq 0 ]; then ok "$name: $(wc -l <"$edges") file-to-file calls, all down or across, no loop"
	else bad "$name:"; printf '       %s\n' "${problems[@]}"; fi
	rm -f "$defs" "$edges"
}
# an object of src/lance is ranked by the room of its .c file; one with no .c there is generated (proto)
while read -r f; do
	f=${f#src/lance/}; b=$(basename "$f" .c)
	[ -n "${LANCE_FILE_RANK[$b]:-}" ] || LANCE_FILE_RANK[$b]=${ROOM_RANK[${f%%/*}]:--1}
done < <(find src/lance -mindepth 2 -name '*.c' | sort)
lance_rank() { RANK=${LANCE_FILE_RANK[$1]:-${ROOM_RANK[proto]:--1}}; }
mapfile -t lance_objs < <(find build/opt/src/lance -name '*.o' 2>/dev/null | sort)
call_graph "src/lance calls" lance_rank "${lance_objs[@]}"
mapfile -t fdw_objs < <(find build/pg/src/fdw -name '*.o' 2>/dev/null | sort)
call_graph "src/fdw calls" rank_of_fdw "${fdw_objs[@]}"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
