// Package oltptest holds the checks every engine's OLTP tests make of a
// timed run: the server counted what the client completed, and the mix is
// the deck's.
package oltptest

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// SpecMix is the spec profile's mix, in percent of the transactions.
var SpecMix = map[string]float64{"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4}

// MinMixTransactions is the fewest transactions a window must complete
// for its mix to be judged.
const MinMixTransactions = 100

// MixTolerance is how far, in percentage points, a window of total
// transactions dealt by users may deal a type from its share. Whole decks
// deal the mix exactly; the window cuts each user's deck twice, at its
// start (the ramp-up dealt part of that deck) and at its end, and each
// partial deck of 100 cards shifts a type by some 2.5 cards (one standard
// deviation, at worst half a deck dealt), independently of the others:
// four deviations of the sum, 10 cards times the root of twice the users,
// never below 2 points. (Counting only the last deck's cut, a paced window
// of 914 transactions by 4 users once dealt New-Order 20.7 cards over.)
func MixTolerance(total int64, users int) float64 {
	return max(2, 100*10*math.Sqrt(2*float64(max(users, 1)))/float64(total))
}

// CheckMix checks that every type of the spec mix completed without an
// error the client kept (a deadlock retried is not one) when errorsFail,
// and that each type's share lies within MixTolerance. A window of fewer
// than MinMixTransactions is not judged, and says so in the test's log:
// starved beside other packages (a closed loop of 3 users on MariaDB once
// completed 97 in 3 s), its deal proves nothing either way. It returns
// the transactions counted.
func CheckMix(t testing.TB, o *results.OLTP, errorsFail bool) int64 {
	t.Helper()
	var total int64
	for name := range SpecMix {
		tx := o.Transactions[name]
		if errorsFail && tx.Errors != 0 {
			t.Errorf("%s: %d errors", name, tx.Errors)
		}
		total += tx.Count
	}
	if total < MinMixTransactions {
		t.Logf("only %d transactions: too few to judge the mix, not judged", total)
		return total
	}
	for name := range SpecMix {
		if o.Transactions[name].Count == 0 {
			t.Errorf("%s: none completed in %d transactions", name, total)
		}
	}
	tolerance := MixTolerance(total, o.Users)
	for name, pct := range SpecMix {
		if math.Abs(o.MixPct[name]-pct) > tolerance {
			t.Errorf("%s is %.2f%% of the mix, want %.0f%% ± %.1f (%d transactions)", name, o.MixPct[name], pct, tolerance, total)
		}
	}
	return total
}

// TPMAgrees checks that the server counted the transactions the client
// completed in the window: the edges are exact and tpm_db leaves out what
// autovacuum committed in the window (PostgreSQL counts its transactions
// with calibra's), so within 5 and the transactions that failed (a
// deadlock is the server's, not the client's; a visit of autovacuum's
// that found nothing to do commits 2 unseen), except where a worker was
// at work at an edge: tpm_db then says it could not take out autovacuum's
// transactions, a few for each table it took, never fewer than the
// client's.
func TPMAgrees(o *results.OLTP) error {
	if o.TPMDB == nil {
		return fmt.Errorf("no tpm_db: %v", o.Missing)
	}
	d := (*o.TPMDB - o.TPMClient) * o.DurationS / 60
	limit := 5.0
	for _, tx := range o.Transactions {
		limit += float64(tx.Errors)
	}
	// 2 for each autovacuum visit that found nothing to do, which no
	// statistic shows (one a naptime, 1 min: docs/metrics.md); a visit's
	// work is taken out or said to be missing.
	if d > 0 {
		limit += 2 * (1 + math.Floor(o.DurationS/60))
	}
	av := o.AutovacuumInWindow
	if why := o.Missing["autovacuum_xacts"]; av != nil && why != "" && d > 0 {
		limit += 10 * float64(max(*av, 1))
	}
	if math.Abs(d) > limit {
		return fmt.Errorf("tpm_db %.1f and tpm_client %.1f differ by %+.0f transactions over %.1f s, more than %.0f (autovacuum_in_window %s, autovacuum_xacts %s, missing %q)",
			*o.TPMDB, o.TPMClient, d, o.DurationS, limit, Show(av), Show(o.AutovacuumXacts), o.Missing["autovacuum_xacts"])
	}
	return nil
}

// Show prints a figure that may be absent.
func Show(v *int64) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprint(*v)
}

// Window is how long a test's timed window of mode runs to complete the
// MinMixTransactions its mix is judged on, on a busy machine: a few
// seconds, twice that for a statement at a time (client-simple), which
// ran some 200 transactions in 3 s beside other tests' loads.
func Window(mode string) time.Duration {
	if mode == "client-simple" {
		return 6 * time.Second
	}
	return 3 * time.Second
}

// PacedRate is the open-loop rate, in transactions a second per user, of a
// test that checks what a window did rather than how fast. A closed loop
// takes every cycle the machine gives it, and beside other tests it
// starves their servers and builds (a MariaDB test's two closed windows
// cost 43 s of CPU alone, paced 20 s). Three users at this rate complete
// MinMixTransactions in a Window more than twice over (225 in 3 s): each
// transaction costs the suite's CPU-bound run about a millisecond of CPU
// (server and driver), and at 40 a second the windows ran 60% more of
// them for no check they lack now. A machine too busy to keep up runs the
// loop back to back, as a closed one would, which is why a statement at a
// time keeps its longer Window (72 transactions in 3 s paced beside other
// tests' loads).
const PacedRate = 25

// PacedFlag is --rate-per-user at PacedRate, for a command line.
var PacedFlag = fmt.Sprintf("--rate-per-user=%d", PacedRate)

// Paced is the flags of a paced window of mode: its Window at PacedRate.
func Paced(mode string) []string {
	return []string{"--duration", Window(mode).String(), PacedFlag}
}
