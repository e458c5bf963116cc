package oltp

import (
	"runtime"
	"testing"
)

// The users are split over the polling threads in contiguous spans that
// cover every user once, differ in size by one at most, and are never
// more than the users.
func TestShardUsers(t *testing.T) {
	for _, c := range []struct{ n, asked, want int }{{8, 2, 2}, {7, 3, 3}, {2, 8, 2}, {1, 0, 1}, {100, 16, 16}, {8, 0, 1}} {
		k := driverThreads(c.asked, c.n)
		if k != c.want {
			t.Errorf("driverThreads(%d, %d) = %d, want %d", c.asked, c.n, k, c.want)
		}
		sh := shardUsers(c.n, k)
		next, small, big := 0, c.n, 0
		for _, s := range sh {
			if s.lo != next || s.hi <= s.lo {
				t.Fatalf("%d users over %d: spans %v", c.n, k, sh)
			}
			next = s.hi
			small, big = min(small, s.hi-s.lo), max(big, s.hi-s.lo)
		}
		if next != c.n || big-small > 1 {
			t.Errorf("%d users over %d: spans %v", c.n, k, sh)
		}
	}
	for users, want := range map[int]int{1: 1, 64: 1, 65: min(2, runtime.GOMAXPROCS(0)), 1000: min(16, runtime.GOMAXPROCS(0))} {
		if got := driverThreads(0, users); got != want {
			t.Errorf("the default for %d users is %d threads, want %d (one for 64 users, at most GOMAXPROCS)", users, got, want)
		}
	}
}
