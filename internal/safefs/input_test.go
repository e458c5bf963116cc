package safefs

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zeros reads as /dev/zero does.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// readWithin is ReadInput of path, failing the test if it blocks (a hang
// guard, not a duration: a FIFO blocks for ever).
func readWithin(t *testing.T, ctx context.Context, path string, most int64, tooLarge error) ([]byte, error) {
	t.Helper()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := ReadInput(ctx, path, most, tooLarge)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(time.Minute):
		t.Fatalf("ReadInput(%s) blocked", path)
		return nil, nil
	}
}

func TestReadInputTakesOnlyRegularFilesWithinTheBound(t *testing.T) {
	const most = 64
	dir := t.TempDir()
	write := func(name string, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil { // safefs: the test's own TempDir
			t.Fatal(err)
		}
		return p
	}
	secret := write("secret", "root:$6$secret-hash:19000\n")
	exact := write("exact", strings.Repeat("x", most))
	over := write("over", strings.Repeat("x", most+1))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o777|os.ModeSticky); err != nil { // safefs: the test's own TempDir
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	sharedLink := filepath.Join(shared, "link")
	privateLink := filepath.Join(dir, "link")
	for _, l := range []string{sharedLink, privateLink} {
		if err := os.Symlink(secret, l); err != nil {
			t.Fatal(err)
		}
	}
	tooLarge := errors.New("too large")
	for _, c := range []struct {
		name, path, refusal string
	}{
		{"a FIFO", fifo, "is not a regular file"},
		{"a device", "/dev/zero", "is not a regular file"},
		{"a directory", dir, "is not a regular file"},
		{"a link in a sticky directory others write", sharedLink, "is a symbolic link"},
		{"a link in a private directory", privateLink, "is a symbolic link"},
		{"the environment in /proc", "/proc/self/environ", "is a kernel file"},
		{"a file of /sys", "/sys/kernel/mm/transparent_hugepage/enabled", "is a kernel file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Lstat(c.path); err != nil {
				t.Skipf("no %s here: %v", c.path, err)
			}
			_, err := readWithin(t, context.Background(), c.path, most, tooLarge)
			if !isInput(err) || !strings.Contains(err.Error(), c.refusal) {
				t.Fatalf("ReadInput(%s) = %v, want an input error saying %q", c.path, err, c.refusal)
			}
			if msg := err.Error(); strings.Contains(msg, "secret-hash") || strings.Contains(msg, "PATH=") || strings.Count(msg, "\n") > 0 {
				t.Errorf("the refusal is not one sentence free of the file's content: %q", msg)
			}
		})
	}
	if data, err := readWithin(t, context.Background(), exact, most, tooLarge); err != nil || len(data) != most {
		t.Errorf("ReadInput of a file of exactly the bound = %d bytes, %v", len(data), err)
	}
	if _, err := readWithin(t, context.Background(), over, most, tooLarge); err != tooLarge {
		t.Errorf("ReadInput of a file one byte past the bound = %v, want %v", err, tooLarge)
	}
}

// setStdin makes r standard input for the test.
func setStdin(t *testing.T, r *os.File) {
	t.Helper()
	old := os.Stdin
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = old })
}

func TestReadInputBoundsStandardInput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { _, _ = io.Copy(w, zeros{}); w.Close() }()
	setStdin(t, r)
	tooLarge := errors.New("too large")
	for _, name := range []string{"-", "/dev/stdin"} {
		if _, err := readWithin(t, context.Background(), name, 1<<20, tooLarge); err != tooLarge {
			t.Errorf("ReadInput(%s) of endless zeros = %v, want %v", name, err, tooLarge)
		}
	}
}

func TestReadInputOfStandardInputEndsWithTheContext(t *testing.T) {
	r, w, err := os.Pipe() // a writer that never writes
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	setStdin(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	if _, err := readWithin(t, ctx, "-", 1<<20, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadInput(-) of a silent pipe, cancelled = %v, want %v", err, context.Canceled)
	}
}

// Beneath a directory handle the same rule holds, and a directory swapped
// for a link after it was opened leads nowhere else: the handle still
// names the directory it opened.
func TestReadInputAtReadsBeneathTheHandle(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "run")
	other := filepath.Join(base, "other")
	for _, d := range []string{dir, other} {
		if err := os.Mkdir(d, 0o700); err != nil { // safefs: in t.TempDir, the test's own
			t.Fatal(err)
		}
	}
	for d, text := range map[string]string{dir: "mine", other: "theirs"} {
		if err := os.WriteFile(filepath.Join(d, "results.json"), []byte(text), 0o600); err != nil { // safefs: in t.TempDir, the test's own
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(other, "results.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := OpenInputDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// The directory is swapped for a link to another after it was opened.
	if err := os.Rename(dir, dir+".old"); err != nil { // safefs: in t.TempDir, the test's own
		t.Fatal(err)
	}
	if err := os.Symlink(other, dir); err != nil {
		t.Fatal(err)
	}
	tooLarge := errors.New("too large")
	if got, err := ReadInputAt(d, "results.json", 100, tooLarge); err != nil || string(got) != "mine" {
		t.Errorf("results.json beneath the handle: %q, %v; want the opened directory's", got, err)
	}
	if _, err := ReadInputAt(d, "results.json", 2, tooLarge); err != tooLarge {
		t.Errorf("past the bound: %v, want the bound's error", err)
	}
	for _, name := range []string{"link.json", "fifo"} {
		if got, err := ReadInputAt(d, name, 100, tooLarge); err == nil || !isInput(err) {
			t.Errorf("%s: read %q (%v), want a refusal in one sentence", name, got, err)
		}
	}
	if _, err := OpenInputDir(dir); err == nil {
		t.Error("a link given as the directory was opened")
	}
}
