#!/bin/sh
# Measures calibra's driver alone: each mode against the null server
# (internal/oltp/nullserver, a PostgreSQL that answers every statement at
# once with canned results) on a Unix socket, so every CPU second calibra
# spends is its own. Prints, per mode, the medians of the rounds: driver
# transactions a second per core (1 s / CPU per transaction), CPU µs per
# transaction, and the transactions a second reached.
#
# Usage: bench/driver-null.sh [SECONDS] [ROUNDS]
#   SECONDS  each timed run (default 10); ROUNDS (default 3)
#   MODES    (environment) the modes, default "procedures client"; a
#            mode followed by @goroutines (client@goroutines) runs with
#            --driver goroutines, a goroutine a user
#   USERS    (environment) the users, default 8
#   THREADS  (environment) polling threads to alternate in each mode on
#            the polling driver, such as "1 2" (default: calibra's)
#   FLAGS    (environment) more flags for calibra oltp run
#   METRICS  (environment) a loopback HOST:PORT: each run is paired in its
#            round with one exporting --metrics-listen METRICS, scraped
#            every second as Prometheus would (label MODE+metrics; which
#            of the two runs first alternates by round)
#   TERMINALS (environment) when set, e.g. 100000, runs instead that many
#            spec-timed terminals (--keying-thinking 1) on CONNECTIONS
#            pooled connections (default 32) against a null server of
#            TERMINALS/10 warehouses, with a ramp-up of RAMPUP (default
#            30s, a mean cycle and more), and prints their driver CPU a
#            transaction, heap a terminal and start lateness
#
# Needs nothing installed: the null server is built from this tree and
# listens in a temporary directory, removed at the end.
set -eu
SECS=${1:-10}
ROUNDS=${2:-3}
USERS=${USERS:-8}
cd "$(dirname "$0")/.."
DIR=$(mktemp -d /tmp/calibra-null.XXXXXX)
go build -o "$DIR/calibra" ./cmd/calibra
go build -o "$DIR/nullpg" ./internal/oltp/nullserver/nullpg
mkdir "$DIR/sock"
WAREHOUSES=4
if [ -n "${TERMINALS:-}" ]; then
	WAREHOUSES=$(((TERMINALS + 9) / 10))
fi
"$DIR/nullpg" -dir "$DIR/sock" -warehouses "$WAREHOUSES" >/dev/null &
SERVER=$!
stop() { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; rm -rf "$DIR"; }
trap stop EXIT INT TERM
sleep 0.5
DSN="host=$DIR/sock port=5432 user=calibra dbname=calibra sslmode=disable"

results="$DIR/results.txt"
: >"$results"
# run MODE LABEL [FLAGS...]: one timed run, its figures appended to results.
run() {
	mode=$1 label=$2
	shift 2
	out="$DIR/run-$label-$round"
	# shellcheck disable=SC2086 # FLAGS is a list of flags
	"$DIR/calibra" oltp run --dsn "$DSN" --users "$USERS" --rampup 2s --duration "${SECS}s" --mode "$mode" \
		--progress none --out "$out" "$@" ${FLAGS:-} >"$out.log" 2>&1 || { tail -5 "$out.log" >&2; exit 1; }
	python3 - "$out/results.json" "$label" "$round" >>"$results" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["steps"][-1]
d = o["driver"]
print("%s %s %s %.2f %.0f %s" % (sys.argv[2], sys.argv[3], d.get("model", "?"), d["cpu_us_per_txn"], o["tpm_client"] / 60, d.get("threads", 0)))
PY
	tail -1 "$results" >&2
}

# scraped MODE LABEL [FLAGS...]: run with --metrics-listen METRICS while
# curl scrapes it every second.
scraped() {
	(while :; do curl -s -o /dev/null "http://$METRICS/metrics" || true; sleep 1; done) &
	scraper=$!
	run "$@" --metrics-listen "$METRICS"
	kill "$scraper"
	wait "$scraper" 2>/dev/null || true
}

if [ -n "${TERMINALS:-}" ]; then
	for round in $(seq "$ROUNDS"); do
		out="$DIR/terminals-$round"
		# shellcheck disable=SC2086 # FLAGS is a list of flags
		"$DIR/calibra" oltp run --dsn "$DSN" --users "$TERMINALS" --keying-thinking 1 --connections "${CONNECTIONS:-32}" \
			--rampup "${RAMPUP:-30s}" --duration "${SECS}s" --progress none --out "$out" ${FLAGS:-} >"$out.log" 2>&1 || { tail -5 "$out.log" >&2; exit 1; }
		python3 - "$out/results.json" >>"$results" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["steps"][-1]
d, lag = o["driver"], o["driver"]["start_lag_ms"]
print("%.2f %.0f %.3f %.3f %.3f %.3f %s %s" % (d["cpu_us_per_txn"], o["tpm_client"] / 60, d["mem_per_user_kb"], lag["p50"], lag["p99"], lag["max"], d["model"], d.get("threads", 0)))
PY
		tail -1 "$results" >&2
	done
	python3 - "$results" "$TERMINALS" "${CONNECTIONS:-32}" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
med = [statistics.median(float(r[i]) for r in rows) for i in range(6)]
print("| terminals | connections | driver | CPU per transaction | transactions a second | heap a terminal | start lateness p50 | p99 | max |")
print("|---|---|---|---|---|---|---|---|---|")
print("| %s | %s | %s, %s thread(s) | %.1f µs | %s | %.2f KB | %.3f ms | %.3f ms | %.1f ms |" % (
    format(int(sys.argv[2]), ","), sys.argv[3], rows[0][6], rows[0][7], med[0], format(round(med[1]), ","), med[2], med[3], med[4], med[5]))
print("rounds (µs, tps, KB, p50, p99, max ms):", "; ".join(" ".join(r[:6]) for r in rows))
PY
	exit 0
fi

for round in $(seq "$ROUNDS"); do
	for mode in ${MODES:-procedures client}; do
		case $mode in
		*@goroutines) run "${mode%@goroutines}" "${mode%@goroutines}-goroutines" --driver goroutines ;;
		*)
			for k in ${THREADS:-0}; do
				label=$mode
				[ -z "${THREADS:-}" ] || label="$mode-k$k"
				base=$label # run sets label
				if [ -z "${METRICS:-}" ]; then
					run "$mode" "$base" --driver-threads "$k"
				elif [ $((round % 2)) -eq 1 ]; then
					run "$mode" "$base" --driver-threads "$k"
					scraped "$mode" "$base+metrics" --driver-threads "$k"
				else
					scraped "$mode" "$base+metrics" --driver-threads "$k"
					run "$mode" "$base" --driver-threads "$k"
				fi
			done
			;;
		esac
	done
done

python3 - "$results" <<'PY'
import statistics, sys
rows, models = {}, {}
for line in open(sys.argv[1]):
    mode, _, model, us, tps, threads = line.split()
    rows.setdefault(mode, []).append((float(us), float(tps)))
    models[mode] = "polling, %s thread%s" % (threads, "s" if threads != "1" else "") if model == "polling" else model
print("| mode | driver | transactions a second per core | CPU per transaction | transactions a second |")
print("|---|---|---|---|---|")
for mode, v in rows.items():
    us, tps = (statistics.median(c) for c in zip(*v))
    print("| %s | %s | %s | %.1f µs | %s |" % (mode, models[mode], format(round(1e6 / us), ","), us, format(round(tps), ",")))
print("rounds (µs a transaction):", "; ".join("%s %s" % (mode, " ".join("%.1f" % u for u, _ in v)) for mode, v in rows.items()))
PY
