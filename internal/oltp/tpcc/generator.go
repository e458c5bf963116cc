package tpcc

import (
	"encoding/binary"
	"strconv"
	"time"
)

// Batch sizes of the tables whose batches are not one per district: ten
// item batches and ten stock batches per warehouse let the loader spread
// even a one-warehouse load over many connections, and keep one batch of
// COPY text to a few megabytes.
const (
	itemBatches              = 10
	itemsPerBatch            = Items / itemBatches
	stockBatchesPerWarehouse = 10
	stockPerBatch            = StockPerWarehouse / stockBatchesPerWarehouse
)

// olCntStream is the stream id, beyond every Table, of the per-district
// stream that draws o_ol_cnt, which both the orders and the order_line
// batches of a district read so that they agree (clause 3.3.2.4).
const olCntStream = 1 << 32

// Generator produces the initial population of clause 4.3.3.1 in COPY's
// text format (tab-separated columns, \N for NULL, one row per line) or in
// PostgreSQL's binary one. No generated value holds a tab, newline or
// backslash, so nothing is escaped. A Generator is immutable and safe for
// concurrent use.
type Generator struct {
	seed       uint64
	warehouses int
	c          Constants
	ts, tsBin  []byte // the load time as a field of each format, made once
}

// NewGenerator returns a generator for a database of the given number of
// warehouses. loadTime fills every timestamp (c_since, h_date, o_entry_d and
// ol_delivery_d); it is written as UTC wall-clock time, so the output does not
// depend on the machine's time zone. c supplies C_LAST's C for customer
// last names.
func NewGenerator(seed uint64, warehouses int, loadTime time.Time, c Constants) *Generator {
	if warehouses < 1 {
		panic("tpcc: a database needs at least one warehouse")
	}
	return &Generator{
		seed:       seed,
		warehouses: warehouses,
		c:          c,
		ts:         append(loadTime.UTC().AppendFormat(nil, "2006-01-02 15:04:05.000000"), '\t'),
		tsBin:      binary.BigEndian.AppendUint64([]byte{0, 0, 0, 8}, uint64(loadTime.Sub(pgEpoch).Microseconds())),
	}
}

// Batches returns how many batches table t has: 10 for item, one per
// warehouse for warehouse and district, 10 per warehouse for stock, and one
// per district for the others.
func (g *Generator) Batches(t Table) int {
	switch t {
	case Item:
		return itemBatches
	case Warehouse, District:
		return g.warehouses
	case Customer, History, Orders, NewOrder, OrderLine:
		return g.warehouses * DistrictsPerWarehouse
	case Stock:
		return g.warehouses * stockBatchesPerWarehouse
	}
	panic("tpcc: unknown table " + t.String())
}

func (g *Generator) checkBatch(t Table, b int) {
	if n := g.Batches(t); b < 0 || b >= n {
		panic("tpcc: " + t.String() + " has no batch " + strconv.Itoa(b) + " of " + strconv.Itoa(n))
	}
}

// Rows returns the number of rows in batch b of table t without generating
// it (order_line draws only the districts' o_ol_cnt values).
func (g *Generator) Rows(t Table, b int) int {
	g.checkBatch(t, b)
	switch t {
	case Item:
		return itemsPerBatch
	case Warehouse:
		return 1
	case District:
		return DistrictsPerWarehouse
	case Customer, History:
		return CustomersPerDistrict
	case Orders:
		return OrdersPerDistrict
	case NewOrder:
		return NewOrdersPerDistrict
	case OrderLine:
		var cnt [OrdersPerDistrict]uint8
		w, d := districtOf(b)
		g.olCnts(&cnt, w, d)
		n := 0
		for _, c := range cnt {
			n += int(c)
		}
		return n
	default: // Stock
		return stockPerBatch
	}
}

// AppendBatch appends the rows of batch b of table t to dst as COPY text
// and returns the extended slice: AppendBatchAs in the Text format.
func (g *Generator) AppendBatch(dst []byte, t Table, b int) []byte {
	return g.AppendBatchAs(dst, t, b, Text)
}

// AppendBatchAs appends the rows of batch b of table t to dst in format f
// and returns the extended slice; Binary has PostgreSQL's column types
// (calibra's schema, oltppg), and a COPY stream of any batches' rows opens
// with f.Header and closes with f.Trailer. The bytes depend only on the generator's
// parameters, t, b and f: each call draws from its own Rand, so batches may
// be generated in any order and on any goroutine, and both formats carry
// the same values.
func (g *Generator) AppendBatchAs(dst []byte, t Table, b int, f Format) []byte {
	g.checkBatch(t, b)
	w := rowWriter{dst: dst, binary: f == Binary, ts: g.ts}
	if w.binary {
		w.ts = g.tsBin
	}
	r := seedRand(g.seed, uint64(t), uint64(b))
	switch t {
	case Item:
		writeItems(&w, &r, b*itemsPerBatch+1)
	case Warehouse:
		writeWarehouse(&w, &r, b+1)
	case District:
		writeDistricts(&w, &r, b+1)
	case Customer:
		g.writeCustomers(&w, &r, b)
	case History:
		writeHistory(&w, &r, b)
	case Orders:
		g.writeOrders(&w, &r, b)
	case NewOrder:
		writeNewOrders(&w, b)
	case OrderLine:
		g.writeOrderLines(&w, &r, b)
	default: // Stock
		writeStock(&w, &r, b/stockBatchesPerWarehouse+1, b%stockBatchesPerWarehouse*stockPerBatch+1)
	}
	return w.dst
}

// districtOf maps a district-level batch to its warehouse and district.
func districtOf(b int) (w, d int) {
	return b/DistrictsPerWarehouse + 1, b%DistrictsPerWarehouse + 1
}

// writeIDW writes an id, a district (smallint) and a warehouse: the key
// that opens most district-level rows.
func writeIDW(w *rowWriter, id, d, wh int) {
	w.int4(id)
	w.int2(d)
	w.int4(wh)
}

// writeAddress writes street_1, street_2, city, state and zip (clause
// 4.3.3.1).
func writeAddress(w *rowWriter, r *Rand) {
	w.aString(r, 10, 20)
	w.aString(r, 10, 20)
	w.aString(r, 10, 20)
	at := w.open()
	w.dst = r.AppendState(w.dst)
	w.close(at)
	at = w.open()
	w.dst = r.AppendZip(w.dst)
	w.close(at)
}

func writeItems(w *rowWriter, r *Rand, first int) {
	for id := first; id < first+itemsPerBatch; id++ {
		w.row(5)
		w.int4(id)
		w.int4(r.IntRange(1, 10000))
		w.aString(r, 14, 24)
		w.fixed(r.IntRange(100, 10000), 2)
		w.data(r, 26, 50)
		w.end()
	}
}

func writeWarehouse(w *rowWriter, r *Rand, wh int) {
	w.row(9)
	w.int4(wh)
	w.aString(r, 6, 10)
	writeAddress(w, r)
	w.fixed(r.IntRange(0, 2000), 4)
	w.fixed(30000000, 2)
	w.end()
}

func writeDistricts(w *rowWriter, r *Rand, wh int) {
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		w.row(11)
		w.int2(d)
		w.int4(wh)
		w.aString(r, 6, 10)
		writeAddress(w, r)
		w.fixed(r.IntRange(0, 2000), 4)
		w.fixed(3000000, 2)
		w.int4(OrdersPerDistrict + 1)
		w.end()
	}
}

func (g *Generator) writeCustomers(w *rowWriter, r *Rand, b int) {
	wh, d := districtOf(b)
	for c := 1; c <= CustomersPerDistrict; c++ {
		w.row(21)
		writeIDW(w, c, d, wh)
		w.aString(r, 8, 16)
		w.str("OE")
		// The first 1000 customers take every last name once, so that each
		// name exists; the rest follow the NURand skew of the run.
		at := w.open()
		if c <= 1000 {
			w.dst = AppendLastName(w.dst, c-1)
		} else {
			w.dst = AppendLastName(w.dst, r.NURand(aCLast, 0, 999, g.c.CLast))
		}
		w.close(at)
		writeAddress(w, r)
		w.chars(r, 16, digits)
		w.time()
		if r.IntRange(1, 10) == 1 {
			w.str("BC")
		} else {
			w.str("GC")
		}
		w.fixed(5000000, 2)
		w.fixed(r.IntRange(0, 5000), 4)
		w.fixed(-1000, 2)
		w.fixed(1000, 2)
		w.int4(1)
		w.int4(0)
		w.aString(r, 300, 500)
		w.end()
	}
}

func writeHistory(w *rowWriter, r *Rand, b int) {
	wh, d := districtOf(b)
	for c := 1; c <= CustomersPerDistrict; c++ {
		w.row(8)
		writeIDW(w, c, d, wh)
		w.int2(d)
		w.int4(wh)
		w.time()
		w.fixed(1000, 2)
		w.aString(r, 12, 24)
		w.end()
	}
}

// olCnts draws the o_ol_cnt of every order of district (w, d) from the
// district's dedicated stream.
func (g *Generator) olCnts(cnt *[OrdersPerDistrict]uint8, w, d int) {
	r := seedRand(g.seed, olCntStream, uint64(w), uint64(d))
	for i := range cnt {
		cnt[i] = uint8(r.IntRange(5, 15))
	}
}

func (g *Generator) writeOrders(w *rowWriter, r *Rand, b int) {
	wh, d := districtOf(b)
	var cnt [OrdersPerDistrict]uint8
	g.olCnts(&cnt, wh, d)
	// o_c_id is a random permutation of the customer ids (Fisher-Yates).
	var cust [CustomersPerDistrict]uint16
	for i := range cust {
		cust[i] = uint16(i + 1)
	}
	for i := len(cust) - 1; i > 0; i-- {
		j := r.IntRange(0, i)
		cust[i], cust[j] = cust[j], cust[i]
	}
	for o := 1; o <= OrdersPerDistrict; o++ {
		w.row(8)
		writeIDW(w, o, d, wh)
		w.int4(int(cust[o-1]))
		w.time()
		if o < FirstUndeliveredOrder {
			w.int2(r.IntRange(1, 10))
		} else {
			w.null()
		}
		w.int2(int(cnt[o-1]))
		w.int2(1)
		w.end()
	}
}

func writeNewOrders(w *rowWriter, b int) {
	wh, d := districtOf(b)
	for o := FirstUndeliveredOrder; o <= OrdersPerDistrict; o++ {
		w.row(3)
		writeIDW(w, o, d, wh)
		w.end()
	}
}

func (g *Generator) writeOrderLines(w *rowWriter, r *Rand, b int) {
	wh, d := districtOf(b)
	var cnt [OrdersPerDistrict]uint8
	g.olCnts(&cnt, wh, d)
	for o := 1; o <= OrdersPerDistrict; o++ {
		delivered := o < FirstUndeliveredOrder
		for n := 1; n <= int(cnt[o-1]); n++ {
			w.row(10)
			writeIDW(w, o, d, wh)
			w.int2(n)
			w.int4(r.IntRange(1, Items))
			w.int4(wh)
			if delivered {
				w.time()
				w.int2(5)
				w.fixed(0, 2)
			} else {
				w.null()
				w.int2(5)
				w.fixed(r.IntRange(1, 999999), 2)
			}
			w.chars(r, 24, alnum)
			w.end()
		}
	}
}

func writeStock(w *rowWriter, r *Rand, wh, first int) {
	for i := first; i < first+stockPerBatch; i++ {
		w.row(17)
		w.int4(i)
		w.int4(wh)
		w.int2(r.IntRange(10, 100))
		for range 10 { // s_dist_01 .. s_dist_10
			w.chars(r, 24, alnum)
		}
		w.int4(0)
		w.int4(0)
		w.int4(0)
		w.data(r, 26, 50)
		w.end()
	}
}
