#!/bin/sh
# A nightly regression check of the storage under test, from cron on the
# host that has it mounted: the same as nightly.yml without GitHub Actions.
#
#   0 2 * * *  /usr/local/bin/nightly.sh >> /var/log/calibra-nightly.log 2>&1
#
# calibra runs the quick study with its device and timed OLTP steps
# repeated three times and judges the run against the last three nights in
# the results store (docs/store.md, "Regression verdicts in CI"). Exit 0:
# no regression (or no verdict yet, the reason in the log); 3: a headline
# figure fell more than 5%, significantly, or a threshold failed; 1 or 2:
# calibra failed or was given bad input.
set -u
ARRAY=${ARRAY:-/mnt/array/calibra}
RUNS=${RUNS:-/var/lib/calibra-ci/runs}
OUT="$RUNS/$(date -u +%Y%m%dT%H%M%SZ)_nightly"

calibra run --preset quick --path "$ARRAY" --label nightly \
    --set device.repeat=3 --set oltp.repeat=3 \
    --store sqlite:/var/lib/calibra-ci/results.db --baseline last --baseline-runs 3 --max-regression 5 \
    --out "$OUT" --progress plain
code=$?
case $code in
0) echo "nightly: no regression; the report is $OUT/report.md" ;;
3) echo "nightly: REGRESSION (or a failed threshold): see $OUT/report.md" >&2 ;;
*) echo "nightly: calibra exited $code: see $OUT/logs/calibra.log" >&2 ;;
esac
exit $code
