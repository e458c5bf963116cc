// Package merge combines the run directories of a split oltp run (oltp run
// --partition i/N, one directory per process) into one run directory: the
// whole run's step (oltp.Merge), its latency logs merged, its seconds added
// up, and the reports rendered as for any run.
package merge

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/report"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Config is a merge: the partitions' run directories and where to put the
// merged one ("" for the default beside other runs).
type Config struct {
	Dirs        []string
	Out, Label  string
	ToolVersion string
	Now         func() time.Time // nil: time.Now
}

// The files of a partition's run directory the merge reads, under raw/.
const (
	windowLog  = "oltp-window.hlog"
	secondsLog = "oltp-latency.hlog"
	ticksFile  = "oltp-ticks.csv"
)

// part is one partition's run directory, read.
type part struct {
	dir     string
	run     *results.Run
	step    results.Step
	body    *results.OLTP
	window  map[string]*hist.Histogram
	seconds []hist.Interval
	ticks   *results.Timeseries
}

// Merge checks that the directories are every partition of one run, then
// writes the merged run directory and its reports, all at once: nothing is
// left when it fails. It returns the directory's path.
func Merge(cfg Config) (string, error) {
	if len(cfg.Dirs) == 0 {
		return "", fault.Input("give the run directories of every partition", "calibra merge needs the partitions' run directories")
	}
	parts := make([]*part, len(cfg.Dirs))
	for i, d := range cfg.Dirs {
		p, err := read(d)
		if err != nil {
			return "", err
		}
		parts[i] = p
	}
	if err := belong(parts); err != nil {
		return "", err
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].body.Partition.Index < parts[j].body.Partition.Index })
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	label := cfg.Label
	if label == "" {
		label = parts[0].run.Meta.Label
	}
	out := cfg.Out
	if out == "" {
		name := "merged"
		if label != "" {
			name = label + "-merged"
		}
		var err error
		if out, err = results.DefaultPath(now(), name); err != nil {
			return "", err
		}
	}
	if err := freeOut(out); err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".merging-")
	if err != nil {
		return "", fault.Input("choose an --out directory you can write to", "cannot create the merged run directory %s: %v", out, errors.Unwrap(err))
	}
	// Gone once renamed; the leftovers of a failure otherwise, removed
	// by handle in the parent freeOut checked.
	defer safefs.RemoveAll(filepath.Dir(stage), filepath.Base(stage))
	if err := write(stage, parts, cfg, label); err != nil {
		return "", err
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return "", err
	}
	if err := safefs.Rename(filepath.Dir(stage), filepath.Base(stage), filepath.Base(filepath.Clean(out))); err != nil {
		return "", fmt.Errorf("move the merged run into %s: %w", out, err)
	}
	return filepath.Abs(out)
}

// freeOut refuses an --out that holds anything: a merge never mixes its
// files with another run's. The merged run is staged beside --out and
// renamed onto it by name, so --out's parent, made as calibra's own where
// missing, must pass safefs.CheckParent.
func freeOut(out string) error {
	parent := filepath.Dir(filepath.Clean(out))
	if _, err := os.Lstat(parent); errors.Is(err, os.ErrNotExist) {
		if parent, err = safefs.MkdirAllOwn(parent, 0o755); err != nil {
			return err
		}
	}
	if err := safefs.CheckParent(parent, "choose an --out in a directory only calibra's account (or root) can write to"); err != nil {
		return err
	}
	if st, err := os.Lstat(out); err == nil && !st.IsDir() {
		return fault.Input("choose another --out or remove it", "--out %s is not a directory", out)
	}
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fault.Input("choose another --out", "cannot read --out %s: %v", out, errors.Unwrap(err))
	case len(entries) > 0:
		return fault.Input("choose another --out or remove it", "--out %s already holds files", out)
	}
	// An empty directory: renaming onto it replaces it.
	return nil
}

// read loads a partition's run directory: its split oltp step and the logs
// the merge adds up.
func read(dir string) (*part, error) {
	run, err := results.Load(dir)
	if err != nil {
		return nil, err
	}
	p := &part{dir: dir, run: run}
	if abs, err := filepath.Abs(dir); err == nil {
		p.dir = abs
	}
	for _, st := range run.Steps {
		if o, ok := st.Body.(*results.OLTP); ok && st.Kind == results.KindOLTP && o.Partition != nil {
			p.step, p.body = st, o
		}
	}
	if p.body == nil {
		return nil, fault.Input("give the run directories that 'calibra oltp run --partition i/N' wrote",
			"%s holds no partition of a split oltp run", dir)
	}
	raw := func(name string) ([]byte, error) {
		most := int64(results.MaxLogBytes)
		if name == ticksFile {
			most = results.MaxTimeseriesBytes
		}
		data, err := results.ReadBounded(filepath.Join(dir, "raw", name), most)
		var in *fault.InputError
		if errors.As(err, &in) {
			return nil, err
		}
		if err != nil {
			return nil, fault.Input("give whole run directories of partitions that reached their timed window",
				"%s lacks raw/%s", dir, name)
		}
		return data, nil
	}
	data, err := raw(windowLog)
	if err != nil {
		return nil, err
	}
	ivs, err := hist.ReadLog(data)
	if err != nil {
		return nil, fault.Input("restore the file, or run the partition again", "%s: raw/%s cannot be read: %v", dir, windowLog, err)
	}
	p.window = map[string]*hist.Histogram{}
	for _, iv := range ivs {
		p.window[iv.Tag] = iv.H
	}
	if data, err = raw(secondsLog); err != nil {
		return nil, err
	}
	if p.seconds, err = hist.ReadLog(data); err != nil {
		return nil, fault.Input("restore the file, or run the partition again", "%s: raw/%s cannot be read: %v", dir, secondsLog, err)
	}
	if data, err = raw(ticksFile); err != nil {
		return nil, err
	}
	if p.ticks, err = results.ReadTimeseriesFile(bytes.NewReader(data), filepath.Join(dir, "raw", ticksFile)); err != nil {
		return nil, err
	}
	return p, nil
}

// belong refuses partitions that are not exactly the N of one run: one
// sentence for the first problem.
func belong(parts []*part) error {
	first := parts[0]
	a := first.body
	seen := map[int]string{}
	for _, p := range parts {
		b := p.body
		pa, pb := a.Partition, b.Partition
		differ := func(what string, x, y any) error {
			return fault.Input("give the partitions of one run only",
				"%s and %s are not partitions of one run: %s %v and %v", first.dir, p.dir, what, x, y)
		}
		switch {
		case pb.Of != pa.Of:
			return differ("split into", pa.Of, pb.Of)
		case pa.StartAt == nil || pb.StartAt == nil:
			return fault.Input("run every partition with the same --start-at", "%s has no --start-at: its window did not start with the others'", p.dir)
		case !pa.StartAt.Equal(*pb.StartAt):
			return differ("started at", pa.StartAt.Format(time.RFC3339Nano), pb.StartAt.Format(time.RFC3339Nano))
		case pb.UsersTotal != pa.UsersTotal:
			return differ("users in all", pa.UsersTotal, pb.UsersTotal)
		case b.Warehouses != a.Warehouses:
			return differ("warehouses", a.Warehouses, b.Warehouses)
		case b.Mode != a.Mode || b.Profile != a.Profile:
			return differ("mode and profile", a.Mode+"/"+a.Profile, b.Mode+"/"+b.Profile)
		case fmt.Sprint(b.KeyingThinking) != fmt.Sprint(a.KeyingThinking) || b.RatePerUser != a.RatePerUser:
			return differ("pacing (keying and thinking, rate per user)", fmt.Sprint(a.KeyingThinking, " ", a.RatePerUser), fmt.Sprint(b.KeyingThinking, " ", b.RatePerUser))
		case b.RampupS != a.RampupS:
			return differ("ramp-up seconds", a.RampupS, b.RampupS)
		case p.run.Meta.Seed != first.run.Meta.Seed:
			return differ("seeds", first.run.Meta.Seed, p.run.Meta.Seed)
		case engineName(p.run) != engineName(first.run):
			return differ("servers", engineName(first.run), engineName(p.run))
		}
		if d, ok := seen[pb.Index]; ok {
			return fault.Input("give each partition's run directory once", "%s and %s are both partition %d/%d", d, p.dir, pb.Index, pb.Of)
		}
		seen[pb.Index] = p.dir
	}
	for i := 1; i <= a.Partition.Of; i++ {
		if _, ok := seen[i]; !ok {
			return fault.Input(fmt.Sprintf("give the run directories of all %d partitions", a.Partition.Of), "partition %d/%d is missing", i, a.Partition.Of)
		}
	}
	return nil
}

func engineName(r *results.Run) string {
	if r.Meta.Engine == nil {
		return "none"
	}
	return r.Meta.Engine.Name + " " + r.Meta.Engine.Version
}

// write puts the merged run into dir: results.json, the latency logs, the
// seconds, and the reports.
func write(dir string, parts []*part, cfg Config, label string) error {
	ctr := parts[0] // partition 1, the counter partition
	startAt := *ctr.body.Partition.StartAt
	mparts := make([]oltp.MergePart, len(parts))
	dirs := make([]string, len(parts))
	for i, p := range parts {
		mparts[i] = oltp.MergePart{Out: p.body, Window: p.window, Dir: p.dir, Host: p.run.Meta.Host.Hostname}
		dirs[i] = p.dir
	}
	body := oltp.Merge(mparts)
	body.Notes = append(body.Notes, fmt.Sprintf("Merged from %d partitions started at %s: nopm, tpm_db and the checkpoints were read by partition 1/%d at its window's edges; the counts, tpm_client and latencies add up every partition's; observe and limited_by are partition 1/%d's host's, and the database's as it saw them.",
		len(parts), startAt.Format(time.RFC3339Nano), len(parts), len(parts)))

	st := results.Step{StepHeader: ctr.step.StepHeader, Body: body}
	st.Name = fmt.Sprintf("oltp %d warehouses %d users %s, %d partitions", body.Warehouses, body.Users, body.Mode, len(parts))
	status, finished := results.StatusComplete, ctr.run.FinishedAt
	var errs []string
	for _, p := range parts {
		st.StartedAt = minTime(st.StartedAt, p.step.StartedAt)
		if p.step.FinishedAt != nil && (st.FinishedAt == nil || p.step.FinishedAt.After(*st.FinishedAt)) {
			st.FinishedAt = p.step.FinishedAt
		}
		if p.run.FinishedAt != nil && (finished == nil || p.run.FinishedAt.After(*finished)) {
			finished = p.run.FinishedAt
		}
		if p.step.Status != results.StatusComplete {
			errs = append(errs, fmt.Sprintf("partition %s was %s: %s", partName(p), p.step.Status, p.step.Error))
			if status != results.StatusFailed {
				status = p.step.Status
			}
		}
	}
	st.Status = status
	st.Error = strings.Join(errs, "; ")

	meta := ctr.run.Meta
	meta.ToolVersion, meta.Command, meta.Label = cfg.ToolVersion, "merge", label
	meta.Study = map[string]any{"command": "merge", "partitions": dirs}
	run := &results.Run{StartedAt: st.StartedAt, Meta: meta}
	for _, p := range parts {
		run.StartedAt = minTime(run.StartedAt, p.run.StartedAt)
		for _, w := range p.run.Warnings {
			if !slices.Contains(run.Warnings, w) {
				run.Warnings = append(run.Warnings, w)
			}
		}
	}
	rd, err := results.Create(dir, run)
	if err != nil {
		return err
	}
	if err := rd.Update(func(r *results.Run) {
		r.Steps, r.Status, r.FinishedAt, r.Error = []results.Step{st}, status, finished, st.Error
	}); err != nil {
		return err
	}
	seconds, secLog := mergeSeconds(parts, startAt)
	var ts bytes.Buffer
	if err := oltp.WriteTimeseries(&ts, mergeTicks(parts, seconds, startAt)); err != nil {
		return err
	}
	files := map[string][]byte{
		filepath.Join("raw", windowLog):  mergeWindow(parts, body),
		filepath.Join("raw", secondsLog): secLog,
		results.TimeseriesFile:           ts.Bytes(),
	}
	for name, data := range files {
		if err := results.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return report.Write(dir)
}

func partName(p *part) string {
	return fmt.Sprintf("%d/%d (%s)", p.body.Partition.Index, p.body.Partition.Of, p.dir)
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// mergeWindow is the merged window log: each type's histograms of every
// partition added, over the counter partition's window.
func mergeWindow(parts []*part, body *results.OLTP) []byte {
	from, to := parts[0].step.StartedAt, time.Now()
	if body.WindowStart != nil && body.WindowEnd != nil {
		from, to = *body.WindowStart, *body.WindowEnd
	}
	l := hist.NewLog(from, oltp.WindowLogComment+", merged from every partition")
	for _, name := range oltp.TxNames() {
		h := hist.New()
		for _, p := range parts {
			if ph := p.window[name]; ph != nil {
				h.Merge(ph)
			}
		}
		_ = l.Add(h, from, to, name)
	}
	return l.Bytes()
}

// second is the key of a one-second tick: its end, in whole seconds after
// the shared start (every partition ticks each second from there).
func second(end, startAt time.Time) int {
	return int(math.Round(end.Sub(startAt).Seconds()))
}

// mergeSeconds adds up the partitions' per-second histograms, second by
// second and tag by tag (a partition may have tagged the second the window
// began differently), and returns each second's histogram of every tag
// with the merged log.
func mergeSeconds(parts []*part, startAt time.Time) (map[int]*hist.Histogram, []byte) {
	type key struct {
		sec int
		tag string
	}
	merged := map[key]*hist.Interval{}
	for _, p := range parts {
		for _, iv := range p.seconds {
			k := key{second(iv.End, startAt), iv.Tag}
			m := merged[k]
			if m == nil {
				m = &hist.Interval{Start: iv.Start, End: iv.End, Tag: iv.Tag, H: hist.New()}
				merged[k] = m
			}
			m.H.Merge(iv.H)
			m.Start, m.End = minTime(m.Start, iv.Start), maxTime(m.End, iv.End)
		}
	}
	keys := make([]key, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.sec != b.sec {
			return a.sec - b.sec
		}
		return strings.Compare(a.tag, b.tag)
	})
	l := hist.NewLog(startAt, "calibra merge: latency of all transaction types per 1 s tick, tagged by phase, every partition's added")
	bySec := map[int]*hist.Histogram{}
	for _, k := range keys {
		m := merged[k]
		_ = l.Add(m.H, m.Start, m.End, m.Tag)
		if bySec[k.sec] == nil {
			bySec[k.sec] = hist.New()
		}
		bySec[k.sec].Merge(m.H)
	}
	return bySec, l.Bytes()
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// mergeTicks adds up the partitions' seconds: rates, errors and users
// summed, ART weighted by each partition's transactions, p90 from the
// second's merged histogram.
func mergeTicks(parts []*part, seconds map[int]*hist.Histogram, startAt time.Time) []oltp.Tick {
	ticks := map[int]*oltp.Tick{}
	artSum := map[int]float64{}
	for _, p := range parts {
		ts := p.ticks
		phase, tpm, nopm, artMs := ts.Text("oltp_phase"), ts.Float("oltp_tpm_client"), ts.Float("oltp_nopm_client"), ts.Float("oltp_art_ms")
		errs, users := ts.Float("oltp_errors"), ts.Float("oltp_users")
		for i, at := range ts.Time {
			s := second(at, startAt)
			t := ticks[s]
			if t == nil {
				t = &oltp.Tick{At: at, ElapsedS: float64(s), Phase: phase[i]}
				ticks[s] = t
			}
			if phase[i] == "measure" {
				t.Phase = phase[i]
			}
			t.At = maxTime(t.At, at)
			t.TPM += num(tpm[i])
			t.NOPMClient += num(nopm[i])
			t.Errors += int64(num(errs[i]))
			t.Users += int(num(users[i]))
			artSum[s] += num(tpm[i]) * num(artMs[i])
		}
	}
	out := make([]oltp.Tick, 0, len(ticks))
	for s, t := range ticks {
		if t.TPM > 0 {
			t.ARTMs = artSum[s] / t.TPM
		}
		if h := seconds[s]; h != nil && h.Count() > 0 {
			t.P90Ms = h.QuantileMs(90)
		}
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b oltp.Tick) int { return a.At.Compare(b.At) })
	return out
}

func num(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}
