package nullserver

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// statement is the prepared statement name, or the unnamed one.
func (c *conn) statement(name []byte) *stmt {
	if len(name) == 0 {
		return c.unnamed
	}
	return c.stmts[string(name)]
}

// bind keeps the unnamed portal's statement, arguments and result
// formats; the arguments alias the message, read before the next.
func (c *conn) bind(body []byte) error {
	portal := until0(body)
	body = body[len(portal)+1:]
	name := until0(body)
	body = body[len(name)+1:]
	s := c.statement(name)
	if s == nil {
		c.fail("26000", fmt.Sprintf("prepared statement %q does not exist", name))
		return nil
	}
	p := &c.portal
	p.s, p.args, p.fmts = s, p.args[:0], p.fmts[:0]
	n := int(binary.BigEndian.Uint16(body))
	body = body[2+2*n:] // parameter formats: calibra's are all binary
	n = int(binary.BigEndian.Uint16(body))
	body = body[2:]
	for range n {
		size := int32(binary.BigEndian.Uint32(body))
		body = body[4:]
		if size < 0 {
			p.args = append(p.args, nil)
			continue
		}
		p.args = append(p.args, body[:size])
		body = body[size:]
	}
	n = int(binary.BigEndian.Uint16(body))
	body = body[2:]
	for i := range n {
		p.fmts = append(p.fmts, int16(binary.BigEndian.Uint16(body[2*i:])))
	}
	c.msg('2') // BindComplete
	return nil
}

// describe answers a statement's parameters and columns, or a portal's
// columns in their formats.
func (c *conn) describe(body []byte) {
	if body[0] == 'P' {
		c.rowDescription(c.portal.s, c.portal.fmts)
		return
	}
	s := c.statement(until0(body[1:]))
	if s == nil {
		c.fail("26000", "no such prepared statement")
		return
	}
	at := c.begin('t')
	c.out = binary.BigEndian.AppendUint16(c.out, uint16(len(s.params)))
	for _, oid := range s.params {
		c.out = binary.BigEndian.AppendUint32(c.out, oid)
	}
	c.end(at)
	c.rowDescription(s, nil)
}

// rowDescription describes s's columns, or answers NoData.
func (c *conn) rowDescription(s *stmt, fmts []int16) {
	if s == nil || len(s.cols) == 0 {
		c.msg('n')
		return
	}
	at := c.begin('T')
	c.out = binary.BigEndian.AppendUint16(c.out, uint16(len(s.cols)))
	for i, cl := range s.cols {
		c.out = append(c.out, cl.name...)
		c.out = append(c.out, 0, 0, 0, 0, 0, 0, 0)
		c.out = binary.BigEndian.AppendUint32(c.out, cl.oid)
		c.out = append(c.out, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) // typlen, typmod -1
		c.out = binary.BigEndian.AppendUint16(c.out, uint16(format(fmts, i)))
	}
	c.end(at)
}

// format is column i's format code from Bind's list (one for all, or
// one each).
func format(fmts []int16, i int) int16 {
	switch {
	case len(fmts) == 0:
		return 0
	case len(fmts) == 1:
		return fmts[0]
	}
	return fmts[i]
}

func (c *conn) execute() {
	p := &c.portal
	if p.s == nil {
		c.fail("34000", "no portal")
		return
	}
	// An Execute outside BEGIN ... COMMIT is in the implicit transaction
	// the next Sync ends; BEGIN, COMMIT and ROLLBACK count themselves.
	if k := p.s.kind; !c.inTx && k != kBegin && k != kCommit && k != kRollback {
		c.ran = true
	}
	c.run(p.s, p.args, p.fmts)
}

// run plays the statement: its rows, then its command tag.
func (c *conn) run(s *stmt, args [][]byte, fmts []int16) {
	tag := s.tag
	switch s.kind {
	case kBegin:
		c.inTx, c.pending = true, 0
	case kCommit:
		c.srv.orders.Add(c.pending)
		c.srv.xacts.Add(1)
		c.inTx, c.pending = false, 0
	case kRollback:
		c.srv.xacts.Add(1)
		c.inTx, c.pending = false, 0
	case kConst:
		c.row(s, fmts, s.consts...)
	case kCounters:
		c.row(s, fmts, c.srv.sumNextOID(), c.srv.xacts.Load(), int64(0), int64(0), nil, nil, nil, int64(0))
	case kProcNewOrder:
		if unusedItem(arg(args, 4)) {
			c.fail("CA001", "tpcc: item number is not valid") // the expected rollback
			c.srv.xacts.Add(1)
			c.ran = false
			return
		}
		c.srv.orders.Add(1)
		c.row(s, fmts, int64(1))
	case kProcPayment:
		c.row(s, fmts, int64(max(1, int4(arg(args, 4)))))
	case kProcDelivery:
		c.row(s, fmts, int64(10))
	default:
		tag = c.runClient(s, args, fmts)
	}
	c.complete(tag)
}

// runClient plays the statements of client mode that return rows made
// from their arguments, and the control reads of many rows.
func (c *conn) runClient(s *stmt, args [][]byte, fmts []int16) string {
	switch s.kind {
	case kDistrictNext:
		c.pending++
		c.nextOID++
		c.row(s, fmts, 0.08, c.nextOID-1)
	case kItems:
		n := 0
		forItems(arg(args, 0), func(id int32) {
			if id <= 100000 {
				c.row(s, fmts, int64(id), 42.5, "an item", "original data")
				n++
			}
		})
		return "SELECT " + strconv.Itoa(n)
	case kOrderStatus:
		for i := range 10 {
			c.row(s, fmts, 10.0, "first", "OE", "BARBARBAR", c.nextOID, "2026-01-01 00:00:00", int64(3), int64(i+1), int64(1), int64(5), 42.5, "2026-01-01 00:00:00")
		}
		return "SELECT 10"
	case kBuildInfo:
		kv := c.srv.buildInfo()
		for _, p := range kv {
			c.row(s, fmts, p[0], p[1])
		}
		return "SELECT " + strconv.Itoa(len(kv))
	}
	return s.tag
}

func (c *conn) complete(tag string) {
	at := c.begin('C')
	c.out = append(c.out, tag...)
	c.out = append(c.out, 0)
	c.end(at)
}

func arg(args [][]byte, i int) []byte {
	if i < len(args) {
		return args[i]
	}
	return nil
}

func int4(b []byte) int {
	if len(b) != 4 {
		return 0
	}
	return int(int32(binary.BigEndian.Uint32(b)))
}

// forItems calls f with each element of a binary int4[] of one
// dimension.
func forItems(b []byte, f func(int32)) {
	if len(b) < 20 || binary.BigEndian.Uint32(b) != 1 {
		return
	}
	n := int(binary.BigEndian.Uint32(b[12:]))
	b = b[20:]
	for range n {
		if len(b) < 8 {
			return
		}
		f(int32(binary.BigEndian.Uint32(b[4:])))
		b = b[8:]
	}
}

// unusedItem says whether the items name one beyond the catalogue, the
// New-Order that rolls back (clause 2.4.2.3).
func unusedItem(items []byte) bool {
	unused := false
	forItems(items, func(id int32) { unused = unused || id > 100000 })
	return unused
}

// row answers one DataRow of vals in s's column types and fmts' formats.
func (c *conn) row(s *stmt, fmts []int16, vals ...any) {
	at := c.begin('D')
	c.out = binary.BigEndian.AppendUint16(c.out, uint16(len(vals)))
	for i, v := range vals {
		if v == nil { // NULL
			c.out = binary.BigEndian.AppendUint32(c.out, 0xffffffff)
			continue
		}
		l := len(c.out)
		c.out = append(c.out, 0, 0, 0, 0)
		c.out = appendValue(c.out, s.cols[i].oid, format(fmts, i) == 1, v)
		binary.BigEndian.PutUint32(c.out[l:], uint32(len(c.out)-l-4))
	}
	c.end(at)
}

func appendValue(b []byte, oid uint32, binary_ bool, v any) []byte {
	if !binary_ {
		switch v := v.(type) {
		case int64:
			return strconv.AppendInt(b, v, 10)
		case float64:
			return strconv.AppendFloat(b, v, 'g', -1, 64)
		case bool:
			return append(b, "ft"[btoi(v)])
		case string:
			return append(b, v...)
		}
	}
	switch v := v.(type) {
	case int64:
		switch oid {
		case oidInt8:
			return binary.BigEndian.AppendUint64(b, uint64(v))
		case oidFloat8:
			return binary.BigEndian.AppendUint64(b, math.Float64bits(float64(v)))
		}
		return binary.BigEndian.AppendUint32(b, uint32(v))
	case float64:
		return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
	case bool:
		return append(b, byte(btoi(v)))
	case string:
		return append(b, v...)
	}
	return b
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}
