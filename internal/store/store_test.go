package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
)

const fixtures = "../results/testdata/runs"

// copyRun copies a fixture run directory into dir (tests change and remove
// their copies).
func copyRun(t testing.TB, dir, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(fixtures, name, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "db", "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func count(t *testing.T, s *Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestParseSpec(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/x/data")
	def, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 && def != "/var/lib/calibra/results.db" || os.Geteuid() != 0 && def != "/x/data/calibra/results.db" {
		t.Errorf("DefaultPath() = %s", def)
	}
	for _, c := range []struct {
		source, in, want, bad string
	}{
		{in: "", want: "sqlite:" + def},
		{in: "none", want: "none"},
		{in: "sqlite:/tmp/r.db", want: "sqlite:/tmp/r.db"},
		{in: "postgres://u@h/db", want: "postgres://u@h/db"},
		{in: "postgresql://h/db?sslmode=disable", want: "postgresql://h/db?sslmode=disable"},
		{in: "postgres://u@/db?host=/run/pg", want: "postgres://u@/db?host=/run/pg"},
		// A password: not on the command line; in the environment or a file, hidden.
		{in: "postgres://u:hunter2@h/db", bad: "--store holds a password, which ps shows to every local account; drop the password from --store and give it in PGPASSWORD"},
		{in: "postgres://u@h/db?password=hunter2", bad: "--store holds a password"},
		{source: "CALIBRA_STORE", in: "postgres://u:hunter2@h/db", want: "postgres://u:xxxxx@h/db"},
		{source: "--store-file /etc/calibra/store", in: "postgres://u:hunter2@h/db", want: "postgres://u:xxxxx@h/db"},
		{source: "CALIBRA_STORE", in: "postgres://u:hunter2@h:port/db", bad: "names a PostgreSQL store whose URL calibra cannot read"},
		{in: "sqlite:", bad: "names no file"},
		{in: "sqlite:/tmp/", bad: "names a directory"},
		{in: "mysql://u:hunter2@h/db", bad: "is not a store calibra knows"},
		{in: "/tmp/r.db", bad: "is not a store calibra knows"},
	} {
		if c.source == "" {
			c.source = OnCommandLine
		}
		s, err := ParseSpec(c.source, c.in)
		switch {
		case c.bad != "":
			if err == nil || !strings.Contains(err.Error(), c.bad) || fault.Code(err) != fault.ExitInput {
				t.Errorf("ParseSpec(%q) = %v, want exit 2 with %q", c.in, err, c.bad)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("ParseSpec(%q) quotes the password: %v", c.in, err)
			}
		case err != nil:
			t.Errorf("ParseSpec(%q): %v", c.in, err)
		case s.String() != c.want || !s.None && s.Where() != strings.TrimPrefix(c.want, "sqlite:"):
			t.Errorf("ParseSpec(%q) = %s, want %s", c.in, s, c.want)
		}
	}
}

// Without a home directory the default store has no place: that is no
// error of the command (a run still runs), but Spec.Err says why.
func TestDefaultWithoutHome(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root's default store is /var/lib/calibra")
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "")
	s, err := ParseSpec("--store", "")
	if err != nil || s.Err == nil || !strings.Contains(s.Err.Error(), "finds no home directory") {
		t.Errorf("ParseSpec without a home: %+v, %v", s, err)
	}
}

// TestMigrations applies the migrations from an empty database and from
// every earlier version, and refuses a store newer than this calibra.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	for from := 0; from <= SchemaVersion; from++ {
		path := filepath.Join(t.TempDir(), "results.db")
		if from > 0 {
			s, err := open(ctx, path, Create, from)
			if err != nil {
				t.Fatalf("to version %d: %v", from, err)
			}
			// A run recorded at that version, in the columns every version has.
			if _, err := s.db.Exec(`INSERT INTO runs (id, dir, status, started_at, recorded_at) VALUES ('old@1', '/old', 'complete', ?, ?)`,
				formatTime(time.Unix(0, 0)), formatTime(time.Unix(0, 0))); err != nil {
				t.Fatal(err)
			}
			s.Close()
		}
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("from version %d: %v", from, err)
		}
		if rows, err := s.History(ctx, Query{Status: "complete"}); from > 0 && (err != nil || len(rows) != 1 || rows[0].ID != "old@1") {
			t.Errorf("from version %d: the old run lists as %+v, %v", from, rows, err)
		}
		// Recorded before the store kept results.json: found, with none,
		// which serve says in a sentence.
		if r, found, err := s.Stored(ctx, "old@1"); from > 0 && (err != nil || !found || r.Results != nil) {
			t.Errorf("from version %d: the old run is stored as %d bytes, %v, %v", from, len(r.Results), found, err)
		}
		if v := count(t, s, `SELECT max(version) FROM schema_version`); v != SchemaVersion {
			t.Errorf("from version %d: at version %d, want %d", from, v, SchemaVersion)
		}
		if n := count(t, s, `SELECT count(*) FROM schema_version`); n != 1 {
			t.Errorf("from version %d: %d rows in schema_version", from, n)
		}
		if _, err := s.Record(ctx, copyRun(t, t.TempDir(), "quick")); err != nil {
			t.Errorf("from version %d: record: %v", from, err)
		}
		if _, err := s.db.Exec(`UPDATE schema_version SET version = ?`, SchemaVersion+1); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), "newer than this calibra") {
			t.Errorf("a newer store opened: %v", err)
		}
	}
}

func TestRecord(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	dir := t.TempDir()
	for _, c := range []struct {
		run                     string
		status, label           string
		verdicts, warnings, all int // all: the figures results.Metrics gives
	}{
		{run: "quick", status: results.StatusComplete, label: "lead-a", verdicts: 7, warnings: 1},
		{run: "oltp-base", status: results.StatusComplete, label: "base"},
		{run: "study-b", status: results.StatusInterrupted, label: "study-b"},
		{run: "device-a", status: results.StatusComplete},
	} {
		t.Run(c.run, func(t *testing.T) {
			rd := copyRun(t, dir, c.run)
			r, err := results.Load(rd)
			if err != nil {
				t.Fatal(err)
			}
			figures := 0
			for _, st := range r.Steps {
				figures += len(results.Metrics(st))
			}
			if figures == 0 {
				t.Fatal("the fixture has no figures")
			}
			var id string
			for range 2 { // the second time replaces the first
				if id, err = s.Record(ctx, rd); err != nil {
					t.Fatal(err)
				}
			}
			if want := c.run + "@" + formatTime(r.StartedAt); id != want {
				t.Errorf("id %s, want %s", id, want)
			}
			var status, label, gotDir, engine, host string
			var n int
			if err := s.db.QueryRow(`SELECT status, label, dir, engine_name, host, figure_count FROM runs WHERE id = ?`, id).Scan(&status, &label, &gotDir, &engine, &host, &n); err != nil {
				t.Fatal(err)
			}
			if status != c.status || label != c.label || gotDir != rd || n != figures || host != r.Meta.Host.Hostname {
				t.Errorf("recorded %s %q %s %d figures on %s, want %s %q %s %d on %s", status, label, gotDir, n, host, c.status, c.label, rd, figures, r.Meta.Host.Hostname)
			}
			if r.Meta.Engine != nil && engine != r.Meta.Engine.Name {
				t.Errorf("engine %q, want %q", engine, r.Meta.Engine.Name)
			}
			for _, k := range []struct {
				table string
				want  int
			}{{"runs", 1}, {"figures", figures}, {"verdicts", c.verdicts}, {"warnings", c.warnings}} {
				col := "run_id"
				if k.table == "runs" {
					col = "id"
				}
				if got := count(t, s, `SELECT count(*) FROM `+k.table+` WHERE `+col+` = ?`, id); got != k.want {
					t.Errorf("%d rows in %s, want %d", got, k.table, k.want)
				}
			}
		})
	}
	if n := count(t, s, `SELECT count(*) FROM figures WHERE kind = 'oltp' AND metric = 'nopm' AND unit = '' AND step LIKE 'oltp/oltp % warehouses %'`); n != 2 {
		t.Errorf("%d oltp.nopm figures, want 2 (quick's and oltp-base's)", n)
	}
	if n := count(t, s, `SELECT count(*) FROM figures WHERE point <> '' AND metric LIKE point || '.%'`); n == 0 {
		t.Error("no figure has a point")
	}
}

// TestImportRefusesBrokenDir: one bad directory among good ones is refused
// before anything is written.
func TestImportRefusesBrokenDir(t *testing.T) {
	dir := t.TempDir()
	good := copyRun(t, dir, "oltp-base")
	empty := filepath.Join(dir, "empty")
	broken := filepath.Join(dir, "broken")
	for _, d := range []string{empty, broken} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(broken, "results.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	noStatus := filepath.Join(dir, "no-status")
	if err := os.Mkdir(noStatus, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noStatus, "results.json"), []byte(`{"schema":"`+results.Schema+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := openTemp(t)
	for _, c := range []struct {
		bad, want string
	}{
		{empty, "holds no results.json"},
		{broken, "is not valid JSON"},
		{noStatus, "has no status or start time"},
		{filepath.Join(dir, "missing"), "holds no results.json"},
	} {
		_, err := s.Import(context.Background(), []string{good, c.bad})
		if err == nil || !strings.Contains(err.Error(), c.want) || fault.Code(err) != fault.ExitInput {
			t.Errorf("import of %s: %v, want exit 2 with %q", c.bad, err, c.want)
		}
		if n := count(t, s, `SELECT count(*) FROM runs`) + count(t, s, `SELECT count(*) FROM figures`); n != 0 {
			t.Errorf("import of %s wrote %d rows", c.bad, n)
		}
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTemp(t)
	gone, changed, fine := copyRun(t, dir, "device-a"), copyRun(t, dir, "oltp-base"), copyRun(t, dir, "quick")
	if _, err := s.Import(ctx, []string{gone, changed, fine}); err != nil {
		t.Fatal(err)
	}
	if n, bad, err := s.Check(ctx); err != nil || n != 3 || len(bad) != 0 {
		t.Fatalf("Check = %d, %v, %v; want 3 runs in agreement", n, bad, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(changed, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"status": "complete"`, `"status": "failed"`, 1))
	if err := os.WriteFile(filepath.Join(changed, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	n, bad, err := s.Check(ctx)
	if err != nil || n != 3 {
		t.Fatalf("Check = %d, %v", n, err)
	}
	var got []string
	for _, d := range bad {
		got = append(got, d.String())
	}
	text := strings.Join(got, "\n")
	if len(bad) != 2 || !strings.Contains(text, gone+"): the run directory is gone") || !strings.Contains(text, "results.json says status failed, the store complete") {
		t.Errorf("disagreements:\n%s", text)
	}
	// A run another host recorded (a shared store) has its directory
	// there: this host does not check it.
	if _, err := s.db.Exec(`UPDATE runs SET recorded_on = 'elsewhere' WHERE dir = ?`, gone); err != nil {
		t.Fatal(err)
	}
	if n, bad, err := s.Check(ctx); err != nil || n != 2 || len(bad) != 1 {
		t.Errorf("Check with another host's run = %d, %v, %v; want 2 checked, 1 disagreeing", n, bad, err)
	}
}

func TestHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTemp(t)
	var dirs []string
	for _, r := range []string{"quick", "oltp-base", "repeats-a", "repeats-b", "device-a", "study-b"} {
		dirs = append(dirs, copyRun(t, dir, r))
	}
	if _, err := s.Import(ctx, dirs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		q     Query
		want  []string // labels, newest first
		value bool     // every row has the metric
	}{
		// Newest first; runs started at once by id, descending.
		{name: "all", q: Query{}, want: []string{"lead-a", "", "base", "study-b", "repeats-b", "repeats-a"}},
		{name: "limit", q: Query{Limit: 2}, want: []string{"lead-a", ""}},
		{name: "label glob", q: Query{Label: "repeats-*"}, want: []string{"repeats-b", "repeats-a"}},
		{name: "label class", q: Query{Label: "[bl]*"}, want: []string{"lead-a", "base"}},
		{name: "metric", q: Query{Metric: "oltp.nopm"}, want: []string{"lead-a", "base", "repeats-b", "repeats-a"}, value: true},
		{name: "metric and label", q: Query{Metric: "oltp.nopm", Label: "repeats-a"}, want: []string{"repeats-a"}, value: true},
		{name: "metric nobody measured", q: Query{Metric: "durability.cycles"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, err := s.History(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, r.Label)
				if c.value && (r.Metric == nil || r.Metric.N == 0) {
					t.Errorf("%s has no %s", r.ID, c.q.Metric)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("labels %q, want %q", got, c.want)
			}
		})
	}
	rows, err := s.History(ctx, Query{Metric: "oltp.nopm", Label: "repeats-a"})
	if err != nil || len(rows) != 1 {
		t.Fatal(rows, err)
	}
	r, err := results.Load(dirs[2])
	if err != nil {
		t.Fatal(err)
	}
	var vs []float64
	for _, st := range r.Steps {
		if m, ok := results.LookupMetric(st, "nopm"); ok {
			vs = append(vs, m.Value)
		}
	}
	if m := rows[0].Metric; m.N != len(vs) || m.N < 3 || m.Value < slices.Min(vs) || m.Value > slices.Max(vs) {
		t.Errorf("repeats-a's nopm %+v from %v", m, vs)
	}
}

func TestCheckMetric(t *testing.T) {
	for _, c := range []struct{ in, bad string }{
		{in: "oltp.nopm"},
		{in: "device.4k-randread.iops_at_max_latency"},
		{in: "oltp.new_order.p99_ms"},
		{in: "nopm", bad: "names no metric"},
		{in: "olpt.nopm", bad: "names no kind of step"},
		{in: "oltp.nopn", bad: "names no metric of oltp"},
	} {
		err := CheckMetric("--metric", c.in)
		if (err == nil) != (c.bad == "") || err != nil && !strings.Contains(err.Error(), c.bad) {
			t.Errorf("CheckMetric(%q) = %v, want %q", c.in, err, c.bad)
		}
	}
}

// TestConcurrentWriters: commands on one host record at once; WAL and the
// busy timeout let each wait for the other.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	dir := t.TempDir()
	names := []string{"quick", "oltp-base", "repeats-a", "repeats-b", "device-a", "device-b"}
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	for _, n := range names {
		rd := copyRun(t, dir, n)
		wg.Go(func() {
			s, err := Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for range 3 {
				if _, err := s.Record(ctx, rd); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := count(t, s, `SELECT count(*) FROM runs`); n != len(names) {
		t.Errorf("%d runs, want %d", n, len(names))
	}
	var mode string
	if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode %q, %v", mode, err)
	}
}

// TestOpenRefusesLinks: the database file is never opened through a link,
// nor in a directory other accounts can change.
func TestOpenRefusesLinks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "results.db")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, link); err == nil || fault.Code(err) != fault.ExitInput {
		t.Errorf("a link opened: %v", err)
	}
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, filepath.Join(shared, "results.db"))
	if err == nil || !strings.Contains(err.Error(), "writable by other accounts") {
		t.Errorf("a store in a shared directory opened: %v", err)
	}
	if _, err := os.Stat(filepath.Join(shared, "results.db")); err == nil {
		t.Error("the refused store was made")
	}
	// A new store's directory is calibra's own, 0700.
	s, err := Open(ctx, filepath.Join(dir, "new", "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if st, err := os.Stat(filepath.Join(dir, "new")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the store's directory: %v %v", st.Mode(), err)
	}
	if _, err := OpenExisting(ctx, filepath.Join(dir, "none", "results.db")); err != ErrNoStore {
		t.Errorf("OpenExisting of no store: %v", err)
	}
}

// BenchmarkRecord is what a command pays at its end: open the store,
// record the quick study's run directory, close.
func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "results.db")
	rd := copyRun(b, b.TempDir(), "quick")
	for b.Loop() {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Record(ctx, rd); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// TestImportOldVersions imports run directories that the first calibra
// versions wrote (testdata/old: built from commit cef3eb1, the first, an
// oltp run and a failed build, and caef736, the first device layer, and
// run on this machine): their results.json lacks most of what later
// versions record, and the store takes them all the same, with their
// figures.
func TestImportOldVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var dirs []string
	for _, name := range []string{"cef3eb1-oltp-run", "cef3eb1-oltp-build-failed", "caef736-device"} {
		data, err := os.ReadFile(filepath.Join("testdata", "old", name, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "results.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	s := openTemp(t)
	if _, err := s.Import(ctx, dirs); err != nil {
		t.Fatal(err)
	}
	rows, err := s.History(ctx, Query{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		var h []string
		for _, f := range r.Headline {
			if f.Value.Value <= 0 && r.Status == results.StatusComplete {
				t.Errorf("%s: %s is %v", r.Label, f.Name, f.Value.Value)
			}
			h = append(h, f.Name)
		}
		got[r.Label] = r.Status + " " + strings.Join(h, ",")
	}
	want := map[string]string{
		"old-oltp":   "complete oltp.nopm",
		"old-build":  "failed oltp_build.mb_per_s", // a failed build's 0 MB/s, as results.Metrics gives it
		"old-device": "complete device.4k-randread.iops_at_max_latency",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("old runs recorded as %v, want %v", got, want)
	}
	if n, bad, err := s.Check(ctx); err != nil || n != 3 || len(bad) != 0 {
		t.Errorf("check of the old runs: %d, %v, %v", n, bad, err)
	}
}
