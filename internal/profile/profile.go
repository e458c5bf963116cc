// Package profile captures a running database's I/O shape from its own
// counters (calibra profile) into a small versioned YAML of rates and
// shapes, never data or SQL text, that the replay (internal/replay)
// drives through a database on other storage. docs/profile.md is its
// schema and method.
package profile

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Version is the profile format this calibra writes and reads; Kind marks
// the file as a profile.
const (
	Version = 1
	Kind    = "calibra-profile"
)

// MaxBytes bounds a profile read: a profile is a few dozen lines.
const MaxBytes = 64 << 10

// Profile is one capture. Every rate is over the capture's window, from
// the server's own counters at its two edges.
type Profile struct {
	Version  int      `yaml:"version"`
	Kind     string   `yaml:"kind"`
	Captured Captured `yaml:"captured"`
	Rates    Rates    `yaml:"rates"`
	Shape    Shape    `yaml:"shape"`
	// Device is what the device under the data did over the window, when
	// the server runs on this machine.
	Device *Device `yaml:"device,omitempty"`
	// Missing names each figure the server could not give, with why.
	Missing map[string]string `yaml:"missing,omitempty"`
	// CannotCapture says what a profile does not hold, for whoever
	// replays it.
	CannotCapture []string `yaml:"cannot_capture"`
}

// Captured is where and when the profile was taken.
type Captured struct {
	At        time.Time `yaml:"at"`
	DurationS float64   `yaml:"duration_s"`
	Engine    string    `yaml:"engine"`
	Version   string    `yaml:"server_version"`
	Managed   bool      `yaml:"managed"` // calibra's managed instance, or a --dsn server
	Tool      string    `yaml:"tool"`    // calibra's version
}

// Rates are per second over the window.
type Rates struct {
	PageReadsPS  float64 `yaml:"page_reads_ps"`  // data pages read from the OS
	PageWritesPS float64 `yaml:"page_writes_ps"` // data pages written
	CommitsPS    float64 `yaml:"commits_ps"`
	WALBytesPS   int64   `yaml:"wal_bytes_ps"`
	WALSyncsPS   float64 `yaml:"wal_syncs_ps"`
}

// Shape is what the rates do not say.
type Shape struct {
	PageBytes         int      `yaml:"page_bytes"`    // the size of a page read or written
	CacheHitPct       float64  `yaml:"cache_hit_pct"` // page requests served by the database's cache
	WALBytesPerCommit float64  `yaml:"wal_bytes_per_commit"`
	Concurrency       float64  `yaml:"concurrency"`     // mean active sessions, sampled
	ConcurrencyMax    int      `yaml:"concurrency_max"` // most active at one sample
	DataBytes         int64    `yaml:"data_bytes"`      // the database's size
	CacheBytes        int64    `yaml:"cache_bytes"`     // the database's cache in force
	HotSetBytes       int64    `yaml:"hot_set_bytes"`
	ReadSharePct      float64  `yaml:"read_share_pct"`                 // page reads of page reads and writes
	SequentialPct     *float64 `yaml:"sequential_share_pct,omitempty"` // page reads made in bulk
}

// Device is the data's device over the window (from /proc/diskstats).
type Device struct {
	Name      string   `yaml:"name"`
	ReadIOPS  *float64 `yaml:"read_iops,omitempty"`
	WriteIOPS *float64 `yaml:"write_iops,omitempty"`
	ReadMBPS  *float64 `yaml:"read_mbps,omitempty"`
	WriteMBPS *float64 `yaml:"write_mbps,omitempty"`
	UtilPct   *float64 `yaml:"util_pct,omitempty"`
}

// cannotCapture is said in every profile.
var cannotCapture = []string{
	"the statements, their plans and data: the replay reads and writes pages of its own data, not the application's rows",
	"lock and latch contention between sessions, and the application's think time",
	"which pages are hot: reads are replayed uniformly over the data beyond the cache",
	"the CPU of cache hits: only the page reads that reach the OS are replayed",
	"bursts shorter than the window: every rate is the window's mean",
}

// Encode is the profile's YAML.
func (p *Profile) Encode() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# A calibra profile: the I/O shape of a database over a window, from its own\n" +
		"# counters. Rates and shapes only, no data or SQL text. docs/profile.md.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// Read reads and checks a profile file (or - for standard input),
// bounded; any problem is one sentence, exit 2.
func Read(ctx context.Context, path string) (*Profile, error) {
	tooLarge := fault.Input("give the YAML calibra profile wrote", "the profile %s is larger than %d KiB, so not a profile", path, MaxBytes>>10)
	data, err := safefs.ReadInput(ctx, path, MaxBytes, tooLarge)
	if err != nil {
		return nil, fault.Input("give a profile written by calibra profile --out FILE", "the profile %s cannot be read: %v", path, err)
	}
	return Parse(data, path)
}

// Parse checks a profile: its version and kind, and every figure the
// replay drives by, finite and not negative.
func Parse(data []byte, name string) (*Profile, error) {
	var p Profile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fault.Input("give a profile written by calibra profile --out FILE", "%s is not a calibra profile: %v", name, err)
	}
	switch {
	case p.Kind != Kind:
		return nil, fault.Input("give a profile written by calibra profile --out FILE", "%s is not a calibra profile (kind %q, want %q)", name, p.Kind, Kind)
	case p.Version != Version:
		return nil, fault.Input(fmt.Sprintf("capture it again with this calibra, which reads version %d", Version), "%s is a profile of version %d", name, p.Version)
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"rates.page_reads_ps", p.Rates.PageReadsPS}, {"rates.page_writes_ps", p.Rates.PageWritesPS}, {"rates.commits_ps", p.Rates.CommitsPS},
		{"rates.wal_bytes_ps", float64(p.Rates.WALBytesPS)}, {"shape.concurrency", p.Shape.Concurrency}, {"shape.wal_bytes_per_commit", p.Shape.WALBytesPerCommit},
		{"shape.data_bytes", float64(p.Shape.DataBytes)}, {"shape.page_bytes", float64(p.Shape.PageBytes)}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return nil, fault.Input("capture it again with calibra profile", "%s: %s is %v, not a rate or size", name, f.key, f.v)
		}
	}
	switch {
	case p.Rates.PageReadsPS == 0 && p.Rates.CommitsPS == 0:
		return nil, fault.Input("profile the database while it works (a load running)", "%s: the database read no page and committed nothing in the window: nothing to replay", name)
	case p.Shape.PageBytes < 512 || p.Shape.PageBytes > 1<<20:
		return nil, fault.Input("capture it again with calibra profile", "%s: shape.page_bytes %d is not a page size", name, p.Shape.PageBytes)
	}
	return &p, nil
}
