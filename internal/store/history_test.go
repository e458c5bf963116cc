package store

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/golden"
)

// allFixtures are the fixture runs the history tests record.
var allFixtures = []string{"quick", "oltp-base", "oltp-xss", "repeats-a", "repeats-b", "device-a", "device-b", "device-steady", "study-a", "study-b"}

// fixtureStore is a SQLite store holding every fixture run.
func fixtureStore(t *testing.T) *Store {
	t.Helper()
	s := openTemp(t)
	dir := t.TempDir()
	var dirs []string
	for _, r := range allFixtures {
		dirs = append(dirs, copyRun(t, dir, r))
	}
	if _, err := s.Import(context.Background(), dirs); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHistoryFilters(t *testing.T) {
	s := fixtureStore(t)
	day := func(d string) time.Time { t, _ := time.Parse(time.DateOnly, d); return t }
	for _, c := range []struct {
		name string
		q    Query
		want string // run ids' directory names, newest first
	}{
		{"engine", Query{Engine: "postgresql", Label: "*a"}, "quick,study-a,repeats-a"},
		{"no engine: device runs", Query{Engine: "mariadb"}, ""},
		{"storage path", Query{Storage: "/var/tmp/report-b"}, "device-b,device-a"},
		{"storage glob", Query{Storage: "/tmp/*"}, "device-steady"},
		{"storage device", Query{Storage: "/dev/vda", Limit: 2}, "device-steady,quick"},
		{"study or preset", Query{Study: "qu*"}, "quick,study-b,study-a"},
		{"status", Query{Status: "interrupted"}, "study-b"},
		{"since", Query{Since: day("2026-11-22")}, "device-steady,quick"},
		{"until", Query{Until: day("2026-03-03"), Label: "study-*"}, "study-b,study-a"},
		{"since and until", Query{Since: day("2026-11-21"), Until: day("2026-11-22"), Label: "?*"}, "oltp-xss,oltp-base"},
		{"label class", Query{Label: "[bl]*"}, "quick,oltp-base"},
		{"a label with markup, matched as text", Query{Label: "<script>*"}, "oltp-xss"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, err := s.History(context.Background(), c.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, strings.Split(r.ID, "@")[0])
			}
			if strings.Join(got, ",") != c.want {
				t.Errorf("%+v lists %q, want %q", c.q, got, c.want)
			}
		})
	}
}

// TestHistoryHeadline: each run's headline is its kinds' first figures,
// repeats as their median and range, builds only when nothing else.
func TestHistoryHeadline(t *testing.T) {
	rows, err := fixtureStore(t).History(context.Background(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		var names []string
		for _, f := range r.Headline {
			names = append(names, f.Name)
			if f.Name == "oltp.nopm" && strings.HasPrefix(r.ID, "repeats-a@") && (f.N != 5 || f.Min != 980 || f.Max != 1040 || f.Value.Value != 1010) {
				t.Errorf("repeats-a's nopm %+v, want the median 1010 of 5 in 980..1040", f.Value)
			}
		}
		got[strings.Split(r.ID, "@")[0]] = strings.Join(names, ",")
	}
	for run, want := range map[string]string{
		"quick":     "device.4k-randread.iops_at_max_latency,iocal.max_iops,oltp.nopm,ramp.max_tps,dss.qphh",
		"oltp-base": "oltp.nopm",
		"device-a":  "device.4k-randread.iops_at_max_latency",
	} {
		if got[run] != want {
			t.Errorf("%s's headline %s, want %s", run, got[run], want)
		}
	}
}

func TestTrend(t *testing.T) {
	s := fixtureStore(t)
	series, err := s.Trend(context.Background(), Query{Metric: "oltp.nopm"})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, se := range series {
		labels = append(labels, se.Label)
		for i := 1; i < len(se.Points); i++ {
			if se.Points[i].StartedAt.Before(se.Points[i-1].StartedAt) {
				t.Errorf("%s's points are not oldest first", se.Label)
			}
		}
	}
	if want := "<script>alert(1)</script>,base,lead-a,repeats-a,repeats-b"; strings.Join(labels, ",") != want {
		t.Errorf("series %q, want %s", labels, want)
	}
	if _, err := s.Trend(context.Background(), Query{}); err == nil {
		t.Error("a trend without a metric")
	}
}

// TestRenderers compares every format of the runs and of a trend with its
// golden file (go test -update rewrites them).
func TestRenderers(t *testing.T) {
	s := fixtureStore(t)
	ctx := context.Background()
	rows, err := s.History(ctx, Query{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].Dir = filepath.Base(rows[i].Dir) // not the test's temporary directory
	}
	series, err := s.Trend(ctx, Query{Metric: "oltp.nopm", Label: "[lr]*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats {
		var runs, trend bytes.Buffer
		if err := WriteRuns(&runs, format, rows); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "history", "runs."+format), runs.Bytes())
		if err := WriteTrend(&trend, format, series); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "history", "trend."+format), trend.Bytes())
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: ""},
		{in: "2026-03-02", want: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{in: "2026-03-02T14:05", want: time.Date(2026, 3, 2, 14, 5, 0, 0, time.UTC)},
		{in: "2026-03-02T14:05:00+01:00", want: time.Date(2026, 3, 2, 13, 5, 0, 0, time.UTC)},
		{in: "36h", want: now.Add(-36 * time.Hour)},
		{in: "7d", want: now.Add(-7 * 24 * time.Hour)},
		{in: "1.5d", want: now.Add(-36 * time.Hour)},
		{in: "-2h", bad: true},
		{in: "7x", bad: true},
		{in: "1.5.5d", bad: true},
		{in: "yesterday", bad: true},
	} {
		got, err := ParseWhen("--since", c.in, now)
		if (err != nil) != c.bad || !got.Equal(c.want) {
			t.Errorf("ParseWhen(%q) = %v, %v; want %v (bad: %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

// TestGlobRegexp: PostgreSQL's regular expression for a glob matches what
// path.Match (and SQLite's GLOB) does.
func TestGlobRegexp(t *testing.T) {
	for _, c := range []struct {
		glob, yes, no string
	}{
		{"array-*", "array-7", "my-array-7"},
		{"a?c", "abc", "ac"},
		{"[bl]*", "lead-a", "alead"},
		{"[^b]*", "lead", "base"},
		{"v1.2", "v1.2", "v1x2"},
		{"(x)+", "(x)+", "xx"},
		{`/mnt/[a-c]\d`, "/mnt/b\\d", "/mnt/bd"},
	} {
		re := regexp.MustCompile(globRegexp(c.glob))
		if !re.MatchString(c.yes) || re.MatchString(c.no) {
			t.Errorf("glob %q as %q: matches %q %v, %q %v", c.glob, re, c.yes, re.MatchString(c.yes), c.no, re.MatchString(c.no))
		}
	}
}
