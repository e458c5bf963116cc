package oltpmy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// fixture is an answer MariaDB 10.11 sent to the polling path's request
// (testdata/README).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAnswerRecorded holds the parser to answers the server gave: each
// taken whole and no further, with the outcome procExec's methods give,
// and none taken while cut short.
func TestAnswerRecorded(t *testing.T) {
	cases := []struct {
		name      string
		t         oltp.TxType
		in        any
		err       error  // errors.Is
		class     string // ErrorClass of a server error
		delivered int
	}{
		{name: "new_order", t: oltp.NewOrder, in: &oltp.NewOrderInput{}},
		{name: "new_order_rollback", t: oltp.NewOrder, in: &oltp.NewOrderInput{}, err: oltp.ErrRolledBack},
		{name: "payment", t: oltp.Payment, in: &oltp.PaymentInput{}},
		{name: "order_status", t: oltp.OrderStatus, in: &oltp.OrderStatusInput{}},
		{name: "delivery", t: oltp.Delivery, in: &oltp.DeliveryInput{}, delivered: 10}, // a result set, then the CALL's OK
		{name: "stock_level", t: oltp.StockLevel, in: &oltp.StockLevelInput{}},
		{name: "ping", in: nil}, // the flush's answer
		{name: "wrong_arguments", t: oltp.StockLevel, in: &oltp.StockLevelInput{}, class: "42000/1318"},
		{name: "select", t: oltp.Delivery, in: &oltp.DeliveryInput{}, delivered: 7}, // two columns, no OK after
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &rawProcExec{procExec: procExec{session: &session{}}}
			buf := fixture(t, c.name)
			for cut := range len(buf) {
				if n, _, err := e.Answer(buf[:cut], c.t, c.in, nil); n != 0 || err != nil {
					t.Fatalf("cut at %d of %d bytes: took %d, err %v", cut, len(buf), n, err)
				}
			}
			next := append(append([]byte{}, buf...), fixture(t, "payment")...)
			n, req, err := e.Answer(next, c.t, c.in, nil)
			if n != len(buf) || len(req) > 0 {
				t.Errorf("took %d bytes of an answer of %d and the next, went on with %q", n, len(buf), req)
			}
			switch {
			case c.class != "":
				var me *mysql.MySQLError
				if !errors.As(err, &me) || e.ErrorClass(err) != c.class || e.Fault(err) != nil {
					t.Errorf("err %v (class %s, fault %v); want a server error %s, no fault", err, e.ErrorClass(err), e.Fault(err), c.class)
				}
			case !errors.Is(err, c.err) || (c.err == nil) != (err == nil):
				t.Errorf("err %v, want %v", err, c.err)
			}
			if dl, ok := c.in.(*oltp.DeliveryInput); ok && dl.Skipped != tpcc.DistrictsPerWarehouse-c.delivered {
				t.Errorf("%d districts skipped, want %d", dl.Skipped, tpcc.DistrictsPerWarehouse-c.delivered)
			}
		})
	}
}

// packets frames payloads as the server does, numbered from 1.
func packets(payloads ...[]byte) []byte {
	var b []byte
	for i, p := range payloads {
		b = append(b, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), byte(i+1))
		b = append(b, p...)
	}
	return b
}

// TestAnswerForms covers what the recorded answers do not: a server
// without CLIENT_DEPRECATE_EOF, skipped metadata, an error after rows,
// several result sets, and streams that are not an answer.
func TestAnswerForms(t *testing.T) {
	var (
		colDef   = []byte("\x03def\x00\x00\x00\x01n\x00\x0c\x3f\x00\x0b\x00\x00\x00\x03\x00\x00\x00\x00\x00")
		eof      = []byte{pktEOF, 0, 0, 0x02, 0x00}
		eofMore  = []byte{pktEOF, 0xfc, 0x00, 0x0a, 0x00} // 252 warnings: read as an OK packet, no status
		okEnd    = []byte{pktEOF, 0, 0, 0x02, 0x00, 0, 0} // an OK ending a result set
		okMore   = []byte{pktEOF, 0, 0, 0x0a, 0x00, 0, 0}
		callOK   = []byte{pktOK, 0, 0, 0x02, 0x00, 0, 0}
		errPkt   = []byte("\xff\x25\x05#40001Deadlock found")
		row      = func(v string) []byte { return append([]byte{byte(len(v))}, v...) }
		nullRow  = []byte{0xfb}
		oneCol   = []byte{1}
		skipMeta = []byte{1, 0}
	)
	cases := []struct {
		name      string
		eofs      bool
		answer    []byte
		first     int
		hasRow    bool
		errNumber uint16
		malformed bool
	}{
		{name: "EOF packets", eofs: true, answer: packets(oneCol, colDef, eof, row("8"), eofMore, callOK), first: 8, hasRow: true},
		{name: "metadata skipped", answer: packets(skipMeta, row("3"), okMore, callOK), first: 3, hasRow: true},
		{name: "metadata skipped, EOF packets", eofs: true, answer: packets(skipMeta, eof, row("3"), eofMore, callOK), first: 3, hasRow: true},
		{name: "two result sets, the first row kept", answer: packets(oneCol, colDef, row("4"), okMore, oneCol, colDef, row("5"), okMore, callOK), first: 4, hasRow: true},
		{name: "NULL", answer: packets(oneCol, colDef, nullRow, okMore, callOK), hasRow: true},
		{name: "a result set ending the answer", answer: packets(oneCol, colDef, row("12"), okEnd), first: 12, hasRow: true},
		{name: "an error after rows", answer: packets(oneCol, colDef, row("1"), errPkt), first: 1, hasRow: true, errNumber: 1317},
		{name: "an error after a result set", answer: packets(oneCol, colDef, row("1"), okMore, errPkt), first: 1, hasRow: true, errNumber: 1317},
		{name: "a packet out of sequence", answer: append([]byte{7, 0, 0, 2}, callOK...), malformed: true},
		{name: "an empty packet", answer: []byte{0, 0, 0, 1}, malformed: true},
		{name: "a short error", answer: packets([]byte{0xff, 1, 2}), malformed: true},
		{name: "no column count", answer: packets([]byte{0xfb}), malformed: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, a, err := readAnswer(c.answer, c.eofs)
			if c.malformed {
				if err == nil {
					t.Errorf("took %d bytes without an error", n)
				}
				return
			}
			if err != nil || n != len(c.answer) || a.row != c.hasRow || a.first != c.first {
				t.Fatalf("took %d of %d bytes, row %v first %d, err %v; want all, row %v first %d", n, len(c.answer), a.row, a.first, err, c.hasRow, c.first)
			}
			if c.errNumber != 0 {
				var me *mysql.MySQLError
				if a.err == nil || !errors.As(serverError(a.err), &me) || me.Number != c.errNumber || string(me.SQLState[:]) != "40001" {
					t.Errorf("error packet %q, want %d 40001", a.err, c.errNumber)
				}
			}
		})
	}
}

// TestAppendCall holds the requests to procStatements' CALLs with the
// inputs as procExec binds them.
func TestAppendCall(t *testing.T) {
	cases := []struct {
		t    oltp.TxType
		in   any
		want string
	}{
		{oltp.NewOrder, &oltp.NewOrderInput{W: 1, D: 9, C: 348, AllLocal: true, ItemIDs: []int32{38336, 7}, SupplyW: []int32{1, 2}, Qty: []int32{6, 10}},
			"CALL tpcc_new_order(1, 9, 348, 1, '[38336,7]', '[1,2]', '[6,10]')"},
		{oltp.Payment, &oltp.PaymentInput{W: 2, D: 1, CW: 3, CD: 4, C: 0, CLast: "BARESEPRI", AmountCents: 100005},
			"CALL tpcc_payment(2, 1, 3, 4, 0, 'BARESEPRI', 1000.05)"},
		{oltp.Payment, &oltp.PaymentInput{W: 1, D: 1, CW: 1, CD: 1, C: 5, AmountCents: 190},
			"CALL tpcc_payment(1, 1, 1, 1, 5, '', 1.90)"},
		{oltp.OrderStatus, &oltp.OrderStatusInput{W: 1, D: 2, C: 0, CLast: "ABLE"}, "CALL tpcc_order_status(1, 2, 0, 'ABLE')"},
		{oltp.Delivery, &oltp.DeliveryInput{W: 4, Carrier: 10}, "CALL tpcc_delivery(4, 10)"},
		{oltp.StockLevel, &oltp.StockLevelInput{W: 1, D: 3, Threshold: 15}, "CALL tpcc_stock_level(1, 3, 15)"},
	}
	var e rawProcExec
	for _, c := range cases {
		got := e.AppendCall([]byte("keep"), c.t, c.in)
		want := append([]byte("keep"), byte(len(c.want)+1), 0, 0, 0, comQuery)
		if want = append(want, c.want...); string(got) != string(want) {
			t.Errorf("%s: %q, want %q", c.t, got, want)
		}
	}
	if got := e.AppendFlushStats(nil); string(got) != "\x01\x00\x00\x00\x0e" {
		t.Errorf("flush: %q, want a COM_PING", got)
	}
}

// TestFrames follows packet boundaries across reads of any size.
func TestFrames(t *testing.T) {
	stream := packets([]byte("abc"), []byte{1}, make([]byte, 300))
	for size := 1; size <= len(stream); size++ {
		var f frames
		for at := 0; at < len(stream); at += size {
			f.feed(stream[at:min(at+size, len(stream))])
			if end := min(at+size, len(stream)); f.whole() != (end == 7 || end == 12 || end == len(stream)) {
				t.Fatalf("reads of %d: whole %v after %d bytes", size, f.whole(), end)
			}
		}
	}
}

// TestProcSessionPollsWhereItCan: procedures mode goes on the polling
// driver on a plain connection, and says why not on an encrypted or
// compressed one and on a Galera node.
func TestProcSessionPollsWhereItCan(t *testing.T) {
	plain := uint32(0x13aa28c) // what go-sql-driver asked of MariaDB 10.11
	cases := []struct {
		name string
		tap  *tap
		why  string // in the reason; "" polls
	}{
		{"plain", &tap{caps: plain}, ""},
		{"TLS", &tap{caps: plain | capSSL}, "TLS"},
		{"compressed", &tap{caps: plain | capCompress}, "compressed"},
		{"Galera", nil, "Galera"},
	}
	for _, c := range cases {
		sess := procSession(&session{}, c.tap)
		_, raw := sess.(oltp.RawSession)
		why := sess.(oltp.Unpolled).Unpolled()
		if raw != (c.why == "") || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("%s: polled %v, reason %q; want the reason to name %q", c.name, raw, why, c.why)
		}
	}
}
