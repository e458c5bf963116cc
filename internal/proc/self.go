package proc

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SelfCPU is the user plus system CPU time of the whole calibra process:
// the load generator's own cost, which a figure must not be bound by.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ThreadCPU is the CPU time (user + system) of the calling OS thread; a
// goroutine reads its own only while locked to its thread.
func ThreadCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// AdoptOrphans makes calibra the reaper of its descendants whose parent
// dies first (prctl PR_SET_CHILD_SUBREAPER), as a killed server's backends:
// they stay in calibra's tree, so their CPU is not taken for another
// load's and no process calibra started escapes to init. Adopted orphans
// are left as zombies until calibra exits: reaping them could take the
// exit status os/exec waits for.
func AdoptOrphans() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}
