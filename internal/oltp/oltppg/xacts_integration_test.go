//go:build integration

package oltppg

import (
	"context"
	"errors"
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// TestEachTransactionIsOneOnTheServer holds what tpm_db counts to what the
// client completes: on a fresh session of each mode, the first run of each
// transaction type (both Payments and Order-Statuses, the unused item's
// rollback) is one transaction in the server's xact_commit +
// xact_rollback, as every later one is, and a failed one its rollback
// alone. A statement prepared on its first
// use outside BEGIN ... COMMIT is one more, which the server counts in
// the window and the client does not (tpm_db read +21 above tpm_client
// for 3 client-mode users whose window began before they had run each
// type once).
func TestEachTransactionIsOneOnTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("real PostgreSQL work; run without -short")
	}
	target, conn := builtTarget(t)
	ctx := context.Background()
	ctl := &control{conn: conn}
	var last string
	if err := conn.QueryRow(ctx, "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 7").Scan(&last); err != nil {
		t.Fatal(err)
	}
	paymentByID := func(s oltp.Session, cents int) error {
		return s.Payment(ctx, &oltp.PaymentInput{W: 1, D: 2, CW: 1, CD: 2, C: 7, AmountCents: cents})
	}
	txs := []struct {
		name string
		want int64 // transactions
		run  func(oltp.Session) error
	}{
		{"new-order", 1, func(s oltp.Session) error {
			return s.NewOrder(ctx, &oltp.NewOrderInput{W: 1, D: 3, C: 11, AllLocal: true,
				ItemIDs: []int32{5, 5, 9}, SupplyW: []int32{1, 1, 1}, Qty: []int32{2, 3, 4}})
		}},
		{"new-order unused item", 1, func(s oltp.Session) error {
			err := s.NewOrder(ctx, &oltp.NewOrderInput{W: 1, D: 4, C: 12, AllLocal: true, Rollback: true,
				ItemIDs: []int32{8, tpcc.Items + 1}, SupplyW: []int32{1, 1}, Qty: []int32{1, 1}})
			if errors.Is(err, oltp.ErrRolledBack) {
				return nil
			}
			return err
		}},
		{"payment by id", 1, func(s oltp.Session) error { return paymentByID(s, 1234) }},
		// A failure is the server's rollback and nothing more: its
		// statement is not prepared again for the next.
		{"payment after a failed one", 2, func(s oltp.Session) error {
			if err := paymentByID(s, 1000000); err == nil {
				return errors.New("a payment of 10,000.00, over h_amount's numeric(6,2), succeeded")
			}
			return paymentByID(s, 1234)
		}},
		{"payment by name", 1, func(s oltp.Session) error {
			return s.Payment(ctx, &oltp.PaymentInput{W: 1, D: 2, CW: 1, CD: 2, CLast: last, AmountCents: 1234})
		}},
		{"order-status by id", 1, func(s oltp.Session) error {
			return s.OrderStatus(ctx, &oltp.OrderStatusInput{W: 1, D: 2, C: 7})
		}},
		{"order-status by name", 1, func(s oltp.Session) error {
			return s.OrderStatus(ctx, &oltp.OrderStatusInput{W: 1, D: 2, CLast: last})
		}},
		{"delivery", 1, func(s oltp.Session) error { return s.Delivery(ctx, &oltp.DeliveryInput{W: 1, Carrier: 3}) }},
		{"stock-level", 1, func(s oltp.Session) error {
			return s.StockLevel(ctx, &oltp.StockLevelInput{W: 1, D: 3, Threshold: 15})
		}},
	}
	for _, mode := range []oltp.Mode{oltp.ModeProcedures, oltp.ModeClient, oltp.ModeClientSimple} {
		t.Run(string(mode), func(t *testing.T) {
			sess, err := oltp.NewSession(ctx, target, mode)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			for _, tx := range txs {
				// The session's flush publishes what it did before, so the
				// start read holds it; the read's commit and its own flush
				// are 2 inside, the session's flush after the transaction
				// 1 more.
				if err := sess.FlushStats(ctx); err != nil {
					t.Fatal(err)
				}
				c0, err := ctl.Counters(ctx, true)
				if err != nil {
					t.Fatal(err)
				}
				if err := tx.run(sess); err != nil {
					t.Fatalf("%s: %v", tx.name, err)
				}
				if err := sess.FlushStats(ctx); err != nil {
					t.Fatal(err)
				}
				c1, err := ctl.Counters(ctx, false)
				if err != nil {
					t.Fatal(err)
				}
				av, known := oltp.AutovacuumXacts(c0, c1)
				if !known {
					t.Logf("%s: an autovacuum worker at an edge, the count not checked", tx.name)
					continue
				}
				if n := c1.Xacts - c0.Xacts - 3 - av; n != tx.want {
					t.Errorf("%s, on a fresh session: the server counted %d transactions, want %d", tx.name, n, tx.want)
				}
			}
		})
	}
}
