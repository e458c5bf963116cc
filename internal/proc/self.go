package proc

import (
	"syscall"
	"time"
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
