package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
)

// isInput fails unless err is bad input (exit 2) whose sentence holds want.
func isInput(t *testing.T, err error, want string) {
	t.Helper()
	var in *fault.InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want bad input saying %q", err, want)
	}
}

// A label longer than a name can be made ENAMETOOLONG at every suffix;
// DefaultPath says so instead of trying the next suffix for ever.
func TestDefaultPathEndsOnANameTooLong(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := DefaultPath(time.Now(), strings.Repeat("a", 5000))
	isInput(t, err, "longer than the file system allows")
}

// The default calibra-runs goes in the current directory only when no
// other account can swap it there.
func TestDefaultPathRefusesACurrentDirectoryOthersCanWrite(t *testing.T) {
	cwd := t.TempDir()
	if err := os.Chmod(cwd, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	_, err := DefaultPath(time.Now(), "x")
	isInput(t, err, "give --out in a directory")
	if _, err := os.Lstat(filepath.Join(cwd, DefaultParent)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("calibra-runs was made in a directory others can write: %v", err)
	}
}

// An existing --out that others can write (a 1777 directory such as /tmp)
// is never a run directory: links planted in it would be written through.
func TestCreateRefusesAnOutOthersCanWrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(out, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	canary := filepath.Join(t.TempDir(), "canary")
	if err := os.WriteFile(canary, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(out, "logs"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(canary, filepath.Join(out, "logs", "calibra.log")); err != nil {
		t.Fatal(err)
	}
	_, err := Create(out, &Run{})
	isInput(t, err, "is writable by other accounts")
	if _, err := os.Lstat(filepath.Join(out, "results.json")); err == nil {
		t.Error("results.json was written into a directory others can write")
	}
	if data, _ := os.ReadFile(canary); string(data) != "keep" {
		t.Errorf("the canary now holds %q", data)
	}
}

// A run directory holding a link at raw/ (where fio writes by name) is
// refused: logs/ and raw/ are calibra's own.
func TestCreateRefusesALinkAtRaw(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(out, "raw")); err != nil {
		t.Fatal(err)
	}
	_, err := Create(out, &Run{})
	isInput(t, err, "symbolic link")
}

// A FIFO given as results.json or timeseries.csv is refused at once, and a
// link at one is not followed.
func TestLoadRefusesAFIFOAndALink(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "results.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, TimeseriesFile), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	isInput(t, err, "is not a regular file")
	_, err = LoadTimeseries(dir)
	isInput(t, err, "is not a regular file")

	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root:$6$hash:19000::::::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(link, "results.json")); err != nil {
		t.Fatal(err)
	}
	_, err = Load(link)
	isInput(t, err, "symbolic link")
	if strings.Contains(err.Error(), "root:") {
		t.Errorf("the error quotes the file it refused: %v", err)
	}
}
