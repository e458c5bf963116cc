package oltppg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// Client mode on the polling driver: clientExec's statements, prepared
// once per connection when it opens (prepareClient), each round trip
// the Bind and Execute messages of the statements pgx's batch would
// pipeline, ended by one Sync; the answers are parsed in place. The
// transaction's state between its round trips (the order id and prices a
// New-Order reads back, the error that a ROLLBACK follows) is the
// connection's polledTxn: a transaction runs on one connection, whichever
// terminal it serves.

// clientStmt is a statement client mode prepares, for either driver.
type clientStmt uint8

const (
	csBegin clientStmt = iota
	csCommit
	csWarehouse
	csDistrict
	csCustomer
	csItems
	csOrder
	csNewOrder
	csLines
	csRepeat
	csPaymentByID
	csPaymentByName
	csStatusByID
	csStatusByName
	csDelivery
	csStockLevel
	csFlushStats
	clientStmts
)

// clientStatements are the statements' texts, client.go's, and their
// parameters' kinds: i an integer (int2, int4 or int8, as the server
// declares it), t text, n numeric, I int4[], F float8[].
var clientStatements = [clientStmts]struct{ sql, params string }{
	csBegin:         {"BEGIN", ""},
	csCommit:        {"COMMIT", ""},
	csWarehouse:     {newOrderWarehouse, "i"},
	csDistrict:      {newOrderDistrict, "ii"},
	csCustomer:      {newOrderCustomer, "iii"},
	csItems:         {newOrderItems, "I"},
	csOrder:         {newOrderOrder, "iiiiii"},
	csNewOrder:      {newOrderNewOrder, "iii"},
	csLines:         {newOrderLines, "iiiIIIIFIII"},
	csRepeat:        {newOrderRepeat, "iiii"},
	csPaymentByID:   {paymentByID, "iiiiin"},
	csPaymentByName: {paymentByName, "iitiin"},
	csStatusByID:    {orderStatusByID, "iii"},
	csStatusByName:  {orderStatusByName, "iit"},
	csDelivery:      {deliverySQL, "ii"},
	csStockLevel:    {stockLevelSQL, "iii"},
	csFlushStats:    {flushStatsSQL, ""},
}

// clientStmtNames are the prepared statements' names; the flush's is
// rawSocket.AppendFlushStats'.
var clientStmtNames = func() (names [clientStmts]string) {
	for s := range names {
		names[s] = fmt.Sprintf("client_%d", s)
	}
	names[csFlushStats] = "flush_stats"
	return names
}()

// name is the statement's prepared name.
func (s clientStmt) name() string { return clientStmtNames[s] }

// paramKinds are the type OIDs each parameter kind is encoded for.
var paramKinds = map[byte][]uint32{
	'i': {pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID},
	't': {pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID},
	'n': {pgtype.NumericOID},
	'I': {pgtype.Int4ArrayOID},
	'F': {pgtype.Float8ArrayOID},
}

// prepareClient prepares client mode's statements as the connection
// opens and keeps the types the server gave their parameters, which the
// polling driver's encoders follow. pgx knows them by name (clientExec's
// methods run them so): its own cache would prepare each on first use,
// outside BEGIN a transaction of its own that the server counts in the
// window and the client does not (tpm_db +7 a connection), and again
// after each failure.
func (e *clientExec) prepareClient(ctx context.Context) error {
	for s, st := range clientStatements {
		sd, err := e.conn.Prepare(ctx, clientStmtNames[s], st.sql)
		if err != nil {
			return fmt.Errorf("prepare %s: %w", clientStmtNames[s], err)
		}
		if len(sd.ParamOIDs) != len(st.params) {
			return fmt.Errorf("prepare %s: the server expects %d parameters, calibra sends %d", clientStmtNames[s], len(sd.ParamOIDs), len(st.params))
		}
		for i, oid := range sd.ParamOIDs {
			if want := paramKinds[st.params[i]]; !containsOID(want, oid) {
				return fmt.Errorf("prepare %s: parameter $%d has type OID %d on the server, calibra sends one of %v", clientStmtNames[s], i+1, oid, want)
			}
		}
		e.polled.oids[s] = sd.ParamOIDs
	}
	return nil
}

func containsOID(s []uint32, v uint32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// polledTxn is a transaction of client mode in flight on the polling
// driver, kept between its round trips.
type polledTxn struct {
	oids  [clientStmts][]uint32 // the parameters' types, as prepared
	req   bindWriter
	trip  trip
	stmt  int    // the statement of the round trip whose results come next
	rows  int    // its rows so far
	needs uint32 // the round trip's statements that must return a row, a bit each
	err   error  // the round trip's first failure
	// final is the outcome a ROLLBACK's answer settles: the failure it
	// follows, or the unused item's ErrRolledBack.
	final  error
	wanted int // the New-Order's distinct items
	oID    int // its order id, read back
	first  int // the first column of a Payment's or Delivery's row: the customer paid, the districts done
}

// trip is which round trip of its transaction a request is.
type trip uint8

const (
	tripFirst    trip = iota // the transaction's first (of Payment and the others, its only)
	tripOrder                // the New-Order's second: its order, lines and COMMIT
	tripRollback             // a ROLLBACK after a failure or the unused item
)

// itemResults are the items query's result formats (the others' are
// allBinary): the price in text, which parses into the float64 pgx scans
// a numeric into (and the null server's float8 alike).
var itemResults = []int16{1, 0, 1, 1}

// AppendCall appends the first round trip of in's transaction, as
// clientExec's method sends it.
func (e *clientExec) AppendCall(buf []byte, _ oltp.TxType, in any) []byte {
	p := &e.polled
	p.trip, p.final = tripFirst, nil
	w := &p.req
	w.buf = buf
	switch in := in.(type) {
	case *oltp.NewOrderInput:
		p.wanted = e.distinctItems(in)
		p.needs = 1<<1 | 1<<2 | 1<<3 // the warehouse, district and customer rows
		e.bind(csBegin).exec(allBinary)
		e.bind(csWarehouse).int(in.W).exec(allBinary)
		e.bind(csDistrict).int(in.W).int(in.D).exec(allBinary)
		e.bind(csCustomer).int(in.W).int(in.D).int(in.C).exec(allBinary)
		e.bind(csItems).int4Array(e.items).exec(itemResults)
	case *oltp.PaymentInput:
		p.needs = 1
		if in.C == 0 {
			e.bind(csPaymentByName).int(in.CW).int(in.CD).text(in.CLast)
		} else {
			e.bind(csPaymentByID).int(in.CW).int(in.CD).int(in.C)
		}
		w.int(in.W).int(in.D).numericCents(in.AmountCents).exec(allBinary)
	case *oltp.OrderStatusInput:
		p.needs = 1
		if in.C == 0 {
			e.bind(csStatusByName).int(in.W).int(in.D).text(in.CLast).exec(allBinary)
		} else {
			e.bind(csStatusByID).int(in.W).int(in.D).int(in.C).exec(allBinary)
		}
	case *oltp.DeliveryInput:
		p.needs = 1
		e.bind(csDelivery).int(in.W).int(in.Carrier).exec(allBinary)
	case *oltp.StockLevelInput:
		p.needs = 1
		e.bind(csStockLevel).int(in.W).int(in.D).int(in.Threshold).exec(allBinary)
	default:
		panic(fmt.Sprintf("oltppg: no client transaction for %T", in))
	}
	return w.sync()
}

// appendOrder appends the New-Order's second round trip: its order, its
// lines and stock rows, each repeated stock row, and COMMIT.
func (e *clientExec) appendOrder(buf []byte, in *oltp.NewOrderInput) []byte {
	p := &e.polled
	p.trip, p.needs = tripOrder, 0
	p.req.buf = buf
	e.orderLines(in)
	e.bind(csOrder).int(p.oID).int(in.D).int(in.W).int(in.C).int(len(in.ItemIDs)).int(allLocal(in)).exec(allBinary)
	e.bind(csNewOrder).int(p.oID).int(in.D).int(in.W).exec(allBinary)
	l, s := &e.lines, &e.stock
	e.bind(csLines).int(in.W).int(in.D).int(p.oID).int4Array(l.number).int4Array(l.item).int4Array(l.supplyW).int4Array(l.qty).
		float8Array(l.amount).int4Array(s.item).int4Array(s.supplyW).int4Array(s.qty).exec(allBinary)
	for i := 1; i < len(in.ItemIDs); i++ {
		if repeatsStock(in, i) {
			e.bind(csRepeat).int(in.W).int(int(in.ItemIDs[i])).int(int(in.SupplyW[i])).int(int(in.Qty[i])).exec(allBinary)
		}
	}
	e.bind(csCommit).exec(allBinary)
	return p.req.sync()
}

// appendRollback appends a ROLLBACK in the simple protocol, as pgx's Exec
// without arguments sends it; its answer settles final.
func (e *clientExec) appendRollback(buf []byte, final error) []byte {
	p := &e.polled
	p.trip, p.final, p.needs = tripRollback, final, 0
	buf = append(buf, 'Q', 0, 0, 0, 0)
	buf = append(buf, "ROLLBACK\x00"...)
	binary.BigEndian.PutUint32(buf[len(buf)-13:], 13)
	return buf
}

// bind starts statement s's Bind in the request.
func (e *clientExec) bind(s clientStmt) *bindWriter {
	w := &e.polled.req
	w.start(s.name(), e.polled.oids[s])
	return w
}

// Answer reads the answer of the round trip in flight once it is whole
// (up to ReadyForQuery), and goes on to the transaction's next round trip
// where clientExec's method would: the New-Order's second, or a ROLLBACK
// when a failure left a transaction open.
func (e *clientExec) Answer(buf []byte, _ oltp.TxType, in any, next []byte) (int, []byte, error) {
	end, status := answerEnd(buf)
	if end == 0 {
		return 0, nil, nil
	}
	p := &e.polled
	p.stmt, p.rows, p.err = 0, 0, nil
	switch in.(type) {
	case nil:
		p.needs = 0 // a flush's
	case *oltp.NewOrderInput:
		if p.trip == tripFirst {
			e.items, e.prices = e.items[:0], e.prices[:0] // now the items found
		}
	}
	for off := 0; off < end; {
		typ := buf[off]
		size := int(binary.BigEndian.Uint32(buf[off+1:]))
		body := buf[off+5 : off+1+size]
		off += 1 + size
		switch typ {
		case 'D':
			if in != nil && p.err == nil {
				p.err = e.row(in, body)
			}
			p.rows++
		case 'C':
			if p.needs&(1<<p.stmt) != 0 && p.rows == 0 && p.err == nil {
				p.err = pgx.ErrNoRows // QueryRow's Scan on no row
			}
			p.stmt, p.rows = p.stmt+1, 0
		case 'E':
			if p.err == nil {
				p.err = answerError(body, in)
			}
		}
	}
	if in == nil {
		return end, nil, p.err // a flush
	}
	req, err := e.after(in, status, next)
	return end, req, err
}

// answerEnd is the length of the whole answer at buf's front, to its
// ReadyForQuery, and the transaction status that gives; 0 while
// incomplete.
func answerEnd(buf []byte) (int, byte) {
	for off := 0; len(buf)-off >= 5; {
		size := int(binary.BigEndian.Uint32(buf[off+1:]))
		if size < 4 || len(buf)-off < 1+size {
			return 0, 0
		}
		typ := buf[off]
		off += 1 + size
		if typ == 'Z' && size == 5 {
			return off, buf[off-1]
		}
	}
	return 0, 0
}

// row reads what the transaction keeps of a row of the round trip's
// current statement.
func (e *clientExec) row(in any, body []byte) error {
	p := &e.polled
	var ok bool
	switch in.(type) {
	case *oltp.NewOrderInput:
		switch {
		case p.trip != tripFirst:
			return nil
		case p.stmt == 2: // the district's: d_tax, the order id taken
			p.oID, ok = intColumn(column(body, 1))
		case p.stmt == 4: // an item found: its id and price
			var id int
			id, ok = intColumn(column(body, 0))
			price, err := strconv.ParseFloat(unsafeString(column(body, 1)), 64)
			ok = ok && err == nil
			e.items, e.prices = append(e.items, int32(id)), append(e.prices, price)
		default:
			return nil
		}
	case *oltp.PaymentInput, *oltp.DeliveryInput:
		if p.rows > 0 {
			return nil // QueryRow scans the first
		}
		p.first, ok = intColumn(column(body, 0))
	default:
		return nil
	}
	if !ok {
		return errors.New("a malformed row from the server")
	}
	return nil
}

// after settles the round trip just read: the transaction's next request
// appended to next, or its outcome.
func (e *clientExec) after(in any, status byte, next []byte) ([]byte, error) {
	p := &e.polled
	switch {
	case p.trip == tripRollback:
		if p.err != nil && p.final == oltp.ErrRolledBack { //nolint:errorlint // our own, unwrapped
			return nil, p.err // the unused item's ROLLBACK failed, as pgx's Exec would report
		}
		return nil, p.final
	case p.err != nil && status != 'I':
		return e.appendRollback(next, p.err), nil
	case p.err != nil:
		return nil, p.err
	}
	switch in := in.(type) {
	case *oltp.NewOrderInput:
		if p.trip == tripOrder {
			in.OID = p.oID
			return nil, nil
		}
		if len(e.items) < p.wanted {
			// The unused item (clause 2.4.2.3): nothing is committed.
			return e.appendRollback(next, oltp.ErrRolledBack), nil
		}
		return e.appendOrder(next, in), nil
	case *oltp.PaymentInput:
		in.PaidC = p.first
	case *oltp.DeliveryInput:
		in.Skipped = tpcc.DistrictsPerWarehouse - p.first
	}
	return nil, nil
}

// column is a DataRow's i-th column, nil when NULL or absent.
func column(body []byte, i int) []byte {
	if len(body) < 2 || int(binary.BigEndian.Uint16(body)) <= i {
		return nil
	}
	body = body[2:]
	for {
		if len(body) < 4 {
			return nil
		}
		n := int32(binary.BigEndian.Uint32(body))
		body = body[4:]
		if n < 0 {
			n = 0
			if i == 0 {
				return nil
			}
		}
		if int(n) > len(body) {
			return nil
		}
		if i == 0 {
			return body[:n]
		}
		body, i = body[n:], i-1
	}
}

// intColumn is a binary int2, int4 or int8.
func intColumn(b []byte) (int, bool) {
	switch len(b) {
	case 2:
		return int(int16(binary.BigEndian.Uint16(b))), true
	case 4:
		return int(int32(binary.BigEndian.Uint32(b))), true
	case 8:
		return int(int64(binary.BigEndian.Uint64(b))), true
	}
	return 0, false
}

// unsafeString is b as a string for a parse that does not keep it.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// bindWriter appends Bind and Execute messages to buf, each parameter in
// binary as the server declared its type.
type bindWriter struct {
	buf  []byte
	oids []uint32 // the statement's parameters' types
	n    int      // the parameters written
	at   int      // where the Bind's length goes
}

func (w *bindWriter) start(name string, oids []uint32) {
	w.oids, w.n = oids, 0
	w.buf = append(w.buf, 'B', 0, 0, 0, 0)
	w.at = len(w.buf) - 4
	w.buf = append(w.buf, 0) // the unnamed portal
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, 0, 0, 1, 0, 1) // one format code for all: binary
	w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(len(oids)))
}

// param starts the next parameter's value and returns where its length
// goes.
func (w *bindWriter) param() int {
	w.n++
	w.buf = append(w.buf, 0, 0, 0, 0)
	return len(w.buf)
}

func (w *bindWriter) done(at int) *bindWriter {
	binary.BigEndian.PutUint32(w.buf[at-4:], uint32(len(w.buf)-at))
	return w
}

func (w *bindWriter) int(v int) *bindWriter {
	at := w.param()
	switch w.oids[w.n-1] {
	case pgtype.Int2OID:
		w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(int16(v)))
	case pgtype.Int8OID:
		w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(v))
	default:
		w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(int32(v)))
	}
	return w.done(at)
}

func (w *bindWriter) text(s string) *bindWriter {
	at := w.param()
	w.buf = append(w.buf, s...)
	return w.done(at)
}

func (w *bindWriter) int4Array(a []int32) *bindWriter {
	at := w.param()
	w.buf = appendInt4Array(w.buf, a)
	return w.done(at)
}

// float8Array is array_send's format for a one-dimensional float8[].
func (w *bindWriter) float8Array(a []float64) *bindWriter {
	at := w.param()
	w.buf = appendArrayHeader(w.buf, pgtype.Float8OID, len(a))
	for _, v := range a {
		w.buf = binary.BigEndian.AppendUint32(w.buf, 8)
		w.buf = binary.BigEndian.AppendUint64(w.buf, math.Float64bits(v))
	}
	return w.done(at)
}

// numericCents is numeric_send's format for cents/100: base-10000 digits,
// the first's weight, the sign and two decimals.
func (w *bindWriter) numericCents(cents int) *bindWriter {
	at := w.param()
	sign := uint16(0)
	if cents < 0 {
		cents, sign = -cents, 0x4000
	}
	var digits [6]uint16 // int64's integer part in base 10000, then the cents' group
	n := len(digits) - 1
	digits[n] = uint16(cents % 100 * 100)
	weight := -1
	for whole := cents / 100; whole > 0; whole /= 10000 {
		n--
		digits[n] = uint16(whole % 10000)
		weight++
	}
	d := digits[n:]
	for len(d) > 0 && d[len(d)-1] == 0 { // trailing zero groups
		d = d[:len(d)-1]
	}
	for len(d) > 0 && d[0] == 0 { // a zero integer part
		d, weight = d[1:], weight-1
	}
	if len(d) == 0 {
		weight, sign = 0, 0
	}
	be := binary.BigEndian
	w.buf = be.AppendUint16(w.buf, uint16(len(d)))
	w.buf = be.AppendUint16(w.buf, uint16(int16(weight)))
	w.buf = be.AppendUint16(w.buf, sign)
	w.buf = be.AppendUint16(w.buf, 2) // decimals
	for _, v := range d {
		w.buf = be.AppendUint16(w.buf, v)
	}
	return w.done(at)
}

// exec ends the Bind with its result formats and appends the Execute.
func (w *bindWriter) exec(results []int16) {
	w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(len(results)))
	for _, f := range results {
		w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(f))
	}
	binary.BigEndian.PutUint32(w.buf[w.at:], uint32(len(w.buf)-w.at))
	w.buf = append(w.buf, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) // the unnamed portal, every row
}

// sync ends the round trip's request.
func (w *bindWriter) sync() []byte {
	w.buf = append(w.buf, 'S', 0, 0, 0, 4)
	return w.buf
}
