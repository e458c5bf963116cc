// Package enginetest is the conformance suite every engine passes, in the
// manner of restic's backend tests: each engine's package runs it against
// every version installed here, so the seam holds for all of them.
package enginetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// Suite is an engine under test, the versions it runs on and the few
// engine-specific means the suite needs to make and check data: an
// engine's conformance test is its Suite and a call to Run.
type Suite struct {
	// Engine is the registered engine's name; Config the base of every
	// managed instance the suite opens (its cache, its options), Path
	// aside.
	Engine string
	Config engine.Config
	// Versions are the builds to run the suite on, each a subtest whose
	// options are added to Config's; none: once, on Config's.
	Versions []Version
	// DB is a pool on calibra's database of a started instance, closed
	// after each use.
	DB func(e engine.Engine) *sql.DB
	// Setting and Value: a setting the instance starts with, and how the
	// engine itself prints it (e.g. shared_buffers, "1GB").
	Setting, Value string
	// DSN is a DSN, its password %s, of a server that cannot be reached
	// (a closed loopback port).
	DSN string
	// Shared says the caller runs the tests that neither restart, break
	// nor reconfigure an instance (the counters, the settings) on a
	// running instance it shares, with RunShared: Run leaves them out.
	Shared bool
}

// Version is one build of the engine: its name and the engine options
// that choose it (e.g. {"pg-bin": "/opt/pg18/bin"}).
type Version struct {
	Name    string
	Options map[string]string
}

// Run runs every conformance test of the suite on each version, side by
// side: each works on storage of its own.
func Run(t *testing.T, s Suite) {
	if len(s.Versions) == 0 {
		s.run(t)
		return
	}
	for _, v := range s.Versions {
		t.Run(v.Name, func(t *testing.T) {
			s := s
			s.Config.Options = maps.Clone(s.Config.Options)
			if s.Config.Options == nil {
				s.Config.Options = map[string]string{}
			}
			maps.Copy(s.Config.Options, v.Options)
			s.run(t)
		})
	}
}

func (s Suite) run(t *testing.T) {
	own := func(on func(*testing.T, engine.Engine)) func(*testing.T) {
		return func(t *testing.T) {
			e, _, _ := s.started(t)
			on(t, e)
		}
	}
	for _, c := range []struct {
		name   string
		test   func(*testing.T)
		shared bool
	}{
		{"start stop and restart are idempotent", s.idempotent, false},
		{"a killed server restarts and recovers", s.killed, false},
		{"reset restores the loaded data", s.reset, false},
		{counters, own(s.counters), true},
		{settings, own(s.settings), true},
		{"a DSN's password is never printed", s.password, false},
		{"cancellation stops every process", s.cancellation, false},
	} {
		if c.shared && s.Shared {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t)
		})
	}
}

// open prepares a managed instance with its data under path.
func (s Suite) open(t *testing.T, path string) engine.Engine {
	t.Helper()
	cfg := s.Config
	cfg.Path = path
	e, err := engine.Open(context.Background(), s.Engine, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// exec runs one statement in calibra's database.
func (s Suite) exec(ctx context.Context, e engine.Engine, sql string) error {
	db := s.DB(e)
	defer db.Close()
	_, err := db.ExecContext(ctx, sql)
	return err
}

const (
	counters = "transaction counters only grow"
	settings = "settings read back in their real units"
)

// tables numbers the counters' tables.
var tables atomic.Int64

// RunShared runs, side by side, the tests Run leaves out when s.Shared is
// set on e, a running instance started with Setting at Value that other
// tests share: they only read its state and write tables of their own
// (counted_*).
func RunShared(t *testing.T, s Suite, e engine.Engine) {
	t.Helper()
	t.Run(counters, func(t *testing.T) { t.Parallel(); s.counters(t, e) })
	t.Run(settings, func(t *testing.T) { t.Parallel(); s.settings(t, e) })
}

// started opens and starts an instance, stopped when the test ends.
func (s Suite) started(t *testing.T) (engine.Engine, *proc.Group, string) {
	t.Helper()
	path := testenv.StorageDir(t)
	e := s.open(t, path)
	group := proc.NewGroup()
	t.Cleanup(func() { _ = e.Stop(); _ = group.StopAll(time.Minute) })
	if _, err := e.Start(context.Background(), group); err != nil {
		t.Fatalf("start: %v", err)
	}
	return e, group, path
}

func (s Suite) table(t *testing.T, e engine.Engine, name string, rows int) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE " + name + " (i int)", "INSERT INTO " + name + " VALUES " + values(rows)} {
		if err := s.exec(ctx, e, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func values(n int) string {
	v := make([]string, n)
	for i := range v {
		v[i] = "(" + strconv.Itoa(i) + ")"
	}
	return strings.Join(v, ",")
}

func (s Suite) count(t *testing.T, e engine.Engine, table string) int64 {
	t.Helper()
	db := s.DB(e)
	defer db.Close()
	var n int64
	if err := db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func (s Suite) idempotent(t *testing.T) {
	ctx := context.Background()
	path := testenv.StorageDir(t)
	e := s.open(t, path)
	group := proc.NewGroup()
	t.Cleanup(func() { _ = group.StopAll(time.Minute) })
	if err := e.Stop(); err != nil {
		t.Fatalf("stop before start: %v", err)
	}
	if init, err := e.Start(ctx, group); err != nil || !init {
		t.Fatalf("first start: initialised %v, %v", init, err)
	}
	if init, err := e.Start(ctx, group); err != nil || init {
		t.Fatalf("start of a running instance: initialised %v, %v", init, err)
	}
	for i := range 2 {
		if err := e.Stop(); err != nil {
			t.Fatalf("stop %d: %v", i+1, err)
		}
	}
	if init, err := e.Start(ctx, group); err != nil || init {
		t.Fatalf("start after stop: initialised %v, %v", init, err)
	}
	if r, ok := e.(engine.ColdRestarter); ok {
		for i := range 2 {
			if _, err := r.Restart(ctx, group); err != nil {
				t.Fatalf("restart %d: %v", i+1, err)
			}
		}
	}
	if err := s.exec(ctx, e, "SELECT 1"); err != nil {
		t.Fatalf("the instance does not answer after restarts: %v", err)
	}
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
}

func (s Suite) killed(t *testing.T) {
	e, group, _ := s.started(t)
	c, ok := e.(engine.Crasher)
	if !ok {
		t.Skip(engine.NotSupported(e, "a crash"))
	}
	s.table(t, e, "survivor", 100)
	c.Kill()
	// The dead server's pid file and socket lock are left behind, as a
	// crash leaves them.
	if _, err := e.Start(context.Background(), group); err != nil {
		t.Fatalf("start after a kill: %v", err)
	}
	if n := s.count(t, e, "survivor"); n != 100 {
		t.Fatalf("%d committed rows after recovery, want 100", n)
	}
}

func (s Suite) reset(t *testing.T) {
	e, _, _ := s.started(t)
	r, ok := e.(engine.Resetter)
	if !ok {
		t.Skip(engine.NotSupported(e, "a reset"))
	}
	ctx := context.Background()
	s.table(t, e, "loaded", 50)
	if _, err := r.SaveTemplate(ctx, "50 rows"); err != nil {
		t.Fatalf("save: %v", err)
	}
	if note, ok, err := r.TemplateNote(ctx); err != nil || !ok || note != "50 rows" {
		t.Fatalf("the template's note reads %q (exists %v, %v), want the saved one", note, ok, err)
	}
	if err := s.exec(ctx, e, "DELETE FROM loaded WHERE i < 30"); err != nil {
		t.Fatal(err)
	}
	if err := r.RestoreTemplate(ctx); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if n := s.count(t, e, "loaded"); n != 50 {
		t.Fatalf("%d rows after the reset, want the 50 loaded", n)
	}
}

func (s Suite) counters(t *testing.T, e engine.Engine) {
	tc, ok := e.(engine.TransactionCounter)
	if !ok {
		t.Skip(engine.NotSupported(e, "a transaction counter"))
	}
	ctx := context.Background()
	read := func() int64 {
		n, err := tc.Transactions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Each a transaction in every engine: one that touches a table
	// (MariaDB counts no transaction for a bare SELECT 1).
	// A table of its own: the instance may be shared (RunShared), by
	// another run of this test too (-count).
	table := "counted_" + strconv.FormatInt(tables.Add(1), 10)
	s.table(t, e, table, 1)
	before := read()
	for i := range 20 {
		if err := s.exec(ctx, e, "INSERT INTO "+table+" VALUES ("+strconv.Itoa(i)+")"); err != nil {
			t.Fatal(err)
		}
	}
	// Engines may publish counts a little late: wait, but never see one
	// fall.
	last := before
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n := read()
		if n < last {
			t.Fatalf("the counter fell from %d to %d", last, n)
		}
		last = n
		if n >= before+20 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the counter grew from %d to %d over 20 transactions", before, n)
		}
	}
}

func (s Suite) settings(t *testing.T, e engine.Engine) {
	if got := e.Describe().Settings[s.Setting]; got != s.Value {
		t.Fatalf("%s reads back as %q, want %q", s.Setting, got, s.Value)
	}
}

func (s Suite) password(t *testing.T) {
	const password = "s3cret-hunter2"
	e, err := engine.Open(context.Background(), s.Engine, engine.Config{DSN: fmt.Sprintf(s.DSN, password)})
	if err == nil {
		defer e.Stop()
		if strings.Contains(e.Describe().Target, password) {
			t.Fatalf("the target shows the password: %s", e.Describe().Target)
		}
		return
	}
	if strings.Contains(err.Error(), password) {
		t.Fatalf("the error shows the password: %v", err)
	}
}

func (s Suite) cancellation(t *testing.T) {
	path := testenv.StorageDir(t)
	e := s.open(t, path)
	group := proc.NewGroup()
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel while the instance initialises and starts.
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err := e.Start(ctx, group)
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		t.Fatalf("start: %v", err)
	}
	_ = e.Stop()
	if err := group.StopAll(time.Minute); err != nil {
		t.Fatal(err)
	}
	if pids := testenv.ProcessesUnder(path); len(pids) > 0 {
		t.Fatalf("processes still work under %s after cancellation and stop: %v", path, pids)
	}
}
