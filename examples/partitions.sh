#!/bin/sh
# Load from many processes, on one host: N calibra processes drive one
# existing server together (calibra oltp run --partition i/N) from a shared
# start, then calibra merge combines their run directories into one. On many
# hosts, run the same command on each with its own i (see
# examples/k8s/oltp-partitions-job.yaml for Kubernetes).
#
#   sh examples/partitions.sh DSN_FILE [N] [USERS] [DURATION]
#
# DSN_FILE holds the server's DSN (mode 0600, password inside: never on a
# command line). This example only targets the loopback: a DSN naming any
# other host is refused. Build the schema first:
#   calibra oltp build --dsn-file DSN_FILE --warehouses 4
set -eu
dsn_file=${1:?usage: partitions.sh DSN_FILE [N] [USERS] [DURATION]}
n=${2:-3}
users=${3:-12}
duration=${4:-1m}
rampup=${RAMPUP:-10s}
calibra=${CALIBRA:-calibra}

# Loopback only: 127.0.0.1, ::1, localhost, or a Unix socket (no host).
case $(cat "$dsn_file") in
  *@127.0.0.1[:/]*|*@localhost[:/]*|*@\[::1\][:/]*|*@/*|*host=/*) ;;
  *) echo "partitions.sh: $dsn_file names a server beyond this host's loopback; this example drives only 127.0.0.1, ::1 or a Unix socket" >&2; exit 2 ;;
esac

out=${OUT:-calibra-runs/partitions-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
# Every process must have connected its users before the start.
start_at=$(date -u -d '+10 seconds' +%Y-%m-%dT%H:%M:%SZ)

pids=""
i=1
while [ "$i" -le "$n" ]; do
  "$calibra" oltp run --dsn-file "$dsn_file" --users "$users" --rampup "$rampup" --duration "$duration" \
    --partition "$i/$n" --start-at "$start_at" --progress none --out "$out/part-$i" &
  pids="$pids $!"
  i=$((i + 1))
done
status=0
for pid in $pids; do
  wait "$pid" || status=1
done
if [ "$status" -ne 0 ]; then
  echo "partitions.sh: a partition failed; its run directory under $out says why" >&2
  exit 1
fi

dirs=""
i=1
while [ "$i" -le "$n" ]; do dirs="$dirs $out/part-$i"; i=$((i + 1)); done
# shellcheck disable=SC2086 # the directories split on purpose
"$calibra" merge $dirs --out "$out/merged"
