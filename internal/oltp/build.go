package oltp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// Schema holds calibra's TPC-C-like tables, procedures and build record,
// in the managed database or a --dsn database alike.
const Schema = "calibra_tpcc"

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
	// NoTemplate keeps no copy to reset from: the database is used up (the
	// durability audit's, cut and recovered), never reset.
	NoTemplate bool
}

// BuildInfo is what a build records in the schema, read back by run and check.
type BuildInfo struct {
	Warehouses int
	Seed       uint64
	CLastLoad  int
}

// ReadBuildInfo returns the schema's build record, or nil when no complete
// build exists.
func ReadBuildInfo(ctx context.Context, ctl Control) (*BuildInfo, error) {
	m, err := ctl.BuildInfo(ctx)
	if err != nil || m["complete"] != "true" {
		return nil, err
	}
	var bi BuildInfo
	bi.Warehouses, _ = strconv.Atoi(m["warehouses"])
	bi.Seed, _ = strconv.ParseUint(m["seed"], 10, 64)
	bi.CLastLoad, _ = strconv.Atoi(m["c_last_load"])
	return &bi, nil
}

// buildOne creates the schema on one server, bulk-loads it in parallel, adds keys and
// indexes and statistics, checks consistency and, where the engine keeps
// one (a managed instance), keeps the loaded database as a template for
// fast resets.
func buildOne(ctx context.Context, e engine.Engine, cfg BuildConfig, prog *progress.Printer) (*results.OLTPBuild, error) {
	d, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	ctl, err := d.Connect(ctx)
	if err != nil {
		return nil, err
	}
	closeCtl := sync.OnceFunc(ctl.Close) // closed early before the template copy
	defer closeCtl()
	if err := prepareSchema(ctx, ctl, cfg.Rebuild); err != nil {
		return nil, err
	}
	loadTime := time.Now().UTC().Truncate(time.Second)
	consts := tpcc.LoadConstants(tpcc.NewRand(cfg.Seed, 0xC0))
	gen := tpcc.NewGenerator(cfg.Seed, cfg.Warehouses, loadTime, consts)
	out := &results.OLTPBuild{Workload: Workload, Warehouses: cfg.Warehouses, Seed: cfg.Seed, Workers: cfg.Workers,
		Rows: map[string]int64{}, Implicit: cfg.Implicit}

	ld, err := d.Loader(ctx, cfg.Workers)
	if err != nil {
		return nil, err
	}
	closeLd := sync.OnceFunc(ld.Close) // closed early before the template copy
	defer closeLd()

	start := time.Now()
	prog.Phase("oltp build: loading %d warehouses with %d loaders", cfg.Warehouses, cfg.Workers)
	if err := load(ctx, ld, gen, out.Rows, prog); err != nil {
		return nil, err
	}
	out.LoadS = time.Since(start).Seconds()

	tail, err := ld.Finish(ctx, func(p string) { prog.Phase("oltp build: %s", p) })
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
	if err := ctl.RecordBuild(ctx, info); err != nil {
		return nil, err
	}
	if tmpl := d.Templates(); tmpl != nil && !cfg.NoTemplate {
		closeLd()
		closeCtl()
		if out.TemplateKept, err = keepTemplate(ctx, tmpl, cfg); err != nil {
			return nil, err
		}
		if out.TemplateKept != "" {
			prog.Phase("oltp build: %s", out.TemplateKept)
			return out, nil
		}
		prog.Phase("oltp build: keeping the loaded database as a template")
		if out.Template, err = tmpl.SaveTemplate(ctx, templateNote(cfg.Warehouses)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// The template's note says how many warehouses it holds.
const templateNotePrefix = "oltp warehouses="

func templateNote(warehouses int) string { return templateNotePrefix + strconv.Itoa(warehouses) }

// KeepTemplate says, in one sentence, why a build of cfg must not replace
// the engine's loaded template, or "" when it may: a template is
// replaced only by a build of the same or more warehouses, or by an
// explicit --rebuild; an implicit build never replaces one it cannot size.
func KeepTemplate(ctx context.Context, e engine.Engine, cfg BuildConfig) (string, error) {
	for _, m := range dataMembers(e) {
		d, err := Dialects.For(m)
		if err != nil {
			return "", err
		}
		tmpl := d.Templates()
		if tmpl == nil {
			continue
		}
		if why, err := keepTemplate(ctx, tmpl, cfg); why != "" || err != nil {
			return why, err
		}
	}
	return "", nil
}

func keepTemplate(ctx context.Context, tmpl engine.Resetter, cfg BuildConfig) (string, error) {
	note, exists, err := tmpl.TemplateNote(ctx)
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

// prepareSchema creates the schema and its tables and procedures,
// refusing to replace an existing build unless told to.
func prepareSchema(ctx context.Context, ctl Control, rebuild bool) error {
	bi, err := ReadBuildInfo(ctx, ctl)
	if err != nil {
		return err
	}
	if bi != nil && !rebuild {
		return fault.Input("pass --rebuild to replace it, or run it with 'calibra oltp run'",
			"a TPC-C-like schema with %d warehouses is already built here", bi.Warehouses)
	}
	return ctl.CreateSchema(ctx)
}

// planCheck is how many batches load plans between looks at its context.
const planCheck = 1024

// load generates every batch and has the dialect store it: the tables
// biggest first, so the loaders finish together, and each table's batches
// in their own order, which is its primary key's, so the rows land in key
// order and the key's index build sorts presorted input (order_line's, 20
// warehouses: 1.6 s of server CPU against 2.2 s from batches ordered by
// size). Each table's rows are made in the format the dialect sends them
// in. The progress bar counts those bytes in MB (its total estimated from
// one batch of each table), with the rate and the time left.
func load(ctx context.Context, ld Loader, gen *tpcc.Generator, rows map[string]int64, prog *progress.Printer) error {
	type table struct {
		batches []Batch
		bytes   float64 // estimated
	}
	var tables []table
	var estimate float64
	for _, tb := range tpcc.Tables() {
		perRow := float64(len(gen.AppendBatchAs(nil, tb, 0, ld.Format(tb)))) / float64(gen.Rows(tb, 0))
		var t table
		for b := range gen.Batches(tb) {
			// The plan alone is a loop over every district (order_line
			// draws each one's order lines): a signal must end it too.
			if b%planCheck == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			n := gen.Rows(tb, b)
			t.batches = append(t.batches, Batch{tb, b, n})
			rows[tb.String()] += int64(n)
			t.bytes += float64(n) * perRow
		}
		tables = append(tables, t)
		estimate += t.bytes
	}
	sort.SliceStable(tables, func(a, b int) bool { return tables[a].bytes > tables[b].bytes })
	var batches []Batch
	for _, t := range tables {
		batches = append(batches, t.batches...)
	}

	if err := ctx.Err(); err != nil {
		return err
	}
	bar := prog.BytesBar(int64(estimate), "loading")
	defer bar.Finish()
	var sent atomic.Int64
	err := ld.Load(ctx, batches,
		func(buf []byte, b Batch) []byte {
			out := gen.AppendBatchAs(buf, b.Table, b.N, ld.Format(b.Table))
			sent.Add(int64(len(out) - len(buf)))
			bar.Add(int64(len(out) - len(buf)))
			return out
		})
	if err == nil {
		bar.SetTotal(sent.Load())
	}
	return err
}
