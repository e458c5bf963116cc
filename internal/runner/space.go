package runner

import (
	"cmp"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
)

// spaceNeed is the free space command needs on its storage, and what
// needs it as a sentence on free space names it: needs.Bytes (or the
// build it makes first, when no managed data lies there yet) for each
// managed server it starts (a cluster's nodes, instances, standbys on the
// same storage), each with its data and its engine's log and system files
// at the cache asked.
func spaceNeed(command string, c *Config, needs Needs) (uint64, string) {
	managed := needs.Database && c.DSN == ""
	if !managed {
		return needs.Bytes, command
	}
	servers := max(c.Instances, 1) * engine.Servers(c.Engine, c.Options)
	if c.ReplicaPath == "" {
		servers += c.Replicas
	}
	if servers > 1 {
		command = fmt.Sprintf("%s on %d servers", command, servers)
	}
	need, what := needs.Bytes, command
	if b := needs.Build; b != nil && !managedDataUnder(c) {
		need, what = max(need, b.Bytes), b.sentence(command)
	}
	return uint64(servers) * (need - min(need, minFree) + serverDisk(c)), what
}

// serverDisk is what a managed server takes beyond its data, as its
// engine says at the cache asked; minFree when it says nothing.
func serverDisk(c *Config) uint64 {
	d, _ := engine.Lookup(c.Engine)
	if d.ServerDisk == nil {
		return minFree
	}
	cache, err := engine.ParseCache(c.Engine, cmp.Or(c.DBCache, d.Cache.Default))
	if err != nil {
		return minFree // refused with the rest of the input
	}
	return d.ServerDisk(cache)
}

// checkLabSpace refuses, before a lab is built, one whose file system is
// too small for what command needs on it, or whose platter the storage
// under --path has no room for.
func checkLabSpace(command string, c *Config, needs Needs, parts lab.Parts) error {
	need, what := spaceNeed(command, c, needs)
	if usable := parts.Usable(); need > usable {
		return fault.Input(fmt.Sprintf("give the lab a larger size= in --lab (size=%s or more)%s", humanSize(need*100/92+1), cacheFix(c)),
			"the lab %s holds about %s for the database, and %s needs about %s", parts.Spec, humanBytes(usable), what, humanBytes(need))
	}
	return checkFree(c.Path, parts.HostBytes(c.Path), "the lab "+parts.Spec)
}

// cacheFix is the fix of a smaller --db-cache, where the engine's log
// grows with its cache.
func cacheFix(c *Config) string {
	if d, _ := engine.Lookup(c.Engine); d.ServerDisk != nil {
		return ", or a smaller --db-cache (its log grows with it)"
	}
	return ""
}

// humanSize is b rounded up to whole MiB or GiB, as size= takes it.
func humanSize(b uint64) string {
	if b > 4<<30 {
		return fmt.Sprintf("%dG", (b+1<<30-1)>>30)
	}
	return fmt.Sprintf("%dM", (b+1<<20-1)>>20)
}

// fullDiskWords are how the kernel and the servers say that a file
// system is full (a redo log's fallocate that fails says "Can't change
// size of file", with a garbled error code, or "Cannot set log file";
// mariadb-install-db's first words, "preallocating ... failed with error
// 28", ENOSPC).
var fullDiskWords = []string{"no space left on device", "disk full", "disk under the database is full", "errcode: 28",
	"can't change size of file", "cannot set log file", "failed with error 28"}

// fullDisk names the full file system under path, what command needed on
// it and the fix, in front of err, when err says a file system is full.
func fullDisk(err error, path, command string, c *Config, needs Needs) error {
	if err == nil || !saysFull(err) {
		return err
	}
	var fs unix.Statfs_t
	if unix.Statfs(path, &fs) != nil {
		return err
	}
	free, size := fs.Bavail*uint64(fs.Bsize), fs.Blocks*uint64(fs.Bsize)
	need, what := spaceNeed(command, c, needs)
	fix := "free space on it or choose a --path with more room" + cacheFix(c)
	if needs.Storage != nil && needs.Storage.Lab != nil {
		fix = "give the lab a larger size= in --lab" + cacheFix(c)
		if need > size {
			fix = fmt.Sprintf("give the lab a larger size= in --lab (size=%s or more)%s", humanSize(need*100/92+1), cacheFix(c))
		}
	}
	// A run-time failure (exit 1) whatever err was: the run had started.
	return fmt.Errorf("the file system of %s ran out of space (%s of %s free as the run ended), and %s needs about %s (%v); %s",
		path, humanBytes(free), humanBytes(size), what, humanBytes(need), err, fix)
}

// saysFull reports whether err says a file system is full.
func saysFull(err error) bool {
	s := strings.ToLower(err.Error())
	for _, w := range fullDiskWords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
