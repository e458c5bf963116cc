#!/bin/sh
# Measures the README's test command as a newcomer or a contributor meets
# it, and records the figure in docs/test-times.md, so the README's and
# CONTRIBUTING's times come from a measurement, not from a hand.
#
# Usage: bench/test-times.sh [--fresh] [--busy] [--record FILE]
#   --fresh   as on a new machine: a fresh clone of HEAD in a new
#             directory, an empty Go build cache (GOCACHE), no image
#             store (the image test's, /var/cache/calibra-image/test-*,
#             is removed: it is a cache, rebuilt by the test), no cache
#             of the tests' data directories (calibra-test-inits-UID in
#             the temporary directory) and no managed instance under
#             /var/tmp/calibra; then the README's
#             main job line first, timed and recorded too, as a newcomer
#             runs it before the tests (setup's packages must be installed
#             already). Without it, the same fresh clone with this
#             machine's caches: a contributor's run.
#   --busy    beside a busy loop on one core, as on a shared machine.
#   --record FILE  where the row goes (default docs/test-times.md); "-"
#             prints it only.
#
# It runs the command verbatim, read from README.md (the line that starts
# with "sh .ci/setup &&" and runs go test), with -json added after
# "go test" for bench/test-budget.sh, and prints the five slowest
# packages. Run it on an otherwise idle machine: other work counts in.
set -eu
cd "$(dirname "$0")/.."
fresh=""
busy=""
record=docs/test-times.md
while [ $# -gt 0 ]; do
	case $1 in
	--fresh) fresh=1; shift ;;
	--busy) busy=1; shift ;;
	--record) record=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "test-times.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

line=$(grep -m1 '^sh \.ci/setup && .*go test ' README.md) || {
	echo "test-times.sh: README.md has no test command (a line starting 'sh .ci/setup && ... go test')" >&2
	exit 1
}
main=$(grep -m1 '^sh \.ci/setup && .*go run ' README.md) || {
	echo "test-times.sh: README.md has no main job (a line starting 'sh .ci/setup && ... go run')" >&2
	exit 1
}
tree=$(git rev-parse --short HEAD)
work=$(mktemp -d /var/tmp/calibra-test-times-XXXXXX)
clone=$work/calibra
git clone -q "$(pwd)" "$clone"
git -C "$clone" checkout -q --detach "$tree"
json=$work/test.json
conditions="a fresh clone"
machine_cache=$(go env GOCACHE)
if [ -n "$fresh" ]; then
	export GOCACHE="$work/gocache"
	rm -rf /var/cache/calibra-image/test-* "${TMPDIR:-/tmp}"/calibra-test-inits-*
	conditions="a new machine: a fresh clone, an empty Go cache, no image store, no cached data directories"
fi
loop=""
if [ -n "$busy" ]; then
	sh -c 'while :; do :; done' &
	loop=$!
	conditions="$conditions, beside a busy loop"
	trap 'kill "$loop" 2>/dev/null || true' EXIT
fi

# row CONDITIONS SECONDS RESULT SLOWEST: one line of docs/test-times.md.
row() {
	r="| $(date -u +%Y-%m-%d) | $tree | $1 | $(($2 / 60)) min $(($2 % 60)) s | $3 | $4 |"
	echo "$r"
	[ "$record" = "-" ] || echo "$r" >>"$record"
}

if [ -n "$fresh" ]; then
	# No managed instance, as on a new machine (cleaned with this
	# machine's cache, not the empty one the newcomer starts with).
	[ ! -d /var/tmp/calibra ] || (cd "$clone" && GOCACHE=$machine_cache go run ./cmd/calibra clean --path /var/tmp/calibra >/dev/null)
	start=$(date +%s)
	mstatus=0
	(cd "$clone" && sh -c "$main") >"$work/main.log" 2>&1 || mstatus=$?
	result=green
	[ "$mstatus" -eq 0 ] || result="red (exit $mstatus)"
	row "the main job's line on $conditions" "$(($(date +%s) - start))" "$result" "-"
fi

start=$(date +%s)
status=0
(cd "$clone" && sh -c "$(printf '%s' "$line" | sed 's/go test /go test -json /')") >"$json" 2>"$work/stderr" || status=$?
end=$(date +%s)
[ -z "$loop" ] || kill "$loop" 2>/dev/null || true

result=green
[ "$status" -eq 0 ] || result="red (exit $status)"
slowest=$(sh bench/test-budget.sh -n 1 "$json" | sed -n 2p | awk '{printf "%s %.0f s", $3, $1}' | sed 's|github.com/calibra-bench/calibra/internal/||')
sh bench/test-budget.sh -n 5 "$json"
[ -z "$fresh" ] || conditions="$conditions, after the main job's line"
row "the test line on $conditions" "$((end - start))" "$result" "$slowest"
echo "go test's events: $json" >&2
exit "$status"
