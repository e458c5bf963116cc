package live

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden expositions under testdata/")

func f(v float64) *float64 { return &v }
func n(v int64) *int64     { return &v }

// boards are the states a run passes through, each with its exposition in
// testdata/NAME.openmetrics.
var boards = []struct {
	name string
	fill func(b *Board)
}{
	{"empty", func(b *Board) { b.Step("oltp run") }},
	{"oltp", func(b *Board) {
		b.Step("study step 2 of 3: oltp")
		s := &oltp.Second{Phase: "measure", Users: 8}
		s.Types[oltp.NewOrder] = oltp.Outcomes{Count: 3, Rollbacks: 1, Sum: 9 * time.Millisecond}
		s.Types[oltp.Payment] = oltp.Outcomes{Count: 1, Errors: 2, Sum: 40 * time.Millisecond}
		s.Latencies = []oltp.TxLatency{{Type: oltp.NewOrder, Lat: 2 * time.Millisecond}, {Type: oltp.NewOrder, Lat: 3 * time.Millisecond},
			{Type: oltp.NewOrder, Lat: 4 * time.Millisecond}, {Type: oltp.Payment, Lat: 40 * time.Millisecond}}
		b.Second(s)
		b.Second(s)
		b.Observe(func() *results.Observe {
			return &results.Observe{WindowS: 0.5, CPUBusyPct: f(42.5), CPUIOWaitPct: f(3),
				Disk: &results.ObserveDisk{RIOPS: f(1200), WIOPS: f(300), RMBps: f(9.6), WMBps: f(4.2), RAwaitMs: f(0.4), WAwaitMs: f(1.5), UtilPct: f(61)},
				DB:   &results.ObserveDB{ActiveSessionsAvg: f(3.2), HitPct: f(99.1), BlksRead: n(600), WALSyncs: n(150), WALBytes: n(2000000), DataWriteBytes: n(800000)}}
		})
	}},
	{"sweeps", func(b *Board) {
		b.Step("study step 1 of 3: device")
		b.DevicePoint("randread-4k", 32, &results.DevicePoint{IOPS: 51000, MBps: 208.9, LatUs: &results.DeviceLatency{Mean: 620, P50: 580, P99: 1900, P999: 4100, Max: 9800}})
		b.DevicePoint("randread-4k", 64, nil)
		b.IOCalPoint("random", 4, &results.IOCalPoint{IOPS: 8000, MBPS: 64, LatMs: &results.IOCalLatency{Mean: 0.5, P99: 2.25}})
		b.Observe(func() *results.Observe { return &results.Observe{WindowS: 1} }) // nothing measured: nothing sent
	}},
}

// scrape starts an endpoint on b and returns /metrics as accept asks.
func scrape(t *testing.T, b *Board, accept string) []byte {
	t.Helper()
	e, err := Start(context.Background(), Options{Listen: "127.0.0.1:0"}, b)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(false)
	req, _ := http.NewRequest(http.MethodGet, "http://"+e.Addr()+"/metrics", nil)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v: %s", resp.StatusCode, err, body)
	}
	return body
}

const openMetrics = "application/openmetrics-text; version=1.0.0"

// Each state of a run exposes exactly its golden exposition, in the
// OpenMetrics format Prometheus asks for.
func TestExpositionGolden(t *testing.T) {
	for _, tc := range boards {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBoard()
			tc.fill(b)
			got := scrape(t, b, openMetrics)
			golden := filepath.Join("testdata", tc.name+".openmetrics")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("exposition differs from %s (go test ./internal/live -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

// promtool, Prometheus' own linter, accepts every state's exposition in
// the text format it reads (2.42 reads OpenMetrics as that format and
// takes a counter's family name for a metric without help: the real
// Prometheus of the integration test scrapes the OpenMetrics one).
func TestPromtoolAcceptsExposition(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	testenv.Need(t, "prometheus", err, "apt-get install prometheus (it ships promtool)")
	for _, tc := range boards {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBoard()
			tc.fill(b)
			cmd := exec.Command(promtool, "check", "metrics")
			cmd.Stdin = bytes.NewReader(scrape(t, b, "text/plain; version=0.0.4"))
			if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("promtool check metrics: %v\n%s", err, out)
			}
		})
	}
}
