package oltp

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
)

// The partitions of a run drive every user of it exactly once, each on a
// home warehouse of its own share, so that warehouses are never shared.
func TestPartitionsSplitTheUsersByHomeWarehouse(t *testing.T) {
	cases := []struct{ users, warehouses, of int }{
		{6, 3, 3}, {10, 5, 2}, {96, 10, 4}, {7, 7, 7}, {3, 1, 1}, {100, 40, 3},
	}
	for _, c := range cases {
		var all []int
		homes := map[int]int{} // warehouse: partition
		for i := 1; i <= c.of; i++ {
			p := Partition{Index: i, Of: c.of}
			got := p.Users(c.users, c.warehouses)
			if len(got) == 0 {
				t.Errorf("%+v: partition %s drives no user", c, p)
			}
			for _, g := range got {
				w := g%c.warehouses + 1
				if o, ok := homes[w]; ok && o != i {
					t.Errorf("%+v: warehouse %d is home to users of partitions %d and %d", c, w, o, i)
				}
				homes[w] = i
			}
			n := 0
			for w, o := range homes {
				if o == i && (w-1)%c.of != i-1 {
					t.Errorf("%+v: warehouse %d is not partition %s's by the rule", c, w, p)
				}
				if o == i {
					n++
				}
			}
			if n > p.Warehouses(c.warehouses) {
				t.Errorf("%+v: %s's users live on %d warehouses, its share is %d", c, p, n, p.Warehouses(c.warehouses))
			}
			all = append(all, got...)
		}
		slices.Sort(all)
		want := Partition{}.Users(c.users, c.warehouses)
		if !slices.Equal(all, want) || len(want) != c.users {
			t.Errorf("%+v: the partitions drive users %v, the whole run %v", c, all, want)
		}
	}
}

func TestParsePartition(t *testing.T) {
	for in, want := range map[string]Partition{"1/1": {1, 1}, "2/3": {2, 3}, " 3 / 3 ": {3, 3}} {
		if got, err := ParsePartition(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{"0/3": "not one of N", "4/3": "not one of N", "1/0": "not one of N", "-1/2": "not one of N",
		"3": "not i/N", "a/b": "not i/N", "": "not i/N"}
	for in, want := range bad {
		_, err := ParsePartition(in)
		if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want an input error saying %q", in, err, want)
		}
	}
}

func TestCheckPartitionRefusesAShareWithoutUsersOrWarehouses(t *testing.T) {
	if err := CheckPartition(Partition{2, 3}, 3, 3); err != nil {
		t.Errorf("3 users on 3 warehouses in 3 partitions: %v", err)
	}
	if err := CheckPartition(Partition{}, 1, 1); err != nil {
		t.Errorf("the whole run: %v", err)
	}
	for _, c := range []struct {
		users, warehouses int
		want              string
	}{{6, 2, "only 2 warehouses"}, {2, 3, "without a user of the 2"}} {
		err := CheckPartition(Partition{1, 3}, c.users, c.warehouses)
		if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	good := map[string]time.Time{
		"2026-03-02T14:05:00Z":      now.Add(5 * time.Minute),
		"2026-03-02T15:05:00+01:00": now.Add(5 * time.Minute),
		"1772460300":                now.Add(5 * time.Minute),
		"1772460000.5":              now.Add(500 * time.Millisecond),
	}
	for in, want := range good {
		if got, err := ParseStartAt(in, now); err != nil || !got.Equal(want) {
			t.Errorf("%q: %s, %v; want %s", in, got, err, want)
		}
	}
	bad := map[string]string{"2026-03-02T13:59:00Z": "already past", "2026-03-02T14:00:00Z": "already past",
		"2026-03-04T14:00:00Z": "away", "tomorrow": "not a time", "-5": "not a time"}
	for in, want := range bad {
		_, err := ParseStartAt(in, now)
		if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want an input error saying %q", in, err, want)
		}
	}
}
