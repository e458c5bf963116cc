package store

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// Formats are the ways history prints, as compare's --format names them.
var Formats = []string{"text", "md", "csv", "json"}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// FormatValue prints a figure with two decimals at most.
func FormatValue(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// withUnit is a value and its unit, as a sentence prints it.
func withUnit(v float64, unit string) string {
	return strings.TrimSpace(FormatValue(v) + " " + unit)
}

// tableHeadlines is how many headline figures a run's line shows.
const tableHeadlines = 3

// WriteRuns prints the history's runs in format (Formats). The text and
// Markdown tables show each run's headline figures and thresholds; CSV and
// JSON give every field.
func WriteRuns(w io.Writer, format string, rows []Row) error {
	if format == "json" {
		if rows == nil {
			rows = []Row{}
		}
		return results.WriteJSON(w, rows)
	}
	if format == "csv" {
		return runsCSV(rows).Write(w, format)
	}
	t := results.Table{Head: []string{"STARTED (UTC)", "LABEL", "STATUS", "ENGINE", "STORAGE", "HOST", "HEADLINE", "THRESHOLDS", "BASELINE"}}
	for _, r := range rows {
		engine := r.Engine
		if v := strings.Fields(r.EngineVersion); len(v) > 0 {
			engine += " " + v[0] // "15.18", without the distribution's words
		}
		storage := r.Storage
		if r.Device != "" {
			storage += " (" + r.Device + ")"
		}
		var headline []string
		for i, f := range r.Headline {
			if i == tableHeadlines {
				headline = append(headline, fmt.Sprintf("+%d more", len(r.Headline)-i))
				break
			}
			h := f.Name + " " + withUnit(f.Value.Value, f.Unit)
			switch {
			case f.N == 0:
				h = fmt.Sprintf("%s none met %s (%s)", f.Name, f.Bound, results.Plural(f.Missed, "repeat"))
			case f.Missed > 0:
				h += fmt.Sprintf(" (median of %d; %d more missed %s)", f.N, f.Missed, f.Bound)
			case f.N > 1:
				h += fmt.Sprintf(" (median of %d)", f.N)
			}
			headline = append(headline, h)
		}
		t.Rows = append(t.Rows, []string{r.StartedAt.UTC().Format(time.DateTime), r.Label, r.Status, engine, strings.TrimSpace(storage), r.Host,
			strings.Join(headline, "; "), thresholds(r), baseline(r.Baseline)})
	}
	return t.Write(w, format)
}

// baseline says how a run was judged against its baseline, and against
// which runs (their directories' names).
func baseline(b *RunBaseline) string {
	if b == nil {
		return ""
	}
	names := make([]string, len(b.Runs))
	for i, id := range b.Runs {
		names[i], _, _ = strings.Cut(id, "@")
	}
	s := b.Verdict
	if len(names) > 0 {
		s += " against " + strings.Join(names, ", ")
	}
	if b.AcceptedBy != "" {
		s += "; accepted by " + b.AcceptedBy + " " + b.AcceptedAt.UTC().Format(time.DateTime)
	}
	return s
}

// thresholds says how a run's thresholds were judged.
func thresholds(r Row) string {
	switch {
	case r.Thresholds == 0:
		return ""
	case r.Failed == 0:
		return fmt.Sprintf("%d passed", r.Thresholds)
	}
	return fmt.Sprintf("%d of %d failed", r.Failed, r.Thresholds)
}

func runsCSV(rows []Row) results.Table {
	t := results.Table{Head: []string{"started_at", "id", "label", "status", "command", "engine", "engine_version", "host", "storage", "device",
		"study", "dir", "figures", "thresholds", "thresholds_failed", "headline", "baseline", "baseline_runs", "accepted_by"}}
	for _, r := range rows {
		var headline []string
		for _, f := range r.Headline {
			if f.N > 0 {
				headline = append(headline, f.Name+"="+strconv.FormatFloat(f.Value.Value, 'g', -1, 64))
			}
		}
		var verdict, runs, by string
		if b := r.Baseline; b != nil {
			verdict, runs, by = b.Verdict, strings.Join(b.Runs, ";"), b.AcceptedBy
		}
		t.Rows = append(t.Rows, []string{r.StartedAt.UTC().Format(time.RFC3339Nano), r.ID, r.Label, r.Status, r.Command, r.Engine, r.EngineVersion,
			r.Host, r.Storage, r.Device, r.Study, r.Dir, strconv.Itoa(r.Figures), strconv.Itoa(r.Thresholds), strconv.Itoa(r.Failed),
			strings.Join(headline, ";"), verdict, runs, by})
	}
	return t
}

// WriteTrend prints a figure's trend in format (Formats): per label and
// target, each run's median of its repeats with their range and count.
func WriteTrend(w io.Writer, format string, series []Series) error {
	switch format {
	case "json":
		if series == nil {
			series = []Series{}
		}
		return results.WriteJSON(w, series)
	case "csv":
		t := results.Table{Head: []string{"metric", "label", "host", "storage", "started_at", "run_id", "status", "median", "min", "max", "n", "unit"}}
		for _, s := range series {
			for _, p := range s.Points {
				f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
				t.Rows = append(t.Rows, []string{s.Metric, s.Label, s.Host, s.Storage, p.StartedAt.UTC().Format(time.RFC3339Nano), p.RunID, p.Status,
					f(p.Value.Value), f(p.Min), f(p.Max), strconv.Itoa(p.N), p.Unit})
			}
		}
		return t.Write(w, format)
	}
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := fmt.Sprintf("%s of %s on %s", s.Metric, dash(s.Label), dash(s.Host))
		if s.Storage != "" {
			title += ":" + s.Storage
		}
		if format == "md" {
			title = "### " + results.MarkdownEscaper.Replace(title)
		} else {
			title = results.TerminalLine(title)
		}
		fmt.Fprintf(w, "%s\n\n", title)
		t := results.Table{Head: []string{"STARTED (UTC)", "MEDIAN", "MIN", "MAX", "N", "STATUS"}}
		for _, p := range s.Points {
			t.Rows = append(t.Rows, []string{p.StartedAt.UTC().Format(time.DateTime), withUnit(p.Value.Value, p.Unit), FormatValue(p.Min),
				FormatValue(p.Max), strconv.Itoa(p.N), p.Status})
		}
		if err := t.Write(w, format); err != nil {
			return err
		}
	}
	return nil
}
