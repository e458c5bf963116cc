// Package iocal is I/O through the database (layers 2 and 3 of the
// studies): random single-block reads issued by the server itself (many a
// call, the SLOB and pgio method) swept over parallel jobs, the open
// counterpart of Oracle's CALIBRATE_IO; the same reads one a query, as a
// client sees them; sequential reads and writes swept the same way, as the
// peakmarks storage tests do; and commit latency through the WAL. It works
// on its own calibration data, loaded first and dropped at the end.
package iocal

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
)

// The tests a calibration can run.
const (
	// TestRandom: random single-block reads issued by the server, many a
	// call, so that neither the client nor the round trip sets the pace.
	TestRandom = "random"
	// TestClientRead: random single-block reads, one a query: the read
	// latency as a client sees it, round trip and per-query work included.
	TestClientRead = "clientread"
	TestSeqRead    = "seqread"
	TestSeqWrite   = "seqwrite"
	// TestWAL: committers each looping a tiny write transaction with
	// synchronous commit: commit latency through the WAL (redo log).
	TestWAL = "wal"
)

// Tests are the tests in the order they run: reads first, writes last, so
// that writes cannot disturb reads.
var Tests = []string{TestRandom, TestClientRead, TestSeqRead, TestSeqWrite, TestWAL}

// DefaultTests run when none are named: clientread is asked for by name.
var DefaultTests = []string{TestRandom, TestSeqRead, TestSeqWrite, TestWAL}

// Defaults.
const (
	DefaultJobs       = "1,2,4,8,16,32,64,128,256"
	MaxJobs           = 1024
	DefaultMaxLatency = 10 * time.Millisecond // CALIBRATE_IO's minimum
	// DefaultReadsPerCall is the random blocks the server reads in one call
	// of the random test: the client's share of each read is then about
	// 1/256 of a round trip.
	DefaultReadsPerCall = 256
	MaxReadsPerCall     = 65536
)

// Config is one calibration; its fields read well in a study's YAML.
type Config struct {
	SizeBytes  int64         `yaml:"size_bytes"`  // calibration data on disk
	Jobs       []int         `yaml:"jobs"`        // parallel jobs, one connection each
	Point      time.Duration `yaml:"point"`       // timed window of each point
	Warmup     time.Duration `yaml:"warmup"`      // unmeasured run before each point
	MaxLatency time.Duration `yaml:"max_latency"` // bound on mean single-block read latency
	Tests      []string      `yaml:"tests"`
	Keep       bool          `yaml:"keep"` // keep the calibration data for a later run
	Seed       uint64        `yaml:"seed"`
	Loaders    int           `yaml:"loaders"` // parallel loaders of the calibration data
	// ReadsPerCall is the random blocks one call of the random test reads
	// inside the server.
	ReadsPerCall int `yaml:"reads_per_call"`
}

// ParseJobs reads a comma list of job counts, each 1 to MaxJobs.
func ParseJobs(list string) ([]int, error) {
	fix := fmt.Sprintf("give whole numbers from 1 to %d, e.g. --jobs 1,2,4,8", MaxJobs)
	var jobs []int
	for _, tok := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(tok))
		switch {
		case err != nil:
			return nil, fault.Input(fix, "--jobs %q holds %q, not a whole number", list, tok)
		case n <= 0:
			return nil, fault.Input(fix, "--jobs %q holds %d, which is not positive", list, n)
		case n > MaxJobs:
			return nil, fault.Input(fix, "--jobs %q holds %d, more than %d", list, n, MaxJobs)
		case slices.Contains(jobs, n):
			return nil, fault.Input("list each job count once", "--jobs %q lists %d twice", list, n)
		}
		jobs = append(jobs, n)
	}
	slices.Sort(jobs)
	return jobs, nil
}

// ParseTests reads a comma list of tests.
func ParseTests(list string) ([]string, error) {
	var tests []string
	for _, tok := range strings.Split(list, ",") {
		tok = strings.TrimSpace(tok)
		if !slices.Contains(Tests, tok) {
			return nil, fault.Input("use random, clientread, seqread, seqwrite and/or wal", "--tests %q holds %q, not a test", list, tok)
		}
		if !slices.Contains(tests, tok) {
			tests = append(tests, tok)
		}
	}
	// Always in the order of Tests: writes last, so they cannot disturb reads.
	slices.SortFunc(tests, func(a, b string) int { return slices.Index(Tests, a) - slices.Index(Tests, b) })
	return tests, nil
}
