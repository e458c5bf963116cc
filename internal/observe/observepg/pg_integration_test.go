//go:build integration

package observepg

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// startPostgres starts a throwaway managed instance, or skips when no
// server is installed unless CALIBRA_TEST_REQUIRE names postgresql.
func startPostgres(t *testing.T, pgBin string) (*postgres.Target, *proc.Group) {
	t.Helper()
	_, missing := postgres.FindBinaries("")
	testenv.Need(t, "postgresql", missing, "apt-get install postgresql")
	target, err := postgres.Prepare(context.Background(), postgres.TargetConfig{Path: testenv.StorageDir(t), PGBin: pgBin})
	if err != nil {
		t.Fatal(err)
	}
	return target, testenv.Start(t, target)
}

// TestSamplerOnPostgreSQL runs known load on a real server: sessions that
// sleep (Timeout:PgSleep), one that spins on CPU and one that commits
// (WAL writes and syncs), and checks the window sees each.
// It runs on every server version installed (Debian's 15, the relocatable
// 18 .ci/setup adds): 16+ read pg_stat_io, 18 its WAL rows too.
func TestSamplerOnPostgreSQL(t *testing.T) {
	builds := postgres.Installed()
	testenv.NeedVersions(t, "postgresql", postgres.Majors(builds), "apt-get install postgresql")
	for _, b := range builds {
		t.Run(fmt.Sprintf("postgresql%d", b.Major), func(t *testing.T) { samplerOnPostgreSQL(t, b.Dir) })
	}
}

func samplerOnPostgreSQL(t *testing.T, pgBin string) {
	target, _ := startPostgres(t, pgBin)
	ctx := context.Background()
	// Connected to postgres, observing calibra: the sampler never holds the
	// observed database open.
	s, err := observe.Start(ctx, observe.Config{Path: target.Managed.DataDir, Engine: target})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	quiet := s.Edge()
	time.Sleep(300 * time.Millisecond)
	idle := s.Window(quiet, s.Edge())
	if len(idle.Waits) != 0 || idle.DB == nil || idle.DB.WaitSamples == 0 {
		t.Fatalf("an idle server: waits %+v, db %+v; want polls that see nothing (the sampler excludes itself)", idle.Waits, idle.DB)
	}

	load := []string{
		"SELECT pg_sleep(1.5)",
		"SELECT pg_sleep(1.5)",
		// A loop, not generate_series, whose function scan spills its rows
		// to a temporary file: 0.8 s of the 1.5 s sampled as BufFileWrite
		// on a busy machine.
		"DO $$ DECLARE x bigint := 0; BEGIN LOOP x := x + 1; END LOOP; END $$",
		"DO $$ BEGIN CREATE TABLE w(i int); FOR i IN 1..300 LOOP INSERT INTO w VALUES (i); COMMIT; END LOOP; END $$",
	}
	conns := make([]*pgx.Conn, len(load))
	for i := range load {
		cc := target.ConnConfig()
		cc.RuntimeParams["statement_timeout"] = "1500"
		if conns[i], err = pgx.ConnectConfig(ctx, cc); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close(ctx)
	}
	from := s.Edge()
	var wg sync.WaitGroup
	for i, q := range load {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The CPU spinner ends by statement_timeout.
			if _, err := conns[i].Exec(ctx, q); err != nil && !strings.Contains(err.Error(), "statement timeout") {
				t.Errorf("%s: %v", q, err)
			}
		}()
	}
	wg.Wait()
	// A backend publishes its counters when idle at most once a second, or
	// up to 10 s later when it flushed less than a second ago (PostgreSQL
	// 15+); it always does when its session ends.
	for _, c := range conns[1:] {
		c.Close(ctx)
	}
	time.Sleep(300 * time.Millisecond)
	o := s.Window(from, s.Edge())

	byEvent := map[string]results.Wait{}
	for _, w := range o.Waits {
		byEvent[w.Class+":"+w.Event] = w
	}
	js, _ := json.Marshal(o)
	t.Logf("observe %s", js)
	if w := byEvent["Timeout:PgSleep"]; w.Seconds < 2 || w.Seconds > 3.5 {
		t.Errorf("two sessions slept 1.5 s each: PgSleep %+v, want about 3 s", w)
	}
	if w := byEvent["CPU:CPU"]; w.Seconds < 0.8 {
		t.Errorf("one session spun 1.5 s on CPU: %+v", w)
	}
	if o.DB.ActiveSessionsAvg == nil || *o.DB.ActiveSessionsAvg < 2 {
		t.Errorf("active sessions %v, want about 3.5 for 1.5 s of 1.8", o.DB.ActiveSessionsAvg)
	}
	// Each commit syncs, by its backend or by the WAL writer, whose counts
	// reach pg_stat_wal later; on a loaded machine some are still unreported
	// at the edge (239 of 300 seen), so a third is the floor. The loop
	// commits what its 1.5 s allow (58 at 27 ms a sync on a loaded CI disk).
	var commits int64
	if err := conns[0].QueryRow(ctx, "SELECT count(*) FROM w").Scan(&commits); err != nil || commits == 0 {
		t.Fatalf("the committing loop committed %d rows (%v)", commits, err)
	}
	if o.DB.WALSyncs == nil || o.DB.WALSyncAvgMs == nil || *o.DB.WALSyncs < commits/3 {
		t.Errorf("%d commits: wal syncs and their average missing or too few (%s), missing %v", commits, js, o.Missing)
	}
	// What a write point weighs, read from each version's own views
	// (pg_stat_io's relation writes from 16, pg_stat_bgwriter before).
	if o.DB.WALFPI == nil || o.DB.DataWriteBytes == nil {
		t.Errorf("full-page images %v, data files' bytes written %v: want both counted, missing %v", o.DB.WALFPI, o.DB.DataWriteBytes, o.Missing)
	}
	if o.CPUBusyPct == nil {
		t.Errorf("no cpu_busy_pct: %v", o.Missing)
	}
	if len(o.Devices) == 0 && o.Missing["disk"] == "" {
		t.Errorf("no device and no reason")
	}
	var version int
	if err := conns[0].QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version >= 160000 && o.DB.ClientReads == nil {
		t.Errorf("server %d: pg_stat_io's client reads not measured: %v", version, o.Missing["db.client_reads"])
	}
	for _, w := range o.Waits {
		if strings.EqualFold(w.Event, "WALSync") && w.AvgMs == nil {
			t.Errorf("server %d: the %s wait has no mean latency", version, w.Event)
		}
	}
	// What the server cannot give is said once for the run, not in every
	// window.
	if limits := s.EngineLimits(); (version < 160000) != (limits["db.client_reads"] != "") || o.Missing["db.client_reads"] != "" {
		t.Errorf("server %d: engine limit %q, window's missing %q for pg_stat_io", version, limits["db.client_reads"], o.Missing["db.client_reads"])
	}

	// The sampler must not block recreating the observed database, and it
	// says so when its counters reset.
	admin, err := pgx.Connect(ctx, target.Managed.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	conns[0].Close(ctx)
	before := s.Edge()
	for _, q := range []string{"DROP DATABASE " + postgres.Database, "CREATE DATABASE " + postgres.Database} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s with the sampler running: %v", q, err)
		}
	}
	busy, err := pgx.ConnectConfig(ctx, target.ConnConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close(ctx)
	if _, err := busy.Exec(ctx, "CREATE TABLE t AS SELECT g FROM generate_series(1, 10000) g"); err != nil {
		t.Fatal(err)
	}
	busy.Close(ctx)
	time.Sleep(300 * time.Millisecond)
	after := s.Window(before, s.Edge())
	if _, ok := after.Missing["db.blks_hit"]; !ok {
		t.Errorf("a recreated database: blks_hit %v, missing %v; want absent with a reason", after.DB.BlksHit, after.Missing)
	}
}

// Given the observed database itself (with --dsn), the sampler connects to
// postgres instead, so that its polls never count in the observed
// database; and the polls a restart by calibra breaks are not failures.
func TestSamplerStaysOutsideAndSitsOutRestarts(t *testing.T) {
	target, group := startPostgres(t, "")
	ctx := context.Background()
	dsn, err := postgres.Prepare(ctx, postgres.TargetConfig{DSN: target.Managed.ConnString(postgres.Database)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := observe.Start(ctx, observe.Config{Path: target.Managed.DataDir, Engine: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	var in string
	conn, err := pgx.ConnectConfig(ctx, target.ConnConfig())
	if err != nil {
		t.Fatal(err)
	}
	err = conn.QueryRow(ctx, "SELECT datname FROM pg_stat_activity WHERE application_name = $1", ApplicationName).Scan(&in)
	conn.Close(ctx)
	if err != nil || in != "postgres" || s.EngineLimits()[observe.ObserversInside] != "" {
		t.Fatalf("the sampler connects to %q (%v), limits %v; want postgres", in, err, s.EngineLimits())
	}
	// The server runs here: its postmaster, found from the sampler's own
	// backend, counts as the workload's CPU, not another load's.
	src, err := observe.Dialects.For(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, info, err := src.Open(ctx, "/proc")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	pidFile, err := os.ReadFile(filepath.Join(target.Managed.DataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(pidFile), "\n"); strconv.Itoa(info.ServerPID) != first {
		t.Errorf("the local server's pid %d, want the postmaster's %s", info.ServerPID, first)
	}
	before := s.Edge()
	time.Sleep(300 * time.Millisecond)
	if err := s.Restart(func() error { _, err := target.Restart(ctx, group); return err }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	w := s.Window(before, s.Edge())
	if w.DB == nil || w.DB.Database != postgres.Database || w.DB.WaitSamples == 0 || w.DB.WaitSamplesFailed != 0 || w.Missing["waits.failed_polls"] != "" || w.Missing["db"] != "" {
		t.Fatalf("a window across a restart by calibra: db %+v, missing %v; want %s observed, no failed poll and the counters read", w.DB, w.Missing, postgres.Database)
	}
}
