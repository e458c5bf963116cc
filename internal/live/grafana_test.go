package live

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// dashboard is the Grafana example; its queries must name what the
// endpoint exports.
const dashboard = "../../examples/grafana/calibra-run.json"

// exported is every metric a scrape can hold: each board's families, a
// histogram's also under its _bucket, _sum and _count series.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, tc := range boards {
		b := NewBoard()
		tc.fill(b)
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(bytes.NewReader(scrape(t, b, "text/plain; version=0.0.4")))
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range fams {
			names[name] = true
			if f.GetType() == dto.MetricType_HISTOGRAM {
				names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
			}
		}
	}
	return names
}

var metricName = regexp.MustCompile(`\bcalibra_[a-z_]+`)

// Every PromQL query of the Grafana example names only metrics the
// endpoint exports, and the dashboard shows what a run's watcher needs:
// throughput, latency quantiles, the device, the CPU and the phase.
func TestGrafanaDashboardQueriesExportedMetrics(t *testing.T) {
	data, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct{ List []struct{ Query any } }
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboard, err)
	}
	known := exported(t)
	var exprs []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(string); ok && strings.Contains(q, "calibra_") {
			exprs = append(exprs, q)
		}
	}
	all := strings.Join(exprs, "\n")
	for _, e := range exprs {
		names := metricName.FindAllString(e, -1)
		if len(names) == 0 {
			t.Errorf("query %q names no calibra metric", e)
		}
		for _, n := range names {
			if !known[n] {
				t.Errorf("query %q names %s, which the endpoint does not export", e, n)
			}
		}
	}
	for what, needs := range map[string]string{
		"throughput":        "calibra_oltp_new_orders_total",
		"latency quantiles": "histogram_quantile(0.99, sum by (le, type) (rate(calibra_oltp_transaction_duration_seconds_bucket",
		"the device":        "calibra_disk_iops",
		"the CPU":           "calibra_cpu_busy_ratio",
		"the phase":         "calibra_phase_info",
	} {
		if !strings.Contains(all, needs) {
			t.Errorf("the dashboard does not show %s (no query with %q)", what, needs)
		}
	}
}
