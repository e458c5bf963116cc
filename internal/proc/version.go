package proc

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// versions holds what programs printed when asked their version, by
// versionKey.
var versions sync.Map

// VersionOutput is the standard output of cmd, a program asked its
// version (postgres --version, fio --version), run as Probe runs it and
// remembered for this process by the program's file (device, inode, size,
// times), arguments and environment. A study's steps, and the tests that
// run calibra's commands in-process (some 500 asks a run of the suite),
// find the same programs again and again; mariadbd takes 30 ms of CPU to
// answer. A program replaced or upgraded since is another file, asked
// anew; a failure is not remembered. Each caller gets its own copy.
func VersionOutput(cmd *exec.Cmd) ([]byte, error) {
	key, ok := versionKey(cmd)
	if ok {
		if out, found := versions.Load(key); found {
			return bytes.Clone(out.([]byte)), nil
		}
	}
	out, err := Probe(cmd).Output()
	if err == nil && ok {
		versions.Store(key, bytes.Clone(out))
	}
	return out, err
}

// versionKey names cmd's program file and what it is asked; false when
// the file cannot be looked at (the run then says why).
func versionKey(cmd *exec.Cmd) (string, bool) {
	var st unix.Stat_t
	if err := unix.Stat(cmd.Path, &st); err != nil {
		return "", false
	}
	return fmt.Sprintf("%s\x00%d:%d:%d:%d.%d:%d.%d\x00%s\x00%s\x00%s", cmd.Path, st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec, strings.Join(cmd.Args[1:], "\x00"), cmd.Dir,
		strings.Join(cmd.Environ(), "\x00")), true
}
