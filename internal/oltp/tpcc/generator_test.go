package tpcc

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/golden"
)

var testLoadTime = time.Date(2024, 1, 2, 3, 4, 5, 678901000, time.UTC)

// testGenerator is a two-warehouse database, so that batch-to-warehouse
// mappings beyond the first are exercised.
func testGenerator(seed uint64) *Generator {
	return NewGenerator(seed, 2, testLoadTime, Constants{CLast: 157, CID: 259, OLIID: 7911})
}

// rows splits COPY text into rows of columns.
func rows(t *testing.T, data []byte) [][]string {
	t.Helper()
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("COPY text does not end with a newline")
	}
	var out [][]string
	for line := range strings.SplitSeq(string(data[:len(data)-1]), "\n") {
		out = append(out, strings.Split(line, "\t"))
	}
	return out
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTables(t *testing.T) {
	want := []string{"item", "warehouse", "district", "customer", "history", "orders", "new_order", "order_line", "stock"}
	ncols := []int{5, 9, 11, 21, 8, 8, 3, 10, 17}
	for i, tb := range Tables() {
		if tb.String() != want[i] || len(tb.Columns()) != ncols[i] {
			t.Errorf("table %d is %s with %d columns, want %s with %d", i, tb, len(tb.Columns()), want[i], ncols[i])
		}
	}
	if cols := Stock.Columns(); cols[3] != "s_dist_01" || cols[12] != "s_dist_10" {
		t.Errorf("stock columns %v", cols)
	}
	Item.Columns()[0] = "changed"
	if Item.Columns()[0] != "i_id" {
		t.Error("Columns returns shared storage")
	}
}

func TestBatches(t *testing.T) {
	g := testGenerator(1)
	want := map[Table]int{Item: 10, Warehouse: 2, District: 2, Customer: 20, History: 20, Orders: 20,
		NewOrder: 20, OrderLine: 20, Stock: 20}
	for tb, n := range want {
		if got := g.Batches(tb); got != n {
			t.Errorf("Batches(%s) = %d, want %d", tb, got, n)
		}
	}
}

// TestEveryBatch generates the whole two-warehouse database and checks the
// shape of every row and the population's cardinalities.
func TestEveryBatch(t *testing.T) {
	g := testGenerator(1)
	var buf []byte
	for _, tb := range Tables() {
		total := 0
		ncols := len(tb.Columns())
		for b := range g.Batches(tb) {
			buf = g.AppendBatch(buf[:0], tb, b)
			rs := rows(t, buf)
			if len(rs) != g.Rows(tb, b) {
				t.Errorf("%s batch %d: %d rows, Rows says %d", tb, b, len(rs), g.Rows(tb, b))
			}
			for i, r := range rs {
				if len(r) != ncols {
					t.Fatalf("%s batch %d row %d has %d columns, want %d: %q", tb, b, i, len(r), ncols, r)
				}
			}
			total += len(rs)
		}
		want := map[Table]int{Item: Items, Warehouse: 2, District: 20, Customer: 60000, History: 60000,
			Orders: 60000, NewOrder: 18000, Stock: 200000}
		if n, ok := want[tb]; ok && total != n {
			t.Errorf("%s has %d rows, want %d", tb, total, n)
		}
	}
}

func TestKeysCoverEachBatch(t *testing.T) {
	g := testGenerator(1)
	// Stock batch 13 is warehouse 2, items 30001..40000.
	rs := rows(t, g.AppendBatch(nil, Stock, 13))
	if rs[0][0] != "30001" || rs[len(rs)-1][0] != "40000" || rs[0][1] != "2" {
		t.Errorf("stock batch 13 runs from item %s to %s of warehouse %s", rs[0][0], rs[len(rs)-1][0], rs[0][1])
	}
	// Item batch 9 ends the item table.
	rs = rows(t, g.AppendBatch(nil, Item, 9))
	if rs[0][0] != "90001" || rs[len(rs)-1][0] != "100000" {
		t.Errorf("item batch 9 runs from %s to %s", rs[0][0], rs[len(rs)-1][0])
	}
	// Customer batch 13 is warehouse 2, district 4.
	for _, r := range rows(t, g.AppendBatch(nil, Customer, 13)) {
		if r[1] != "4" || r[2] != "2" {
			t.Fatalf("customer batch 13 holds district %s of warehouse %s", r[1], r[2])
		}
	}
}

func TestItemOriginal(t *testing.T) {
	g := testGenerator(1)
	orig := 0
	for b := range g.Batches(Item) {
		for _, r := range rows(t, g.AppendBatch(nil, Item, b)) {
			if strings.Contains(r[4], "ORIGINAL") {
				orig++
			}
			if p := r[3]; len(p) < 4 || p[len(p)-3] != '.' {
				t.Fatalf("i_price %q", p)
			} else if cents := atoi(t, p[:len(p)-3]+p[len(p)-2:]); cents < 100 || cents > 10000 {
				t.Fatalf("i_price %q outside [1.00, 100.00]", p)
			}
		}
	}
	if orig < 9500 || orig > 10500 {
		t.Errorf("%d of 100000 items hold ORIGINAL, want about 10000", orig)
	}
}

func TestCustomers(t *testing.T) {
	g := testGenerator(1)
	bc, n := 0, 0
	for b := range 10 {
		for i, r := range rows(t, g.AppendBatch(nil, Customer, b)) {
			id := atoi(t, r[0])
			if id != i+1 {
				t.Fatalf("row %d has c_id %d", i, id)
			}
			if id <= 1000 && r[5] != LastName(id-1) {
				t.Fatalf("c_id %d has c_last %q, want %q", id, r[5], LastName(id-1))
			}
			if r[4] != "OE" || r[12] != "2024-01-02 03:04:05.678901" || len(r[11]) != 16 ||
				len(r[20]) < 300 || len(r[20]) > 500 {
				t.Fatalf("customer row %q", r)
			}
			switch r[13] {
			case "BC":
				bc++
			case "GC":
			default:
				t.Fatalf("c_credit %q", r[13])
			}
			n++
		}
	}
	if bc < n*8/100 || bc > n*12/100 {
		t.Errorf("%d of %d customers have bad credit, want about 10%%", bc, n)
	}
}

// TestOrders checks clause 3.3.2.4's condition on the loaded data: each
// district's order lines match its orders' o_ol_cnt; and the delivery rules
// that tie orders, order lines and new orders together.
func TestOrders(t *testing.T) {
	g := testGenerator(1)
	for _, b := range []int{0, 17} {
		cnt := map[int]int{}
		cust := map[string]bool{}
		sum := 0
		for _, r := range rows(t, g.AppendBatch(nil, Orders, b)) {
			o := atoi(t, r[0])
			cnt[o] = atoi(t, r[6])
			sum += cnt[o]
			cust[r[3]] = true
			if (r[5] == `\N`) != (o >= FirstUndeliveredOrder) {
				t.Fatalf("order %d has carrier %s", o, r[5])
			}
		}
		if len(cust) != CustomersPerDistrict {
			t.Errorf("batch %d: orders name %d distinct customers, want %d", b, len(cust), CustomersPerDistrict)
		}
		lines := rows(t, g.AppendBatch(nil, OrderLine, b))
		if len(lines) != sum {
			t.Errorf("batch %d: %d order lines, orders' o_ol_cnt sum to %d", b, len(lines), sum)
		}
		got := map[int]int{}
		for _, r := range lines {
			o := atoi(t, r[0])
			got[o]++
			if atoi(t, r[3]) != got[o] {
				t.Fatalf("order %d: line %s out of sequence", o, r[3])
			}
			if undelivered := o >= FirstUndeliveredOrder; (r[6] == `\N`) != undelivered || (r[8] == "0.00") == undelivered {
				t.Fatalf("order line %q", r)
			}
		}
		for o, n := range cnt {
			if got[o] != n {
				t.Fatalf("batch %d order %d: o_ol_cnt %d, %d lines", b, o, n, got[o])
			}
		}
		no := rows(t, g.AppendBatch(nil, NewOrder, b))
		for i, r := range no {
			if atoi(t, r[0]) != FirstUndeliveredOrder+i {
				t.Fatalf("new_order row %d is order %s", i, r[0])
			}
		}
		if len(no) != NewOrdersPerDistrict {
			t.Errorf("batch %d: %d new orders", b, len(no))
		}
	}
}

func TestDeterminism(t *testing.T) {
	g := testGenerator(42)
	want := map[Table][]byte{}
	for _, tb := range Tables() {
		want[tb] = g.AppendBatch(nil, tb, g.Batches(tb)-1)
	}
	// The same batches again, in reverse order and from concurrent
	// goroutines, appended after existing bytes.
	ts := Tables()
	var wg sync.WaitGroup
	for i := range ts {
		tb := ts[len(ts)-1-i]
		for range 2 {
			wg.Go(func() {
				got := g.AppendBatch([]byte("x"), tb, g.Batches(tb)-1)
				if !bytes.Equal(got[1:], want[tb]) {
					t.Errorf("%s: a second generation differs", tb)
				}
			})
		}
	}
	wg.Wait()
	// A fresh generator with the same parameters agrees; another seed does not.
	for _, tb := range Tables() {
		same := testGenerator(42).AppendBatch(nil, tb, g.Batches(tb)-1)
		other := testGenerator(43).AppendBatch(nil, tb, g.Batches(tb)-1)
		if !bytes.Equal(same, want[tb]) {
			t.Errorf("%s: a new generator differs", tb)
		}
		if tb != NewOrder && bytes.Equal(other, want[tb]) {
			t.Errorf("%s: seeds 42 and 43 give the same batch", tb)
		}
	}
}

// TestGolden pins the exact output of a small database: run with -update
// after an intended change of the generator.
func TestGolden(t *testing.T) {
	g := NewGenerator(1, 1, testLoadTime, Constants{CLast: 157, CID: 259, OLIID: 7911})
	var out []byte
	for _, tb := range Tables() {
		out = append(out, "-- "+tb.String()+"\n"...)
		batch := g.AppendBatch(nil, tb, 0)
		// The first three rows are enough to pin every column's format.
		end := 0
		for range 3 {
			if i := bytes.IndexByte(batch[end:], '\n'); i >= 0 {
				end += i + 1
			}
		}
		out = append(out, batch[:end]...)
	}
	golden.Check(t, filepath.Join("testdata", "golden.txt"), out)
}

func benchGenerate(b *testing.B, tb Table) {
	g := NewGenerator(1, 1, testLoadTime, Constants{CLast: 157, CID: 259, OLIID: 7911})
	dst := g.AppendBatch(nil, tb, 0)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		dst = g.AppendBatch(dst[:0], tb, 0)
	}
}

func BenchmarkGenerateStock(b *testing.B)     { benchGenerate(b, Stock) }
func BenchmarkGenerateCustomer(b *testing.B)  { benchGenerate(b, Customer) }
func BenchmarkGenerateOrderLine(b *testing.B) { benchGenerate(b, OrderLine) }

func BenchmarkNURand(b *testing.B) {
	r := NewRand(1)
	b.SetBytes(8) // one int drawn per call
	b.ReportAllocs()
	sum := 0
	for b.Loop() {
		sum += r.NURand(8191, 1, Items, 7911)
	}
	if sum == 0 {
		b.Fatal("no draws")
	}
}
