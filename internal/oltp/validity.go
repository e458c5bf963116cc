package oltp

import (
	"fmt"
	"math"

	"github.com/calibra-bench/calibra/internal/results"
)

// inputCounts are the drawn inputs clause 9.2.2.5 puts bands on, counted
// over a user's completed transactions in the window: a few integer
// increments per transaction, merged once at the end.
type inputCounts struct {
	orderLines, remoteLines        int64
	remotePayments, paymentsByName int64
	orderStatusByName              int64
	skippedDistricts               int64
}

func (c *inputCounts) add(o inputCounts) {
	c.orderLines += o.orderLines
	c.remoteLines += o.remoteLines
	c.remotePayments += o.remotePayments
	c.paymentsByName += o.paymentsByName
	c.orderStatusByName += o.orderStatusByName
	c.skippedDistricts += o.skippedDistricts
}

// count files the inputs of a completed transaction of type t.
func (c *inputCounts) count(t TxType, u *TxInputs) {
	switch t {
	case NewOrder:
		c.orderLines += int64(len(u.no.ItemIDs))
		c.remoteLines += int64(u.no.RemoteLines)
	case Payment:
		if u.pm.CW != u.pm.W {
			c.remotePayments++
		}
		if u.pm.C == 0 {
			c.paymentsByName++
		}
	case OrderStatus:
		if u.os.C == 0 {
			c.orderStatusByName++
		}
	case Delivery:
		c.skippedDistricts += int64(u.dl.Skipped)
	}
}

// mixMinimums are clause 5.2.3's minimum shares of the mix, in percent;
// New-Order has none.
var mixMinimums = [numTxTypes]float64{0, 43, 4, 4, 4}

// band is one of clause 9.2.2.5's ranges around a nominal share.
type band struct {
	name, target string
	nominal      float64 // percent
	lo, hi       float64 // the specification's range, percent
}

var (
	bandRemoteLines    = band{"new_order.remote_lines", "1% of order lines (0.95-1.05%)", 1, 0.95, 1.05}
	bandRollbacks      = band{"new_order.rollbacks", "1% of New-Orders (0.9-1.1%)", 1, 0.9, 1.1}
	bandRemotePayments = band{"payment.remote", "15% of Payments (14-16%)", 15, 14, 16}
	bandPaymentByName  = band{"payment.by_name", "60% of Payments (57-63%)", 60, 57, 63}
	bandStatusByName   = band{"order_status.by_name", "60% of Order-Status (57-63%)", 60, 57, 63}
)

// sigmas is how many standard deviations of sampling noise a measured share
// may stray beyond the specification's range: with four, a correct run of
// a few thousand transactions passes all nine checks in more than 99 trials
// of 100 (TestACorrectRunOfAFewThousandTransactionsIsValid), while a mix or
// an input draw off by a few points fails.
const sigmas = 4

// check judges the window's measured mix and inputs. The mix minimums
// allow for the partial decks at the window's two edges (each user's window
// starts and ends mid-deck): up to sigmas standard deviations of a
// hypergeometric draw of half a deck at each edge of each user. The bands
// allow the binomial noise of their count, or the specification's own
// range where that is wider. With one warehouse no remote warehouse
// exists: the two remote bands are reported, not judged.
func check(types [numTxTypes]typeStats, in inputCounts, p Profile, users, warehouses int) ([]results.BandCheck, []string) {
	var total int64
	for _, s := range types {
		total += s.count
	}
	if total == 0 {
		return nil, nil
	}
	cards := p.cards()
	deck := 0
	for _, n := range cards {
		deck += n
	}
	var out []results.BandCheck
	for t := NewOrder + 1; t < numTxTypes; t++ {
		share := float64(cards[t]) / float64(deck)
		slack := sigmas * math.Sqrt(float64(users)*float64(deck)/2*share*(1-share)) / float64(total) * 100
		c := results.BandCheck{Name: "mix." + t.String(), Clause: "5.2.3", Count: types[t].count, Of: total,
			Pct: pct(types[t].count, total), Target: fmt.Sprintf(">= %g%%", mixMinimums[t]), LowPct: floor2(mixMinimums[t] - slack)}
		c.OK = share100(types[t].count, total) >= c.LowPct
		out = append(out, c)
	}
	judge := func(b band, count, of int64, note string) {
		c := results.BandCheck{Name: b.name, Clause: "9.2.2.5", Count: count, Of: of, Pct: pct(count, of), Target: b.target, Note: note}
		if of == 0 {
			c.OK, c.Note = true, "none in the window: not judged"
			out = append(out, c)
			return
		}
		noise := sigmas * 100 * math.Sqrt(b.nominal/100*(1-b.nominal/100)/float64(of))
		c.LowPct = floor2(math.Max(0, math.Min(b.lo, b.nominal-noise)))
		c.HighPct = ceil2(math.Max(b.hi, b.nominal+noise))
		got := share100(count, of)
		c.OK = note != "" || got >= c.LowPct && got <= c.HighPct
		out = append(out, c)
	}
	remote := ""
	if warehouses < 2 {
		remote = "one warehouse: no remote warehouse exists, not judged"
	}
	judge(bandRemoteLines, in.remoteLines, in.orderLines, remote)
	judge(bandRollbacks, types[NewOrder].rollbacks, types[NewOrder].count, "")
	judge(bandRemotePayments, in.remotePayments, types[Payment].count, remote)
	judge(bandPaymentByName, in.paymentsByName, types[Payment].count, "")
	judge(bandStatusByName, in.orderStatusByName, types[OrderStatus].count, "")
	var reasons []string
	for _, c := range out {
		if c.OK {
			continue
		}
		switch {
		case c.HighPct == 0:
			reasons = append(reasons, fmt.Sprintf("%s is %.2f%% of the mix, below clause %s's minimum of %s (judged at %.2f%% for %d transactions)",
				c.Name[len("mix."):], c.Pct, c.Clause, c.Target[len(">= "):], c.LowPct, c.Of))
		default:
			reasons = append(reasons, fmt.Sprintf("%s is %.2f%%, outside clause %s's %s (judged at %.2f-%.2f%% for %d)",
				c.Name, c.Pct, c.Clause, c.Target, c.LowPct, c.HighPct, c.Of))
		}
	}
	return out, reasons
}

// deliverySkips reports the districts the window's Deliveries skipped, and
// a warning above clause 2.7.4.2's 1%.
func deliverySkips(deliveries, skipped int64) (*results.DeliverySkips, string) {
	if deliveries == 0 {
		return nil, ""
	}
	d := &results.DeliverySkips{Deliveries: deliveries, SkippedDistricts: skipped,
		SkippedPct: results.Round(100*float64(skipped)/float64(deliveries*10), 3)}
	if d.SkippedPct > 1 {
		return d, fmt.Sprintf("%.2f%% of the districts the Deliveries processed had no undelivered order (clause 2.7.4.2 flags more than 1%%): the New-Orders do not keep up with the Deliveries", d.SkippedPct)
	}
	return d, ""
}

func pct(n, of int64) float64 { return results.Round(share100(n, of), 3) }

// share100 is n of of in percent, unrounded: what a check judges.
func share100(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// A check's bounds are shown to two decimals, rounded outward, and judged
// as shown: rounded to the nearest, a long run's minimum of 3.9956% read
// 4.00%, and a run at the deck's exact 3.9987% was judged invalid.
func floor2(x float64) float64 { return math.Floor(x*100) / 100 }
func ceil2(x float64) float64  { return math.Ceil(x*100) / 100 }
