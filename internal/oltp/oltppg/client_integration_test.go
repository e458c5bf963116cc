//go:build integration

package oltppg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// builtTarget gives the test a managed PostgreSQL with one warehouse
// built, as loaded: the package's tests take turns on one instance (none
// runs beside another), built by the first and restored from its template
// for each after, so a test starts from the data a build leaves without
// paying for a build. It skips where PostgreSQL is not installed, unless
// CALIBRA_TEST_REQUIRE names postgresql.
func builtTarget(t testing.TB) (*postgres.Target, *pgx.Conn) {
	t.Helper()
	_, missing := postgres.FindBinaries("")
	testenv.Need(t, "postgresql", missing, "apt-get install postgresql")
	ctx := context.Background()
	if shared.target == nil {
		dir, remove, err := testenv.NewStorageDir()
		if err != nil {
			t.Fatal(err)
		}
		shared.remove = remove
		shared.target = build(t, dir, "", &shared.group)
	} else if err := shared.target.RestoreTemplate(ctx); err != nil {
		t.Fatal(err)
	}
	return shared.target, connect(t, shared.target)
}

// shared is the instance builtTarget shares, stopped and removed when the
// test binary ends.
var shared struct {
	target *postgres.Target
	group  *proc.Group
	remove func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	// A build that failed half way left a group and no target.
	if shared.target != nil {
		_ = shared.target.Stop()
	}
	if shared.group != nil {
		_ = shared.group.StopAll(time.Minute)
	}
	if shared.remove != nil {
		shared.remove()
	}
	os.Exit(code)
}

// builtTargetOn starts a managed PostgreSQL of the test's own, on the
// server binaries in pgBin ("" for the default ones), with one warehouse
// built and no template kept (nothing resets it).
func builtTargetOn(t testing.TB, pgBin string) (*postgres.Target, *pgx.Conn) {
	t.Helper()
	target := build(t, testenv.StorageDir(t), pgBin, nil)
	return target, connect(t, target)
}

// build prepares and starts a managed instance under dir and builds one
// warehouse: stopped with the test, or, given group, left to its caller
// and kept as a template for the resets of the tests that share it.
func build(t testing.TB, dir, pgBin string, group **proc.Group) *postgres.Target {
	t.Helper()
	ctx := context.Background()
	target, err := postgres.Prepare(ctx, postgres.TargetConfig{Path: dir, PGBin: pgBin, DBCache: "256MB"})
	if err != nil {
		t.Fatal(err)
	}
	if group == nil {
		testenv.Start(t, target)
	} else {
		*group = proc.NewGroup()
		if _, err := target.Start(ctx, *group); err != nil {
			t.Fatal(err)
		}
	}
	cfg := oltp.BuildConfig{Warehouses: 1, Seed: 3, Workers: 2, NoTemplate: group == nil}
	if _, err := oltp.Build(ctx, target, cfg, progress.New(io.Discard, progress.None, false)); err != nil {
		t.Fatal(err)
	}
	return target
}

// connect opens a connection to the benchmark schema, closed with the test.
func connect(t testing.TB, target *postgres.Target) *pgx.Conn {
	t.Helper()
	conn, err := target.ConnectSchema(context.Background(), oltp.Schema, "calibra-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// The three modes (stored procedures with binary parameters, the pipelined
// client and the statement-at-a-time client), and the first two on the
// polling driver's requests and answers, do the same thing to the data: a New-Order's rows (a stock row named twice updated
// twice), the unused item's rollback leaving nothing, Payment by last name
// paying the same customer, Delivery taking all ten districts, and the
// consistency conditions holding after.
func TestModesDoTheSameToTheData(t *testing.T) {
	if testing.Short() {
		t.Skip("real PostgreSQL work; run without -short")
	}
	target, conn := builtTarget(t)
	ctx := context.Background()
	count := func(sql string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	var last string
	if err := conn.QueryRow(ctx, "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 7").Scan(&last); err != nil {
		t.Fatal(err)
	}
	paid := map[string]int{}
	for _, c := range []struct {
		mode   oltp.Mode
		polled bool
	}{{oltp.ModeProcedures, false}, {oltp.ModeClient, false}, {oltp.ModeClientSimple, false}, {oltp.ModeProcedures, true}, {oltp.ModeClient, true}} {
		mode, name := c.mode, string(c.mode)
		if c.polled {
			name += "-polled"
		}
		t.Run(name, func(t *testing.T) {
			sess, err := oltp.NewSession(ctx, target, mode)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if c.polled {
				sess = newPolledSession(t, sess)
			}

			orders, lines := count("SELECT count(*) FROM orders"), count("SELECT count(*) FROM order_line")
			cnt5, ytd5 := count("SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 5"), count("SELECT s_ytd FROM stock WHERE s_w_id = 1 AND s_i_id = 5")
			no := &oltp.NewOrderInput{W: 1, D: 3, C: 11, AllLocal: true,
				ItemIDs: []int32{5, 5, 9}, SupplyW: []int32{1, 1, 1}, Qty: []int32{2, 3, 4}}
			if err := sess.NewOrder(ctx, no); err != nil {
				t.Fatalf("new-order: %v", err)
			}
			next := count("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3")
			if mode == oltp.ModeProcedures {
				no.OID = int(next - 1) // the procedure returns the order's total, not its id
			}
			if int64(no.OID) != next-1 {
				t.Errorf("order id %d, district's next %d", no.OID, next)
			}
			if o, l := count("SELECT count(*) FROM orders"), count("SELECT count(*) FROM order_line"); o != orders+1 || l != lines+3 {
				t.Errorf("orders %d→%d, lines %d→%d: want one order of three lines", orders, o, lines, l)
			}
			if q := count("SELECT sum(ol_quantity) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = $1 AND ol_dist_info <> ''", no.OID); q != 9 {
				t.Errorf("the order's lines hold %d items with their district info, want 9", q)
			}
			if c, y := count("SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 5"), count("SELECT s_ytd FROM stock WHERE s_w_id = 1 AND s_i_id = 5"); c != cnt5+2 || y != ytd5+5 {
				t.Errorf("item 5 named by two lines: order count %d→%d, ytd %d→%d; want +2 and +5", cnt5, c, ytd5, y)
			}

			orders = count("SELECT count(*) FROM orders")
			next = count("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4")
			unused := &oltp.NewOrderInput{W: 1, D: 4, C: 12, AllLocal: true, Rollback: true,
				ItemIDs: []int32{8, tpcc.Items + 1}, SupplyW: []int32{1, 1}, Qty: []int32{1, 1}}
			if err := sess.NewOrder(ctx, unused); !errors.Is(err, oltp.ErrRolledBack) {
				t.Fatalf("new-order with an unused item: %v, want the expected rollback", err)
			}
			if o, n := count("SELECT count(*) FROM orders"), count("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4"); o != orders || n != next {
				t.Errorf("after the rollback: orders %d→%d, next order id %d→%d; want nothing committed", orders, o, next, n)
			}

			pm := &oltp.PaymentInput{W: 1, D: 2, CW: 1, CD: 2, CLast: last, AmountCents: 1234}
			if err := sess.Payment(ctx, pm); err != nil {
				t.Fatalf("payment by name: %v", err)
			}
			paid[name] = pm.PaidC
			if err := sess.OrderStatus(ctx, &oltp.OrderStatusInput{W: 1, D: 2, CLast: last}); err != nil {
				t.Errorf("order-status by name: %v", err)
			}
			newOrders := count("SELECT count(*) FROM new_order")
			dl := &oltp.DeliveryInput{W: 1, Carrier: 3}
			if err := sess.Delivery(ctx, dl); err != nil || dl.Skipped != 0 {
				t.Fatalf("delivery: %v, %d districts skipped", err, dl.Skipped)
			}
			if n := count("SELECT count(*) FROM new_order"); n != newOrders-tpcc.DistrictsPerWarehouse {
				t.Errorf("new orders %d→%d: want one delivered per district", newOrders, n)
			}
			if err := sess.StockLevel(ctx, &oltp.StockLevelInput{W: 1, D: 3, Threshold: 15}); err != nil {
				t.Errorf("stock-level: %v", err)
			}
		})
	}
	for name, c := range paid {
		if c == 0 || c != paid[string(oltp.ModeProcedures)] {
			t.Errorf("payment by last name paid customer %v (%s): want the same one in every mode", paid, name)
		}
	}
	ctl := &control{conn: conn}
	if c, err := oltp.CheckConsistency(ctx, ctl); err != nil || !c.OK {
		t.Errorf("consistency conditions: %+v (%v)", c, err)
	}
}

// BenchmarkNewOrder is one New-Order through each mode against a
// real server: its time is mostly the server's and the round trips', its
// allocations are the driver's.
func BenchmarkNewOrder(b *testing.B) {
	target, _ := builtTarget(b)
	ctx := context.Background()
	for _, mode := range []oltp.Mode{oltp.ModeProcedures, oltp.ModeClient, oltp.ModeClientSimple} {
		b.Run(string(mode), func(b *testing.B) {
			sess, err := oltp.NewSession(ctx, target, mode)
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			term := &oltp.Terminal{W: 1, Warehouses: 1, Rng: tpcc.NewRand(9)}
			var in oltp.NewOrderInput
			b.ReportAllocs()
			for b.Loop() {
				term.NextNewOrder(&in)
				if err := sess.NewOrder(ctx, &in); err != nil && !errors.Is(err, oltp.ErrRolledBack) {
					b.Fatal(err)
				}
			}
		})
	}
}

// A client-mode New-Order that fails inside its transaction (a customer
// that does not exist, after its district's next order id was taken)
// fails with pgx's ErrNoRows on both paths and is rolled back: the next
// New-Order commits alone, and the district's next order id grows by it
// only.
func TestClientFailureRollsBackAndGoesOn(t *testing.T) {
	if testing.Short() {
		t.Skip("real PostgreSQL work; run without -short")
	}
	target, conn := builtTarget(t)
	ctx := context.Background()
	count := func(sql string) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	const nextOID = "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1"
	for _, polled := range []bool{false, true} {
		t.Run(fmt.Sprint("polled=", polled), func(t *testing.T) {
			sess, err := oltp.NewSession(ctx, target, oltp.ModeClient)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if polled {
				sess = newPolledSession(t, sess)
			}
			orders, next := count("SELECT count(*) FROM orders"), count(nextOID)
			order := func(c int) *oltp.NewOrderInput {
				return &oltp.NewOrderInput{W: 1, D: 1, C: c, AllLocal: true, ItemIDs: []int32{1}, SupplyW: []int32{1}, Qty: []int32{1}}
			}
			if err := sess.NewOrder(ctx, order(tpcc.CustomersPerDistrict+1)); !errors.Is(err, pgx.ErrNoRows) {
				t.Fatalf("a New-Order for a customer that does not exist: %v, want pgx.ErrNoRows", err)
			}
			if err := sess.NewOrder(ctx, order(1)); err != nil {
				t.Fatalf("the next New-Order: %v", err)
			}
			if o, n := count("SELECT count(*) FROM orders"), count(nextOID); o != orders+1 || n != next+1 {
				t.Errorf("orders %d→%d, next order id %d→%d: want the second New-Order's alone", orders, o, next, n)
			}
		})
	}
}
