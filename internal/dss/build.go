package dss

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// BuildConfig says what to build and with what.
type BuildConfig struct {
	ScaleFactor float64
	Workers     int         // parallel generator + COPY pipelines
	Rebuild     bool        // replace an existing build
	Tpchgen     string      // the generator program; "" finds tpchgen-cli on PATH
	Group       *proc.Group // every generator process runs in it
	TempDir     string      // where the small tables pass (see load); "" is the system's
}

// BuildInfo is what a build records in the schema, read back by the tests.
type BuildInfo struct {
	ScaleFactor float64
	Generator   string
	// KeyShift moves an order to a free key when the refresh functions
	// copy it: a multiple of 32 above every loaded key, so copies keep
	// dbgen's sparse key pattern and never collide.
	KeyShift int64
}

// ErrNotBuilt says the database holds no complete TPC-H-like build.
var ErrNotBuilt = errors.New("no TPC-H-like build")

// minPartBytes is the smallest part worth a generator of its own: each one
// starts with about 1 s of CPU (it builds dbgen's 300 MB text pool).
const minPartBytes = 32e6

// ReadBuildInfo returns the schema's build record, or ErrNotBuilt.
func ReadBuildInfo(ctx context.Context, conn Conn) (*BuildInfo, error) {
	exists, err := conn.HasTable(ctx, "build_info")
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, ErrNotBuilt
	}
	m := map[string]string{}
	if err := conn.Rows(ctx, `SELECT "key", value FROM build_info`, func(v [][]byte) { m[string(v[0])] = string(v[1]) }); err != nil {
		return nil, err
	}
	if m["complete"] != "true" {
		return nil, ErrNotBuilt
	}
	bi := &BuildInfo{Generator: m["generator"]}
	bi.ScaleFactor, _ = strconv.ParseFloat(m["scale_factor"], 64)
	bi.KeyShift, _ = strconv.ParseInt(m["key_shift"], 10, 64)
	if bi.ScaleFactor <= 0 || bi.KeyShift <= 0 {
		return nil, ErrNotBuilt
	}
	return bi, nil
}

// Built returns the engine's build record, or ErrNotBuilt.
func Built(ctx context.Context, e engine.Engine) (*BuildInfo, error) {
	d, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	conn, err := d.Connect(ctx, -1)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return ReadBuildInfo(ctx, conn)
}

// Build creates the schema, streams every table from the generator straight
// into the engine's bulk load (COPY) in parallel parts (nothing lands on disk
// but the database; the small tables pass through a private temporary
// directory, see load), then adds keys and indexes, gathers statistics
// (vacuum and analyze), and checks the row counts against the specification.
func Build(ctx context.Context, e engine.Engine, cfg BuildConfig, prog *progress.Printer) (*results.DSSBuild, error) {
	d, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	gen, err := FindGenerator(ctx, cfg.Tpchgen)
	if err != nil {
		return nil, err
	}
	ctl, err := d.Connect(ctx, -1)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	if err := prepareSchema(ctx, ctl, cfg.Rebuild); err != nil {
		return nil, err
	}
	out := &results.DSSBuild{Workload: Workload, ScaleFactor: cfg.ScaleFactor, Generator: gen.Version,
		Workers: cfg.Workers, Rows: map[string]int64{}}
	conns, err := engine.OpenConns(ctx, cfg.Workers, func(ctx context.Context) (Conn, error) { return d.Connect(ctx, -1) })
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if err != nil {
		return nil, err
	}

	start := time.Now()
	prog.Phase("dss build: streaming scale factor %g from %s into COPY with %d pipelines", cfg.ScaleFactor, gen.Version, cfg.Workers)
	if err := load(ctx, conns, gen, cfg, out.Rows, prog); err != nil {
		return nil, err
	}
	out.LoadS = time.Since(start).Seconds()

	tail, err := d.FinishLoad(ctx, conns, indexDDL, func(p string) { prog.Phase("dss build: %s", p) })
	if err != nil {
		return nil, err
	}
	out.IndexS, out.AnalyzeS, out.DBBytes = tail.IndexS, tail.AnalyzeS, tail.Bytes
	out.TotalS = time.Since(start).Seconds()
	if out.TotalS > 0 {
		out.MBPerS = float64(out.DBBytes) / 1e6 / out.TotalS
	}
	if out.RowCheck = CheckRows(cfg.ScaleFactor, out.Rows); !out.RowCheck.OK {
		return out, fmt.Errorf("the loaded row counts differ from the specification's: %s", out.RowCheck.Detail)
	}
	maxKey, err := count(ctx, ctl, "SELECT max(o_orderkey) FROM orders")
	if err != nil {
		return nil, err
	}
	info := map[string]string{
		"scale_factor": strconv.FormatFloat(cfg.ScaleFactor, 'f', -1, 64), "generator": gen.Version,
		"key_shift": strconv.FormatInt((maxKey/32+1)*32, 10), "loaded_at": start.UTC().Format(time.RFC3339), "complete": "true",
	}
	for k, v := range info {
		if _, err := ctl.Exec(ctx, `INSERT INTO build_info ("key", value) VALUES (`+quote(k)+", "+quote(v)+")"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CheckRows compares loaded row counts with the specification's for the
// scale factor (clause 4.2.5).
func CheckRows(sf float64, rows map[string]int64) results.DSSRowCheck {
	check := results.DSSRowCheck{OK: true}
	for _, tb := range tables {
		want, ok := tb.expectedRows(sf)
		if !ok {
			check.Unchecked = append(check.Unchecked, tb.name)
			continue
		}
		if got := rows[tb.name]; got != want {
			check.OK = false
			check.Detail += fmt.Sprintf("%s has %d rows, the specification %d; ", tb.name, got, want)
		}
	}
	return check
}

// prepareSchema creates the schema and its tables, refusing to replace an
// existing build unless told to.
func prepareSchema(ctx context.Context, conn Conn, rebuild bool) error {
	bi, err := ReadBuildInfo(ctx, conn)
	if err != nil && !errors.Is(err, ErrNotBuilt) {
		return err
	}
	if bi != nil && !rebuild {
		return fault.Input("pass --rebuild to replace it, or run it with 'calibra dss run'",
			"a TPC-H-like schema at scale factor %g is already built here", bi.ScaleFactor)
	}
	if err := conn.ResetSchema(ctx); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	// "key" is quoted and the key column sized: MariaDB reserves the word
	// and keys no unsized text.
	stmts := []string{`CREATE TABLE build_info ("key" varchar(64) PRIMARY KEY, value varchar(255) NOT NULL)`}
	for _, tb := range tables {
		stmts = append(stmts, "CREATE TABLE "+tb.name+" ("+tb.columns+")")
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return nil
}

type loadJob struct {
	table       table
	part, parts int
	bytes       float64
	together    bool // generated with the other small tables by one generator
}

// loadJobs cuts every table into generator parts of at most one pipeline's
// share, biggest first, so the pipelines finish together with few
// generator starts. Tables under minPartBytes are generated together, by
// one generator, when there are several.
func loadJobs(sf float64, workers int) []loadJob {
	var total float64
	small := 0
	for _, tb := range tables {
		total += tb.bytes * sf
		if tb.bytes*sf < minPartBytes {
			small++
		}
	}
	partBytes := max(minPartBytes, total/float64(workers))
	var jobs []loadJob
	for _, tb := range tables {
		size := tb.bytes * sf
		parts := max(1, int(math.Ceil(size/partBytes)))
		for p := 1; p <= parts; p++ {
			jobs = append(jobs, loadJob{table: tb, part: p, parts: parts, bytes: size / float64(parts), together: small > 1 && size < minPartBytes})
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].bytes > jobs[b].bytes })
	return jobs
}

// load runs the jobs on the pipelines: each one starts the generator on a
// part and bulk-loads its output as it comes. The first small table's job
// generates all of them into files, which the others wait for; being
// smallest, they come last, after the big tables' streams have started.
func load(ctx context.Context, conns []Conn, gen Generator, cfg BuildConfig, rows map[string]int64, prog *progress.Printer) error {
	jobs := loadJobs(cfg.ScaleFactor, len(conns))
	var together []string
	for _, j := range jobs {
		if j.together {
			together = append(together, j.table.name)
		}
	}
	var dir string
	generate := sync.OnceValue(func() (err error) {
		dir, err = gen.together(ctx, cfg.Group, cmp.Or(cfg.TempDir, os.TempDir()), cfg.ScaleFactor, together)
		return err
	})
	defer func() {
		if dir != "" {
			_ = safefs.RemoveAll(filepath.Dir(dir), filepath.Base(dir))
		}
	}()
	bar := prog.Bar(expectedRows(cfg.ScaleFactor), "loading", "rows")
	defer bar.Finish()
	var mu sync.Mutex
	return engine.OnConns(ctx, conns, jobs, func(ctx context.Context, _ int, conn Conn, j loadJob) error {
		var n int64
		copyIn := func(r io.Reader) (err error) {
			n, err = conn.Load(ctx, j.table.name, r)
			return err
		}
		var err error
		switch {
		case !j.together:
			err = gen.stream(ctx, cfg.Group, cfg.ScaleFactor, j.table.name, j.part, j.parts, copyIn)
		case generate() != nil:
			err = generate()
		case dir != "":
			err = loadFile(filepath.Join(dir, j.table.name+".tbl"), copyIn)
		default: // no private temporary directory: the table streams alone
			err = gen.stream(ctx, cfg.Group, cfg.ScaleFactor, j.table.name, j.part, j.parts, copyIn)
		}
		if err != nil {
			return fmt.Errorf("load %s part %d/%d: %w", j.table.name, j.part, j.parts, err)
		}
		mu.Lock()
		rows[j.table.name] += n
		mu.Unlock()
		bar.Add(n)
		return nil
	})
}

// expectedRows is the rows of every table at sf, lineitem's estimated.
func expectedRows(sf float64) int64 {
	var total int64
	for _, tb := range tables {
		n, ok := tb.expectedRows(sf)
		if !ok {
			n = int64(6_000_000 * sf) // lineitem: about four lines per order
		}
		total += n
	}
	return total
}

// loadFile hands a generated table's file to copyIn.
func loadFile(path string, copyIn func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return copyIn(f)
}

// count runs a query of one whole number, such as a count(*); NULL is 0.
func count(ctx context.Context, conn Conn, sql string) (int64, error) {
	var n int64
	var perr error
	err := conn.Rows(ctx, sql, func(v [][]byte) {
		if v[0] != nil {
			n, perr = strconv.ParseInt(string(v[0]), 10, 64)
		}
	})
	return n, errors.Join(err, perr)
}

// quote is a string literal of standard SQL.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
