package oltp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateServer is one server's gates for several partitions' sessions: a
// shut gate holds its passers until opened.
type gateServer struct {
	mu      sync.Mutex
	shut    map[string]chan struct{}
	waiting map[string]int
}

func newGateServer() *gateServer {
	return &gateServer{shut: map[string]chan struct{}{}, waiting: map[string]int{}}
}

// gateSession is one partition's control session on the server,
// counting its polls at each gate.
type gateSession struct {
	Control
	s     *gateServer
	polls map[string]int64
}

func (g *gateSession) ShutGate(_ context.Context, gate string) error {
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	g.s.shut[gate] = make(chan struct{})
	return nil
}

func (g *gateSession) AtGate(_ context.Context, gate string) (int, error) {
	g.polls[gate]++
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	return g.s.waiting[gate], nil
}

func (g *gateSession) OpenGate(_ context.Context, gate string) error {
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	close(g.s.shut[gate])
	delete(g.s.shut, gate)
	return nil
}

func (g *gateSession) PassGate(ctx context.Context, gate string) (int64, error) {
	g.s.mu.Lock()
	ch := g.s.shut[gate]
	g.s.waiting[gate]++
	g.s.mu.Unlock()
	defer func() {
		g.s.mu.Lock()
		g.s.waiting[gate]--
		g.s.mu.Unlock()
	}()
	if ch == nil {
		return 0, nil
	}
	select {
	case <-ch:
		return 0, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (g *gateSession) GateXacts() int64 { return 1 }

// The counter partition reads the counters at each edge only once every
// other partition waits there, and the others go on only after it read
// them; the counter partition's calls inside the window are counted.
func TestGatesHoldThePartitionsUntilTheCountersAreRead(t *testing.T) {
	srv := newGateServer()
	var mu sync.Mutex
	var order []string
	logf := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	start := time.Now().Add(time.Hour)
	const n = 3
	gs := make([]*gates, n)
	sess := make([]*gateSession, n)
	for i := range n {
		sess[i] = &gateSession{s: srv, polls: map[string]int64{}}
		g, why := newGates(sess[i], RunConfig{Partition: Partition{Index: i + 1, Of: n}, StartAt: start})
		if g == nil || why != "" {
			t.Fatalf("partition %d: no gates (%s)", i+1, why)
		}
		gs[i] = g
	}
	if err := gs[0].shut(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, edge := range []string{"start", "end"} {
		var wg sync.WaitGroup
		for i := n - 1; i >= 0; i-- {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i > 0 {
					time.Sleep(time.Duration(i) * 20 * time.Millisecond) // late, one after the other
				}
				err := gs[i].hold(context.Background(), edge, func() error {
					if i == 0 {
						srv.mu.Lock()
						logf(fmt.Sprintf("read with %d waiting", srv.waiting[gs[0].name(edge)]))
						srv.mu.Unlock()
					} else {
						logf("passed")
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if strings.Join(order, " ") != "read with 2 waiting passed passed" {
			t.Errorf("%s: %v, want the counters read before any other partition went on", edge, order)
		}
		order = nil
	}
	for i, g := range gs {
		if len(g.notes) > 0 {
			t.Errorf("partition %d: %q", i+1, g.notes)
		}
	}
	// Inside the window: the start gate's opening and the polls at the end.
	if got, want := gs[0].own(), 1+sess[0].polls[gs[0].name("end")]; got != want || want < 2 {
		t.Errorf("own %d, want %d: the start's opening and the end's polls", got, want)
	}
}

// A partition that never comes is noted, and the others go on.
func TestGatesGoOnWithoutAMissingPartition(t *testing.T) {
	srv := newGateServer()
	start := time.Now().Add(time.Hour)
	mk := func(i int) *gates {
		g, _ := newGates(&gateSession{s: srv, polls: map[string]int64{}}, RunConfig{Partition: Partition{Index: i, Of: 3}, StartAt: start})
		g.wait = 50 * time.Millisecond
		return g
	}
	first, second := mk(1), mk(2)
	second.wait = time.Minute // let through by the first's opening
	if err := first.shut(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- second.hold(context.Background(), "start", func() error { return nil }) }()
	read := false
	if err := first.hold(context.Background(), "start", func() error { read = true; return nil }); err != nil || !read {
		t.Fatalf("the counter partition: %v, read %v", err, read)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(first.notes) != 1 || !strings.Contains(first.notes[0], "1 of the 2 other partitions reached the window start") || len(second.notes) > 0 {
		t.Errorf("notes: %q and %q", first.notes, second.notes)
	}
	// A run not split, or split without --start-at, has no gates.
	for _, cfg := range []RunConfig{{}, {Partition: Partition{Index: 1, Of: 2}}} {
		if g, why := newGates(&gateSession{s: srv, polls: map[string]int64{}}, cfg); g != nil || why != "" {
			t.Errorf("%+v: gates %v (%s)", cfg.Partition, g, why)
		}
	}
}
