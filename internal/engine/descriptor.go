package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/secret"
	"github.com/calibra-bench/calibra/internal/terms"
)

// Descriptor is everything calibra outside an engine's own packages
// knows of it, as restic's backend Factory is: the runner, the command
// line, studies and comparisons consult it, and name no engine. Each
// engine registers one from its package's init.
type Descriptor struct {
	Name  string // as results.json and --engine write it
	Title string // as a sentence writes it
	// Default is the engine when neither --engine nor a DSN's scheme
	// names one; one engine is.
	Default bool
	Open    Opener
	// DSNSchemes are the URL schemes that name this engine's servers;
	// DSNExample is one such DSN, for help and fixes.
	DSNSchemes []string
	DSNExample string
	// DSNPassword says where the engine's driver finds a password besides
	// the DSN, e.g. "PGPASSWORD or ~/.pgpass"; "" when nowhere.
	DSNPassword string
	// RedactDSN hides the password of a DSN in a form of the engine's own
	// driver that is neither a URL nor key=value, reporting whether dsn
	// is one; nil when the engine has no such form.
	RedactDSN func(dsn string) (string, bool)
	Cache     Cache
	// ServerMemory is the server's own memory beyond its cache and its
	// connections', which a memory limit must leave room for.
	ServerMemory int64
	// ServerDisk is the disk a managed server takes beyond its data at a
	// cache of cacheBytes (its log and system files), for the free-space
	// checks; nil: the runner's own allowance.
	ServerDisk func(cacheBytes uint64) uint64
	// CheckSettings refuses, before anything starts, the engine settings
	// calibra owns on the managed instance; nil: none are refused early.
	CheckSettings func(settings map[string]string) error
	// CheckServer finds the managed server's binaries (its error says how
	// to install them) and checks they know every setting cfg asks.
	CheckServer func(cfg Config) error
	// Managed are the managed instances `clean` removes under a path.
	Managed []Managed
	// EphemeralSettings differ between any two runs of the managed
	// instance (its port, its socket's and files' paths, which follow
	// --path and --wal-path): compare does not call them a difference.
	EphemeralSettings []string
	// RemoveStaleSockets removes the socket directories dead runs left,
	// naming them.
	RemoveStaleSockets func() ([]string, error)
	// Standbys says how the engine makes standbys (--replicas); nil when
	// calibra makes none for it.
	Standbys *Standbys
	// Options are the engine's own flags and study keys; their values
	// reach the engine in Config.Options, keyed by flag.
	Options []Option
	// CheckOptions refuses options that cannot run with the rest of cfg
	// (instances: --instances); called when this engine is chosen.
	CheckOptions func(cfg Config, instances int) error
	// Servers is how many servers options start (a cluster's nodes);
	// nil: one. ClusterTitle names such a cluster's kind in sentences.
	Servers      func(options map[string]string) int
	ClusterTitle string
	// Words are the engine's own terms in reports: where its waits and
	// counters come from, its log's and cluster's names.
	Words terms.Words
}

// Cache is the engine's data cache (--db-cache) in its own units.
type Cache struct {
	Setting string // the server setting it sets, for help
	Default string // when none is asked
	// Parse reads a size as the engine's own setting does (a bare number
	// in the setting's own unit), in bytes, reporting whether it is one.
	Parse func(string) (uint64, bool)
	Min   uint64 // the engine's minimum, in bytes
	// Example is a size the engine reads, for fixes.
	Example string
}

// Managed is one kind of managed instance under a path.
type Managed struct {
	Title   string // as clean names it, e.g. "PostgreSQL"
	Pattern string // glob of its directories' names
	// Dir and Holds are its directory and what it holds, as clean's help
	// lists them.
	Dir, Holds string
	Remove     func(path string) (removed bool, err error)
}

// Standbys is how an engine makes standbys of its managed instance.
type Standbys struct {
	What      string   // the replication, as a sentence names it
	SyncModes []string // --sync's values
	// Settings are the engine settings --sync sets, refused with
	// --replicas.
	Settings []string
}

// Option is one of an engine's own flags (and the study key of the
// same setting).
type Option struct {
	Flag, Key, Usage string
	Int              bool // a whole number; else a string
	// Role is what the option does, as a sentence refusing it on
	// another engine says: "--pg-bin ROLE, and the engine is ...".
	Role string
	// Nodes: the option is the number of a cluster's nodes, as a fix
	// that resizes a cluster names it.
	Nodes bool
}

var (
	descriptors = map[string]Descriptor{}
	order       []string
)

// Register makes an engine available; each engine calls it once, from
// its package's init.
func Register(d Descriptor) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := descriptors[d.Name]; dup {
		panic("engine " + d.Name + " registered twice")
	}
	for _, o := range descriptors {
		if d.Default && o.Default {
			panic("engines " + o.Name + " and " + d.Name + " are both the default")
		}
		for _, opt := range d.Options {
			if slices.ContainsFunc(o.Options, func(x Option) bool { return x.Flag == opt.Flag || x.Key == opt.Key }) {
				panic("engines " + o.Name + " and " + d.Name + " both have the option " + opt.Flag)
			}
		}
		if dir, shared := shareADirectory(o.Managed, d.Managed); shared {
			panic("engines " + o.Name + " and " + d.Name + " would both use PATH/" + dir)
		}
	}
	descriptors[d.Name] = d
	order = append(order, d.Name)
	sort.Strings(order)
	if d.RedactDSN != nil {
		secret.AddDSNForm(d.RedactDSN)
	}
	terms.Register(d.Name, d.Words)
}

// shareADirectory reports a directory one of a's and b's managed
// instances names that the other's pattern takes too: one engine would
// open, or clean remove, the other's instance.
func shareADirectory(a, b []Managed) (string, bool) {
	for _, x := range a {
		for _, y := range b {
			if ok, _ := filepath.Match(x.Pattern, y.Dir); ok {
				return y.Dir, true
			}
			if ok, _ := filepath.Match(y.Pattern, x.Dir); ok {
				return x.Dir, true
			}
		}
	}
	return "", false
}

// Names lists the registered engines.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(order)
}

// Lookup is the engine called name's descriptor.
func Lookup(name string) (Descriptor, bool) {
	mu.Lock()
	defer mu.Unlock()
	d, ok := descriptors[name]
	return d, ok
}

// Descriptors are the registered engines', in name order.
func Descriptors() []Descriptor {
	mu.Lock()
	defer mu.Unlock()
	ds := make([]Descriptor, len(order))
	for i, n := range order {
		ds[i] = descriptors[n]
	}
	return ds
}

// Default is the default engine's name; "" when none registered one.
func Default() string {
	for _, d := range Descriptors() {
		if d.Default {
			return d.Name
		}
	}
	return ""
}

// Title is the engine called name as a sentence writes it.
func Title(name string) string {
	if d, ok := Lookup(name); ok && d.Title != "" {
		return d.Title
	}
	return name
}

// ForScheme is the engine whose servers a DSN's URL scheme names; "" when
// none does.
func ForScheme(dsn string) string {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok {
		return ""
	}
	for _, d := range Descriptors() {
		if slices.Contains(d.DSNSchemes, strings.ToLower(scheme)) {
			return d.Name
		}
	}
	return ""
}

// Options are every engine's options, each with the engine it is of.
func Options() []EngineOption {
	var all []EngineOption
	for _, d := range Descriptors() {
		for _, o := range d.Options {
			all = append(all, EngineOption{Engine: d.Name, Option: o})
		}
	}
	return all
}

// EngineOption is an option and the engine it is of.
type EngineOption struct {
	Engine string
	Option
}

// Ephemeral reports whether setting is one that differs between any two
// runs of some engine's managed instance.
func Ephemeral(setting string) bool {
	for _, d := range Descriptors() {
		if slices.Contains(d.EphemeralSettings, setting) {
			return true
		}
	}
	return false
}

// Servers is how many servers the engine called name starts with
// options: a cluster's nodes, else one.
func Servers(name string, options map[string]string) int {
	if d, ok := Lookup(name); ok && d.Servers != nil {
		return max(d.Servers(options), 1)
	}
	return 1
}

// NodesKey is the study key of the option that sizes the clusters of the
// engine called name; "" when it makes none.
func NodesKey(name string) string {
	d, _ := Lookup(name)
	for _, o := range d.Options {
		if o.Nodes {
			return o.Key
		}
	}
	return ""
}

// ParseCache reads --db-cache as the engine called name does, refusing a
// size it does not read or one below its minimum.
func ParseCache(name, size string) (uint64, error) {
	d, ok := Lookup(name)
	if !ok || d.Cache.Parse == nil {
		return 0, fmt.Errorf("engine %q reads no cache size", name)
	}
	bytes, ok := d.Cache.Parse(size)
	switch {
	case !ok:
		return 0, fault.Input("give a size such as "+d.Cache.Example, "--db-cache %q is not a memory size", size)
	case bytes < d.Cache.Min:
		min := FormatBytes(d.Cache.Min)
		return 0, fault.Input("give "+min+" or more, such as "+d.Cache.Example, "--db-cache %s is below %s's minimum of %s", size, d.Title, min)
	}
	return bytes, nil
}

// FormatBytes writes a whole number of bytes in the largest unit (kB, MB,
// GB, TB, each 1024 of the one below) that divides it.
func FormatBytes(b uint64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for i < len(units)-1 && b >= 1024 && b%1024 == 0 {
		b /= 1024
		i++
	}
	return fmt.Sprintf("%d%s", b, units[i])
}
