package store

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// MaxStoredTimeseries bounds a run's timeseries.csv as the store keeps it
// (gzip-compressed); a larger one is not kept, and the run's page in
// calibra serve draws no charts over time.
const MaxStoredTimeseries = 32 << 20

// stored is what the store keeps of a run directory's files, compressed:
// what calibra serve shows, so that it never opens the directory.
type stored struct {
	results, timeseries []byte
}

// readRunDir reads a run directory as the store records it. The directory
// is opened once, without following a final link, and results.json and
// timeseries.csv are opened beneath that handle, each without following a
// link, a regular file only and within results' bounds: a directory
// another account swaps for a link while it is read gives nothing of
// another directory's.
func readRunDir(dir string) (*results.Run, stored, error) {
	d, err := safefs.OpenInputDir(dir)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, stored{}, fault.Input("give the run directory that calibra wrote (it holds results.json)", "%s holds no results.json", dir)
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		return nil, stored{}, fault.Input("give the run directory itself", "%s is not a directory (calibra follows no link to a run directory)", dir)
	case err != nil:
		return nil, stored{}, fault.Input("check the path and its permissions", "cannot open %s: %v", dir, unwrapPath(err))
	}
	defer d.Close()
	file := filepath.Join(dir, "results.json")
	tooLarge := fault.Input("give the run directory calibra wrote, or restore the file: no run writes one that large",
		"%s is larger than the %d MiB calibra reads", file, results.MaxResultsBytes>>20)
	data, err := safefs.ReadInputAt(d, "results.json", results.MaxResultsBytes, tooLarge)
	if errors.Is(err, os.ErrNotExist) {
		return nil, stored{}, fault.Input("give the run directory that calibra wrote (it holds results.json)", "%s holds no results.json", dir)
	}
	if err != nil {
		return nil, stored{}, err
	}
	run, err := results.Decode(data, file)
	if err != nil {
		return nil, stored{}, err
	}
	var st stored
	if st.results, err = compress(bytes.NewReader(data), -1); err != nil {
		return nil, stored{}, err
	}
	// A timeseries that cannot be kept (none, not a regular file, too
	// large) leaves the run without one in the store: its figures and
	// report stand without it, as a run stopped before its observers.
	if f, err := safefs.OpenInputAt(d, results.TimeseriesFile); err == nil {
		lr := &io.LimitedReader{R: f, N: results.MaxTimeseriesBytes + 1}
		if z, err := compress(lr, MaxStoredTimeseries); err == nil && lr.N > 0 {
			st.timeseries = z
		}
		f.Close()
	}
	return run, st, nil
}

// unwrapPath is the error behind a *os.PathError, whose path the sentence
// names already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// errTooLarge ends a compression past its bound.
var errTooLarge = errors.New("too large to store")

// boundedWriter refuses to grow past max bytes (no bound when max < 0).
type boundedWriter struct {
	bytes.Buffer
	max int
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if b.max >= 0 && b.Len()+len(p) > b.max {
		return 0, errTooLarge
	}
	return b.Buffer.Write(p)
}

// compress gzips r, refusing an output past max bytes (max < 0: no bound).
func compress(r io.Reader, max int) ([]byte, error) {
	b := &boundedWriter{max: max}
	z := gzip.NewWriter(b)
	if _, err := io.Copy(z, r); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decompress reads what compress wrote, refusing more than most bytes.
func decompress(data []byte, most int64, what string) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("the store's copy of %s is damaged: %w", what, err)
	}
	out, err := io.ReadAll(io.LimitReader(z, most+1))
	if err != nil {
		return nil, fmt.Errorf("the store's copy of %s is damaged: %w", what, err)
	}
	if int64(len(out)) > most {
		return nil, fmt.Errorf("the store's copy of %s is larger than the %d MiB calibra reads", what, most>>20)
	}
	return out, nil
}
