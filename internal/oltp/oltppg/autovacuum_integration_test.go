//go:build integration

package oltppg

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// TestAutovacuumXactsAsTheServerCountsThem holds oltp.AutovacuumXacts,
// what tpm_db leaves out for autovacuum, to what each installed server
// counts in xact_commit for it: in a window where calibra commits only its
// own edge statements and a worker vacuums and analyses tables, the count
// is calibra's, the formula's, and 2 for each visit that found nothing to
// do (which no statistic shows).
func TestAutovacuumXactsAsTheServerCountsThem(t *testing.T) {
	t.Parallel() // instances of its own, beside the shared one's tests
	if testing.Short() {
		t.Skip("real PostgreSQL work; run without -short")
	}
	builds := postgres.Installed()
	testenv.NeedVersions(t, "postgresql", postgres.Majors(builds), "apt-get install postgresql")
	for _, b := range builds {
		t.Run(fmt.Sprint(b.Major), func(t *testing.T) {
			t.Parallel()
			checkAutovacuumXacts(t, b)
		})
	}
}

func checkAutovacuumXacts(t *testing.T, b postgres.Binaries) {
	ctx := context.Background()
	target, err := postgres.Prepare(ctx, postgres.TargetConfig{Path: testenv.StorageDir(t), PGBin: b.Dir})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, target)
	conn, err := target.ConnectSchema(ctx, oltp.Schema, "calibra-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	ctl := &control{conn: conn}
	if err := ctl.CreateSchema(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO warehouse (w_id, w_ytd) VALUES (1, 0)",
		"INSERT INTO district (d_id, d_w_id, d_ytd, d_next_o_id) SELECT d, 1, 0, 3001 FROM generate_series(1, 10) d",
		"ALTER SYSTEM SET autovacuum_naptime = '1s'",
		"SELECT pg_reload_conf()",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for attempt := 1; attempt <= 5; attempt++ {
		// Enough dead rows for a vacuum and changes for an analysis of
		// both tables (50 + 20% and 50 + 10% of their rows).
		for range 6 {
			if _, err := conn.Exec(ctx, "UPDATE district SET d_ytd = d_ytd + 1; UPDATE warehouse SET w_ytd = w_ytd + 1"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := conn.Exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd + 1 FROM generate_series(1, 55)"); err != nil {
			t.Fatal(err)
		}
		// The start read publishes what came before it and, after it,
		// its own commit and its flush's: 2 in the window. The end read
		// publishes nothing before it.
		c0, err := ctl.Counters(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // three of autovacuum's visits
		c1, err := ctl.Counters(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		av, known := oltp.AutovacuumXacts(c0, c1)
		counted := c1.Xacts - c0.Xacts - 2
		if !known || c1.Autovacuum == c0.Autovacuum {
			t.Logf("attempt %d: a worker at an edge (%v) or no autovacuum in the window (%d): again", attempt, !known, c1.Autovacuum-c0.Autovacuum)
			continue
		}
		t.Logf("PostgreSQL %d: %d vacuums and analyses, the server counted %d transactions, the formula %d", b.Major, c1.Autovacuum-c0.Autovacuum, counted, av)
		if rest := counted - av; rest < 0 || rest%2 != 0 {
			t.Errorf("PostgreSQL %d: the server counted %d of autovacuum's transactions, the formula %d: the rest, %d, is not visits that found nothing (2 each)", b.Major, counted, av, rest)
		}
		return
	}
	t.Fatal("autovacuum never worked in a window of its own")
}
