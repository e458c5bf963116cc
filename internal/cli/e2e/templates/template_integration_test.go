//go:build integration

package templates

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
)

// A run that finds no schema builds one warehouse, says so, and leaves the
// larger loaded template alone: a reset afterwards finds the loaded data.
func TestAnImplicitBuildNeverReplacesALargerTemplate(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("two builds on a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	path, out := clitest.Dirs(t)
	common := []string{"--path", path, "--progress", "none"}
	clitest.MustRun(t, 0, append([]string{"oltp", "build", "--warehouses", "2", "--out", out("build")}, common...)...)
	// A second build without --rebuild is bad input, found once the server
	// answers: one sentence, and no run directory left behind.
	code, _, stderr := clitest.Run(t, append([]string{"oltp", "build", "--warehouses", "1", "--out", out("again")}, common...)...)
	if code != 2 || !strings.Contains(stderr, "already built here; pass --rebuild") {
		t.Errorf("a second build: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out("again")); err == nil {
		t.Error("the refused build left a run directory")
	}

	// The benchmark database loses its schema; the template stays.
	sql(t, path, "DROP SCHEMA "+oltp.Schema+" CASCADE")

	stderr = clitest.MustRun(t, 0, append([]string{"oltp", "run", "--users", "1", "--rampup", "0s", "--duration", "1s", oltptest.PacedFlag, "--out", out("implicit")}, common...)...)
	if !strings.Contains(stderr, "kept the loaded template of 2 warehouses: this implicit build of 1 does not replace it") {
		t.Errorf("the implicit build did not say it kept the template:\n%s", stderr)
	}
	r, err := results.Load(out("implicit"))
	if err != nil || len(r.Steps) != 2 {
		t.Fatalf("the implicit run: %v %+v", err, r)
	}
	if b, ok := r.Steps[0].Body.(*results.OLTPBuild); !ok || !b.Implicit || b.TemplateKept == "" || b.Template != "" {
		t.Errorf("the implicit build's record: %+v", r.Steps[0].Body)
	}

	clitest.MustRun(t, 0, append([]string{"oltp", "run", "--reset", "--users", "1", "--rampup", "0s", "--duration", "1s", oltptest.PacedFlag, "--out", out("reset")}, common...)...)
	if _, o := clitest.LastStep[*results.OLTP](t, out("reset")); o.Warehouses != 2 {
		t.Errorf("after the implicit build a reset found %d warehouses, want the 2 loaded", o.Warehouses)
	}
}

// sql runs a statement in the benchmark database of the managed instance
// under path, started for it and stopped again.
func sql(t *testing.T, path, stmt string) {
	t.Helper()
	ctx := context.Background()
	group := proc.NewGroup()
	defer group.StopAll(time.Minute)
	target, err := postgres.Prepare(ctx, postgres.TargetConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := target.Start(ctx, group); err != nil {
		t.Fatal(err)
	}
	defer target.Stop()
	conn, err := pgx.Connect(ctx, target.Managed.ConnString(postgres.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatal(err)
	}
}

// A first build interrupted while it keeps its template leaves the data and
// no template: a reset then says to rebuild with --rebuild (never the plain
// build, which would answer "already built"), and that rebuild keeps one.
func TestABuildInterruptedBeforeItsTemplateSaysHowToMendIt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds on a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	path, out := clitest.Dirs(t)
	code, stderr := clitest.InterruptChild(t, "oltp build: keeping the loaded database as a template", 0, "oltp", "build", "--warehouses", "1",
		"--path", path, "--progress", "plain", "--out", out("cut"))
	if code != 130 {
		t.Fatalf("the interrupted build: exit %d\n%s", code, stderr)
	}
	reset := []string{"oltp", "run", "--reset", "--users", "1", "--rampup", "0s", "--duration", "1s", oltptest.PacedFlag, "--path", path, "--progress", "none"}
	code, _, stderr = clitest.Run(t, append(reset, "--out", out("reset"))...)
	if code == 0 {
		t.Skip("the template copy finished before the signal landed: nothing to mend")
	}
	if code != 2 || !strings.Contains(stderr, "no loaded template to reset from") || !strings.Contains(stderr, "'calibra oltp build --rebuild'") {
		t.Fatalf("a reset with no template: exit %d, want 2 and the advice to rebuild with --rebuild\n%s", code, stderr)
	}
	clitest.MustRun(t, 0, "oltp", "build", "--rebuild", "--warehouses", "1", "--path", path, "--progress", "none", "--out", out("rebuild"))
	clitest.MustRun(t, 0, append(reset, "--out", out("reset-again"))...)
	clitest.NoServerLeft(t, path)
}
