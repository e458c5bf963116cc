//go:build integration

package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// TestPrometheusCountsTheWindowsNewOrders: Debian's Prometheus scrapes a
// real 30 s oltp run every second, and the rise of the New-Order counter
// it stored over the timed window is the run's own NOPM over that window,
// within 10% (the counter moves once a second, so each edge may be a
// second late: some 7% of the window's orders at any steady rate, so the
// users are paced at 20 a second, not as fast as the machine allows).
func TestPrometheusCountsTheWindowsNewOrders(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real PostgreSQL and Prometheus; run without -short")
	}
	clitest.RequirePostgres(t)
	prom, err := exec.LookPath("prometheus")
	testenv.Need(t, "prometheus", err, "apt-get install prometheus")
	path, out := clitest.Dirs(t)
	clitest.MustRun(t, 0, "oltp", "build", "--warehouses", "1", "--path", path, "--progress", "none", "--out", out("build"))

	metrics, api := freePort(t), freePort(t)
	startPrometheus(t, prom, metrics, api)
	dir := out("run")
	clitest.MustRun(t, 0, "oltp", "run", "--users", "4", "--rampup", "3s", "--duration", "30s", "--rate-per-user", "20",
		"--path", path, "--progress", "none", "--out", dir, "--metrics-listen", metrics)
	_, o := clitest.LastStep[*results.OLTP](t, dir)
	if o.NOPM == nil || o.WindowStart == nil || o.WindowEnd == nil {
		t.Fatalf("the run measured no NOPM over a window: %+v", o)
	}
	want := *o.NOPM * o.DurationS / 60
	got := query(t, api, "calibra_oltp_new_orders_total", *o.WindowEnd) - query(t, api, "calibra_oltp_new_orders_total", *o.WindowStart)
	t.Logf("Prometheus counted %.0f New-Orders over the window, the run's NOPM %.0f over %.1f s makes %.0f", got, *o.NOPM, o.DurationS, want)
	if math.Abs(got-want) > 0.1*want {
		t.Errorf("Prometheus counted %.0f New-Orders over the window, the run's NOPM makes %.0f: more than 10%% apart", got, want)
	}
	if up := query(t, api, `up{job="calibra"}`, *o.WindowEnd); up != 1 {
		t.Errorf("the scrape was not healthy at the window's end: up %v", up)
	}
	if n := query(t, api, `sum(calibra_oltp_transaction_duration_seconds_count{type="new_order"})`, *o.WindowEnd); n <= 0 {
		t.Errorf("no New-Order latency was scraped: count %v", n)
	}
}

// freePort is a loopback address no one listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPrometheus runs Prometheus without a service manager, scraping
// target every second, its API on api, until the test ends.
func startPrometheus(t *testing.T, prom, target, api string) {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	yml := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: calibra\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(config, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prom, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+api)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() { // why the scrapes failed, if they did
			if resp, err := http.Get("http://" + api + "/api/v1/targets"); err == nil {
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Logf("prometheus' targets: %s", data)
			}
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(log.Name())
			t.Logf("prometheus' log:\n%s", data)
		}
	})
	// Ready, Prometheus still applies its targets a few seconds later:
	// wait for its first scrape (which fails: no run listens yet).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if resp, err := http.Get("http://" + api + "/api/v1/query?query=" + url.QueryEscape(`up{job="calibra"}`)); err == nil {
			var r struct{ Data struct{ Result []any } }
			err := json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
			if err == nil && len(r.Data.Result) > 0 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("Prometheus did not scrape within a minute")
}

// query asks Prometheus' HTTP API for expr's one value at instant at.
func query(t *testing.T, api, expr string, at time.Time) float64 {
	t.Helper()
	u := "http://" + api + "/api/v1/query?" + url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}.Encode()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" || len(r.Data.Result) != 1 {
		t.Fatalf("%s at %v: status %q, %d results, %v", expr, at, r.Status, len(r.Data.Result), err)
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s: value %q", expr, s)
	}
	return v
}
