#!/bin/sh
# Captures the fio JSON fixtures of parse_test.go with the fio on PATH.
# Run it from this directory; it writes scratch files under $DIR and the
# reports here. The golden files are then rewritten with
#   go test ./internal/device -run Parse -update
set -eu
DIR=${DIR:-/tmp/calibra-fixtures}
SHM=${SHM:-/dev/shm/calibra-fixtures}
mkdir -p "$DIR" "$SHM"
for job in *.fio; do
	name=${job%.fio}
	format=json+
	[ "$name" = randread-plain-json ] && format=json
	sed -e "s#@DIR@#$DIR#g" -e "s#@SHM@#$SHM#g" "$job" >"$DIR/$job"
	fio --output-format=$format --output="$name.json" "$DIR/$job" || true
done
rm -rf "$DIR" "$SHM"
