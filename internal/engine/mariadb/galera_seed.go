package mariadb

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/proc"
)

// calibra's nodes take no full state transfer (SST) over the network.
// Galera's rsync SST makes the joining node run an rsync daemon on
// loopback that anyone there can write to (no authentication, not read
// only), and the joiner names the method, so a donor pushes the whole
// database to whoever asks. Since calibra makes every node on this
// machine, it copies the data itself: with every node stopped, it copies
// the bootstrapping node's data directory (and redo log) into a joiner's
// as the server account, so that the joiner shares the cluster's history
// and catches up by IST alone (TLS, like the group traffic). A joiner of
// another history or none (a new cluster's) is copied before the start;
// one whose IST cannot be had (the donor's write-set cache no longer
// holds its gap, as after a power cut) fails to join, and is copied and
// started again, once a joiner. A joiner that fails for another reason,
// or cannot recover its position, is never copied over: its failure, in
// its own words, is the start's.

// firstStart gives a new cluster its history: the node that bootstraps,
// initialised if need be, starts once alone and stops, so that its
// grastate.dat holds the cluster's UUID and position for the others'
// copies. It reports whether the node was initialised.
func (c *Cluster) firstStart(ctx context.Context, group *proc.Group, boot int) (bool, error) {
	if readGrastate(c.nodes[boot].Managed).exists {
		return false, nil
	}
	in := c.nodes[boot].Managed
	in.newCluster = true
	init, err := c.nodes[boot].Start(ctx, group)
	in.newCluster = false
	if err != nil {
		return init, fmt.Errorf("the Galera node %d of %d did not bootstrap the cluster: %w", boot+1, len(c.nodes), err)
	}
	return init, in.Halt()
}

// seedJoiners copies the bootstrapping node into every other node that
// does not share its history (see the comment atop this file). Every
// node is stopped.
func (c *Cluster) seedJoiners(ctx context.Context, group *proc.Group, boot int) error {
	b := readGrastate(c.nodes[boot].Managed)
	for i, t := range c.nodes {
		if i == boot {
			continue
		}
		j := readGrastate(t.Managed)
		if j.exists && t.Managed.Exists() && j.uuid == b.uuid {
			if j.seqno >= 0 {
				continue
			}
			// Killed: its position is in InnoDB, for the IST to start from.
			// A node that cannot even recover it is broken, and says so:
			// a copy over it would hide what the kill did.
			seqno, err := t.Managed.recoverPosition(ctx, group)
			if err != nil {
				return fmt.Errorf("the Galera node %d: recover its last position: %w", i+1, err)
			}
			if seqno >= 0 {
				if err := rewriteGrastate(t.Managed, seqno, false); err != nil {
					return err
				}
				continue
			}
		}
		if err := c.seedNode(ctx, group, boot, i); err != nil {
			return err
		}
	}
	return nil
}

// seedNode copies node from into node to (seed) and records it.
func (c *Cluster) seedNode(ctx context.Context, group *proc.Group, from, to int) error {
	if err := c.seed(ctx, group, c.nodes[from].Managed, c.nodes[to].Managed); err != nil {
		return fmt.Errorf("copy the Galera node %d into node %d: %w", from+1, to+1, err)
	}
	c.rejoined[to] = fmt.Sprintf("copy of node %d", from+1)
	return nil
}

// seedExcluded are a node's own files, never copied: its view of the
// group (its own UUID inside), its write-set cache, its pid file.
var seedExcluded = []string{"/gvwstate.dat", "/galera.cache", "/mariadbd.pid", "/" + sstFile}

// seed makes to's data directory (and redo log) a copy of from's, by
// rsync between local directories run as the server account, and marks
// the copy a joiner that must not bootstrap.
func (c *Cluster) seed(ctx context.Context, group *proc.Group, from, to *Instance) error {
	pairs := [][2]string{{from.DataDir, to.DataDir}}
	if from.RedoDir() != from.DataDir || to.RedoDir() != to.DataDir {
		pairs = append(pairs, [2]string{from.RedoDir(), to.RedoDir()})
	}
	for _, p := range pairs {
		if _, err := to.Account.Mkdir(filepath.Dir(p[1]), filepath.Base(p[1])); err != nil {
			return err
		}
		// -I: every file, not only those whose size or time (to the
		// second) differ: a joiner's grastate.dat, zeroed when its state
		// transfer began, has the size of the donor's and often its second.
		args := []string{"-a", "-I", "--delete"}
		if p[0] == from.DataDir {
			for _, x := range seedExcluded {
				args = append(args, "--exclude="+x)
			}
		} else {
			args = append(args, "--include=/ib_logfile*", "--exclude=*")
		}
		cmd := c.rsync.Command(append(args, p[0]+"/", p[1]+"/")...)
		if out, err := to.Account.Run(ctx, group, "rsync", cmd); err != nil {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(out))
		}
	}
	if err := rewriteGrastate(to, -1, false); err != nil {
		return err
	}
	return to.mark()
}

// rewriteGrastate sets a node's safe_to_bootstrap, and its seqno when
// seqno is not negative.
func rewriteGrastate(in *Instance, seqno int64, safe bool) error {
	b, err := server.ReadSmall(in.grastateFile())
	if err != nil {
		return err
	}
	flag := "safe_to_bootstrap: 0"
	if safe {
		flag = "safe_to_bootstrap: 1"
	}
	b = safeRE.ReplaceAll(b, []byte(flag))
	if seqno >= 0 {
		b = seqnoRE.ReplaceAll(b, []byte("seqno:   "+strconv.FormatInt(seqno, 10)))
	}
	return writePrivate(in, in.grastateFile(), b, 0o600)
}
