package oltp

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// counts builds window counts: completed transactions per type (New-Order
// rollbacks among them) and the inputs drawn.
func counts(no, pm, os, dl, sl, rollbacks int64) [numTxTypes]typeStats {
	return [numTxTypes]typeStats{{count: no, rollbacks: rollbacks}, {count: pm}, {count: os}, {count: dl}, {count: sl}}
}

func TestCheckJudgesTheMixAndTheBands(t *testing.T) {
	good := inputCounts{orderLines: 9000, remoteLines: 90, remotePayments: 129, paymentsByName: 516, orderStatusByName: 48}
	cases := []struct {
		name       string
		types      [numTxTypes]typeStats
		in         inputCounts
		warehouses int
		reasons    []string // each must appear, in order; none means valid
	}{
		{"a correct run", counts(900, 860, 80, 80, 80, 9), good, 4, nil},
		{"the open-loop run's Payment share of 39.17%", counts(1000, 800, 84, 80, 80, 10),
			inputCounts{orderLines: 10170, remoteLines: 100, remotePayments: 117, paymentsByName: 470, orderStatusByName: 50}, 4,
			[]string{"payment is 39.1"}},
		{"too few Deliveries", counts(900, 860, 80, 20, 80, 9), good, 4, []string{"delivery is 1.0"}},
		{"no remote payments with four warehouses", counts(900, 860, 80, 80, 80, 9),
			inputCounts{orderLines: 9000, remoteLines: 90, paymentsByName: 516, orderStatusByName: 48}, 4, []string{"payment.remote is 0.00%"}},
		{"one warehouse cannot have remote work", counts(900, 860, 80, 80, 80, 9),
			inputCounts{orderLines: 9000, paymentsByName: 516, orderStatusByName: 48}, 1, nil},
		// 358,965 transactions of 8 users at the deck's own shares (a real
		// MariaDB run): Order-Status 3.9987%, its bound 3.9956% shown as 3.99.
		{"a long run at the deck's shares", counts(161539, 154356, 14354, 14357, 14359, 1615),
			inputCounts{orderLines: 1615390, remoteLines: 16154, remotePayments: 23153, paymentsByName: 92614, orderStatusByName: 8612}, 4, nil},
		{"every New-Order rolled back", counts(900, 860, 80, 80, 80, 900), good, 4, []string{"new_order.rollbacks is 100.00%"}},
		// 80 Order-Status transactions judge a share only within ±22 points.
		{"by-name selections at 40% and 20%", counts(900, 860, 80, 80, 80, 9),
			inputCounts{orderLines: 9000, remoteLines: 90, remotePayments: 129, paymentsByName: 344, orderStatusByName: 16}, 4,
			[]string{"payment.by_name is 40.00%", "order_status.by_name is 20.00%"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checks, reasons := check(c.types, c.in, ProfileSpec, 3, c.warehouses)
			if len(checks) != 9 {
				t.Fatalf("%d checks, want 4 mix minimums and 5 bands", len(checks))
			}
			if len(reasons) != len(c.reasons) {
				t.Fatalf("reasons %q, want %d", reasons, len(c.reasons))
			}
			for i, want := range c.reasons {
				if !strings.Contains(reasons[i], want) {
					t.Errorf("reason %q does not say %q", reasons[i], want)
				}
			}
		})
	}
	if checks, reasons := check(counts(0, 0, 0, 0, 0, 0), inputCounts{}, ProfileSpec, 3, 4); checks != nil || reasons != nil {
		t.Error("an empty window was judged")
	}
}

// The tolerances let a correct run of a few thousand transactions through:
// the driver's own decks and terminals, with each user's window starting
// and ending mid-deck, pass in nearly every trial, for both profiles, while
// a mix that is a few points off fails.
func TestACorrectRunOfAFewThousandTransactionsIsValid(t *testing.T) {
	for _, p := range Profiles {
		failed := 0
		const trials = 200
		for trial := range trials {
			var types [numTxTypes]typeStats
			var in inputCounts
			for u := range 3 {
				rng := tpcc.NewRand(uint64(trial), 0x5E, uint64(u))
				us := &user{term: Terminal{W: u%4 + 1, Warehouses: 4, C: tpcc.RunConstants(rng, tpcc.Constants{CLast: 100}), Rng: rng,
					Uniform: p == ProfileHammerDB}, deck: NewDeck(rng, p)}
				var ins TxInputs
				for range rng.IntRange(0, 99) { // the window starts mid-deck
					us.deck.Next()
				}
				for range 700 {
					tx := us.deck.Next()
					switch tx {
					case NewOrder:
						us.term.NextNewOrder(&ins.no)
						if ins.no.Rollback {
							types[tx].rollbacks++
						}
					case Payment:
						us.term.NextPayment(&ins.pm)
					case OrderStatus:
						us.term.NextOrderStatus(&ins.os)
					}
					types[tx].count++
					in.count(tx, &ins)
				}
			}
			if _, reasons := check(types, in, p, 3, 4); len(reasons) > 0 {
				failed++
				t.Logf("%s trial %d: %q", p, trial, reasons)
			}
		}
		if failed > trials/50 {
			t.Errorf("%s: %d of %d correct runs of 2,100 transactions were judged invalid", p, failed, trials)
		}
	}
}
