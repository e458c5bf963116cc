package oltp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// fakeFlowConn records the statements a ClientFlow runs and answers
// with fixed rows: the order id 7, five customers of a last name, the
// customer 42, no undelivered order in odd districts, no unused item.
type fakeFlowConn struct {
	calls     []string
	conflicts int // commits that fail as a conflict the dialect retries
}

var errConflict = errors.New("conflict")

func (c *fakeFlowConn) note(f string, a ...any) { c.calls = append(c.calls, fmt.Sprintf(f, a...)) }

func (c *fakeFlowConn) Begin(context.Context) error { c.note("begin"); return nil }
func (c *fakeFlowConn) Commit(context.Context) error {
	c.note("commit")
	if c.conflicts > 0 {
		c.conflicts--
		return errConflict
	}
	return nil
}
func (c *fakeFlowConn) Rollback(context.Context) error { c.note("rollback"); return nil }
func (c *fakeFlowConn) Exec(_ context.Context, s FlowStep, i int, args []any) error {
	c.note("exec %d.%d %v", s, i, args)
	return nil
}
func (c *fakeFlowConn) Drain(_ context.Context, s FlowStep, i int, args []any) error {
	c.note("rows %d.%d %v", s, i, args)
	return nil
}
func (c *fakeFlowConn) Row(_ context.Context, s FlowStep, i int, args []any, dest []any) error {
	c.note("row %d.%d %v", s, i, args)
	switch s {
	case StepItem:
		if args[0].(int32) > tpcc.Items {
			return ErrNoRow
		}
	case StepDistrictNext:
		*dest[1].(*int) = 7
	case StepCustomerCount:
		*dest[0].(*int) = 5
	case StepCustomerByName:
		*dest[0].(*int) = 42
	case StepOldestNewOrder:
		if args[1].(int)%2 == 1 {
			return ErrNoRow
		}
	}
	return nil
}
func (c *fakeFlowConn) Again(attempt int, err error) bool {
	return errors.Is(err, errConflict) && attempt < 3
}
func (c *fakeFlowConn) Money(cents int) any { return cents }
func (c *fakeFlowConn) Sum() any            { return new(int) }

// twoStatementSQL runs the district's step as two statements, as MariaDB
// does, and the dialect's other steps as one.
var twoStatementSQL = NewFlowSQL(map[FlowStep][]string{
	StepDistrictNext: {"UPDATE", "SELECT"}, StepStock: {"-"}, StepPayWarehouse: {"-"}, StepPayDistrict: {"-"},
	StepPayBadCredit: {"-"}, StepDeliverOrder: {"-"}, StepDeliverLines: {"-"},
})

func TestClientFlowNewOrder(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		items []int32
		want  error
		end   string
	}{
		{"commits", []int32{5, 9}, nil, "commit"},
		{"rolls back on the unused item", []int32{5, tpcc.Items + 1}, ErrRolledBack, "rollback"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := &fakeFlowConn{}
			in := &NewOrderInput{W: 1, D: 3, C: 4, ItemIDs: c.items, SupplyW: []int32{1, 2}, Qty: []int32{5, 6}}
			err := NewClientFlow(conn, twoStatementSQL).NewOrder(ctx, in)
			if !errors.Is(err, c.want) || conn.calls[len(conn.calls)-1] != c.end {
				t.Fatalf("err %v, calls %q: want %v ending in %s", err, conn.calls, c.want, c.end)
			}
			if !slices.Contains(conn.calls, fmt.Sprintf("exec %d.0 [1 3]", StepDistrictNext)) ||
				!slices.Contains(conn.calls, fmt.Sprintf("row %d.1 [1 3]", StepDistrictNext)) {
				t.Errorf("calls %q: want the district's two statements", conn.calls)
			}
			if c.want == nil && in.OID != 7 {
				t.Errorf("order id %d, want the district's 7", in.OID)
			}
		})
	}
}

func TestClientFlowPaymentByNameAndRetry(t *testing.T) {
	conn := &fakeFlowConn{conflicts: 2}
	in := &PaymentInput{W: 1, D: 2, CW: 1, CD: 2, CLast: "BARBARBAR", AmountCents: 1234}
	if err := NewClientFlow(conn, twoStatementSQL).Payment(context.Background(), in); err != nil || in.PaidC != 42 {
		t.Fatalf("payment: %v, paid customer %d; want 42", err, in.PaidC)
	}
	// ceil(5/2) = 3rd by first name: offset 2.
	if !slices.Contains(conn.calls, fmt.Sprintf("row %d.0 [1 2 BARBARBAR 2]", StepCustomerByName)) {
		t.Errorf("calls %q: want the customer at offset 2", conn.calls)
	}
	if n := countOf(conn.calls, "begin"); n != 3 {
		t.Errorf("%d transactions begun, want 3: two lost conflicts retried", n)
	}
}

func TestClientFlowDeliverySkipsEmptyDistricts(t *testing.T) {
	conn := &fakeFlowConn{}
	in := &DeliveryInput{W: 1, Carrier: 3}
	if err := NewClientFlow(conn, twoStatementSQL).Delivery(context.Background(), in); err != nil || in.Skipped != 5 {
		t.Fatalf("delivery: %v, %d skipped; want the 5 odd districts", err, in.Skipped)
	}
	if n := countOf(conn.calls, fmt.Sprintf("exec %d.0", StepCreditCustomer)); n != 5 {
		t.Errorf("%d customers credited, want 5", n)
	}
}

func countOf(calls []string, prefix string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}
