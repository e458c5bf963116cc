package tpcc

import (
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

// Generator produces the initial population of clause 4.3.3.1 as COPY text:
// tab-separated columns, \N for NULL, one row per line. No generated value
// holds a tab, newline or backslash, so nothing is escaped. A Generator is
// immutable and safe for concurrent use.
type Generator struct {
	seed       uint64
	warehouses int
	c          Constants
	ts         []byte // the load time as COPY text, formatted once
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
		ts:         loadTime.UTC().AppendFormat(nil, "2006-01-02 15:04:05.000000"),
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

// AppendBatch appends the rows of batch b of table t to dst and returns the
// extended slice. The bytes depend only on the generator's parameters, t and
// b: each call draws from its own Rand, so batches may be generated in any
// order and on any goroutine.
func (g *Generator) AppendBatch(dst []byte, t Table, b int) []byte {
	g.checkBatch(t, b)
	r := seedRand(g.seed, uint64(t), uint64(b))
	switch t {
	case Item:
		return appendItems(dst, &r, b*itemsPerBatch+1)
	case Warehouse:
		return appendWarehouse(dst, &r, b+1)
	case District:
		return appendDistricts(dst, &r, b+1)
	case Customer:
		return g.appendCustomers(dst, &r, b)
	case History:
		return g.appendHistory(dst, &r, b)
	case Orders:
		return g.appendOrders(dst, &r, b)
	case NewOrder:
		return appendNewOrders(dst, b)
	case OrderLine:
		return g.appendOrderLines(dst, &r, b)
	default: // Stock
		return appendStock(dst, &r, b/stockBatchesPerWarehouse+1, b%stockBatchesPerWarehouse*stockPerBatch+1)
	}
}

// districtOf maps a district-level batch to its warehouse and district.
func districtOf(b int) (w, d int) {
	return b/DistrictsPerWarehouse + 1, b%DistrictsPerWarehouse + 1
}

// appendWD appends "\td\tw\t", the district and warehouse columns that
// follow the id in most district-level rows.
func appendWD(dst []byte, w, d int) []byte {
	dst = append(dst, '\t')
	dst = appendInt(dst, d)
	dst = append(dst, '\t')
	dst = appendInt(dst, w)
	return append(dst, '\t')
}

// appendAddress appends street_1, street_2, city, state and zip, tab
// separated (clause 4.3.3.1).
func appendAddress(dst []byte, r *Rand) []byte {
	dst = r.AppendAString(dst, 10, 20)
	dst = append(dst, '\t')
	dst = r.AppendAString(dst, 10, 20)
	dst = append(dst, '\t')
	dst = r.AppendAString(dst, 10, 20)
	dst = append(dst, '\t')
	dst = r.AppendState(dst)
	dst = append(dst, '\t')
	return r.AppendZip(dst)
}

func appendItems(dst []byte, r *Rand, first int) []byte {
	for id := first; id < first+itemsPerBatch; id++ {
		dst = appendInt(dst, id)
		dst = append(dst, '\t')
		dst = appendInt(dst, r.IntRange(1, 10000))
		dst = append(dst, '\t')
		dst = r.AppendAString(dst, 14, 24)
		dst = append(dst, '\t')
		dst = appendFixed(dst, r.IntRange(100, 10000), 2)
		dst = append(dst, '\t')
		dst = r.AppendData(dst, 26, 50)
		dst = append(dst, '\n')
	}
	return dst
}

func appendWarehouse(dst []byte, r *Rand, w int) []byte {
	dst = appendInt(dst, w)
	dst = append(dst, '\t')
	dst = r.AppendAString(dst, 6, 10)
	dst = append(dst, '\t')
	dst = appendAddress(dst, r)
	dst = append(dst, '\t')
	dst = appendFixed(dst, r.IntRange(0, 2000), 4)
	return append(dst, "\t300000.00\n"...)
}

func appendDistricts(dst []byte, r *Rand, w int) []byte {
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		dst = appendInt(dst, d)
		dst = append(dst, '\t')
		dst = appendInt(dst, w)
		dst = append(dst, '\t')
		dst = r.AppendAString(dst, 6, 10)
		dst = append(dst, '\t')
		dst = appendAddress(dst, r)
		dst = append(dst, '\t')
		dst = appendFixed(dst, r.IntRange(0, 2000), 4)
		dst = append(dst, "\t30000.00\t"...)
		dst = appendInt(dst, OrdersPerDistrict+1)
		dst = append(dst, '\n')
	}
	return dst
}

func (g *Generator) appendCustomers(dst []byte, r *Rand, b int) []byte {
	w, d := districtOf(b)
	for c := 1; c <= CustomersPerDistrict; c++ {
		dst = appendInt(dst, c)
		dst = appendWD(dst, w, d)
		dst = r.AppendAString(dst, 8, 16)
		dst = append(dst, "\tOE\t"...)
		// The first 1000 customers take every last name once, so that each
		// name exists; the rest follow the NURand skew of the run.
		if c <= 1000 {
			dst = AppendLastName(dst, c-1)
		} else {
			dst = AppendLastName(dst, r.NURand(aCLast, 0, 999, g.c.CLast))
		}
		dst = append(dst, '\t')
		dst = appendAddress(dst, r)
		dst = append(dst, '\t')
		dst = r.appendChars(dst, 16, digits)
		dst = append(dst, '\t')
		dst = append(dst, g.ts...)
		if r.IntRange(1, 10) == 1 {
			dst = append(dst, "\tBC\t50000.00\t"...)
		} else {
			dst = append(dst, "\tGC\t50000.00\t"...)
		}
		dst = appendFixed(dst, r.IntRange(0, 5000), 4)
		dst = append(dst, "\t-10.00\t10.00\t1\t0\t"...)
		dst = r.AppendAString(dst, 300, 500)
		dst = append(dst, '\n')
	}
	return dst
}

func (g *Generator) appendHistory(dst []byte, r *Rand, b int) []byte {
	w, d := districtOf(b)
	for c := 1; c <= CustomersPerDistrict; c++ {
		dst = appendInt(dst, c)
		dst = appendWD(dst, w, d)
		dst = appendInt(dst, d)
		dst = append(dst, '\t')
		dst = appendInt(dst, w)
		dst = append(dst, '\t')
		dst = append(dst, g.ts...)
		dst = append(dst, "\t10.00\t"...)
		dst = r.AppendAString(dst, 12, 24)
		dst = append(dst, '\n')
	}
	return dst
}

// olCnts draws the o_ol_cnt of every order of district (w, d) from the
// district's dedicated stream.
func (g *Generator) olCnts(cnt *[OrdersPerDistrict]uint8, w, d int) {
	r := seedRand(g.seed, olCntStream, uint64(w), uint64(d))
	for i := range cnt {
		cnt[i] = uint8(r.IntRange(5, 15))
	}
}

func (g *Generator) appendOrders(dst []byte, r *Rand, b int) []byte {
	w, d := districtOf(b)
	var cnt [OrdersPerDistrict]uint8
	g.olCnts(&cnt, w, d)
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
		dst = appendInt(dst, o)
		dst = appendWD(dst, w, d)
		dst = appendInt(dst, int(cust[o-1]))
		dst = append(dst, '\t')
		dst = append(dst, g.ts...)
		dst = append(dst, '\t')
		if o < FirstUndeliveredOrder {
			dst = appendInt(dst, r.IntRange(1, 10))
		} else {
			dst = append(dst, `\N`...)
		}
		dst = append(dst, '\t')
		dst = appendInt(dst, int(cnt[o-1]))
		dst = append(dst, "\t1\n"...)
	}
	return dst
}

func appendNewOrders(dst []byte, b int) []byte {
	w, d := districtOf(b)
	for o := FirstUndeliveredOrder; o <= OrdersPerDistrict; o++ {
		dst = appendInt(dst, o)
		dst = appendWD(dst, w, d)
		dst[len(dst)-1] = '\n' // the row ends with no_w_id
	}
	return dst
}

func (g *Generator) appendOrderLines(dst []byte, r *Rand, b int) []byte {
	w, d := districtOf(b)
	var cnt [OrdersPerDistrict]uint8
	g.olCnts(&cnt, w, d)
	for o := 1; o <= OrdersPerDistrict; o++ {
		delivered := o < FirstUndeliveredOrder
		for n := 1; n <= int(cnt[o-1]); n++ {
			dst = appendInt(dst, o)
			dst = appendWD(dst, w, d)
			dst = appendInt(dst, n)
			dst = append(dst, '\t')
			dst = appendInt(dst, r.IntRange(1, Items))
			dst = append(dst, '\t')
			dst = appendInt(dst, w)
			dst = append(dst, '\t')
			if delivered {
				dst = append(dst, g.ts...)
				dst = append(dst, "\t5\t0.00\t"...)
			} else {
				dst = append(dst, "\\N\t5\t"...)
				dst = appendFixed(dst, r.IntRange(1, 999999), 2)
				dst = append(dst, '\t')
			}
			dst = r.appendChars(dst, 24, alnum)
			dst = append(dst, '\n')
		}
	}
	return dst
}

func appendStock(dst []byte, r *Rand, w, first int) []byte {
	for i := first; i < first+stockPerBatch; i++ {
		dst = appendInt(dst, i)
		dst = append(dst, '\t')
		dst = appendInt(dst, w)
		dst = append(dst, '\t')
		dst = appendInt(dst, r.IntRange(10, 100))
		for range 10 { // s_dist_01 .. s_dist_10
			dst = append(dst, '\t')
			dst = r.appendChars(dst, 24, alnum)
		}
		dst = append(dst, "\t0\t0\t0\t"...)
		dst = r.AppendData(dst, 26, 50)
		dst = append(dst, '\n')
	}
	return dst
}
