#!/bin/bash
# Measures calibra's TPC-C-like build against pgbench -i on one managed
# PostgreSQL server, in alternation: MB/s of each (the database's bytes on
# disk, tables with their indexes, over the wall time of the whole build:
# load, keys, vacuum), medians of the rounds, the ratio to pgbench, and the
# CPU each spent a GB: the server's (the postmaster and every backend and
# worker, from /proc) and the loader process's own. Then, for the ceiling,
# the server's CPU a GB for a server-side COPY ... FREEZE from a file (no
# client, no index) of each of calibra's tables and of pgbench_accounts.
#
# Usage: bench/loader-vs-pgbench.sh [WAREHOUSES] [ROUNDS]
#   WAREHOUSES  calibra's build (default 20, about 2.1 GB); pgbench -i
#               gets the scale of about as many bytes (15.4 MB a scale)
#   ROUNDS      alternations (default 3)
#   LOAD_WORKERS (environment) calibra's --load-workers (default: its own)
#   CEILING=0   (environment) skips the ceiling table, which takes about
#               as long as the rounds, to fit the rounds in a shorter window
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
	/usr/bin/time -f "%U %S" -o "$DIR/time" pgbench -i -q -s "$scale" -h "$DIR/sock" -p "$port" -U calibra pgbench >"$DIR/pgbench.log" 2>&1 || { tail -5 "$DIR/pgbench.log" >&2; exit 1; }
	t1=$(date +%s.%N)
	c1=$(server_cpu)
	bytes=$(psql_c pgbench "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'")
	echo "pgbench $round $bytes $t0 $t1 $c0 $c1 $(cat "$DIR/time")" |
		awk '{ s = $5 - $4; printf "pgbench %s %d %.1f %.1f %.1f %.1f\n", $2, $3, s, $3 / 1e6 / s, $7 - $6, $8 + $9 }' >>"$results"
	tail -1 "$results" >&2
	psql_c postgres "CHECKPOINT"
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
label = {"calibra": "calibra oltp build --warehouses %s" % sys.argv[2], "pgbench": "pgbench -i -s %s" % sys.argv[3]}
print("| loader | MB on disk | seconds (median) | MB/s (median) | MB/s of each round | vs pgbench -i | server CPU s/GB | loader CPU s/GB |")
print("|---|---|---|---|---|---|---|---|")
for k in ["pgbench", "calibra"]:
    b, s, m, srv, cl = med[k]
    each = ", ".join("%.1f" % r[2] for r in rows[k])
    print("| %s | %.0f | %.1f | %.1f | %s | %.2fx | %.2f | %.2f |" % (label[k], b / 1e6, s, m, each, m / base, srv / (b / 1e9), cl / (b / 1e9)))
print("\ncalibra's server CPU holds its consistency check after the build: %s s for one check measured apart." % sys.argv[4])
PY

[ "${CEILING:-1}" = 0 ] && exit 0

# The ceiling: server CPU a GB of heap for COPY ... FREEZE from a file into
# a table of the same columns and no index, in the transaction that
# truncates it, each table in COPY's text and binary formats.
q() {
	echo "$1;" >&"${SQL[1]}"
	echo '\echo @@' >&"${SQL[1]}"
	out=""
	while read -r line <&"${SQL[0]}"; do
		[ "$line" = @@ ] && break
		out="$out$line"
	done
}
# backend_cpu prints the CPU seconds of the ceiling's server backend.
backend_cpu() {
	python3 -c 'import os, sys; f = open("/proc/%s/stat" % sys.argv[1]).read().rsplit(")", 1)[1].split(); print((int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"))' "$backend"
}
echo
echo "| server-side COPY FREEZE from a file, no index | heap MB | format | server CPU s | CPU s/GB of heap |"
echo "|---|---|---|---|---|"
for db in calibra pgbench; do
	coproc SQL { psql -X -q -At -h "$DIR/sock" -p "$port" -U calibra -d "$db" 2>&1; }
	q "SET search_path = calibra_tpcc, public"
	q "SELECT pg_backend_pid()"
	backend=$out
	tables="stock order_line customer history orders new_order item"
	[ "$db" = pgbench ] && tables=pgbench_accounts
	for t in $tables; do
		for format in text binary; do
			f="$DIR/dump/$t.$format"
			q "COPY $t TO '$f' WITH (FORMAT $format); CREATE TABLE ceiling_$t (LIKE $t); CHECKPOINT"
			c0=$(backend_cpu)
			q "BEGIN; TRUNCATE ceiling_$t; COPY ceiling_$t FROM '$f' WITH (FORMAT $format, FREEZE); COMMIT"
			c1=$(backend_cpu)
			q "SELECT pg_relation_size('ceiling_$t')"
			echo "$t $out $format $c0 $c1" | awk '{ printf "| %s | %.0f | %s | %.2f | %.2f |\n", $1, $2 / 1e6, $3, $5 - $4, ($5 - $4) / ($2 / 1e9) }'
			q "DROP TABLE ceiling_$t"
			rm -f "$f"
		done
	done
	echo '\q' >&"${SQL[1]}"
	wait "$SQL_PID" 2>/dev/null || true
done
