#!/bin/sh
# Measures calibra's TPC-C-like driver against go-tpc on one PostgreSQL
# server, in alternation: NOPM (from the database), driver CPU per
# transaction and per New-Order (from the kernel's accounting), medians of
# the rounds, and the ratios to go-tpc.
#
# Usage: bench/driver-vs-go-tpc.sh GO_TPC_BINARY [SECONDS] [ROUNDS]
#   GO_TPC_BINARY  go-tpc built from its source (github.com/pingcap/go-tpc,
#                  which the Go module proxy does not serve):
#                  git clone https://github.com/pingcap/go-tpc && cd go-tpc &&
#                  go build -o /tmp/go-tpc ./cmd/go-tpc
#   SECONDS        each timed run (default 60); ROUNDS alternations (default 3)
#   DRIVERS        (environment) the drivers to alternate, a subset of
#                  "procedures client client-simple go-tpc" (the default);
#                  the ratios need go-tpc among them
#
# As root, on a machine with Debian's postgresql: it starts a throwaway
# server of its own (PostgreSQL 15, 4 warehouses in memory, TCP on
# 127.0.0.1 only, trust for its bench role on loopback so no password is
# written anywhere; go-tpc has no other way in), runs calibra (procedures,
# client and client-simple modes) and go-tpc with 8 users each, and stops
# and removes the server at the end, whatever happens.
set -eu
GOTPC=${1:?usage: $0 GO_TPC_BINARY [SECONDS] [ROUNDS]}
SECS=${2:-60}
ROUNDS=${3:-3}
USERS=8
WAREHOUSES=4
cd "$(dirname "$0")/.."
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | head -1)
# calibra's binary and run directories: root's, as calibra wants its --out
# (the server's directory belongs to postgres).
OUT=$(mktemp -d)
CALIBRA=$OUT/calibra
go build -o "$CALIBRA" ./cmd/calibra
DIR=$(mktemp -d /var/tmp/calibra-bench.XXXXXX)
chown postgres "$DIR"
PORT=$((20000 + $$ % 10000))
as_pg() { runuser -u postgres -- "$@"; }
stop() { as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$DIR" "$OUT"; }
trap stop EXIT INT TERM

as_pg "$PGBIN/initdb" -D "$DIR/data" -U postgres --auth-local=peer --auth-host=reject >/dev/null
cat >>"$DIR/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
shared_buffers = 2GB
max_connections = 100
CONF
printf 'host all bench 127.0.0.1/32 trust\n' >"$DIR/data/pg_hba.conf.bench"
cat "$DIR/data/pg_hba.conf.bench" "$DIR/data/pg_hba.conf" >"$DIR/data/pg_hba.conf.new"
mv "$DIR/data/pg_hba.conf.new" "$DIR/data/pg_hba.conf"
chown postgres "$DIR/data/pg_hba.conf"
as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w start >/dev/null
psql_pg() { as_pg psql -X -q -h "$DIR" -p "$PORT" -U postgres -d "$1" -Atc "$2"; }
psql_pg postgres "CREATE ROLE bench LOGIN SUPERUSER"
psql_pg postgres "CREATE DATABASE calibra OWNER bench"
psql_pg postgres "CREATE DATABASE gotpc OWNER bench"

DSN="postgres://bench@127.0.0.1:$PORT/calibra?sslmode=disable"
echo "building $WAREHOUSES warehouses for calibra and for go-tpc" >&2
"$CALIBRA" oltp build --dsn "$DSN" --warehouses $WAREHOUSES --progress none --out "$OUT/build" >"$OUT/build.log" 2>&1 || { tail -5 "$OUT/build.log" >&2; exit 1; }
"$GOTPC" tpcc --driver postgres --conn-params sslmode=disable -H 127.0.0.1 -P "$PORT" -U bench -D gotpc --warehouses $WAREHOUSES -T 4 prepare >"$DIR/gotpc-prepare.log" 2>&1 || { head -30 "$DIR/gotpc-prepare.log" >&2; exit 1; }

# counters DB: the sum of d_next_o_id in go-tpc's district table and the
# database's commits plus rollbacks (calibra reads its own).
counters() {
	psql_pg "$1" "SELECT (SELECT sum(d_next_o_id) FROM district), xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '$1'"
}

results="$DIR/results.txt"
: >"$results"
for round in $(seq "$ROUNDS"); do
	for driver in ${DRIVERS:-procedures client client-simple go-tpc}; do
		if [ "$driver" = go-tpc ]; then
			before=$(counters gotpc)
			/usr/bin/time -f '%U %S' -o "$DIR/cpu" "$GOTPC" tpcc --driver postgres --conn-params sslmode=disable -H 127.0.0.1 -P "$PORT" -U bench -D gotpc \
				--warehouses $WAREHOUSES -T $USERS --time "${SECS}s" run >"$DIR/gotpc-run.log" 2>&1
			sleep 2 # the server publishes the last sessions' statistics within a second
			after=$(counters gotpc)
			cpu=$(awk '{print $1 + $2}' "$DIR/cpu")
			# Transactions as go-tpc counts them (its summary lines, errors
			# aside): the server's count holds more than one commit for some.
			txns=$(awk '/^\[Summary\]/ && !/_ERR/ { for (i = 1; i <= NF; i++) if ($i == "Count:") { sub(",", "", $(i+1)); n += $(i+1) } } END { print n + 0 }' "$DIR/gotpc-run.log")
			echo "$before $after $cpu $SECS $txns" | awk -v r="$round" '{
				split($1, b, "|"); split($2, a, "|"); no = a[1] - b[1]
				printf "go-tpc %d %.0f %.1f %.1f\n", r, no * 60 / $4, $3 * 1e6 / $5, $3 * 1e6 / no }' >>"$results"
		else
			out="$OUT/calibra-$driver-$round"
			"$CALIBRA" oltp run --dsn "$DSN" --users $USERS --rampup 10s --duration "${SECS}s" --mode "$driver" \
				--progress none --out "$out" >"$out.log" 2>&1 || { tail -5 "$out.log" >&2; exit 1; }
			python3 - "$out/results.json" "$driver" "$round" >>"$results" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o = r["steps"][-1]
no = o["transactions"]["new_order"]["count"] - o["transactions"]["new_order"]["rollbacks"]
d = o["driver"]
print("calibra-%s %s %.0f %.1f %.1f" % (sys.argv[2], sys.argv[3], o["nopm"], d["cpu_us_per_txn"], d["cpu_s"] * 1e6 / no))
PY
		fi
		tail -1 "$results" >&2
	done
done

python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, _, nopm, per_txn, per_no = line.split()
    rows.setdefault(name, []).append((float(nopm), float(per_txn), float(per_no)))
med = {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
base = med.get("go-tpc")
print("| driver | NOPM (median) | driver CPU per transaction | per New-Order | NOPM vs go-tpc | CPU per New-Order vs go-tpc |")
print("|---|---|---|---|---|---|")
for k in ["go-tpc", "calibra-client-simple", "calibra-client", "calibra-procedures"]:
    if k not in med:
        continue
    n, t, o = med[k]
    ratios = "%.2fx | %.2fx" % (n / base[0], o / base[2]) if base else "- | -"
    print("| %s | %s | %.0f µs | %.0f µs | %s |" % (k, format(round(n), ","), t, o, ratios))
PY
