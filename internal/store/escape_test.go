package store

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/hostiletest"
)

// history prints a run another account wrote, every field of it hostile
// (hostiletest.Text: terminal escapes, BEL, C1, newlines, HTML, a
// right-to-left override, a formula), in every format and as a trend, with
// no such character raw: the Markdown keeps one row a line and makes no
// HTML, the CSV one record a line and no formula.
func TestHistoryEscapesEveryFormat(t *testing.T) {
	s := openTemp(t)
	dir := hostiletest.Run(t, t.TempDir(), fixtures+"/oltp-base")
	if _, err := s.Import(context.Background(), []string{dir, copyRun(t, t.TempDir(), "oltp-base")}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.History(context.Background(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	series, err := s.Trend(context.Background(), Query{Metric: "oltp.nopm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(series) != 2 || rows[1].Label != hostiletest.Text && rows[0].Label != hostiletest.Text {
		t.Fatalf("the hostile run was not recorded as written: %+v", rows)
	}
	for _, format := range Formats {
		for _, o := range []struct {
			what      string
			write     func(*bytes.Buffer) error
			rows, col int // records and the label's column in the CSV
		}{
			{"history", func(b *bytes.Buffer) error { return WriteRuns(b, format, rows) }, 1 + len(rows), 2},
			{"history --metric", func(b *bytes.Buffer) error { return WriteTrend(b, format, series) }, 1 + len(series), 1},
		} {
			var b bytes.Buffer
			if err := o.write(&b); err != nil {
				t.Fatal(err)
			}
			what := o.what + " --format " + format
			out := b.String()
			hostiletest.Check(t, what, out, false)
			if !strings.Contains(out, `\u202e`) {
				t.Errorf("%s does not show the override as its code point:\n%s", what, out)
			}
			switch format {
			case "md":
				if strings.Contains(out, "<") {
					t.Errorf("%s holds raw HTML:\n%s", what, out)
				}
				for _, line := range strings.Split(out, "\n") {
					if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); strings.HasPrefix(line, "|") && n != 7 && n != 10 {
						t.Errorf("%s: a row of %d cells: %s", what, n-1, line)
					}
				}
			case "csv":
				recs, err := csv.NewReader(&b).ReadAll()
				if err != nil || len(recs) != o.rows {
					t.Fatalf("%s: %d records (%v), want %d:\n%s", what, len(recs), err, o.rows, out)
				}
				for _, r := range recs[1:] {
					for _, c := range r {
						if _, num := strconv.ParseFloat(c, 64); c != "" && strings.ContainsRune("=+-@", rune(c[0])) && num != nil {
							t.Errorf("%s: the cell %q is a formula", what, c)
						}
					}
				}
				if !strings.HasPrefix(recs[1][o.col], "'=cmd") && !strings.HasPrefix(recs[2][o.col], "'=cmd") {
					t.Errorf("%s: the label is not guarded: %q", what, recs[1:])
				}
			}
		}
	}
}
