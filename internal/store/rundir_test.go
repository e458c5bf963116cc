package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
)

// withTimeseries copies a fixture run with its timeseries.csv.
func withTimeseries(t *testing.T, dir, name string) (string, []byte) {
	t.Helper()
	out := copyRun(t, dir, name)
	ts, err := os.ReadFile(filepath.Join(fixtures, name, "timeseries.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "timeseries.csv"), ts, 0o644); err != nil {
		t.Fatal(err)
	}
	return out, ts
}

// The store keeps a run's results.json and timeseries.csv as recorded.
func TestImportKeepsFiles(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	dir, ts := withTimeseries(t, t.TempDir(), "oltp-base")
	id, err := s.Record(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := s.Stored(ctx, id)
	if err != nil || !found || !bytes.Equal(got.Timeseries, ts) || !bytes.Contains(got.Results, []byte(`"schema"`)) {
		t.Errorf("Stored: %d bytes of results.json, %d of timeseries.csv (want %d), %v, %v", len(got.Results), len(got.Timeseries), len(ts), found, err)
	}
}

// A run directory is read through one handle: a link as the directory or
// as results.json is refused, a FIFO is never waited on, and a link or a
// FIFO as timeseries.csv leaves the run without one, never with another
// file's content.
func TestImportReadsBeneathOneHandle(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	secret := filepath.Join(tmp, "secret.csv")
	if err := os.WriteFile(secret, []byte("time,secret\n2026-01-01T00:00:00Z,the secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := copyRun(t, tmp, "oltp-base")
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	linkedResults := copyRun(t, filepath.Join(tmp, "lr"), "quick")
	if err := os.Rename(filepath.Join(linkedResults, "results.json"), filepath.Join(tmp, "quick.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tmp, "quick.json"), filepath.Join(linkedResults, "results.json")); err != nil {
		t.Fatal(err)
	}
	fifoResults := filepath.Join(tmp, "fifo")
	if err := os.Mkdir(fifoResults, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifoResults, "results.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := openTemp(t)
	for dir, want := range map[string]string{
		link:          "is not a directory",
		linkedResults: "is a symbolic link",
		fifoResults:   "is not a regular file",
	} {
		_, err := s.Import(ctx, []string{dir})
		if err == nil || !strings.Contains(err.Error(), want) || fault.Code(err) != fault.ExitInput {
			t.Errorf("import of %s: %v, want exit 2 saying %q", dir, err, want)
		}
	}

	linkedTS := copyRun(t, filepath.Join(tmp, "lt"), "quick")
	if err := os.Symlink(secret, filepath.Join(linkedTS, "timeseries.csv")); err != nil {
		t.Fatal(err)
	}
	fifoTS := copyRun(t, filepath.Join(tmp, "ft"), "device-a")
	if err := syscall.Mkfifo(filepath.Join(fifoTS, "timeseries.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	ids, err := s.Import(ctx, []string{linkedTS, fifoTS})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if r, _, err := s.Stored(ctx, id); err != nil || r.Timeseries != nil {
			t.Errorf("%s is stored with %d bytes of timeseries (%.40q), %v; want none", id, len(r.Timeseries), r.Timeseries, err)
		}
	}
}
