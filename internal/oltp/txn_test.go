package oltp

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

func TestDeckHoldsTheMixExactlyInEveryDeck(t *testing.T) {
	for _, p := range Profiles {
		d := NewDeck(tpcc.NewRand(7, 1), p)
		want := p.cards()
		for round := 0; round < 5; round++ {
			var n [numTxTypes]int
			for range len(d.cards) {
				n[d.Next()]++
			}
			if n != want {
				t.Fatalf("%s round %d dealt %v, want %v", p, round, n, want)
			}
		}
	}
}

// The hammerdb profile deals HammerDB's 10/10/1/1/1 of 23: 43.48% New-Order
// over any long sequence, not the 45% its documentation states.
func TestHammerDBDeckDeals43_48PercentNewOrder(t *testing.T) {
	d := NewDeck(tpcc.NewRand(11, 3), ProfileHammerDB)
	const n = 23 * 1000
	var got [numTxTypes]int
	for range n {
		got[d.Next()]++
	}
	want := [numTxTypes]float64{43.48, 43.48, 4.35, 4.35, 4.35}
	for i, w := range want {
		within(t, TxType(i).String()+" share %", 100*float64(got[i])/n, w, 0.005)
	}
}

// The hammerdb profile draws items and customer numbers uniformly, as
// HammerDB's driver does; the spec profile's NURand puts 30% of item
// accesses on the most popular 1% of items.
func TestHammerDBDrawsAreUniform(t *testing.T) {
	const n = 40000
	topShare := func(uniform bool) (items, customers float64) {
		term := newTerminal(4)
		term.Uniform = uniform
		itemHits := make([]int, tpcc.Items+1)
		custHits := make([]int, tpcc.CustomersPerDistrict+1)
		var no NewOrderInput
		lines := 0
		for range n {
			term.NextNewOrder(&no)
			custHits[no.C]++
			for i, it := range no.ItemIDs {
				if no.Rollback && i == len(no.ItemIDs)-1 {
					continue
				}
				itemHits[it]++
				lines++
			}
		}
		top := func(hits []int, of int, frac float64) float64 {
			s := append([]int(nil), hits...)
			slices.Sort(s)
			k := int(float64(len(s)) * frac)
			sum := 0
			for _, h := range s[len(s)-k:] {
				sum += h
			}
			return float64(sum) / float64(of)
		}
		return top(itemHits, lines, 0.01), top(custHits, n, 0.01)
	}
	items, customers := topShare(true)
	// Uniform: the busiest 1% of ids take a little more than 1% by chance
	// (about 2.5% of items at 4 draws per item, 1.8% of customers at 13).
	t.Logf("top 1%%: items %.3f customers %.3f (uniform)", items, customers)
	if items > 0.04 || customers > 0.03 {
		t.Errorf("uniform draws: the top 1%% of items take %.1f%%, of customers %.1f%%; want about 1%%", 100*items, 100*customers)
	}
	items, customers = topShare(false)
	t.Logf("top 1%%: items %.3f customers %.3f (NURand)", items, customers)
	if items < 0.25 || customers < 0.15 {
		t.Errorf("NURand draws: the top 1%% of items take %.1f%%, of customers %.1f%%; want them skewed", 100*items, 100*customers)
	}
	// A chi-square test of uniformity over 100 buckets of item numbers.
	term := newTerminal(4)
	term.Uniform = true
	var buckets [100]float64
	for range 100000 {
		buckets[(term.item()-1)*100/tpcc.Items]++
	}
	chi := 0.0
	for _, b := range buckets {
		chi += (b - 1000) * (b - 1000) / 1000
	}
	if chi > 148 { // the 0.1% critical value for 99 degrees of freedom
		t.Errorf("item numbers are not uniform: chi-square %.0f over 100 buckets", chi)
	}
}

// Clauses 2.4.1.2, 2.5.1.1 and 2.6.1.1: a terminal bound to a district (keying
// and thinking on) still draws New-Order, Payment and Order-Status districts
// per transaction; only Stock-Level keeps the terminal's own.
func TestTerminalDrawsDistrictsPerTransaction(t *testing.T) {
	term := newTerminal(2)
	term.D = 3
	seen := map[string]map[int]bool{"new_order": {}, "payment": {}, "order_status": {}, "stock_level": {}}
	var no NewOrderInput
	var pm PaymentInput
	var os OrderStatusInput
	var sl StockLevelInput
	for range 1000 {
		term.NextNewOrder(&no)
		term.NextPayment(&pm)
		term.NextOrderStatus(&os)
		term.NextStockLevel(&sl)
		seen["new_order"][no.D] = true
		seen["payment"][pm.D] = true
		seen["order_status"][os.D] = true
		seen["stock_level"][sl.D] = true
	}
	for name, ds := range seen {
		want := 10
		if name == "stock_level" {
			want = 1
		}
		if len(ds) != want {
			t.Errorf("%s used %d districts, want %d", name, len(ds), want)
		}
	}
	if !seen["stock_level"][3] {
		t.Error("Stock-Level did not use the terminal's own district")
	}
}

func TestDeckIsShuffled(t *testing.T) {
	d := NewDeck(tpcc.NewRand(7, 1), ProfileSpec)
	first := make([]TxType, 100)
	for i := range first {
		first[i] = d.Next()
	}
	// An unshuffled deck would deal 45 New-Orders first.
	run := 0
	for _, c := range first {
		if c != NewOrder {
			break
		}
		run++
	}
	if run >= 20 {
		t.Fatalf("the deck starts with %d New-Orders in a row: not shuffled", run)
	}
	second := make([]TxType, 100)
	for i := range second {
		second[i] = d.Next()
	}
	same := true
	for i := range first {
		same = same && first[i] == second[i]
	}
	if same {
		t.Fatal("the second deck repeats the first: not reshuffled")
	}
}

func TestThinkTimeIsTruncatedAtTenTimesTheMean(t *testing.T) {
	cases := []struct {
		name  string
		typ   TxType
		scale float64
		u     float64
		want  time.Duration
	}{
		{"median draw of New-Order", NewOrder, 1, 0.5, time.Duration(-math.Log(0.5) * 12 * float64(time.Second))},
		{"tiny u is capped at 10x the mean", Payment, 1, 1e-300, 120 * time.Second},
		{"scale shrinks the cap too", Delivery, 0.01, 1e-300, 500 * time.Millisecond},
		{"u of one thinks zero", StockLevel, 1, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ThinkTime(c.typ, c.scale, c.u)
			if d := got - c.want; d > time.Microsecond || d < -time.Microsecond {
				t.Fatalf("ThinkTime = %v, want %v", got, c.want)
			}
		})
	}
	if k := KeyingTime(NewOrder, 0.1); k != 1800*time.Millisecond {
		t.Fatalf("KeyingTime(NewOrder, 0.1) = %v, want 1.8s", k)
	}
}

func newTerminal(warehouses int) *Terminal {
	r := tpcc.NewRand(3, 9)
	return &Terminal{W: 1, Warehouses: warehouses, C: tpcc.RunConstants(r, tpcc.Constants{CLast: 100}), Rng: r}
}

func TestNewOrderInputFollowsClause2_4_1(t *testing.T) {
	term := newTerminal(4)
	var in NewOrderInput
	const n = 100000
	var rollbacks, lines, remote int
	for range n {
		term.NextNewOrder(&in)
		if len(in.ItemIDs) < 5 || len(in.ItemIDs) > 15 {
			t.Fatalf("%d order lines, want 5 to 15", len(in.ItemIDs))
		}
		if in.C < 1 || in.C > 3000 || in.D < 1 || in.D > 10 {
			t.Fatalf("customer %d district %d out of range", in.C, in.D)
		}
		last := len(in.ItemIDs) - 1
		if in.Rollback {
			rollbacks++
			if in.ItemIDs[last] != tpcc.Items+1 {
				t.Fatalf("a rollback order's last item is %d, want the unused %d", in.ItemIDs[last], tpcc.Items+1)
			}
			last--
		}
		allLocal := true
		for i := 0; i <= last; i++ {
			if in.ItemIDs[i] < 1 || in.ItemIDs[i] > tpcc.Items {
				t.Fatalf("item %d out of range", in.ItemIDs[i])
			}
			if in.Qty[i] < 1 || in.Qty[i] > 10 {
				t.Fatalf("quantity %d out of range", in.Qty[i])
			}
			if i > 0 && (in.SupplyW[i] < in.SupplyW[i-1] || in.SupplyW[i] == in.SupplyW[i-1] && in.ItemIDs[i] < in.ItemIDs[i-1]) {
				t.Fatal("order lines are not sorted by (supply warehouse, item): concurrent orders could deadlock")
			}
			if in.SupplyW[i] != int32(in.W) {
				remote++
			}
			lines++
		}
		for _, w := range in.SupplyW {
			allLocal = allLocal && w == int32(in.W)
		}
		if allLocal != in.AllLocal {
			t.Fatal("AllLocal disagrees with the supply warehouses")
		}
	}
	within(t, "rollback share", float64(rollbacks)/n, 0.01, 0.002)
	within(t, "remote line share", float64(remote)/float64(lines), 0.01, 0.002)
}

func TestPaymentInputFollowsClause2_5_1(t *testing.T) {
	term := newTerminal(4)
	var in PaymentInput
	const n = 100000
	var byName, remote int
	for range n {
		term.NextPayment(&in)
		if in.AmountCents < 100 || in.AmountCents > 500000 {
			t.Fatalf("amount %d cents out of [1.00, 5000.00]", in.AmountCents)
		}
		if in.C == 0 {
			byName++
			if in.CLast == "" {
				t.Fatal("a by-name payment without a last name")
			}
		}
		if in.CW != in.W {
			remote++
		}
	}
	within(t, "by-name share", float64(byName)/n, 0.60, 0.01)
	within(t, "remote customer share", float64(remote)/n, 0.15, 0.01)
}

func TestOneWarehouseHasNoRemoteWork(t *testing.T) {
	term := newTerminal(1)
	var no NewOrderInput
	var pm PaymentInput
	for range 10000 {
		term.NextNewOrder(&no)
		term.NextPayment(&pm)
		if !no.AllLocal || pm.CW != 1 {
			t.Fatal("a single warehouse produced remote work")
		}
	}
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.4f, want %.4f ± %.4f", what, got, want, tol)
	}
}
