package mariadb

import (
	"os/exec"
	"strings"
)

// Galera 4 asks a joiner behind the cluster for a state transfer request
// even when the donor will send only an incremental one (IST, TLS like
// the group traffic); wsrep_sst_method=skip would make the donor send
// nothing, and the joiner then waits for ever. calibra's own method,
// calibra, is the script below, which each node finds first on its PATH
// (its private socket directory): the joiner's side opens no listener,
// it only waits for the donor to say where the IST starts; the donor's
// side says so by a file in the joiner's data directory (the nodes run
// as one account) and refuses any full transfer, which the joiner then
// fails on. Full copies are calibra's own, made while the nodes are
// stopped (galera_seed.go).
const (
	sstMethod     = "calibra"
	sstScriptName = "wsrep_sst_" + sstMethod
	// sstFile is where the donor leaves the joiner the position its IST
	// starts after.
	sstFile = "calibra-sst-position"
)

const sstScript = `#!/bin/sh
# calibra's Galera state transfer: IST only, no listener (see galera_sst.go).
role= addr= datadir= gtid= bypass=0 parent=
while [ $# -gt 0 ]; do
	case "$1" in
	--role) role=$2; shift ;;
	--address) addr=$2; shift ;;
	--datadir) datadir=$2; shift ;;
	--gtid) gtid=$2; shift ;;
	--parent) parent=$2; shift ;;
	--bypass) bypass=1 ;;
	--mysqld-args) break ;;
	esac
	shift
done
f=` + sstFile + `
case "$role" in
joiner)
	datadir=${datadir%/}
	rm -f "$datadir/$f"
	echo "ready $datadir"
	while [ ! -s "$datadir/$f" ]; do
		if [ -n "$parent" ] && ! kill -0 "$parent" 2>/dev/null; then exit 32; fi
		sleep 0.1
	done
	cat "$datadir/$f"
	rm -f "$datadir/$f"
	;;
donor)
	if [ "$bypass" != 1 ]; then
		echo "calibra's Galera nodes take no full state transfer: calibra copies a node's data itself while the cluster is stopped" >&2
		exit 95
	fi
	case "$addr" in
	/*/calibra-mariadb-galera-[0-9]*) ;;
	*) echo "not a calibra Galera node: $addr" >&2; exit 22 ;;
	esac
	printf '%s\n' "$gtid" > "$addr/$f.tmp" && mv -f "$addr/$f.tmp" "$addr/$f"
	echo "done $gtid"
	;;
*) exit 22 ;;
esac
`

// sstPath puts the node's socket directory, which holds the script,
// first on the server's PATH.
func (in *Instance) sstPath(cmd *exec.Cmd) {
	for i, e := range cmd.Env {
		if rest, ok := strings.CutPrefix(e, "PATH="); ok {
			cmd.Env[i] = "PATH=" + in.SocketDir + ":" + rest
		}
	}
}
