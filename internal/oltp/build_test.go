package oltp

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
	"github.com/calibra-bench/calibra/internal/progress"
)

// recordLoader keeps the batches Load is given, in order.
type recordLoader struct{ got []Batch }

func (r *recordLoader) Load(_ context.Context, batches []Batch, _ func([]byte, Batch) []byte) error {
	r.got = batches
	return nil
}
func (r *recordLoader) Format(tpcc.Table) tpcc.Format { return tpcc.Text }
func (r *recordLoader) Finish(context.Context, func(string)) (LoadTail, error) {
	return LoadTail{}, nil
}
func (r *recordLoader) Close() {}

// The loaders get each table whole, biggest first, and its batches in
// their own order, which is the primary key's: the rows land in key order
// and the key's index build sorts presorted input.
func TestLoadOrdersTablesBiggestFirstBatchesInKeyOrder(t *testing.T) {
	gen := tpcc.NewGenerator(1, 3, time.Unix(0, 0), tpcc.LoadConstants(tpcc.NewRand(1, 0xC0)))
	var ld recordLoader
	rows := map[string]int64{}
	if err := load(context.Background(), &ld, gen, rows, progress.New(io.Discard, progress.None, false)); err != nil {
		t.Fatal(err)
	}
	var order []tpcc.Table
	next := map[tpcc.Table]int{}
	for _, b := range ld.got {
		if len(order) == 0 || order[len(order)-1] != b.Table {
			if _, seen := next[b.Table]; seen {
				t.Fatalf("%s's batches are split by another table's", b.Table)
			}
			order = append(order, b.Table)
		}
		if b.N != next[b.Table] {
			t.Fatalf("%s: batch %d where %d was due", b.Table, b.N, next[b.Table])
		}
		next[b.Table]++
	}
	for _, tb := range tpcc.Tables() {
		if next[tb] != gen.Batches(tb) {
			t.Errorf("%s: %d batches loaded of %d", tb, next[tb], gen.Batches(tb))
		}
	}
	if order[0] != tpcc.Stock || order[1] != tpcc.OrderLine || order[2] != tpcc.Customer {
		t.Errorf("tables loaded in the order %v; want stock, order_line, customer first (the biggest)", order)
	}
	if rows["order_line"] < 3*10*3000*5 {
		t.Errorf("order_line counts %d rows; want at least 5 a order", rows["order_line"])
	}
}

// A signal ends a build's load while it is still planning the batches,
// which for a large --warehouses is a long loop of its own: the loaders
// are never handed a batch.
func TestLoadStopsWhenItsContextEnds(t *testing.T) {
	gen := tpcc.NewGenerator(1, 2000, time.Unix(0, 0), tpcc.LoadConstants(tpcc.NewRand(1, 0xC0)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ld recordLoader
	err := load(ctx, &ld, gen, map[string]int64{}, progress.New(io.Discard, progress.None, false))
	if err != context.Canceled {
		t.Errorf("load with its context ended: %v, want context.Canceled", err)
	}
	if ld.got != nil {
		t.Errorf("the loaders were handed %d batches after the context ended", len(ld.got))
	}
}
