package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/calibra-bench/calibra/internal/results"
)

// figure is one metric's value in one step; atLeast marks a lower bound
// (users within an SLA no load broke).
type figure struct {
	Metric
	value   float64
	atLeast bool
}

// extract lists a step's comparable figures: its metrics that have a
// direction (results.Metrics, the names thresholds use) and the evidence
// of its window (CPU busy, I/O wait: shown, never judged), the ramps' ART
// at the load every run reached instead of each run's own. Unmeasured
// figures are left out, never compared as zero.
func extract(st results.Step, load int) []figure {
	step := st.Kind + "/" + st.Name
	var out []figure
	for _, m := range results.Metrics(st) {
		better := m.Better
		if evidence[m.Name] {
			better = ""
		} else if better == "" || (st.Kind == results.KindRamp && m.Name == "art_at_ms") {
			continue
		}
		f := figure{Metric: Metric{Step: step, Name: m.Name, Title: Title(st, m.Name), Unit: m.Unit, Better: better, Headline: Headline(st.Kind, m.Name)}, value: m.Value}
		if b, ok := st.Body.(*results.Ramp); ok && m.Name == "max_users_within_sla" && b.SLAReached != nil && !*b.SLAReached {
			f.atLeast = true
		}
		out = append(out, f)
	}
	if b, ok := st.Body.(*results.Ramp); ok && load > 0 {
		for _, s := range b.Steps {
			if s.Users == load {
				// The study's order: max TPS, ART at a load, users within the SLA.
				name := fmt.Sprintf("art_ms_at_%d_users", load)
				art := figure{Metric: Metric{Step: step, Name: name, Title: fmt.Sprintf("ART at %d users", load), Unit: "ms", Better: results.LowerIsBetter, Headline: true}, value: s.ARTMs}
				at := min(1, len(out))
				out = append(out[:at], append([]figure{art}, out[at:]...)...)
			}
		}
	}
	return out
}

// evidence are the window's figures compared with no good way: more CPU
// busy or I/O wait may be a faster storage's doing or a slower one's.
var evidence = map[string]bool{"cpu_busy_pct": true, "cpu_iowait_pct": true}

// Headline says whether a metric is one the studies headline: 002's max
// TPS and users within the SLA (ART at a load is added by extract), NOPM,
// each device spec's answer, iocal's maxima, QphH, a replay's headroom.
func Headline(kind, name string) bool {
	switch kind {
	case results.KindRamp:
		return name == "max_tps" || name == "max_users_within_sla"
	case results.KindOLTP:
		return name == "nopm"
	case results.KindDevice:
		return strings.HasSuffix(name, ".iops_at_max_latency") || strings.HasSuffix(name, ".max_mbps")
	case results.KindIOCal:
		return name == "max_iops" || name == "seq_read_max_mbps" || name == "seq_write_max_mbps"
	case results.KindDSS:
		return name == "qphh"
	case results.KindReplay:
		return name == "headroom_x"
	}
	return false
}

// titles are metric names as a person reads them.
var titles = map[string]string{
	"nopm": "NOPM", "tpm_db": "TPM (database)", "tpm_client": "TPM (client)", "art_ms": "ART",
	"p90_ms": "p90 latency", "p99_ms": "p99 latency", "efficiency_pct": "Efficiency",
	"max_tps": "Max TPS", "max_users_within_sla": "Max users within SLA",
	"max_iops": "Max random read IOPS through the database", "latency_ms_at_max": "Latency at max IOPS",
	"saturation_jobs": "Jobs at saturation", "seq_read_max_mbps": "Max sequential read MB/s through the database",
	"seq_write_max_mbps": "Max sequential write MB/s through the database",
	"max_commits_ps":     "Max commits/s through the database", "commit_ms_at_one": "Commit latency, one committer",
	"qphh": "QphH", "power_at_size": "Power@Size", "geomean_s": "Power test query geomean",
	"throughput_at_size": "Throughput@Size", "mb_per_s": "Load MB/s", "total_s": "Build time",
	"lost_acknowledged": "Lost acknowledged commits", "unverifiable_acknowledged": "Unverifiable acknowledged commits", "recovery_s": "Recovery time", "pages_damaged": "Pages damaged",
	"cpu_busy_pct": "CPU busy", "cpu_iowait_pct": "I/O wait", "disk_await_ms": "Disk await",
	"headroom_x": "Headroom (multiple of the profile within the SLA)",
}

// deviceTitles name the parts of a device metric after its spec.
var deviceTitles = map[string]string{"iops": "IOPS", "mbps": "MB/s", "p99_us": "p99 latency"}

// Title is a metric's readable name; the raw name when it has none.
func Title(st results.Step, name string) string {
	if t, ok := titles[name]; ok {
		return t
	}
	if tx, what, ok := strings.Cut(name, "."); ok && slices.Contains(results.TxTypes, tx) {
		return strings.ReplaceAll(tx, "_", " ") + " " + titles[what]
	}
	if q, ok := strings.CutPrefix(name, "power.q"); ok {
		return "Q" + strings.TrimSuffix(q, "_s") + " time (power test)"
	}
	d, ok := st.Body.(*results.Device)
	if !ok {
		return name
	}
	for _, s := range d.Specs {
		rest, ok := strings.CutPrefix(name, s.Name+".")
		if !ok {
			continue
		}
		spec := specTitle(s)
		switch {
		case rest == "iops_at_max_latency":
			return spec + " IOPS (p99 ≤ " + results.Micros(d.MaxLatencyUs) + ")"
		case rest == "max_mbps":
			return spec + " MB/s (max)"
		}
		if qd, what, ok := strings.Cut(rest, "."); ok && deviceTitles[what] != "" {
			return fmt.Sprintf("%s %s (%s)", spec, deviceTitles[what], qd)
		}
	}
	return name
}

// specTitle is a device spec in words: "4k random read", "1m sequential
// write", "8k random 70% read".
func specTitle(s results.DeviceSpec) string {
	size := fmt.Sprintf("%dB", s.BlockSize)
	switch {
	case s.BlockSize%(1<<20) == 0:
		size = fmt.Sprintf("%dm", s.BlockSize>>20)
	case s.BlockSize%(1<<10) == 0:
		size = fmt.Sprintf("%dk", s.BlockSize>>10)
	}
	access := fmt.Sprintf("%d%% random", s.RandomPct)
	switch s.RandomPct {
	case 100:
		access = "random"
	case 0:
		access = "sequential"
	}
	op := fmt.Sprintf("%d%% read", s.ReadPct)
	switch s.ReadPct {
	case 100:
		op = "read"
	case 0:
		op = "write"
	}
	return size + " " + access + " " + op
}

// rampLoad is the user load at which ART is compared across the runs'
// ramps: the base's named load (art_at_users) if every run reached it,
// else the highest load every run's ramp reached.
func rampLoad(runs []Run) int {
	var sets []map[int]bool
	named := 0
	for i, r := range runs {
		loads := map[int]bool{}
		for _, st := range r.Steps {
			if b, ok := st.Body.(*results.Ramp); ok {
				for _, s := range b.Steps {
					loads[s.Users] = true
				}
				if i == 0 && b.ARTAtUsers != nil {
					named = *b.ARTAtUsers
				}
			}
		}
		if len(loads) == 0 {
			return 0
		}
		sets = append(sets, loads)
	}
	inAll := func(u int) bool {
		for _, s := range sets {
			if !s[u] {
				return false
			}
		}
		return true
	}
	if named > 0 && inAll(named) {
		return named
	}
	best := 0
	for u := range sets[0] {
		if u > best && inAll(u) {
			best = u
		}
	}
	return best
}
