package store

import (
	"context"
	"testing"
)

// A trend follows a target: the host and the storage path, else the
// device, else the host alone.
func TestTrendPointTarget(t *testing.T) {
	for _, c := range []struct {
		p    TrendPoint
		want string
	}{
		{TrendPoint{Host: "vm", Storage: "/mnt/array", Device: "/dev/sdb"}, "vm:/mnt/array"},
		{TrendPoint{Host: "vm", Device: "/dev/sdb"}, "vm:/dev/sdb"},
		{TrendPoint{Host: "vm"}, "vm"},
	} {
		if got := c.p.Target(); got != c.want {
			t.Errorf("%+v: target %q, want %q", c.p, got, c.want)
		}
	}
}

// RunDir finds a recorded run's directory by id, and says when there is
// no such run; FigureNames counts each figure's values, repeats included.
func TestServeQueries(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	dir := copyRun(t, t.TempDir(), "repeats-a")
	id, err := s.Record(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, found, err := s.RunDir(ctx, id); err != nil || !found || got != dir {
		t.Errorf("RunDir(%s) = %q, %v, %v; want %s", id, got, found, err, dir)
	}
	if _, found, err := s.RunDir(ctx, "nosuchrun"); err != nil || found {
		t.Errorf("RunDir of no run: found %v, %v", found, err)
	}
	figs, err := s.FigureNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var nopm *FigureName
	for i := range figs {
		if figs[i].Name() == "oltp.nopm" {
			nopm = &figs[i]
		}
	}
	if nopm == nil || nopm.Values != 5 || nopm.Better != "higher" {
		t.Errorf("oltp.nopm among the figures: %+v, want 5 values, higher is better", nopm)
	}
}
