package clitest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/results"
)

// NewOrders is the New-Orders the TPC-C-like schema in db holds: the sum
// of the districts' next order ids, the counter NOPM is taken from.
func NewOrders(t *testing.T, db *pgx.Conn) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(context.Background(), "SELECT sum(d_next_o_id) FROM calibra_tpcc.district").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// NewOrdersSQL is NewOrders for a MariaDB connection on calibra's
// database.
func NewOrdersSQL(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow("SELECT SUM(d_next_o_id) FROM district").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// CheckMerge checks the merge of the partitions' run directories (the
// counter partition, 1/N, first) against the database, which gained
// New-Orders over the whole run: every partition held at both window
// edges until the counter partition had read the counters, the merged
// NOPM counts them exactly, as do the partitions' commits, and each
// transaction's percentiles are those of the union of the partitions'
// window histograms. It returns the merged step's body.
func CheckMerge(t *testing.T, merged string, parts []string, gained int64) *results.OLTP {
	t.Helper()
	st, o := LastStep[*results.OLTP](t, merged)
	if st.Status != results.StatusComplete || o.NOPM == nil {
		t.Fatalf("the merge: status %s, nopm %v (%v)", st.Status, o.NOPM, o.Missing)
	}
	for _, dir := range parts {
		if _, p := LastStep[*results.OLTP](t, dir); p.Partition == nil || !p.Partition.EdgesHeld {
			t.Errorf("%s: the partitions were not held together at the window's edges: %v", dir, p.Warnings)
		}
	}
	counted := *o.NOPM * o.DurationS / 60
	t.Logf("database gained %d orders, merged NOPM %.0f over %.2f s counts %.3f; partitions committed %d; tpm_client %.0f, tpm_db %.0f (%s)",
		gained, *o.NOPM, o.DurationS, counted, o.NewOrderCommits, o.TPMClient, deref(o.TPMDB), o.Missing["tpm_db"])
	if gained < 20 {
		t.Errorf("the database gained %d New-Orders: too few to check the merge by", gained)
	}
	if math.Round(counted) != float64(gained) {
		t.Errorf("merged NOPM counts %.3f New-Orders in the window, the database gained %d", counted, gained)
	}
	if o.NewOrderCommits != gained {
		t.Errorf("the partitions committed %d New-Orders, the database gained %d", o.NewOrderCommits, gained)
	}
	union := windowHistograms(t, parts)
	for name, tx := range o.Transactions {
		u := union[name]
		if u == nil || u.TotalCount() != tx.Count {
			t.Errorf("%s: the union of the logs holds %v values, the merged count is %d", name, u, tx.Count)
			continue
		}
		got := []float64{tx.LatMs.P50, tx.LatMs.P90, tx.LatMs.P95, tx.LatMs.P99, tx.LatMs.Max}
		want := []float64{float64(u.ValueAtQuantile(50)) / 1000, float64(u.ValueAtQuantile(90)) / 1000, float64(u.ValueAtQuantile(95)) / 1000,
			float64(u.ValueAtQuantile(99)) / 1000, float64(u.Max()) / 1000}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: merged percentiles %v, the union of the logs gives %v", name, got, want)
				break
			}
		}
	}
	return o
}

// CheckMergedTPMDB checks that the merged tpm_db, calibra's own commits
// taken out, counts exactly the transactions the partitions ran in the
// window (each ended, rolled back or failed, is one). Partitions run in
// containers (e2e/image) count one more a partition other than the
// first, not yet explained.
func CheckMergedTPMDB(t *testing.T, merged string) {
	t.Helper()
	_, o := LastStep[*results.OLTP](t, merged)
	if o.TPMDB == nil {
		t.Fatalf("the merge has no tpm_db: %s", o.Missing["tpm_db"])
	}
	var client int64
	for _, tx := range o.Transactions {
		client += tx.Count + tx.Errors
	}
	if db := math.Round(*o.TPMDB * o.DurationS / 60); db != float64(client) {
		t.Errorf("tpm_db counts %.0f transactions in the window, the partitions ran %d", db, client)
	}
}

// windowHistograms merges, by hand, every partition's window histograms
// (raw/oltp-window.hlog) per transaction type.
func windowHistograms(t *testing.T, parts []string) map[string]*hdrhistogram.Histogram {
	t.Helper()
	union := map[string]*hdrhistogram.Histogram{}
	for _, dir := range parts {
		data, err := os.ReadFile(filepath.Join(dir, "raw", "oltp-window.hlog"))
		if err != nil {
			t.Fatal(err)
		}
		r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(data))
		for {
			h, err := r.NextIntervalHistogram()
			if err != nil {
				t.Fatal(err)
			}
			if h == nil {
				break
			}
			if union[h.Tag()] == nil {
				union[h.Tag()] = hdrhistogram.New(1, int64(10*time.Minute/time.Microsecond), 3)
			}
			union[h.Tag()].Merge(h)
		}
	}
	return union
}

// deref is *p, or NaN for an absent figure.
func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// RunPartitions runs calibra oltp run with args as n partitions of one
// run, each its own process (as on separate hosts) from one --start-at a
// few seconds ahead, the run directory of partition i in out(i); it fails
// the test if any fails.
func RunPartitions(t *testing.T, n int, out func(i int) string, args ...string) {
	t.Helper()
	// Connecting takes well under the few seconds to the start.
	startAt := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := Command(append(append([]string{"oltp", "run"}, args...),
				"--partition", fmt.Sprintf("%d/%d", i, n), "--start-at", startAt, "--progress", "none", "--out", out(i))...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				errs[i-1] = fmt.Sprintf("partition %d/%d: %v\n%s", i, n, err, stderr.String())
			}
		}()
	}
	wg.Wait()
	if msg := strings.Join(errs, ""); msg != "" {
		t.Fatal(msg)
	}
}
