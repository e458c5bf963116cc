package runner

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/study"
)

// The memory cgroup bounds the page cache, not the server: MariaDB's own
// memory beyond its buffer pool must fit, or the kernel kills it mid-step.
func TestIOCalMemoryLimitLeavesRoomForTheEngine(t *testing.T) {
	limit := func(engine string) int64 {
		c := &Config{Target: study.Target{Path: t.TempDir(), Engine: engine, DBCache: "256MB"}, Progress: "none"}
		needs, _, err := PlanIOCal(c, IOCal{Jobs: "1,4", Tests: "random", OSCacheLimit: IOCalOSCacheLimit, Point: 1e9, MaxLatency: 1e7, Loaders: 1, ReadsPerCall: 256})
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		return needs.Limits.Spec.MemoryBytes
	}
	pg, my := limit("postgresql"), limit("mariadb")
	if my-pg != mariadb.ServerMemory {
		t.Fatalf("memory limit: postgresql %d, mariadb %d: want mariadb's to leave %d more for the server", pg, my, mariadb.ServerMemory)
	}
}
