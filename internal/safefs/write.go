package safefs

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OpenWrite opens path for writing (flag adds O_CREATE, O_APPEND,
// O_TRUNC... to O_WRONLY) in a directory that passed the rule or is
// calibra's own: a final symbolic link is refused, a FIFO does not block,
// and anything but a regular file is refused in one sentence. Use
// CreateFile for a file that must be new.
func OpenWrite(path string, flag int, perm os.FileMode) (*os.File, error) {
	return openRegular(path, flag|unix.O_WRONLY, perm, "remove the link (another account may have made it) or choose another path",
		"calibra does not write through", "remove it or choose another path")
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
