package oltp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// Workload names the TPC-C-derived workload in results; it is not TPC-C and
// its numbers are not comparable with published TPC-C results.
const Workload = "tpcc-like (TPC-C-derived, not comparable with published TPC-C results)"

// BuildConfig says what to build.
type BuildConfig struct {
	Warehouses int
	Seed       uint64
	Workers    int  // parallel loader connections
	Rebuild    bool // drop an existing schema first
	// Implicit is a build a run makes because it found no schema: it never
	// replaces a larger loaded template (or one of unknown size).
	Implicit bool
}

// BuildInfo is what a build records in the schema, read back by run and check.
type BuildInfo struct {
	Warehouses int
	Seed       uint64
	CLastLoad  int
}

// connect opens a connection to the target with search_path on the schema.
func connect(ctx context.Context, t *postgres.Target) (*pgx.Conn, error) {
	return t.ConnectSchema(ctx, Schema, "calibra")
}

// Built returns the target's build record, or nil when it holds no
// complete build.
func Built(ctx context.Context, t *postgres.Target) (*BuildInfo, error) {
	conn, err := connect(ctx, t)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	return ReadBuildInfo(ctx, conn)
}

// ReadBuildInfo returns the schema's build record, or nil when no complete
// build exists.
func ReadBuildInfo(ctx context.Context, conn *pgx.Conn) (*BuildInfo, error) {
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, Schema+".build_info").Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, nil
	}
	rows, err := conn.Query(ctx, "SELECT key, value FROM build_info")
	if err != nil {
		return nil, err
	}
	kv, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var k, v string
		err := r.Scan(&k, &v)
		return [2]string{k, v}, err
	})
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, p := range kv {
		m[p[0]] = p[1]
	}
	if m["complete"] != "true" {
		return nil, nil
	}
	var bi BuildInfo
	bi.Warehouses, _ = strconv.Atoi(m["warehouses"])
	bi.Seed, _ = strconv.ParseUint(m["seed"], 10, 64)
	bi.CLastLoad, _ = strconv.Atoi(m["c_last_load"])
	return &bi, nil
}

// Build creates the schema, loads it in parallel with COPY, adds keys and
// indexes, vacuums and analyzes, checks consistency and, on a managed
// instance, keeps the loaded database as a template for fast resets.
func Build(ctx context.Context, t *postgres.Target, cfg BuildConfig, prog *progress.Printer) (*results.OLTPBuild, error) {
	ctl, err := connect(ctx, t)
	if err != nil {
		return nil, err
	}
	defer ctl.Close(context.Background())
	if err := prepareSchema(ctx, ctl, cfg.Rebuild); err != nil {
		return nil, err
	}
	loadTime := time.Now().UTC().Truncate(time.Second)
	consts := tpcc.LoadConstants(tpcc.NewRand(cfg.Seed, 0xC0))
	gen := tpcc.NewGenerator(cfg.Seed, cfg.Warehouses, loadTime, consts)
	out := &results.OLTPBuild{Workload: Workload, Warehouses: cfg.Warehouses, Seed: cfg.Seed, Workers: cfg.Workers,
		Rows: map[string]int64{}, Implicit: cfg.Implicit}

	conns, err := postgres.OpenConns(ctx, cfg.Workers, func(ctx context.Context) (*pgx.Conn, error) { return connect(ctx, t) })
	defer func() { postgres.CloseConns(conns) }() // closed early before the template copy
	if err != nil {
		return nil, err
	}

	start := time.Now()
	prog.Phase("oltp build: loading %d warehouses with %d loaders", cfg.Warehouses, cfg.Workers)
	if err := load(ctx, conns, gen, out.Rows, prog); err != nil {
		return nil, err
	}
	out.LoadS = time.Since(start).Seconds()

	var vacuums []string
	for _, tb := range tpcc.Tables() {
		vacuums = append(vacuums, "VACUUM (FREEZE, ANALYZE) "+tb.String())
	}
	tail, err := postgres.FinishLoad(ctx, conns, Schema, indexDDL, vacuums, func(p string) { prog.Phase("oltp build: %s", p) })
	if err != nil {
		return nil, err
	}
	out.IndexS, out.VacuumS, out.DBBytes = tail.IndexS, tail.VacuumS, tail.Bytes
	out.TotalS = time.Since(start).Seconds()
	if out.TotalS > 0 {
		out.MBPerS = float64(out.DBBytes) / 1e6 / out.TotalS
	}

	if out.Consistency, err = CheckConsistency(ctx, ctl); err != nil {
		return nil, err
	}
	if !out.Consistency.OK {
		return out, errors.New("the loaded data fails the consistency conditions (a calibra bug; please report it)")
	}
	info := map[string]string{
		"warehouses": strconv.Itoa(cfg.Warehouses), "seed": strconv.FormatUint(cfg.Seed, 10),
		"c_last_load": strconv.Itoa(consts.CLast), "loaded_at": loadTime.Format(time.RFC3339), "complete": "true",
	}
	for k, v := range info {
		if _, err := ctl.Exec(ctx, "INSERT INTO build_info (key, value) VALUES ($1, $2)", k, v); err != nil {
			return nil, err
		}
	}
	if t.Managed != nil {
		postgres.CloseConns(conns)
		conns = nil
		ctl.Close(ctx)
		if out.TemplateKept, err = KeepTemplate(ctx, t, cfg); err != nil {
			return nil, err
		}
		if out.TemplateKept != "" {
			prog.Phase("oltp build: %s", out.TemplateKept)
			return out, nil
		}
		prog.Phase("oltp build: keeping the loaded database as a template")
		if out.Template, err = t.SaveTemplate(ctx, templateNote(cfg.Warehouses)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// The template's note says how many warehouses it holds.
const templateNotePrefix = "oltp warehouses="

func templateNote(warehouses int) string { return templateNotePrefix + strconv.Itoa(warehouses) }

// KeepTemplate says, in one sentence, why a build of cfg must not replace
// the managed instance's loaded template, or "" when it may: a template is
// replaced only by a build of the same or more warehouses, or by an
// explicit --rebuild; an implicit build never replaces one it cannot size.
func KeepTemplate(ctx context.Context, t *postgres.Target, cfg BuildConfig) (string, error) {
	note, exists, err := t.TemplateNote(ctx)
	if err != nil || !exists {
		return "", err
	}
	had, err := strconv.Atoi(strings.TrimPrefix(note, templateNotePrefix))
	known := err == nil && strings.HasPrefix(note, templateNotePrefix)
	size := "of unknown size"
	if known {
		size = fmt.Sprintf("of %d warehouses", had)
	}
	switch {
	case known && had <= cfg.Warehouses:
		return "", nil
	case cfg.Implicit:
		return fmt.Sprintf("kept the loaded template %s: this implicit build of %d does not replace it ('calibra oltp run --reset' starts from it; an explicit 'calibra oltp build' of as many warehouses replaces it)",
			size, cfg.Warehouses), nil
	case !cfg.Rebuild && known:
		return fmt.Sprintf("kept the loaded template %s: a build of %d replaces it only with --rebuild", size, cfg.Warehouses), nil
	}
	return "", nil
}

// prepareSchema creates the schema and its tables and functions, refusing
// to replace an existing build unless told to.
func prepareSchema(ctx context.Context, conn *pgx.Conn, rebuild bool) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", Schema).Scan(&exists); err != nil {
		return err
	}
	if exists {
		bi, err := ReadBuildInfo(ctx, conn)
		if err != nil {
			return err
		}
		if bi != nil && !rebuild {
			return fault.Input("pass --rebuild to replace it, or run it with 'calibra oltp run'",
				"a TPC-C-like schema with %d warehouses is already built here", bi.Warehouses)
		}
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+Schema+" CASCADE"); err != nil {
			return fmt.Errorf("drop the old schema: %w", err)
		}
	}
	stmts := append([]string{"CREATE SCHEMA " + Schema}, tableDDL...)
	stmts = append(stmts, functionDDL...)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return nil
}

type loadJob struct {
	table tpcc.Table
	batch int
	rows  int
}

// load generates every batch and COPYs it, one job per batch, biggest
// tables first so the loaders finish together.
func load(ctx context.Context, conns []*pgx.Conn, gen *tpcc.Generator, rows map[string]int64, prog *progress.Printer) error {
	var jobs []loadJob
	var total int64
	for _, tb := range tpcc.Tables() {
		for b := range gen.Batches(tb) {
			n := gen.Rows(tb, b)
			jobs = append(jobs, loadJob{tb, b, n})
			rows[tb.String()] += int64(n)
			total += int64(n)
		}
	}
	weight := func(j loadJob) int { return j.rows * rowWidth(j.table) }
	sort.SliceStable(jobs, func(a, b int) bool { return weight(jobs[a]) > weight(jobs[b]) })

	bar := prog.Bar(total, "loading", "rows")
	defer bar.Finish()
	bufs := make([][]byte, len(conns))
	return postgres.OnConns(ctx, conns, jobs, func(ctx context.Context, w int, conn *pgx.Conn, j loadJob) error {
		bufs[w] = gen.AppendBatch(bufs[w][:0], j.table, j.batch)
		sql := "COPY " + j.table.String() + " (" + strings.Join(j.table.Columns(), ", ") + ") FROM STDIN"
		if _, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(bufs[w]), sql); err != nil {
			return fmt.Errorf("load %s batch %d: %w", j.table, j.batch, err)
		}
		bar.Add(int64(j.rows))
		return nil
	})
}

// rowWidth is a rough COPY row width per table, to order jobs by size.
func rowWidth(t tpcc.Table) int {
	switch t {
	case tpcc.Stock:
		return 310
	case tpcc.Customer:
		return 560
	case tpcc.OrderLine:
		return 70
	default:
		return 50
	}
}
