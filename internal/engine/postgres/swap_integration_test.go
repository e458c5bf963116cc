//go:build integration

package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// errCut stands for a signal arriving between two steps of a swap.
var errCut = errors.New("cut")

// Each window of the template save and the reset, cut short as a signal
// would cut it, leaves the loaded data and the template usable at the
// next start.
func TestSwapsSurviveAnInterruption(t *testing.T) {
	t.Parallel() // an instance of its own, cut through its own hook
	target, group := startManaged(t)
	ctx := context.Background()
	exec := func(db, sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, target.Managed.ConnString(db))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	// rows counts the loaded rows of the benchmark database, and of the
	// template through a fresh reset.
	rows := func() int {
		t.Helper()
		conn, err := pgx.Connect(ctx, target.Managed.ConnString(Database))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM loaded").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	exec(Database, "CREATE TABLE loaded AS SELECT generate_series(1, 800) AS w")
	if _, err := target.SaveTemplate(ctx, "800"); err != nil {
		t.Fatal(err)
	}
	restart := func() {
		t.Helper()
		target.swapHook = func(string) {}
		if err := target.Stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := target.Start(ctx, group); err != nil {
			t.Fatal(err)
		}
	}
	cutAt := func(step string) {
		target.swapHook = func(at string) {
			if at == step {
				panic(errCut)
			}
		}
	}
	// call runs a swap that the hook cuts short (a panic stands for the
	// process dying there) and reports whether it was cut.
	call := func(swap func() error) (cut bool) {
		defer func() {
			if r := recover(); r != nil {
				if r != errCut {
					panic(r)
				}
				cut = true
			}
		}()
		if err := swap(); err != nil {
			t.Fatal(err)
		}
		return false
	}

	for _, step := range []string{"template copied", "old template aside"} {
		// A smaller build is being saved when the cut comes: the older,
		// complete template must be what is found, or the new complete one.
		exec(Database, "DELETE FROM loaded WHERE w > 100")
		cutAt(step)
		if !call(func() error { _, err := target.SaveTemplate(ctx, "100"); return err }) {
			t.Fatalf("save was not cut at %q", step)
		}
		restart()
		if err := target.RestoreTemplate(ctx); err != nil {
			t.Fatalf("after a save cut at %q the reset fails: %v (repairs %q)", step, err, target.Repairs)
		}
		n := rows()
		if n != 800 && n != 100 {
			t.Fatalf("after a save cut at %q the template holds %d rows", step, n)
		}
		// The note that says what a template holds follows it through the swap.
		if note, ok, err := target.TemplateNote(ctx); err != nil || !ok || note != strconv.Itoa(n) {
			t.Fatalf("after a save cut at %q the template of %d rows is noted %q (%v, %v)", step, n, note, ok, err)
		}
		exec(Database, "TRUNCATE loaded; INSERT INTO loaded SELECT generate_series(1, 800)")
		if _, err := target.SaveTemplate(ctx, "800"); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []string{"database copied", "old database dropped"} {
		exec(Database, "DELETE FROM loaded")
		cutAt(step)
		if !call(func() error { return target.RestoreTemplate(ctx) }) {
			t.Fatalf("reset was not cut at %q", step)
		}
		restart()
		if err := target.RestoreTemplate(ctx); err != nil {
			t.Fatalf("after a reset cut at %q the next reset fails: %v", step, err)
		}
		if n := rows(); n != 800 {
			t.Fatalf("after a reset cut at %q and another reset, %d rows, want 800", step, n)
		}
	}
	// The reset cut after the drop is finished at the next start itself.
	cutAt("old database dropped")
	call(func() error { return target.RestoreTemplate(ctx) })
	restart()
	if len(target.Repairs) == 0 || !strings.Contains(target.Repairs[0], "finished a reset") {
		t.Fatalf("repairs %q, want the interrupted reset finished", target.Repairs)
	}
	if n := rows(); n != 800 {
		t.Fatalf("the interrupted reset, finished at start, gave %d rows", n)
	}
}

// startManaged starts a throwaway managed instance, or skips when no
// server is installed unless CALIBRA_TEST_REQUIRE names postgresql.
func startManaged(t *testing.T) (*Target, *proc.Group) {
	t.Helper()
	_, missing := FindBinaries("")
	testenv.Need(t, "postgresql", missing, "apt-get install postgresql")
	target, err := Prepare(context.Background(), TargetConfig{Path: testenv.StorageDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	return target, testenv.Start(t, target)
}
