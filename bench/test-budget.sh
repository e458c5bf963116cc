#!/bin/sh
# The test suite's time budget: which packages and tests the wait goes to.
#
# Usage: bench/test-budget.sh [-n N] [FILE]
#        bench/test-budget.sh --log [FILE]
#   FILE   go test's output (default: standard input): `go test -json`, or
#          the plain output, whose `ok  <pkg>  12.3s` lines give each
#          package's time (and, with -v, `--- PASS: Test (1.23s)` each
#          test's).
#   -n N   the N slowest packages only (default: every package).
#   --log  instead, pass `go test -json` through as a readable log: the
#          packages' closing lines (ok, FAIL, PASS...) and every package-
#          level line (build errors, a timeout's panic) as go test prints
#          them, and the whole output of each test that failed, or was
#          still running when its package ended (a timeout); a passing
#          test's is dropped.
#
# Without --log it prints each package's elapsed time, slowest first, and
# the five slowest top-level tests (from -json or -v output).
#
# What CI does (.ci/run):
#   go test -json ./... | tee test.json | bench/test-budget.sh --log
#   bench/test-budget.sh -n 5 test.json
set -eu
mode=budget
top=0
while [ $# -gt 0 ]; do
	case $1 in
	--log) mode=log; shift ;;
	-n) top=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "test-budget.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
done

exec awk -v mode="$mode" -v top="$top" '
# str is the string value of a field of a test2json event, unescaped.
function str(name,   s, out, i, c) {
	if (!match($0, "\"" name "\":\"([^\"\\\\]|\\\\.)*\""))
		return ""
	s = substr($0, RSTART + length(name) + 4, RLENGTH - length(name) - 5)
	out = ""
	while ((i = index(s, "\\")) > 0) {
		out = out substr(s, 1, i - 1)
		c = substr(s, i + 1, 1)
		if (c == "u") {
			c = tolower(substr(s, i + 2, 4))
			out = out (c == "003c" ? "<" : c == "003e" ? ">" : c == "0026" ? "&" : c == "001b" ? "" : "?")
			s = substr(s, i + 6)
			continue
		}
		out = out (c == "n" ? "\n" : c == "t" ? "\t" : c == "r" ? "" : c)
		s = substr(s, i + 2)
	}
	return out s
}
# unfinished prints the output of the tests of pkg (of all, "") that
# never passed or failed: those a timeout or a crash cut short.
function unfinished(pkg,   i, k) {
	for (i = 1; i <= n; i++) if (order[i] in buf) {
		split(order[i], k, SUBSEP)
		if (pkg != "" && k[1] != pkg) continue
		printf "--- (unfinished when %s ended) %s\n%s", k[1], k[2], buf[order[i]]
		delete buf[order[i]]
	}
}
function num(name) {
	return match($0, "\"" name "\":[0-9.eE+-]+") ? substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3) + 0 : -1
}

/^\{/ {
	action = str("Action"); pkg = str("Package"); test = str("Test")
	if (mode == "log") {
		if (action == "output" || action == "build-output") {
			if (test == "") printf "%s", str("Output")
			else { buf[pkg, test] = buf[pkg, test] str("Output"); if (!((pkg, test) in seen)) { seen[pkg, test]; order[++n] = pkg SUBSEP test } }
		} else if (test != "" && (action == "pass" || action == "skip")) {
			delete buf[pkg, test]
		} else if (test != "" && action == "fail") {
			printf "%s", buf[pkg, test]; delete buf[pkg, test]
		} else if (test == "" && (action == "fail" || action == "pass")) {
			unfinished(pkg)
		}
		fflush()
		next
	}
	if ((action == "pass" || action == "fail") && (e = num("Elapsed")) >= 0) {
		if (test == "") pkgs[pkg] = e " " action
		else if (test !~ /\//) tests[pkg " " test] = e
	}
	next
}
mode == "log" { print; fflush(); next }
# The plain output: "ok  \tpkg\t12.3s", "FAIL\tpkg\t1.2s", "--- PASS: TestX (1.23s)".
/^(ok|FAIL)[ \t]+[^ \t]+[ \t]+[0-9.]+s/ {
	e = $3; sub(/s$/, "", e); pkgs[$2] = e " " ($1 == "ok" ? "pass" : "fail"); last = $2
	for (t in pend) { tests[$2 " " t] = pend[t]; delete pend[t] }
	next
}
/^--- (PASS|FAIL): [^\/ ]+ \([0-9.]+s\)/ {
	e = $4; gsub(/[()s]/, "", e); pend[$3] = e
}
END {
	if (mode == "log") {
		unfinished("")
		exit
	}
	sorter = "sort -k1,1gr"
	if (top > 0) sorter = sorter " | head -n " top
	print "packages, slowest first (elapsed s):"
	for (p in pkgs) { split(pkgs[p], v, " "); printf "%9.1f  %-4s  %s\n", v[1], v[2] == "pass" ? "ok" : "FAIL", p | sorter }
	close(sorter)
	print "the five slowest tests (elapsed s):"
	sorter = "sort -k1,1gr | head -n 5"
	for (t in tests) printf "%9.1f  %s\n", tests[t], t | sorter
	close(sorter)
}' "$@"
