package safefs

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/fault"
)

// The bounds of the inputs a user names, far above what anyone writes by
// hand and far below what would exhaust a shared host's memory (a run
// directory's files have theirs in internal/results/bounded.go).
const (
	// MaxStudyBytes bounds a study file (the longest example is 6 KiB).
	MaxStudyBytes = 4 << 20
	// MaxSecretBytes bounds a file holding one DSN or store URL
	// (--dsn-file, a study's target.dsn_file, --store-file).
	MaxSecretBytes = 4 << 10
)

// IsStdin says whether path names standard input: "-", or a name the
// kernel would resolve to it (reading those as files would follow a link
// to a pipe or a terminal).
func IsStdin(path string) bool {
	switch path {
	case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return true
	}
	return false
}

// OpenInput opens a file calibra reads but did not write (a study, a DSN
// file, a run directory given to report, compare or merge): a final
// symbolic link is refused, a FIFO or device is refused at once instead
// of blocking, and so is a kernel file (/proc, /sys), whose size says
// nothing of what a read returns. Each refusal is one sentence that never
// quotes the file's content.
func OpenInput(path string) (*os.File, error) {
	return openInputAt(unix.AT_FDCWD, path, path)
}

// OpenInputDir opens a directory of inputs calibra did not write (a run
// directory given to import) once, without following a final link: its
// files are then opened beneath the handle (OpenInputAt), so a directory
// swapped for a link while they are read gives nothing of another's.
func OpenInputDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenInputAt is OpenInput for name beneath the directory dir
// (OpenInputDir).
func OpenInputAt(dir *os.File, name string) (*os.File, error) {
	return openInputAt(int(dir.Fd()), name, filepath.Join(dir.Name(), name))
}

// ReadInputAt is ReadInput for name beneath the directory dir.
func ReadInputAt(dir *os.File, name string, most int64, tooLarge error) ([]byte, error) {
	f, err := OpenInputAt(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, most, tooLarge)
}

func openInputAt(dirfd int, name, path string) (*os.File, error) {
	f, err := openRegularAt(dirfd, name, path, unix.O_RDONLY, 0, "give the file itself", "calibra does not follow as an input", "give a regular file")
	if err != nil {
		return nil, err
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &fs); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	switch fs.Type {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEBUGFS_MAGIC, unix.SECURITYFS_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC:
		f.Close()
		return nil, fault.Input("give a regular file", "%s is a kernel file, not an input", path)
	}
	return f, nil
}

// ReadInput is the one reader of what calibra did not write: it reads at
// most most bytes of the input at path, as OpenInput opens it, or of
// standard input when IsStdin(path); tooLarge is returned when there is
// more. Cancelling ctx (the first signal) ends a wait on standard input.
func ReadInput(ctx context.Context, path string, most int64, tooLarge error) ([]byte, error) {
	if IsStdin(path) {
		return readStdin(ctx, most, tooLarge)
	}
	f, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, most, tooLarge)
}

func readAtMost(r io.Reader, most int64, tooLarge error) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, most+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > most {
		return nil, tooLarge
	}
	return data, nil
}

// readStdin reads standard input in a goroutine: a pipe no one writes or
// a terminal blocks read(2), which nothing in Go interrupts, so the caller
// stops waiting when ctx ends and the process exits with the read pending.
func readStdin(ctx context.Context, most int64, tooLarge error) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := readAtMost(os.Stdin, most, tooLarge)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
