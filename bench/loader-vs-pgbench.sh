#!/bin/bash
# Measures calibra's TPC-C-like build against pgbench -i on one managed
# PostgreSQL server, in alternation: MB/s of each (the database's bytes on
# disk, tables with their indexes, over the wall time of the whole build:
# load, keys, vacuum), medians of the rounds, the ratio to pgbench, and the
# CPU each spent a GB: the server's (the postmaster and every backend and
# worker, from /proc) and the loader process's own. A third loader in each
# round is the floor: the server alone doing calibra's build from files,
# with no client at all (see floor_setup), so that what calibra costs beyond
# the server's own work shows, and what no client could gain.
#
# Usage: bench/loader-vs-pgbench.sh [WAREHOUSES] [ROUNDS]
#   WAREHOUSES  calibra's build (default 20, about 2.1 GB); pgbench -i
#               gets the scale of about as many bytes (15.4 MB a scale)
#   ROUNDS      alternations (default 3)
#   LOAD_WORKERS (environment) calibra's --load-workers (default: its own)
#   FLOOR=0     (environment) leaves the floor out
#   PGBIN       (environment) the server's binaries and its pgbench
#               (default: Debian's newest PostgreSQL)
#
# As root, on a machine with Debian's postgresql and pgbench: calibra's
# managed instance lives in a throwaway directory under /var/tmp. calibra
# makes it (a 1-warehouse build, not timed); the script then starts it with
# the settings calibra starts it with (its postmaster.opts) on a socket of
# its own (no TCP), and both loaders build on that one server: calibra with
# --dsn, pgbench -i into a database of its own. calibra's server CPU also
# holds its consistency check after the build (its time does not); the
# script measures one check apart and prints it. Everything is removed at
# the end, whatever happens.
set -eu
export PGOPTIONS="-c client_min_messages=warning"
WAREHOUSES=${1:-20}
ROUNDS=${2:-3}
cd "$(dirname "$0")/.."
. bench/managed-pg.sh
managed_pg loader dump
psql_c() { psql -X -q -At -h "$DIR/sock" -p "$port" -U calibra -d "$1" -c "$2"; }

# server_cpu prints the CPU seconds of the postmaster, its ended children
# (counted into it when it reaps them) and its live ones.
server_cpu() {
	python3 - "$postmaster" <<'PY'
import os, sys
def stat(pid):
    return open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
pm = sys.argv[1]
s = stat(pm)
ticks = sum(int(x) for x in s[11:15])
for p in os.listdir("/proc"):
    try:
        f = stat(p) if p.isdigit() else None
    except OSError:
        continue
    if f and f[1] == pm:
        ticks += int(f[11]) + int(f[12])
print(ticks / os.sysconf("SC_CLK_TCK"))
PY
}

# Each result line: loader round bytes seconds MB/s server-CPU-s loader-CPU-s
results="$DIR/results.txt"
: >"$results"

# floor_setup keeps calibra's first build as files, in the format its
# loader sends each table in (oltppg's binaryTables), and makes a schema
# "floor" of the same tables with the two sessions' scripts: each table in
# one transaction (TRUNCATE, COPY ... FREEZE from its file), then its
# indexes as calibra made them (from pg_indexes, no parallel workers) and
# VACUUM (FREEZE, ANALYZE). The tables are split between the sessions by
# hand, stock and customer on one, order_line (its key the costliest
# index) and the small tables on the other; calibra's scheduler hands out
# tables and indexes as connections free up, so it may balance better than
# this split (by up to some 4% here). What the floor leaves out is calibra
# itself: making the rows and sending them.
floor_setup() {
	psql_c calibra "DROP SCHEMA IF EXISTS floor CASCADE; CREATE SCHEMA floor"
	: >"$DIR/floor-a.sql"
	: >"$DIR/floor-b.sql"
	for t in stock customer item warehouse district order_line history orders new_order; do
		case $t in order_line | orders | history | new_order | customer) format=binary ;; *) format=text ;; esac
		psql_c calibra "COPY calibra_tpcc.$t TO '$DIR/dump/$t' WITH (FORMAT $format); CREATE TABLE floor.$t (LIKE calibra_tpcc.$t)"
		session=$DIR/floor-a.sql
		case $t in order_line | history | orders | new_order) session=$DIR/floor-b.sql ;; esac
		{
			echo "BEGIN; TRUNCATE floor.$t; COPY floor.$t FROM '$DIR/dump/$t' WITH (FORMAT $format, FREEZE); COMMIT;"
			echo "SET max_parallel_maintenance_workers = 0;"
			psql_c calibra "SELECT replace(indexdef, ' ON calibra_tpcc.', ' ON floor.') || ';' FROM pg_indexes WHERE schemaname = 'calibra_tpcc' AND tablename = '$t'"
			echo "VACUUM (FREEZE, ANALYZE) floor.$t;"
		} >>"$session"
	done
}

# floor_round runs the two sessions side by side on tables without
# indexes, timed from the first statement to the last session's end.
floor_round() {
	psql_c calibra "SELECT 'DROP INDEX floor.' || indexname || ';' FROM pg_indexes WHERE schemaname = 'floor'" | psql -X -q -h "$DIR/sock" -p "$port" -U calibra -d calibra
	psql_c postgres "CHECKPOINT"
	c0=$(server_cpu)
	t0=$(date +%s.%N)
	psql -X -q -v ON_ERROR_STOP=1 -h "$DIR/sock" -p "$port" -U calibra -d calibra -f "$DIR/floor-a.sql" >"$DIR/floor-a.log" 2>&1 &
	a=$!
	psql -X -q -v ON_ERROR_STOP=1 -h "$DIR/sock" -p "$port" -U calibra -d calibra -f "$DIR/floor-b.sql" >"$DIR/floor-b.log" 2>&1 || { cat "$DIR/floor-b.log" >&2; exit 1; }
	wait "$a" || { cat "$DIR/floor-a.log" >&2; exit 1; }
	t1=$(date +%s.%N)
	c1=$(server_cpu)
	bytes=$(psql_c calibra "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'floor' AND c.relkind = 'r'")
	echo "floor $1 $bytes $t0 $t1 $c0 $c1" |
		awk '{ s = $5 - $4; printf "floor %s %d %.1f %.1f %.1f 0\n", $2, $3, s, $3 / 1e6 / s, $7 - $6 }' >>"$results"
	tail -1 "$results" >&2
	psql_c postgres "CHECKPOINT"
}

scale=0
for round in $(seq "$ROUNDS"); do
	out="$DIR/runs/calibra-$round"
	c0=$(server_cpu)
	/usr/bin/time -f "%U %S" -o "$DIR/time" "$CALIBRA" oltp build --dsn "$DSN" --warehouses "$WAREHOUSES" --rebuild --progress none \
		${LOAD_WORKERS:+--load-workers "$LOAD_WORKERS"} --out "$out" >/dev/null 2>"$DIR/calibra.err" || { tail -5 "$DIR/calibra.err" >&2; exit 1; }
	c1=$(server_cpu)
	python3 - "$out/results.json" "$round" "$c0" "$c1" "$DIR/time" >>"$results" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["steps"][-1]
u, sy = open(sys.argv[5]).read().split()[-2:]
print("calibra %s %d %.1f %.1f %.1f %.1f" % (sys.argv[2], s["db_bytes"], s["total_s"], s["mb_per_s"], float(sys.argv[4]) - float(sys.argv[3]), float(u) + float(sy)))
PY
	tail -1 "$results" >&2
	if [ "$scale" = 0 ]; then
		scale=$(awk '{ s = int($3 / 15.4e6 + 0.5); print s < 1 ? 1 : s }' "$results")
	fi

	psql_c postgres "DROP DATABASE IF EXISTS pgbench"
	psql_c postgres "CREATE DATABASE pgbench"
	psql_c postgres "CHECKPOINT"
	c0=$(server_cpu)
	t0=$(date +%s.%N)
	/usr/bin/time -f "%U %S" -o "$DIR/time" "$PGBIN/pgbench" -i -q -s "$scale" -h "$DIR/sock" -p "$port" -U calibra pgbench >"$DIR/pgbench.log" 2>&1 || { tail -5 "$DIR/pgbench.log" >&2; exit 1; }
	t1=$(date +%s.%N)
	c1=$(server_cpu)
	bytes=$(psql_c pgbench "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'")
	echo "pgbench $round $bytes $t0 $t1 $c0 $c1 $(cat "$DIR/time")" |
		awk '{ s = $5 - $4; printf "pgbench %s %d %.1f %.1f %.1f %.1f\n", $2, $3, s, $3 / 1e6 / s, $7 - $6, $8 + $9 }' >>"$results"
	tail -1 "$results" >&2
	psql_c postgres "CHECKPOINT"
	if [ "${FLOOR:-1}" != 0 ]; then
		[ "$round" = 1 ] && floor_setup
		floor_round "$round"
	fi
done
c0=$(server_cpu)
"$CALIBRA" oltp check --dsn "$DSN" --progress none --out "$DIR/runs/check" >/dev/null 2>&1
c1=$(server_cpu)
check=$(echo "$c0 $c1" | awk '{ printf "%.1f", $2 - $1 }')

python3 - "$results" "$WAREHOUSES" "$scale" "$check" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, _, *v = line.split()
    rows.setdefault(name, []).append([float(x) for x in v])
med = {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
base = med["pgbench"][2]
label = {"calibra": "calibra oltp build --warehouses %s" % sys.argv[2], "pgbench": "pgbench -i -s %s" % sys.argv[3],
         "floor": "the floor: the server alone, calibra's tables from files on 2 sessions"}
print("| loader | MB on disk | seconds (median) | MB/s (median) | MB/s of each round | vs pgbench -i | server CPU s/GB | loader CPU s/GB |")
print("|---|---|---|---|---|---|---|---|")
for k in [k for k in ["pgbench", "calibra", "floor"] if k in med]:
    b, s, m, srv, cl = med[k]
    each = ", ".join("%.1f" % r[2] for r in rows[k])
    loader = "%.2f" % (cl / (b / 1e9)) if k != "floor" else "none"
    print("| %s | %.0f | %.1f | %.1f | %s | %.2fx | %.2f | %s |" % (label[k], b / 1e6, s, m, each, m / base, srv / (b / 1e9), loader))
print("\ncalibra's server CPU holds its consistency check after the build: %s s for one check measured apart." % sys.argv[4])
PY
