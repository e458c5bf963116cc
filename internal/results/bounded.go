package results

import (
	"context"
	"errors"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// The bounds of what report, compare and merge read from a run directory:
// far above what a run of the longest window (7 days) writes, far below
// what would exhaust the memory of the machine reading it.
const (
	// MaxResultsBytes bounds results.json.
	MaxResultsBytes = 256 << 20
	// MaxLogBytes bounds a histogram log under raw/.
	MaxLogBytes = 256 << 20
	// MaxTimeseriesBytes and MaxTimeseriesRows bound timeseries.csv (and a
	// partition's raw/oltp-ticks.csv): a row a second for 11 days.
	MaxTimeseriesBytes = 512 << 20
	MaxTimeseriesRows  = 1_000_000
)

// maxRows is MaxTimeseriesRows, lowered by tests.
var maxRows = MaxTimeseriesRows

// ReadBounded reads the file at path, refusing one larger than most bytes
// before reading it whole. A run directory may be another account's: the
// file is read by safefs.ReadInput, the one reader of inputs (no final
// link followed, no FIFO waited on, a regular file only).
func ReadBounded(path string, most int64) ([]byte, error) {
	// A path in a run directory is never standard input: nothing to cancel.
	return safefs.ReadInput(context.Background(), path, most, tooLarge(path, most))
}

// tooLarge is the one sentence for a file past its bound.
func tooLarge(path string, most int64) error {
	return fault.Input("give the run directory calibra wrote, or restore the file: no run writes one that large",
		"%s is larger than the %d MiB calibra reads", path, most>>20)
}

// errTooManyRows marks a timeseries past MaxTimeseriesRows.
var errTooManyRows = errors.New("too many rows")

func tooManyRows(path string) error {
	return fault.Input("give the run directory calibra wrote, or restore the file: no run writes that many seconds",
		"%s holds more than the %d rows calibra reads", path, maxRows)
}

// readErr names the file in a read error, keeping a bound's sentence.
func readErr(path string, err error) error {
	var in *fault.InputError
	if errors.As(err, &in) {
		return err
	}
	if errors.Is(err, errTooManyRows) {
		return tooManyRows(path)
	}
	return fault.Input("restore the file, or run the command that wrote it again", "%s cannot be read: %v", path, err)
}
