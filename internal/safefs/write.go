package safefs

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/fault"
)

// OpenWrite opens path for writing (flag adds O_CREATE, O_APPEND,
// O_TRUNC... to O_WRONLY) in a directory that passed the rule or is
// calibra's own: a final symbolic link is refused, a FIFO does not block,
// and anything but a regular file is refused in one sentence. Use
// CreateFile for a file that must be new.
func OpenWrite(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := unix.Open(path, flag|unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fault.Input("remove the link (another account may have made it) or choose another path",
				"%s is a symbolic link, which calibra does not write through", path)
		}
		if errors.Is(err, unix.ENXIO) { // a FIFO no one reads
			return nil, fault.Input("remove it or choose another path", "%s is not a regular file", path)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fault.Input("remove it or choose another path", "%s is not a regular file", path)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// CreateOutput opens a file the user named as an output (a profile, a
// page): its directory must pass CheckDir, and it is opened as OpenWrite
// does, truncated.
func CreateOutput(path string, perm os.FileMode) (*os.File, error) {
	if err := CheckDir(filepath.Dir(path), ""); err != nil {
		return nil, err
	}
	return OpenWrite(path, os.O_CREATE|os.O_TRUNC, perm)
}
