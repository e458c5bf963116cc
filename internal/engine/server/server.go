// Package server holds what a managed database server needs from the
// operating system, whichever the engine: the unprivileged account it runs
// as and its children's credentials, the private socket directories dead
// runs leave, and the server's last words when it fails.
package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/pathlock"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Account is the account a managed server runs as: an unprivileged one
// when calibra runs as root, else calibra's own (UID -1: no switch).
type Account struct {
	Name     string
	UID, GID int
}

// Lookup finds the account that runs engine's server (--run-as, else
// defaultName, which installing the package creates) when calibra runs as
// root, and checks that it can reach every path.
func Lookup(engine, runAs, defaultName, pkg string, paths ...string) (Account, error) {
	if os.Geteuid() != 0 {
		return Account{UID: -1, GID: -1}, nil
	}
	name := runAs
	if name == "" {
		name = defaultName
	}
	u, err := user.Lookup(name)
	if err != nil {
		return Account{}, fault.Input(fmt.Sprintf("install %s (it creates the '%s' account) or pass --run-as USER naming an unprivileged account", pkg, defaultName),
			"calibra runs %s as an unprivileged account, and the account %q does not exist", engine, name)
	}
	a := Account{Name: name}
	a.UID, _ = strconv.Atoi(u.Uid)
	a.GID, _ = strconv.Atoi(u.Gid)
	if a.UID == 0 {
		return Account{}, fault.Input("pass --run-as USER naming an unprivileged account", "calibra runs %s as an unprivileged account, not root (--run-as %s)", engine, name)
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := a.checkReachable(engine, p); err != nil {
			return Account{}, err
		}
	}
	return a, nil
}

// checkReachable verifies that the account can traverse every directory
// above path: the server's initialisation fails late and obscurely
// otherwise.
func (a Account) checkReachable(engine, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		if err != nil {
			return fault.Input("create it or choose another --path", "the path %s does not exist", dir)
		}
		sys := st.Sys().(*syscall.Stat_t)
		mode := st.Mode().Perm()
		ok := mode&0o001 != 0 ||
			(int(sys.Uid) == a.UID && mode&0o100 != 0) ||
			(int(sys.Gid) == a.GID && mode&0o010 != 0)
		if !ok {
			return fault.Input(fmt.Sprintf("run 'chmod o+x %s' or choose a --path the account can reach (or --run-as another account)", dir),
				"the account that runs %s (uid %d) cannot enter %s", engine, a.UID, dir)
		}
		if dir == "/" {
			return nil
		}
	}
}

// PlainEnv is the environment a managed server's tools run in.
func PlainEnv() []string { return []string{"LC_ALL=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TZ=UTC"} }

// Credentials makes cmd run as the account, from "/", in PlainEnv unless
// its maker gave it an environment already.
func (a Account) Credentials(cmd *exec.Cmd) {
	if cmd.Env == nil {
		cmd.Env = PlainEnv()
	}
	cmd.Dir = "/"
	if a.UID < 0 {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(a.UID), Gid: uint32(a.GID)}}
}

// Chown gives path, a directory calibra just made in a directory no
// other account can change (safefs), to the account. A final symbolic
// link is never followed: only a file calibra opened itself is given by
// handle (WriteFile).
func (a Account) Chown(path string) error {
	if a.UID < 0 {
		return nil
	}
	if err := os.Lchown(path, a.UID, a.GID); err != nil {
		return fmt.Errorf("give %s to the account %s: %w", path, a.Name, err)
	}
	return nil
}

// Mkdir makes the directory name, mode 0700, in parent (which must pass
// safefs.CheckParent: the storage path, or a directory calibra made
// there) and gives it to the account; an existing one is taken only when
// it is a real directory of the account's or calibra's that no other
// account can write. It returns the directory's path.
func (a Account) Mkdir(parent, name string) (string, error) {
	if err := safefs.CheckParent(parent, ""); err != nil {
		return "", err
	}
	// Made and checked in the parent as checked, links resolved.
	real, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(real, name)
	if err := unix.Mkdir(dir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	fix := fmt.Sprintf("remove %s (another account may have made it) or choose another path", dir)
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return "", fault.Input(fix, "%s is not a directory", dir)
	case st.Uid != 0 && int(st.Uid) != os.Geteuid() && int(st.Uid) != a.UID:
		return "", fault.Input(fix, "%s belongs to %s, not to calibra's or the server's account", dir, safefs.Owner(st.Uid))
	case st.Mode&0o022 != 0:
		return "", fault.Input(fix, "%s is writable by other accounts", dir)
	}
	return filepath.Join(parent, name), a.Chown(dir)
}

// WriteFile writes a new file at path, mode perm, and gives it to the
// account (none: calibra's own) by its handle. path may lie in a
// directory the server's account owns (a data directory), where that
// account could have put a link or a FIFO at the name: whatever is there
// is unlinked (never followed) and the file made with O_EXCL|O_NOFOLLOW,
// so what calibra writes, chmods and chowns is the file it made.
func (a Account) WriteFile(path string, data []byte, perm os.FileMode) error {
	if err := unix.Unlink(path); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	f, err := safefs.CreateFile(path, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // the umask may have taken bits away
	}
	if err == nil && a.UID >= 0 {
		if err = f.Chown(a.UID, a.GID); err != nil {
			err = fmt.Errorf("give %s to the account %s: %w", path, a.Name, err)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteNew is WriteFile for a file that stays calibra's own.
func WriteNew(path string, data []byte, perm os.FileMode) error {
	return Account{UID: -1, GID: -1}.WriteFile(path, data, perm)
}

// RemoveDir removes dir, a directory of calibra's making (a data
// directory, its WAL or redo log, a standby), by handle: its parent must
// pass safefs.CheckDir (the storage path or a directory calibra made
// there), and the removal walks below the parent opened once, so
// nothing outside it goes, whatever the server's account put inside. A
// missing dir is not an error.
func RemoveDir(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	parent, name := filepath.Dir(dir), filepath.Base(dir)
	if err := safefs.CheckDir(parent, ""); err != nil {
		return err
	}
	// The parent as checked, links resolved: a link above it that
	// another account controls changes nothing once resolved.
	real, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return err
	}
	if err := safefs.RemoveAll(real, name); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

// maxSmallFile bounds what ReadSmall reads.
const maxSmallFile = 1 << 20

// ReadSmall reads a small file calibra did not necessarily write (a pid
// file, a marker, a record in a data directory the server's account
// owns): a final link is not followed, a FIFO does not block, and
// anything but a regular file of at most 1 MiB is an error.
func ReadSmall(path string) ([]byte, error) {
	return safefs.ReadInput(context.Background(), path, maxSmallFile, fmt.Errorf("%s is larger than calibra's records are", path))
}

// Run runs a tool (initdb, mariadb-install-db) as the account in group,
// and returns what it printed; cancelling ctx stops it.
func (a Account) Run(ctx context.Context, group *proc.Group, name string, cmd *exec.Cmd) (string, error) {
	a.Credentials(cmd)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	p, err := group.Start(name, cmd, syscall.SIGTERM)
	if err != nil {
		return "", err
	}
	select {
	case <-p.Done():
		return buf.String(), p.Err()
	case <-ctx.Done():
		_ = p.Stop(10 * time.Second)
		return buf.String(), ctx.Err()
	}
}

// SocketBaseName is the directory under socketParent that holds calibra's
// socket directories, one per account that runs calibra (its UID follows).
const SocketBaseName = "calibra-sockets-"

// SocketParentMax is the longest TMPDIR (or XDG_RUNTIME_DIR) that holds
// the socket base: beneath it go the base, a socket directory (an
// engine's prefix of at most 16 bytes and mkdtemp's at most 10 digits)
// and a socket's name (at most 16 bytes, as .s.PGSQL.65535 is).
func SocketParentMax() int {
	return safefs.MaxSocketPath - len("/"+SocketBaseName+strconv.Itoa(os.Geteuid())) - (1 + 16 + 10) - (1 + 16)
}

// socketParent is where the socket base goes: TMPDIR when it is set and
// short enough (SocketParentMax) that a socket beneath it stays within
// safefs.MaxSocketPath (a server refuses a longer one, in words a user
// cannot act on); else a directory where no other account can make a
// name first, which in the shared /tmp another could (calibra would then
// refuse to run until it was removed): /run for root, XDG_RUNTIME_DIR
// for another account; else /tmp.
func socketParent() string {
	fits := func(dir string) bool { return dir != "" && len(dir) <= SocketParentMax() }
	if os.Getenv("TMPDIR") != "" && fits(os.TempDir()) {
		return os.TempDir()
	}
	if os.Geteuid() == 0 {
		if st, err := os.Stat("/run"); err == nil && st.IsDir() {
			return "/run"
		}
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); fits(dir) {
		return dir
	}
	return "/tmp"
}

// SocketBase is the private directory that holds calibra's socket
// directories: calibra-sockets-UID in socketParent (/run for root), made
// by calibra's own account
// with mode 0711, so that a server's account reaches its own socket
// directory inside while no other account can make, swap or list anything
// there. A name in a shared temporary directory that another account
// could make first (calibra-sock-*) is never trusted. An existing base
// must be a real directory of calibra's account, writable by nobody else,
// in a parent where no other account can rename it (theirs and not
// writable by others, or sticky as /tmp is); otherwise SocketBase refuses
// with an input error. Without create, a missing base is "" and no error.
func SocketBase(create bool) (string, error) {
	parent := socketParent()
	base := filepath.Join(parent, SocketBaseName+strconv.Itoa(os.Geteuid()))
	fix := "remove it (another account may have made it), or point TMPDIR at a directory only root can write to"
	var pst syscall.Stat_t
	if err := syscall.Stat(parent, &pst); err != nil {
		return "", fmt.Errorf("the temporary directory %s: %w", parent, err)
	}
	if (pst.Uid != 0 && int(pst.Uid) != os.Geteuid()) || (pst.Mode&0o022 != 0 && pst.Mode&syscall.S_ISVTX == 0) {
		return "", fault.Input("point TMPDIR at a directory only root can write to (or a sticky one such as /tmp)",
			"the temporary directory %s lets other accounts rename what calibra makes in it", parent)
	}
	if create {
		// The parent and all above it: root's or calibra's account's.
		if err := safefs.CheckParent(parent, "point TMPDIR at a directory only root can write to (or a sticky one such as /tmp)"); err != nil {
			return "", err
		}
		// Made fresh, or taken below only when calibra's own.
		if err := unix.Mkdir(base, 0o711); err != nil && !errors.Is(err, unix.EEXIST) {
			return "", fmt.Errorf("make the socket directory base %s: %w", base, err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(base, &st); errors.Is(err, syscall.ENOENT) && !create {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("the socket directory base %s: %w", base, err)
	}
	switch {
	case st.Mode&syscall.S_IFMT == syscall.S_IFLNK:
		return "", fault.Input(fix, "the socket directory base %s is a symbolic link, which calibra does not follow", base)
	case st.Mode&syscall.S_IFMT != syscall.S_IFDIR:
		return "", fault.Input(fix, "the socket directory base %s is not a directory", base)
	case int(st.Uid) != os.Geteuid():
		return "", fault.Input(fix, "the socket directory base %s belongs to the account with uid %d, not to calibra's (uid %d)", base, st.Uid, os.Geteuid())
	case st.Mode&0o7777 != 0o711:
		// Ours: the mode is ours to set (umask, or a hand's chmod).
		if err := os.Chmod(base, 0o711); err != nil { // safefs: ours (checked above), in a parent where no other account renames it
			return "", err
		}
	}
	return base, nil
}

// NewSocketDir makes a fresh private socket directory (prefix and a random
// suffix, mode 0700) in SocketBase.
func NewSocketDir(prefix string) (string, error) {
	base, err := SocketBase(true)
	if err != nil {
		return "", err
	}
	return safefs.PrivateTemp(base, prefix)
}

// RemoveStaleSockets removes the socket directories (prefix* in
// SocketBase) that dead runs left, which a killed calibra cannot remove:
// those whose lock no live calibra holds and where listens finds no live
// server. It returns the directories removed.
func RemoveStaleSockets(prefix string, listens func(dir string) bool) ([]string, error) {
	base, err := SocketBase(false)
	if err != nil || base == "" {
		return nil, err
	}
	dirs, err := filepath.Glob(filepath.Join(base, prefix+"*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, dir := range dirs {
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			continue
		}
		lock, err := pathlock.Acquire(dir, "clean")
		if err != nil {
			continue // a live run's, or not ours to judge
		}
		if listens(dir) {
			lock.Release()
			continue
		}
		if err := safefs.RemoveAll(base, filepath.Base(dir)); err != nil {
			errs = append(errs, err)
		} else {
			removed = append(removed, dir)
		}
		lock.Release()
	}
	return removed, errors.Join(errs...)
}

// LastLines is the last n lines of s, joined by sep.
func LastLines(s string, n int, sep string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, sep)
}

// Tail keeps the last few KiB written to it: the server's last words when
// it fails to start.
type Tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

// String is the last five lines, joined by " | ".
func (t *Tail) String() string { return t.Matching(nil) }

// Matching is up to five lines that keep accepts (the last five lines
// when keep is nil or accepts none), joined by " | ": a server that logs
// much around its error says it in the lines keep picks. Of more than
// five it keeps the first, which names the cause (a Galera joiner's
// "failed to open gcomm backend connection: 3: ..."), and the last four.
func (t *Tail) Matching(keep func(line string) bool) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return LastWords(string(t.b), keep)
}

// LastWords picks from a server's output as Tail.Matching does.
func LastWords(out string, keep func(line string) bool) string {
	var all, kept []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		all = append(all, sc.Text())
		if keep != nil && keep(sc.Text()) {
			kept = append(kept, sc.Text())
		}
	}
	switch {
	case len(kept) == 0:
		kept = all
		if len(kept) > 5 {
			kept = kept[len(kept)-5:]
		}
	case len(kept) > 5:
		kept = append(kept[:1:1], kept[len(kept)-4:]...)
	}
	return strings.Join(kept, " | ")
}

// SamePath reports whether two paths name the same directory, symbolic
// links resolved (the kernel shows a process's cwd resolved).
func SamePath(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// OwnedLike reports whether dir is a directory, not a symbolic link, of
// the account that owns ref (a data directory, not a link either): a
// data directory names others clean removes with it (its WAL, redo log,
// standbys), and one another account made could name anything.
func OwnedLike(dir, ref string) bool {
	var d, r syscall.Stat_t
	isDir := func(st *syscall.Stat_t) bool { return st.Mode&syscall.S_IFMT == syscall.S_IFDIR }
	return syscall.Lstat(dir, &d) == nil && syscall.Lstat(ref, &r) == nil && isDir(&d) && isDir(&r) && d.Uid == r.Uid
}

// PIDIn reports the live server that owns dataDir by its pid file: the PID
// on the file's first line, a process named with one of comms' prefixes,
// run by the account that owns dataDir and working in it. A stale pid
// file's PID may since name another server's process, which is not ours
// to signal; nor is a process of another account. All three must agree:
// the pid file is read without following a link or blocking on a FIFO,
// dataDir must be a real directory (not a link), and the process's
// working directory must be that very directory (device and inode), so
// a server is stopped only when its pid file, its owner and its data
// directory say the same.
func PIDIn(pidFile, dataDir string, comms ...string) (int, bool) {
	data, err := ReadSmall(pidFile)
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, false
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil || !slices.ContainsFunc(comms, func(c string) bool { return strings.HasPrefix(string(comm), c) }) {
		return 0, false
	}
	var owner, dir, cwd syscall.Stat_t
	if syscall.Stat(fmt.Sprintf("/proc/%d", pid), &owner) != nil || syscall.Lstat(dataDir, &dir) != nil ||
		dir.Mode&syscall.S_IFMT != syscall.S_IFDIR || owner.Uid != dir.Uid {
		return 0, false
	}
	// The kernel's link to the process's working directory leads to the
	// directory itself, whatever its path now.
	if syscall.Stat(fmt.Sprintf("/proc/%d/cwd", pid), &cwd) != nil || cwd.Dev != dir.Dev || cwd.Ino != dir.Ino {
		return 0, false
	}
	return pid, true
}

// LeftoverWait bounds how long a command waits for a server that a
// killed calibra left exiting: the server's parent-death signal makes it
// shut down, which takes it a few seconds (a checkpoint, a flush). A
// variable for tests, which wait less.
var LeftoverWait = 10 * time.Second

// AwaitLeftover waits for a server a killed calibra left on dataDir (under
// path) to finish exiting: the SIGKILL window, in which advising clean
// would cost the loaded data for nothing. Only a server still running
// after LeftoverWait is refused, with the advice for it; title names the
// engine.
func AwaitLeftover(ctx context.Context, title, path, dataDir string, running func() (int, bool)) error {
	pid, alive, err := AwaitExit(ctx, LeftoverWait, running)
	if err != nil || !alive {
		return err
	}
	return fault.Input(fmt.Sprintf("wait for the other calibra to finish, or stop that server (calibra clean --path %s stops it and deletes the loaded data)", path),
		"a %s server (pid %d) still runs on %s after %s", title, pid, dataDir, LeftoverWait)
}

// AwaitExit waits, up to wait and while ctx lasts, until running no
// longer finds the server a dead run left. It returns the PID and true
// when a live server stays; ctx's error when ctx ends first.
func AwaitExit(ctx context.Context, wait time.Duration, running func() (int, bool)) (int, bool, error) {
	deadline := time.Now().Add(wait)
	for {
		pid, alive := running()
		if !alive || !time.Now().Before(deadline) {
			return pid, alive, nil
		}
		select {
		case <-ctx.Done():
			return pid, alive, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StopLeftover stops a server a dead run left: sig (the engine's fast
// shutdown), then SIGKILL if running still says yes after wait.
func StopLeftover(pid int, sig syscall.Signal, wait time.Duration, running func() bool) {
	comm := processName(pid)
	// A server removes its pid file before it has exited (mariadbd does):
	// the process itself is waited for too, by its name, so that a pid
	// reused meanwhile is not.
	alive := func() bool { return running() || comm != "" && processName(pid) == comm }
	_ = syscall.Kill(pid, sig)
	for deadline := time.Now().Add(wait); alive() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if alive() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for deadline := time.Now().Add(5 * time.Second); alive() && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// processName is pid's command name, "" once it has exited (or is a
// zombie, exited and not yet reaped).
func processName(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	open, closing := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if err != nil || open < 0 || closing < open || len(stat) < closing+3 || stat[closing+2] == 'Z' {
		return ""
	}
	return string(stat[open+1 : closing])
}
