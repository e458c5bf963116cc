package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
)

// environment lists what was measured with what: host, storage, engine and
// its settings, and the study as asked.
func (r *Report) environment(run *results.Run) {
	m := run.Meta
	kv := func(caption string, pairs ...string) Table {
		t := Table{Caption: caption, Head: []string{"", ""}}
		for i := 0; i+1 < len(pairs); i += 2 {
			t.Rows = append(t.Rows, []Cell{{Text: pairs[i], Class: "t"}, {Text: pairs[i+1], Class: "t"}})
		}
		return t
	}
	r.Env = append(r.Env,
		kv("Run", "command", m.Command, "label", m.Label, "calibra", m.ToolVersion, "seed", strconv.FormatUint(m.Seed, 10),
			"status", run.Status, "started", r.Started, "finished", r.Finished),
		kv("Host", "hostname", m.Host.Hostname, "CPUs", strconv.Itoa(m.Host.CPUs), "CPU model", m.Host.CPUModel,
			"memory", fmt.Sprintf("%.1f GiB", float64(m.Host.MemBytes)/(1<<30)), "kernel", m.Host.Kernel),
		kv("Storage under test", "path", m.Storage.Path, "file system", m.Storage.FS, "device", m.Storage.Device, "emulated by the lab", labChain(m.Storage.Lab)))
	if e := m.Engine; e != nil {
		r.Env = append(r.Env, kv("Engine", "name", e.Name, "version", e.Version, "managed", strconv.FormatBool(e.Managed), "target", e.Target))
		r.Env = append(r.Env, sortedTable("Engine settings (non-default)", e.Settings))
	}
	if flags, ok := m.Study["flags"].(map[string]any); ok {
		s := map[string]string{}
		for k, v := range flags {
			s[k] = fmt.Sprint(v)
		}
		r.Env = append(r.Env, sortedTable("Study: "+fmt.Sprint(m.Study["command"])+" and its flags", s))
	}
}

func sortedTable(caption string, m map[string]string) Table {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := Table{Caption: caption, Head: []string{"", ""}}
	for _, k := range keys {
		t.Rows = append(t.Rows, []Cell{{Text: k, Class: "t"}, {Text: m[k], Class: "t"}})
	}
	return t
}

// definitions are the metric definitions of docs/design.md (every figure's
// is in docs/metrics.md), so a reader can check what a number means, in the
// words of the engine measured.
func definitions(w terms.Words) []Def {
	defs := slices.Clone(commonDefs)
	for i, d := range defs {
		switch d.Term {
		case "Top waits":
			defs[i].Text = w.Waits
		case "TPM (db)":
			from := ""
			if w.Transactions != "" {
				from = " (" + w.Transactions + ")"
			}
			defs[i].Text = fmt.Sprintf(d.Text, from)
		}
	}
	return defs
}

var commonDefs = []Def{
	{"NOPM", "Committed New-Orders in the timed window / minutes (HammerDB takes Δ sum(d_next_o_id)); only the timed window, never the ramp-up."},
	{"TPM (db)", "Δ(database commits + rollbacks) over the timed window / minutes, from the server's own count%s; database-specific. TPM (client) counts the transactions the driver completed."},
	{"ART", "Mean response time of all transactions completed in the timed window. Latency percentiles come from HDR histograms (3 significant digits), per transaction type. The latency basis says whether times run from the actual start (\"service\", closed loop) or the intended start (\"response\": paced or open loop, coordinated omission corrected)."},
	{"Efficiency", "tpmC-like efficiency (spec mode only): NOPM / (12.86 × warehouses)."},
	{"Rates", "Computed over the window from counters sampled at its two edges, never from a live monitor. The per-second curves are for shape only."},
	{"Device IOPS, MB/s, latency", "fio's totals over each point's runtime; MB/s is 10^6 bytes per second; latency is completion latency (clat) in µs, percentiles from fio's histogram. The best point of a spec is the one with the highest IOPS whose p99 stays within the bound and that had no errors."},
	{"iocal max IOPS", "The highest point of the jobs sweep whose mean single-block read latency stays at or under max_latency_ms (CALIBRATE_IO's rule); saturation jobs = the first point after which throughput grows by less than 5%."},
	{"Ramp", "Max TPS is the highest step's throughput; max users within the SLA is the highest user load whose SLA metric (ART or p90) stays at or under the SLA; Little's users = throughput × (response + think time), to check against the users driven."},
	{"DSS", "Geometric mean of query seconds; Power@Size, Throughput@Size and QphH as in TPC-H, with each query and refresh time rounded to 0.1 s (clause 5.3.7.5), labelled TPC-H-derived, not comparable with published TPC-H results; indicative below SF 1 or with fewer streams than clause 5.3.4 requires."},
	{"CPU busy, I/O wait", "Shares of all CPUs' time over the window from /proc/stat: busy = 100 − idle − iowait."},
	{"Disk await", "Δ(read + write ticks) / Δ(reads + writes) from /proc/diskstats: the mean time an I/O spent queued and in service."},
	{"Top waits", ""}, // the engine's words
	{"n/a", "Not measured; the reason is listed beside it. A value that could not be measured is never shown as zero."},
}
