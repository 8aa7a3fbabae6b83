#!/usr/bin/env bash
# bench/assignment.sh — issue 17's benchmark: field assignment state (is_assigned) against a boolean column
# with a bitmap index maintained by the same writes, on the same rows, side by side in one run.
#
#   bench/assignment.sh [ROWS] [FRAGMENTS] [DIM] [REPEAT]    default 1,000,000 rows, 10 fragments, 64-d, best of 5
#
# The dataset (id int64, txt utf8, emb fixed_size_list<float32, DIM> as a cheaper stand-in for a 768-d
# embedding, emb_ok bool = false) is written once by the reference library and cached under build/bench/. Two
# copies: A tracks emb's assignment ('unassigned'); B keeps the boolean emb_ok with a bitmap index
# (lt_create_index). Then one sparse update of 0.1% of the rows: A assigns emb (UPDATE SET emb = emb), B sets
# emb_ok too (UPDATE SET emb = emb, emb_ok = true); then both clear the flag of those rows again (A: SET
# emb_assigned = false, which changes the state in place; B: SET emb_ok = false, which rewrites the rows).
# Measured:
#   - bytes the sparse update and the sparse invalidation wrote (new files in the dataset directory; B's bitmap
#     index maintained after each by lt_optimize_indexes), and what tracking adds to the update: the bytes
#     beyond a third copy C's, which writes the same rows (UPDATE SET emb = emb) and tracks nothing;
#   - the metadata of the newest version: the manifest, plus A's assignment root and bitmaps it names,
#     B's index files;
#   - planning and execution time (EXPLAIN ANALYZE's, best of REPEAT) and the bytes / read requests the store
#     served (EXPLAIN's Bytes Read / Read Requests: the requests an object store would get) of
#       worklist:   SELECT id WHERE NOT <flag> LIMIT 1000
#       count:      SELECT count(*) WHERE <flag>
#       projection: SELECT count(*) FILTER (WHERE <flag>)   (every row's flag projected)
# Not part of the tests (nothing is asserted); the cluster is always stopped and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${1:-1000000}
FRAGS=${2:-10}
DIM=${3:-64}
REPEAT=${4:-5}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
OUT=$ROOT/build/bench/assignment
BASE=$ROOT/build/bench/assign${ROWS}x${FRAGS}d${DIM}.lance
mkdir -p "$OUT"
log() { echo "$*" >&2; }

[ -d test/interop/node_modules/@lancedb/lancedb ] || { log "test/interop/node_modules is missing (scripts/setup.sh)"; exit 1; }
if [ ! -d "$BASE" ]; then
	log "generating $ROWS rows in $FRAGS fragments into $BASE ..."
	cat >"$OUT/spec.json" <<JSON
{"storage": "2.1", "schema": [
  {"name": "id", "type": "int64", "nullable": false, "gen": "seq"},
  {"name": "txt", "type": "utf8", "gen": {"card": 1000}},
  {"name": "emb", "type": "fixed_size_list<float32,$DIM>"},
  {"name": "emb_ok", "type": "bool", "nullable": false, "gen": {"const": false}}
 ], "generate": {"n": $ROWS}, "fragments": $FRAGS}
JSON
	rm -rf "$BASE.tmp"
	(cd test/interop && node --max-old-space-size=8000 ref.mjs make "$BASE.tmp" "$OUT/spec.json" >/dev/null)
	mv "$BASE.tmp" "$BASE"
fi

. "$ROOT/test/pg/cluster.sh"
log "make install (a private PostgreSQL copy) ..."
lt_pg_install "$ROOT" "$OUT/install.log" || exit 1
TMP=$(mktemp -d /tmp/lt_fdw_assign_bench.XXXXXX)
cleanup() { lt_cluster_stop; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
lt_cluster_create "$TMP"
cat >>"$LT_PGDATA/postgresql.conf" <<CONF
max_parallel_workers_per_gather = 0
jit = off
CONF
lt_cluster_start
LAKE=$TMP/lake
mkdir -p "$LAKE"
cp -R "$BASE" "$LAKE/a.lance"
cp -R "$BASE" "$LAKE/b.lance"
cp -R "$BASE" "$LAKE/c.lance"
chmod -R a+rwX "$LAKE"
[ "$(id -u)" -eq 0 ] && chown -R "$LT_PG_OSUSER": "$LAKE"
PSQL=("$LT_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)
bytes() { du -sb --apparent-size "$1" | cut -f1; }

"${PSQL[@]}" >"$OUT/setup.log" <<SQL
CREATE EXTENSION lt_fdw;
CREATE SERVER bench FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '$LAKE');
CREATE FOREIGN TABLE a (id bigint, txt text, emb real[], emb_ok boolean, emb_assigned boolean OPTIONS (is_assigned 'emb'))
  SERVER bench OPTIONS (path 'a.lance');
CREATE FOREIGN TABLE b (id bigint, txt text, emb real[], emb_ok boolean) SERVER bench OPTIONS (path 'b.lance');
CREATE FOREIGN TABLE c (id bigint, txt text, emb real[], emb_ok boolean) SERVER bench OPTIONS (path 'c.lance');
SELECT lt_track_assignment('a', 'emb', 'unassigned');
SELECT * FROM lt_create_index('b', 'emb_ok', 'bitmap');
SQL
a0=$(bytes "$LAKE/a.lance") b0=$(bytes "$LAKE/b.lance") c0=$(bytes "$LAKE/c.lance")
log "sparse update of 0.1% of the rows ..."
"${PSQL[@]}" >>"$OUT/setup.log" <<SQL
UPDATE a SET emb = emb WHERE id % 1000 = 0;
UPDATE b SET emb = emb, emb_ok = true WHERE id % 1000 = 0;
SELECT lt_optimize_indexes('b');	-- the bitmap index maintained: the moved rows merged into it
UPDATE c SET emb = emb WHERE id % 1000 = 0;	-- C: the same rows written, nothing tracked (the data's own bytes)
SQL
a1=$(bytes "$LAKE/a.lance") b1=$(bytes "$LAKE/b.lance") c1=$(bytes "$LAKE/c.lance")

# the newest version's metadata: manifest + what it names (A: _assignment files; B: _indices)
latest() { ls -t "$1"/_versions/*.manifest | head -n 1; }
ma=$(stat -c %s "$(latest "$LAKE/a.lance")") mb=$(stat -c %s "$(latest "$LAKE/b.lance")")
sa=$(cat "$LAKE"/a.lance/_assignment/* 2>/dev/null | wc -c)	# every root and bitmap (two versions' roots)
sb=$(du -sb --apparent-size "$LAKE/b.lance/_indices" | cut -f1)

# best of REPEAT of planning and execution time; bytes and requests of the last run
measure() {	# name query
	local best_p="" best_e="" line p e br rr
	for _ in $(seq "$REPEAT"); do
		line=$("${PSQL[@]}" -At -c "EXPLAIN (ANALYZE, SUMMARY ON, TIMING OFF) $2" | tr '\n' ' ')
		p=$(sed -E 's/.*Planning Time: ([0-9.]+).*/\1/' <<<"$line")
		e=$(sed -E 's/.*Execution Time: ([0-9.]+).*/\1/' <<<"$line")
		br=$(grep -oE 'Bytes Read: [0-9]+' <<<"$line" | head -n 1 | grep -oE '[0-9]+$' || echo 0)
		rr=$(grep -oE 'Read Requests: [0-9]+' <<<"$line" | head -n 1 | grep -oE '[0-9]+$' || echo 0)
		if [ -z "$best_e" ] || awk "BEGIN{exit !($e < $best_e)}"; then best_e=$e; fi
		if [ -z "$best_p" ] || awk "BEGIN{exit !($p < $best_p)}"; then best_p=$p; fi
	done
	echo "$line" >"$OUT/$1.plan"
	printf '%s %s %s %s\n' "$best_p" "$best_e" "$br" "$rr"
}
printf '\n%-12s | %-44s | %-44s\n' "" "A: is_assigned (assignment state)" "B: boolean column + bitmap index"
printf '%-12s | %9s %9s %12s %9s | %9s %9s %12s %9s\n' query plan_ms exec_ms bytes_read requests plan_ms exec_ms bytes_read requests
for q in worklist count projection; do
	case $q in
		worklist) qa="SELECT id FROM a WHERE NOT emb_assigned LIMIT 1000"; qb="SELECT id FROM b WHERE NOT emb_ok LIMIT 1000" ;;
		count) qa="SELECT count(*) FROM a WHERE emb_assigned"; qb="SELECT count(*) FROM b WHERE emb_ok" ;;
		projection) qa="SELECT count(*) FILTER (WHERE emb_assigned) FROM a"; qb="SELECT count(*) FILTER (WHERE emb_ok) FROM b" ;;
	esac
	read -r ap ae abr arr < <(measure "a-$q" "$qa")
	read -r bp be bbr brr < <(measure "b-$q" "$qb")
	printf '%-12s | %9s %9s %12s %9s | %9s %9s %12s %9s\n' "$q" "$ap" "$ae" "$abr" "$arr" "$bp" "$be" "$bbr" "$brr"
done
log "sparse invalidation of 0.1% of the rows ..."
"${PSQL[@]}" >>"$OUT/setup.log" <<SQL
UPDATE a SET emb_assigned = false WHERE id % 1000 = 0;
UPDATE b SET emb_ok = false WHERE id % 1000 = 0;
SELECT lt_optimize_indexes('b');
SQL
a2=$(bytes "$LAKE/a.lance") b2=$(bytes "$LAKE/b.lance")
printf '\n%-40s %14s %14s %8s\n' "" A B "A/B"
printf '%-40s %14s %14s %8s\n' "bytes written by the sparse update" $((a1 - a0)) $((b1 - b0)) "$(awk "BEGIN{printf \"%.3f\", $((a1 - a0)) / $((b1 - b0))}")"
# what tracking adds to the update: its bytes beyond C's, which wrote the same rows and tracked nothing
printf '%-40s %14s %14s %8s\n' "  of which tracking (beyond C's $((c1 - c0)))" $((a1 - a0 - (c1 - c0))) $((b1 - b0 - (c1 - c0))) \
	"$(awk "BEGIN{d = $((b1 - b0 - (c1 - c0))); printf \"%.3f\", d ? $((a1 - a0 - (c1 - c0))) / d : 0}")"
printf '%-40s %14s %14s %8s\n' "bytes written by the sparse invalidation" $((a2 - a1)) $((b2 - b1)) "$(awk "BEGIN{printf \"%.3f\", $((a2 - a1)) / $((b2 - b1))}")"
printf '%-40s %14s %14s\n' "newest manifest bytes" "$ma" "$mb"
printf '%-40s %14s %14s\n' "assignment files / index files bytes" "$sa" "$sb"
"${PSQL[@]}" -At -c "SELECT 'answers (after the invalidation): A assigned ' || (SELECT count(*) FROM a WHERE emb_assigned) || ', B flagged ' || (SELECT count(*) FROM b WHERE emb_ok)"
echo "rows $ROWS, fragments $FRAGS, dim $DIM, best of $REPEAT; load $(cut -d' ' -f1-3 /proc/loadavg); plans in $OUT"
