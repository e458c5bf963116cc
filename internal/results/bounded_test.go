package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
)

// Every file report, compare and merge read is read with a bound, and a
// file past it is one input error naming it.
func TestReadsAreBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 2<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadBounded(big, 1<<20)
	var in *fault.InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), big+" is larger than the 1 MiB calibra reads") {
		t.Errorf("ReadBounded past its bound: %v", err)
	}
	if data, err := ReadBounded(big, 2<<20); err != nil || len(data) != 2<<20 {
		t.Errorf("ReadBounded at its bound: %d bytes, %v", len(data), err)
	}

	defer func(n int) { maxRows = n }(maxRows)
	maxRows = 3
	rows := "time,x\n"
	for range 4 {
		rows += "2026-01-01T00:00:00Z,1\n"
	}
	_, err = ReadTimeseriesFile(strings.NewReader(rows), "ts.csv")
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "ts.csv holds more than the 3 rows calibra reads") {
		t.Errorf("a timeseries past its rows: %v", err)
	}
	if _, err := ReadTimeseriesFile(strings.NewReader("time,x\n2026-01-01T00:00:00Z,1\n"), "ts.csv"); err != nil {
		t.Errorf("a short timeseries: %v", err)
	}
	_, err = ReadTimeseriesFile(strings.NewReader("time,x\nyesterday,1\n"), "ts.csv")
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "ts.csv cannot be read: timeseries: line 2") {
		t.Errorf("a malformed timeseries: %v", err)
	}
}

func TestLoadRefusesAHugeResults(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxResultsBytes + 1); err != nil { // sparse: no disk
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "results.json is larger than the 256 MiB calibra reads") {
		t.Errorf("Load of a huge results.json: %v", err)
	}
}
