#!/bin/bash
# Measures calibra's TPC-H-like build against a plain COPY of the same
# tpchgen-cli files on one managed PostgreSQL server, in alternation: MB/s
# of each (the tables with their indexes on disk over the wall time of
# load, indexes and vacuum), medians of the rounds, and the ratio.
#
# Usage: bench/dss-load-vs-copy.sh [SCALE_FACTOR] [ROUNDS]
#   SCALE_FACTOR  default 1 (about 1.7 GB on disk with indexes)
#   ROUNDS        alternations (default 3)
#
# As root, with Debian's postgresql and tpchgen-cli on PATH. calibra's
# managed instance lives in a throwaway directory under /var/tmp; calibra
# makes it, then the script starts it with calibra's settings (its
# postmaster.opts) on a socket of its own and both builds run there:
# calibra's with --dsn, streaming from tpchgen-cli into COPY over its
# pipelines; the plain one from .tbl files written beforehand (not timed,
# each line's closing '|' dropped so they are COPY text), a server-side
# COPY a table in two psql sessions at once (lineitem in one, the other
# seven in the other), then calibra's own indexes (as pg_indexes defines
# them) one after another, and VACUUM ANALYZE. Everything is removed at the
# end, whatever happens.
set -eu
export PGOPTIONS="-c client_min_messages=warning"
SF=${1:-1}
ROUNDS=${2:-3}
cd "$(dirname "$0")/.."
. bench/managed-pg.sh
managed_pg dss tbl
psql_c() { psql -X -q -At -h "$DIR/sock" -p "$port" -U calibra -d calibra -c "$1"; }

tpchgen-cli tbl --scale-factor "$SF" --output-dir "$DIR/tbl" >/dev/null
for f in "$DIR"/tbl/*.tbl; do
	sed -i 's/|$//' "$f"
done
chown postgres "$DIR"/tbl/*.tbl
size="SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '%s' AND c.relkind = 'r'"

# Each result line: loader round bytes seconds MB/s
results="$DIR/results.txt"
: >"$results"
for round in $(seq "$ROUNDS"); do
	out="$DIR/runs/calibra-$round"
	"$CALIBRA" dss build --dsn "$DSN" --sf "$SF" --rebuild --progress none --out "$out" >/dev/null 2>"$DIR/calibra.err" || { tail -5 "$DIR/calibra.err" >&2; exit 1; }
	python3 - "$out/results.json" "$round" >>"$results" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["steps"][-1]
print("calibra %s %d %.1f %.1f" % (sys.argv[2], s["db_bytes"], s["total_s"], s["mb_per_s"]))
PY
	tail -1 "$results" >&2
	indexes=$(psql_c "SELECT string_agg(replace(indexdef, 'calibra_tpch.', 'plain.'), '; ') FROM pg_indexes WHERE schemaname = 'calibra_tpch' AND tablename <> 'build_info'")

	psql_c "DROP SCHEMA IF EXISTS plain CASCADE; CREATE SCHEMA plain"
	for t in lineitem orders partsupp part customer supplier nation region; do
		psql_c "CREATE TABLE plain.$t (LIKE calibra_tpch.$t)"
	done
	psql_c "CHECKPOINT"
	t0=$(date +%s.%N)
	psql_c "COPY plain.lineitem FROM '$DIR/tbl/lineitem.tbl' (DELIMITER '|')" &
	for t in orders partsupp part customer supplier nation region; do
		psql_c "COPY plain.$t FROM '$DIR/tbl/$t.tbl' (DELIMITER '|')"
	done
	wait
	psql_c "$indexes"
	psql_c "VACUUM ANALYZE plain.lineitem, plain.orders, plain.partsupp, plain.part, plain.customer, plain.supplier, plain.nation, plain.region"
	t1=$(date +%s.%N)
	# shellcheck disable=SC2059 # size is the query's format
	bytes=$(psql_c "$(printf "$size" plain)")
	echo "copy $round $bytes $t0 $t1" | awk '{ s = $5 - $4; printf "copy %s %d %.1f %.1f\n", $2, $3, s, $3 / 1e6 / s }' >>"$results"
	tail -1 "$results" >&2
	psql_c "DROP SCHEMA plain CASCADE"
	psql_c "CHECKPOINT"
done

python3 - "$results" "$SF" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, _, *v = line.split()
    rows.setdefault(name, []).append([float(x) for x in v])
med = {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
base = med["copy"][2]
label = {"calibra": "calibra dss build --sf %s" % sys.argv[2], "copy": "COPY of the .tbl files, 2 sessions, then the same indexes"}
print("| loader | MB on disk | seconds (median) | MB/s (median) | MB/s of each round | vs plain COPY |")
print("|---|---|---|---|---|---|")
for k in ["copy", "calibra"]:
    b, s, m = med[k]
    each = ", ".join("%.1f" % r[2] for r in rows[k])
    print("| %s | %.0f | %.1f | %.1f | %s | %.2fx |" % (label[k], b / 1e6, s, m, each, m / base))
PY
