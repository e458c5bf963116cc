package oltp

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
)

// Partition is one process's share of a run split over several
// (oltp run --partition i/N, Index from 1): the users whose home warehouse
// w has (w-1) mod N = Index-1. The warehouses' users are so disjoint
// between partitions, and the union of the N partitions is exactly the
// users of the same run in one process: the same terminals, decks and
// draws, since each user is seeded by its index in the whole run. The zero
// Partition is the whole run.
type Partition struct{ Index, Of int }

// ParsePartition reads "i/N".
func ParsePartition(s string) (Partition, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Partition{}, fault.Input("write it as i/N, such as 1/3 for the first of three processes", "--partition %q is not i/N", s)
	case n < 1 || i < 1 || i > n:
		return Partition{}, fault.Input("give an i from 1 to N, such as 2/3 (JOB_COMPLETION_INDEX counts from 0: add 1)", "--partition %s is not one of N from 1 to N", s)
	}
	return Partition{Index: i, Of: n}, nil
}

// Whole says the run is not split.
func (p Partition) Whole() bool { return p.Of == 0 }

// Counters says this process reads the database's counters at the window
// edges: the whole run, or the first partition (as HammerDB's primary).
func (p Partition) Counters() bool { return p.Whole() || p.Index == 1 }

func (p Partition) String() string { return fmt.Sprintf("%d/%d", p.Index, p.Of) }

// home says whether warehouse w (from 1) is this partition's.
func (p Partition) home(w int) bool { return p.Whole() || (w-1)%p.Of == p.Index-1 }

// Users gives the indices, in the whole run of total users over
// warehouses, of the users this partition drives (user g's home warehouse
// is g mod warehouses + 1).
func (p Partition) Users(total, warehouses int) []int {
	var out []int
	for g := range total {
		if p.home(g%warehouses + 1) {
			out = append(out, g)
		}
	}
	return out
}

// Warehouses counts the home warehouses of this partition.
func (p Partition) Warehouses(warehouses int) int {
	n := 0
	for w := 1; w <= warehouses; w++ {
		if p.home(w) {
			n++
		}
	}
	return n
}

// CheckPartition refuses a split that leaves a partition without a
// warehouse or a user of its own.
func CheckPartition(p Partition, users, warehouses int) error {
	switch {
	case p.Whole():
		return nil
	case warehouses < p.Of:
		return fault.Input(fmt.Sprintf("use at most %d partitions, or build %d warehouses or more", warehouses, p.Of),
			"--partition %s splits the users by home warehouse, and there are only %d warehouses", p, warehouses)
	case users < p.Of:
		return fault.Input(fmt.Sprintf("give --users %d or more (--users counts the whole run's users)", p.Of),
			"--partition %s leaves some partitions without a user of the %d", p, users)
	}
	return nil
}

// MaxStartAhead bounds --start-at: a start a day away is a typo, not a plan.
const MaxStartAhead = 24 * time.Hour

// ParseStartAt reads --start-at: an RFC 3339 time or Unix seconds, which
// must lie ahead of now and within MaxStartAhead.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		sec, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if perr != nil || sec <= 0 {
			return time.Time{}, fault.Input("give an RFC 3339 time such as 2026-03-02T14:05:00Z, or Unix seconds", "--start-at %q is not a time", s)
		}
		t = time.Unix(0, int64(sec*1e9))
	}
	switch {
	case !t.After(now):
		return time.Time{}, fault.Input("give a later instant, such as a minute from now (date -u -d +1min +%FT%TZ)",
			"--start-at %s is already past (now %s)", t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case t.Sub(now) > MaxStartAhead:
		return time.Time{}, fault.Input("give an instant within a day", "--start-at %s is %s away", t.UTC().Format(time.RFC3339), t.Sub(now).Round(time.Minute))
	}
	return t.UTC(), nil
}
