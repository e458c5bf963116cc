// Package dsstest is the check every dss dialect passes on a real server:
// a build at SF 0.01 with the specification's row counts, the 22 answers
// equal to DuckDB's over the same data, power and throughput tests whose
// refresh pairs leave the data as loaded, an interrupted pair completed,
// and a statement timeout recorded as such.
package dsstest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/dss"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// Suite is what the check needs of an engine.
type Suite struct {
	// Start starts a throwaway server, stopped when the test ends; it is
	// called once the generator and DuckDB are known to be there.
	Start func(t *testing.T) (engine.Engine, *proc.Group)
	// Serial says whether the settings a run recorded show that --dop 0
	// was in force.
	Serial func(parallelism map[string]string) bool
}

// answersPy prints DuckDB's answers; see its docstring.
//
//go:embed answers.py
var answersPy []byte

// duckDBAnswers has the generator write the scale factor's CSV files and
// answers.py run DuckDB's own 22 queries over them.
func duckDBAnswers(t *testing.T, gen dss.Generator, sf float64) map[string][][]string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command(gen.Path, "csv", "--scale-factor", strconv.FormatFloat(sf, 'f', -1, 64),
		"--output-dir", dir, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", gen.Path, err, out)
	}
	cmd := exec.Command("python3", "-", dir)
	cmd.Stdin = bytes.NewReader(answersPy)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = fmt.Errorf("%v: %s", err, ee.Stderr)
	}
	testenv.Need(t, "duckdb", err, "no DuckDB to check the answers against: pip install duckdb duckdb-extension-tpch")
	var answers map[string][][]string
	if err := json.Unmarshal(out, &answers); err != nil {
		t.Fatal(err)
	}
	return answers
}

// Run builds SF 0.01, checks the row counts, checks every query's answer
// with the validation parameters against DuckDB's over the same data,
// then runs the power and throughput tests twice to show the refresh
// functions leave the database as they found it.
func Run(t *testing.T, s Suite) {
	if testing.Short() {
		t.Skip("builds a TPC-H-like database on a real server; run without -short")
	}
	const sf = 0.01
	gen, err := dss.FindGenerator(context.Background(), "")
	testenv.Need(t, "tpchgen", err, "no TPC-H generator: "+dss.InstallHint)
	answers := duckDBAnswers(t, gen, sf)
	target, group := s.Start(t)
	c := &check{t: t, ctx: context.Background(), target: target, prog: progress.New(io.Discard, progress.None, false)}
	c.build(sf, group)
	dialect, err := dss.Dialects.For(target)
	if err != nil {
		t.Fatal(err)
	}
	if c.conn, err = dialect.Connect(c.ctx, -1); err != nil {
		t.Fatal(err)
	}
	defer c.conn.Close()
	c.answers(dialect, answers)
	c.loaded = c.counts()
	for i := range 2 {
		c.refreshPairs(i, s.Serial)
	}
	c.interruptedPair()
	c.timeout()
}

// check is one run of the check on a server.
type check struct {
	t      *testing.T
	ctx    context.Context
	target engine.Engine
	conn   dss.Conn
	prog   *progress.Printer
	loaded string // the orders' and lines' counts as built
}

// build builds sf and checks its row counts.
func (c *check) build(sf float64, group *proc.Group) {
	temp := c.t.TempDir()
	build, err := dss.Build(c.ctx, c.target, dss.BuildConfig{ScaleFactor: sf, Workers: 2, Group: group, TempDir: temp}, c.prog)
	if err != nil {
		c.t.Fatal(err)
	}
	// The small tables went through temp (all of them at this scale), and
	// nothing of theirs stays.
	if left, err := os.ReadDir(temp); err != nil || len(left) != 0 {
		c.t.Errorf("the build left %d entries in its temporary directory (%v)", len(left), err)
	}
	if !build.RowCheck.OK || build.Rows["lineitem"] != 60_175 || build.Rows["orders"] != 15_000 {
		c.t.Fatalf("row counts %v: %+v", build.Rows, build.RowCheck)
	}
	c.t.Logf("build: load %.2f s, keys and indexes %.2f s, statistics %.2f s, %d bytes", build.LoadS, build.IndexS, build.AnalyzeS, build.DBBytes)
}

// answers checks each query's answer with the validation parameters
// against DuckDB's.
func (c *check) answers(dialect dss.Dialect, answers map[string][][]string) {
	for q := 1; q <= dss.Queries; q++ {
		var got [][]string
		if err := c.conn.Rows(c.ctx, dialect.Query(q, dss.Text(q, dss.ValidationParams(q))), func(vals [][]byte) {
			row := make([]string, len(vals))
			for i, v := range vals {
				row[i] = string(v)
			}
			got = append(got, row)
		}); err != nil {
			c.t.Fatalf("Q%d: %v", q, err)
		}
		if diff := compareAnswer(got, answers[strconv.Itoa(q)]); diff != "" {
			c.t.Errorf("Q%d differs from DuckDB's answer: %s", q, diff)
		}
	}
}

// counts are the orders' and lines' rows.
func (c *check) counts() string {
	var ol string
	if err := c.conn.Rows(c.ctx, "SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM lineitem)", func(v [][]byte) {
		ol = fmt.Sprint(string(v[0]), string(v[1]))
	}); err != nil {
		c.t.Fatal(err)
	}
	return ol
}

// refreshPairs runs the power and throughput tests, run i, and checks
// their refresh pairs leave the data as loaded, serially as --dop 0 says.
func (c *check) refreshPairs(i int, serial func(map[string]string) bool) {
	out, err := dss.Run(c.ctx, c.target, dss.RunConfig{Power: true, Throughput: true, Streams: 2, Seed: uint64(i + 1), DOP: 0}, c.prog)
	if err != nil {
		c.t.Fatalf("run %d: %v", i, err)
	}
	if out.QphH == nil || *out.QphH <= 0 || len(out.Power.Queries) != dss.Queries || len(out.Throughput.Refresh) != 4 {
		c.t.Fatalf("run %d: qphh %v, %d power queries, %d refresh runs; missing %v", i, out.QphH, len(out.Power.Queries),
			len(out.Throughput.Refresh), out.Missing)
	}
	if !serial(out.Parallelism) {
		c.t.Errorf("--dop 0 was not in force: %v", out.Parallelism)
	}
	// The pair moves the same orders: RF1 inserts SF x 1500 = 15 and
	// their lines, RF2 deletes the originals' lines.
	if rf1, rf2 := out.Power.Refresh[0], out.Power.Refresh[1]; rf2.Rows == 0 || rf1.Rows != 15+rf2.Rows {
		c.t.Errorf("RF1 inserted %d rows, RF2 deleted %d lines; want 15 orders and the lines RF2 deletes", rf1.Rows, rf2.Rows)
	}
	if now := c.counts(); now != c.loaded {
		c.t.Fatalf("after run %d orders and lineitem hold %s rows, loaded %s", i, now, c.loaded)
	}
	c.t.Logf("run %d: power test %.2f s (queries %.2f s, RF1 %.3f s, RF2 %.3f s), throughput test %.2f s, QphH %.0f", i,
		out.Power.ElapsedS, sum(out.Power.Queries), *out.Power.Refresh[0].Seconds, *out.Power.Refresh[1].Seconds,
		out.Throughput.ElapsedS, *out.QphH)
}

// interruptedPair runs an RF1 whose RF2 never ran (an interrupt between
// them): the next test completes the pair first, and the data is as
// loaded again.
func (c *check) interruptedPair() {
	bi, err := dss.Built(c.ctx, c.target)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.conn.RF1(c.ctx, bi.KeyShift, 15); err != nil { // SF x 1500 orders
		c.t.Fatal(err)
	}
	if c.counts() == c.loaded {
		c.t.Fatal("RF1 added no rows")
	}
	if _, err := dss.Run(c.ctx, c.target, dss.RunConfig{Power: true, Seed: 9, DOP: 0}, c.prog); err != nil {
		c.t.Fatal(err)
	}
	if now := c.counts(); now != c.loaded {
		c.t.Fatalf("after an interrupted pair and a power test orders and lineitem hold %s rows, loaded %s", now, c.loaded)
	}
}

// timeout runs a power test with a 1 ms statement timeout: each query
// that hit it is recorded as timed out, with no time.
func (c *check) timeout() {
	out, err := dss.Run(c.ctx, c.target, dss.RunConfig{Power: true, QueryTimeout: time.Millisecond, DOP: -1}, c.prog)
	if err != nil {
		c.t.Fatal(err)
	}
	timedOut := 0
	for _, q := range out.Power.Queries {
		if q.TimedOut {
			timedOut++
			if q.Seconds != nil {
				c.t.Errorf("Q%s timed out but has a time", q.Q)
			}
		}
	}
	if timedOut == 0 || out.Power.PowerAtSize != nil || !strings.Contains(out.Missing["power_at_size"], "timed out") {
		c.t.Errorf("a 1 ms timeout: %d queries timed out, power %v, missing %v", timedOut, out.Power.PowerAtSize, out.Missing)
	}
}

// sum is the seconds the runs that have a time took.
func sum(runs []results.DSSQuery) float64 {
	var s float64
	for _, r := range runs {
		if r.Seconds != nil {
			s += *r.Seconds
		}
	}
	return s
}

// compareAnswer compares a query's rows with DuckDB's: numbers within a
// cent or a millionth (DuckDB prints averages as doubles, the servers as
// exact decimals), text exactly.
func compareAnswer(got, want [][]string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return fmt.Sprintf("row %d has %d columns, want %d", i+1, len(got[i]), len(want[i]))
		}
		for j, g := range got[i] {
			w := want[i][j]
			gf, gerr := strconv.ParseFloat(g, 64)
			wf, werr := strconv.ParseFloat(w, 64)
			if gerr == nil && werr == nil {
				if d := math.Abs(gf - wf); d > 0.01 && d > 1e-6*math.Abs(wf) {
					return fmt.Sprintf("row %d column %d is %s, want %s", i+1, j+1, g, w)
				}
				continue
			}
			if strings.TrimSpace(g) != strings.TrimSpace(w) {
				return fmt.Sprintf("row %d column %d is %q, want %q", i+1, j+1, g, w)
			}
		}
	}
	return ""
}
