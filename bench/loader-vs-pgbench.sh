#!/bin/sh
# Measures calibra's TPC-C-like build against pgbench -i on one managed
# PostgreSQL server, in alternation: MB/s of each (the database's bytes on
# disk, tables with their indexes, over the wall time of the whole build:
# load, keys, vacuum), medians of the rounds, and the ratio to pgbench.
#
# Usage: bench/loader-vs-pgbench.sh [WAREHOUSES] [ROUNDS]
#   WAREHOUSES  calibra's build (default 20, about 2.1 GB); pgbench -i
#               gets the scale of about as many bytes (15.4 MB a scale)
#   ROUNDS      alternations (default 3)
#   LOAD_WORKERS (environment) calibra's --load-workers (default: its own)
#
# As root, on a machine with Debian's postgresql and pgbench: calibra's
# managed instance lives in a throwaway directory under /var/tmp. calibra
# starts and stops it for its builds; between them the script starts the
# same data directory with the settings calibra started it with (its
# postmaster.opts), on a socket of its own (no TCP), runs pgbench -i into
# a database of its own, drops it and stops the server. Everything is
# removed at the end, whatever happens.
set -eu
export PGOPTIONS="-c client_min_messages=warning"
WAREHOUSES=${1:-20}
ROUNDS=${2:-3}
cd "$(dirname "$0")/.."
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
DIR=$(mktemp -d /var/tmp/calibra-loader-bench.XXXXXX)
chmod 700 "$DIR"
mkdir -p "$DIR/path" "$DIR/runs" "$DIR/sock"
chmod 755 "$DIR" "$DIR/path"
chown postgres "$DIR/sock"
CALIBRA=$DIR/calibra
go build -o "$CALIBRA" ./cmd/calibra
DATA=$DIR/path/calibra-pg
as_pg() { runuser -u postgres -- "$@"; }
stop() {
	[ -f "$DATA/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1 || true
	"$CALIBRA" clean --path "$DIR/path" >/dev/null 2>&1 || true
	rm -rf "$DIR"
}
trap stop EXIT INT TERM

# start_managed starts calibra's data directory as calibra last started it,
# but on $DIR/sock; port is its port.
start_managed() {
	eval "set -- $(cat "$DATA/postmaster.opts")"
	shift
	opts=""
	for a in "$@"; do
		case "$a" in unix_socket_directories=*) a="unix_socket_directories=$DIR/sock" ;; esac
		opts="$opts '$a'"
	done
	as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$DIR/sock/server.log" -o "$opts" -w start >/dev/null
	port=$(sed -n 's/.*"port=\([0-9]*\)".*/\1/p' "$DATA/postmaster.opts")
}
psql_c() { psql -X -q -At -h "$DIR/sock" -p "$port" -U calibra -d "$1" -c "$2"; }

results="$DIR/results.txt"
: >"$results"
scale=0
for round in $(seq "$ROUNDS"); do
	out="$DIR/runs/calibra-$round"
	"$CALIBRA" oltp build --warehouses "$WAREHOUSES" --path "$DIR/path" --rebuild --progress none \
		${LOAD_WORKERS:+--load-workers "$LOAD_WORKERS"} --out "$out" >/dev/null 2>"$DIR/calibra.err" || { tail -5 "$DIR/calibra.err" >&2; exit 1; }
	python3 - "$out/results.json" "$round" >>"$results" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["steps"][-1]
print("calibra %s %d %.1f %.1f %.0f" % (sys.argv[2], s["db_bytes"], s["total_s"], s["mb_per_s"], s["observe"]["cpu_outside_pct"]))
PY
	tail -1 "$results" >&2
	if [ "$scale" = 0 ]; then
		scale=$(awk '{ s = int($3 / 15.4e6 + 0.5); print s < 1 ? 1 : s }' "$results")
	fi

	start_managed
	psql_c postgres "DROP DATABASE IF EXISTS pgbench"
	psql_c postgres "CREATE DATABASE pgbench"
	psql_c postgres "CHECKPOINT"
	t0=$(date +%s.%N)
	pgbench -i -q -s "$scale" -h "$DIR/sock" -p "$port" -U calibra pgbench >"$DIR/pgbench.log" 2>&1 || { tail -5 "$DIR/pgbench.log" >&2; exit 1; }
	t1=$(date +%s.%N)
	bytes=$(psql_c pgbench "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'")
	psql_c postgres "DROP DATABASE pgbench"
	as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null
	echo "pgbench $round $bytes $t0 $t1" | awk '{ s = $5 - $4; printf "pgbench %s %d %.1f %.1f -\n", $2, $3, s, $3 / 1e6 / s }' >>"$results"
	tail -1 "$results" >&2
done

python3 - "$results" "$WAREHOUSES" "$scale" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, _, b, secs, mbps, _ = line.split()
    rows.setdefault(name, []).append((float(b), float(secs), float(mbps)))
med = {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
base = med["pgbench"][2]
label = {"calibra": "calibra oltp build --warehouses %s" % sys.argv[2], "pgbench": "pgbench -i -s %s" % sys.argv[3]}
print("| loader | MB on disk | seconds (median) | MB/s (median) | MB/s of each round | vs pgbench -i |")
print("|---|---|---|---|---|---|")
for k in ["pgbench", "calibra"]:
    b, s, m = med[k]
    each = ", ".join("%.1f" % r[2] for r in rows[k])
    print("| %s | %.0f | %.1f | %.1f | %s | %.2fx |" % (label[k], b / 1e6, s, m, each, m / base))
PY
