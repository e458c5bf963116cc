package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
)

// startIn starts a process named comm (a link to sleep, so that its comm
// is the link's name) working in dir, and writes its pid file there.
func startIn(t *testing.T, dir, comm, script string) (*exec.Cmd, string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), comm)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sh, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", script)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	pidFile := filepath.Join(dir, "server.pid")
	if err := os.WriteFile(pidFile, []byte(fmt.Sprintf("%d\n", cmd.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	return cmd, pidFile
}

// The SIGKILL window: a server a killed calibra left is still exiting
// when the next command looks. AwaitExit waits for one that goes (it
// exits a second later) and reports one that stays; a cancel ends the
// wait at once.
func TestAwaitExitWaitsForAServerThatGoes(t *testing.T) {
	dir := t.TempDir()
	_, pidFile := startIn(t, dir, "fakeserver", "sleep 1")
	running := func() (int, bool) { return PIDIn(pidFile, dir, "fakeserver") }
	if _, ok := running(); !ok {
		t.Fatal("the fake server is not found by its pid file")
	}
	if pid, alive, err := AwaitExit(context.Background(), time.Hour, running); alive || err != nil {
		t.Fatalf("a server that exits: still alive (pid %d), %v", pid, err)
	}

	stays := t.TempDir()
	cmd, pidFile2 := startIn(t, stays, "fakeserver", "sleep 600")
	runs := func() (int, bool) { return PIDIn(pidFile2, stays, "fakeserver") }
	if pid, alive, err := AwaitExit(context.Background(), 200*time.Millisecond, runs); !alive || err != nil || pid != cmd.Process.Pid {
		t.Fatalf("a server that stays: alive %v pid %d (want %d), %v", alive, pid, cmd.Process.Pid, err)
	}
	defer func(w time.Duration) { LeftoverWait = w }(LeftoverWait)
	LeftoverWait = 200 * time.Millisecond
	err := AwaitLeftover(context.Background(), "Test", "/srv/array", stays, runs)
	if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), "a Test server (pid "+strconv.Itoa(cmd.Process.Pid)+") still runs on "+stays) ||
		!strings.Contains(err.Error(), "calibra clean --path /srv/array stops it and deletes the loaded data") {
		t.Fatalf("a server that stays, refused: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := AwaitExit(ctx, time.Hour, runs); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
}

// A pid file, the process's owner and its data directory must agree: a
// data directory that is a link to the server's, or a pid file that is a
// link or a FIFO, names no server (and never blocks).
func TestPIDInNeedsAllThreeToAgree(t *testing.T) {
	dir := t.TempDir()
	cmd, pidFile := startIn(t, dir, "fakeserver", "sleep 600")
	if pid, ok := PIDIn(pidFile, dir, "fakeserver"); !ok || pid != cmd.Process.Pid {
		t.Fatalf("the server itself: %d, %v", pid, ok)
	}
	link := filepath.Join(t.TempDir(), "data")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if _, ok := PIDIn(pidFile, link, "fakeserver"); ok {
		t.Error("a link to the data directory names its server")
	}
	other := t.TempDir()
	pidLink := filepath.Join(other, "server.pid")
	if err := os.Symlink(pidFile, pidLink); err != nil {
		t.Fatal(err)
	}
	if _, ok := PIDIn(pidLink, dir, "fakeserver"); ok {
		t.Error("a linked pid file names a server")
	}
	fifo := filepath.Join(other, "fifo.pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() { _, ok := PIDIn(fifo, dir, "fakeserver"); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Error("a FIFO names a server")
		}
	case <-time.After(time.Minute):
		t.Fatal("PIDIn blocks on a FIFO")
	}
}

// What calibra writes into a directory the server's account owns is the
// file it made: a link planted at the name is replaced, not followed.
func TestWriteFileReplacesAPlantedLink(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "canary")
	if err := os.WriteFile(canary, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "pg_hba.conf")
	if err := os.Symlink(canary, path); err != nil {
		t.Fatal(err)
	}
	if err := WriteNew(path, []byte("calibra's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(canary); string(b) != "root's" {
		t.Fatalf("the link's target was written: %q", b)
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v, %v", st.Mode(), err)
	}
}

// The server's log in the run directory is 0600 (a Galera node's names
// its cluster), and a link or FIFO at its name is refused, not followed
// or waited on.
func TestTheServerLogIsPrivate(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	f, err := openLog(log)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, _ := os.Stat(log); st.Mode().Perm() != 0o600 {
		t.Errorf("the server log is %v, want 0600", st.Mode().Perm())
	}
	if err := os.Chmod(log, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err = openLog(log); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, _ := os.Stat(log); st.Mode().Perm() != 0o600 {
		t.Errorf("a reopened server log is %v, want 0600", st.Mode().Perm())
	}
	canary := filepath.Join(t.TempDir(), "canary")
	if err := os.WriteFile(canary, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(canary, link); err != nil {
		t.Fatal(err)
	}
	if f, err := openLog(link); err == nil {
		f.Close()
		t.Error("a link at the server log's name was followed")
	}
	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := openLog(fifo); err == nil || !strings.Contains(err.Error(), "no such device") && !strings.Contains(err.Error(), "not a regular file") {
		if f != nil {
			f.Close()
		}
		t.Errorf("a FIFO at the server log's name: %v", err)
	}
}

// Account.Mkdir takes an existing directory only when it is calibra's or
// the server account's and no other account can write it; RemoveDir
// removes by handle, so a link inside the directory leads nowhere.
func TestMkdirAndRemoveDirStayInside(t *testing.T) {
	parent := t.TempDir()
	a := Account{UID: -1, GID: -1}
	dir, err := a.Mkdir(parent, "calibra-pg")
	if err != nil || dir != filepath.Join(parent, "calibra-pg") {
		t.Fatalf("Mkdir: %q, %v", dir, err)
	}
	if _, err := a.Mkdir(parent, "calibra-pg"); err != nil {
		t.Fatalf("Mkdir of its own existing directory: %v", err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Mkdir(parent, "calibra-pg"); err == nil || !strings.Contains(err.Error(), "writable by other accounts") {
		t.Errorf("Mkdir took a directory others can write: %v", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	canary := filepath.Join(outside, "canary")
	if err := os.WriteFile(canary, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "pg_wal")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(parent, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Mkdir(parent, "link"); err == nil {
		t.Error("Mkdir took a link")
	}
	if err := RemoveDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("RemoveDir went through a link: %v", err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("RemoveDir left %s: %v", dir, err)
	}
	if err := RemoveDir(dir); err != nil {
		t.Errorf("RemoveDir of a missing directory: %v", err)
	}
}
