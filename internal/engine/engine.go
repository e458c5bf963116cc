// Package engine is the seam between calibra and the databases it
// measures: what every engine must do (Engine), and what some can do,
// discovered by type assertion (ColdRestarter, Resetter, Crasher,
// TransactionCounter, Replicator), in the manner of restic's backend and CockroachDB's
// workload hooks. An engine registers its Descriptor, which is all the
// rest of calibra knows of it; adding one touches its own package, its
// dialects and one line in internal/engines.
package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
)

// Engine is what every engine does: a managed instance on the storage
// under test, or a server reached by DSN.
type Engine interface {
	// Name is the engine as results.json records it, e.g. "postgresql".
	Name() string
	// Start initialises the managed instance the first time, starts it and
	// makes sure calibra's database exists; attached to a DSN it does
	// nothing. It reports whether it initialised. Starting a running
	// instance is a no-op.
	Start(ctx context.Context, group *proc.Group) (initialised bool, err error)
	// Stop stops what Start started; safe before Start and twice.
	Stop() error
	// Describe is the engine's version, settings (in their real units) and
	// target, its DSN redacted; complete after Start.
	Describe() results.Engine
	// Local is the managed instance's place on the storage under test;
	// nil when the engine is attached to a server by DSN.
	Local() *Local
	// SetServerLog names the managed server's log file (in the run
	// directory); nothing for a DSN.
	SetServerLog(path string)
}

// Local is where a managed instance keeps its data and its log of
// changes (WAL, redo), and what its last Start repaired of an earlier
// command's interruption.
type Local struct {
	DataDir string
	LogDir  string // the WAL or redo log's directory
	Repairs []string
}

// ColdRestarter restarts a managed instance with its files evicted from
// the OS page cache (reported: false when some could not be): a cold start.
type ColdRestarter interface {
	Restart(ctx context.Context, group *proc.Group) (cacheDropped bool, err error)
}

// Resetter keeps a copy of the loaded data, labelled with a note of what
// it holds, and puts it back, so every load can start from the same state.
type Resetter interface {
	SaveTemplate(ctx context.Context, note string) (string, error)
	TemplateNote(ctx context.Context) (note string, exists bool, err error)
	RestoreTemplate(ctx context.Context) error
}

// Crasher kills a managed instance at once (SIGKILL), as a crash would;
// the next Start recovers it.
type Crasher interface {
	Kill()
}

// TransactionCounter reads the engine's own count of transactions ended
// (commits and rollbacks) in calibra's database, for tpm_db.
type TransactionCounter interface {
	Transactions(ctx context.Context) (int64, error)
}

// Replicator is a managed instance with standbys that replay its WAL:
// the observers read each one's lag and I/O.
type Replicator interface {
	Replicas() []Replica
}

// Replica is one standby as it runs now.
type Replica struct {
	Name    string // as the primary knows it (PostgreSQL: application_name)
	DataDir string
	PID     int // its main process; 0 when it is not running
}

// Config is what an engine is opened with (docs/design.md, the target).
type Config struct {
	DSN            string // a server calibra does not manage; empty: the managed instance
	Path           string // the storage under test: the managed instance's data go under it
	RunAs          string // the unprivileged account of the managed server
	DBCache        string // the engine's data cache
	MaxConnections int
	Settings       map[string]string // server settings over calibra's defaults
	WALPath        string            // storage for the WAL (redo log), apart from Path
	// Replicas standbys of the managed instance, their commits waited for
	// as Sync says (off, on, remote_apply), their data under ReplicaPath
	// (Path when empty).
	Replicas    int
	Sync        string
	ReplicaPath string
	// Options are the engine's own options (Descriptor.Options), by flag.
	Options map[string]string
	// DataChecksums initialises a new managed instance with page
	// checksums where the engine makes them optional (PostgreSQL's
	// initdb -k): the power-loss audit's page check.
	DataChecksums bool
	ServerLog     string
	Cgroup        *limits.Cgroup
}

// Opener prepares an engine: checks everything that can be checked before
// a run directory exists, starts nothing.
type Opener func(ctx context.Context, cfg Config) (Engine, error)

// mu guards the registries: the engines' descriptors and each
// workload's dialects.
var mu sync.Mutex

// Open prepares the engine called name.
func Open(ctx context.Context, name string, cfg Config) (Engine, error) {
	d, ok := Lookup(name)
	if !ok {
		return nil, fault.Input("use one of: "+strings.Join(Names(), ", "), "--engine %q is not an engine calibra knows", name)
	}
	return d.Open(ctx, cfg)
}

// NotSupported is the sentence a workload records under missing when it
// needs a capability its engine lacks.
func NotSupported(e Engine, what string) string {
	return fmt.Sprintf("%s is not supported by %s", what, e.Name())
}

// Dialects is a workload's table of engine-specific parts (D), one per
// engine, each registered from the dialect's own package next to the
// workload, so the workload itself names no engine.
type Dialects[D any] struct {
	workload string
	mu       sync.Mutex
	open     map[string]func(Engine) (D, error)
	supports map[string][]string
}

// NewDialects starts a workload's table; workload names it in the
// sentence a missing dialect gives, e.g. "the oltp workload".
func NewDialects[D any](workload string) *Dialects[D] {
	return &Dialects[D]{workload: workload, open: map[string]func(Engine) (D, error){}, supports: map[string][]string{}}
}

// Register adds the dialect for the engine called engineName, declaring
// the workload's features it supports (the oltp workload's modes), in
// the manner of CockroachDB's workload hooks: what a dialect does not
// declare is refused before anything starts.
func (d *Dialects[D]) Register(engineName string, open func(Engine) (D, error), supports ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, dup := d.open[engineName]; dup {
		panic(d.workload + ": dialect for " + engineName + " registered twice")
	}
	d.open[engineName] = open
	d.supports[engineName] = supports
}

// Supports lists the features the dialect for the engine called
// engineName declares; nil when it has no dialect or declares none.
func (d *Dialects[D]) Supports(engineName string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.supports[engineName]
}

// For is the workload's dialect for e, or an input error saying the
// workload is not supported by e's engine, or runs on one server and e is
// a Group (a workload that spreads over members asks for each member's).
func (d *Dialects[D]) For(e Engine) (D, error) {
	if err := RefuseGroup(e, d.workload); err != nil {
		var none D
		return none, err
	}
	d.mu.Lock()
	open, ok := d.open[e.Name()]
	d.mu.Unlock()
	if !ok {
		var none D
		return none, fault.Input("choose another engine, or leave this step out of the study", "%s", NotSupported(e, d.workload))
	}
	return open(e)
}

// RegisterFor registers a dialect that works on the engine's own type T,
// so each dialect need not check what it was given.
func RegisterFor[T Engine, D any](d *Dialects[D], engineName string, open func(T) (D, error), supports ...string) {
	d.Register(engineName, func(e Engine) (D, error) {
		t, ok := e.(T)
		if !ok {
			var none D
			return none, fmt.Errorf("%s: the %s dialect was given %T", d.workload, engineName, e)
		}
		return open(t)
	}, supports...)
}
