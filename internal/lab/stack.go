package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// DirName is the lab's directory under the path: the platter, the FUSE
// mount point, the file system's mount point and the state file.
const DirName = "calibra-lab"

// mountName is the stack's file system's mount point under DirName.
const mountName = "fs"

// MountUnder is where a lab built under path mounts its file system.
func MountUnder(path string) string { return filepath.Join(path, DirName, mountName) }

// BuiltUnder is the path a lab's file system mounted at mount was built
// under (--path), or mount itself when it is no lab's mount: a run on a
// lab tier measures another tier of the storage at that path.
func BuiltUnder(mount string) string {
	if p, ok := strings.CutSuffix(filepath.Clean(mount), string(filepath.Separator)+filepath.Join(DirName, mountName)); ok && p != "" {
		return p
	}
	return mount
}

// Stack is a built lab: up between Up and Down (or PowerCut).
type Stack struct {
	Parts Parts
	Root  string // PATH/calibra-lab
	Mount string // where the file system is mounted: the study's path
	// Fsck is what the file system check said when the stack came up on
	// an existing platter ("" on a new one).
	Fsck string
	// Lost says what the last command's stack did not keep ("" when it
	// kept everything): its writes are not on the platter.
	Lost string

	group    *proc.Group
	tools    tools
	starts   uint64 // each start's torn cut has a seed of its own
	fuse     *proc.Proc
	server   *proc.Proc   // calibra's NBD server, when it serves the stack
	listener net.Listener // its socket, open until the stack goes
	loop     string
	cacheDir string // the temporary directory holding the cache file
}

// state is what Cleanup needs to remove a dead run's stack.
type state struct {
	Pid      int    `json:"pid"` // nbdfuse
	Loop     string `json:"loop"`
	CacheDir string `json:"cache_dir,omitempty"`
}

// platterName is the platter's file in calibra-lab.
const platterName = "platter.img"

func (s *Stack) socket() string    { return filepath.Join(s.Root, "nbd.sock") }
func (s *Stack) platter() string   { return filepath.Join(s.Root, platterName) }
func (s *Stack) fuseDir() string   { return filepath.Join(s.Root, "fuse") }
func (s *Stack) fuseFile() string  { return filepath.Join(s.Root, "fuse", "disk") }
func statePath(root string) string { return filepath.Join(root, "lab.json") }
func (s *Stack) tornPath() string  { return filepath.Join(s.Root, "torn-cut.json") }

// lostPath holds, after a stack that keeps nothing went down, what it lost.
func lostPath(root string) string { return filepath.Join(root, "kept-nothing") }

// flashPointer names the file under the lab's root that says where its
// flash cache lives, so that the next start (after a power cut) and clean
// find it after any exit. The cache directory's name is random (it lives
// in a place every account can write, such as /dev/shm): this record, in
// calibra's own directory, is the only way to it.
const flashPointer = "flash-cache-dir"

// cachePrefix begins the name of each private cache directory.
const cachePrefix = "calibra-lab-cache-"

// maxRecord bounds what is read of the lab's own small files.
const maxRecord = 64 << 10

// removeOwn unlinks one of the lab's own files in its root (made or
// checked by safefs.MkdirOwn in Up) by the root's handle; one already
// gone is no error.
func removeOwn(path string) error {
	if err := safefs.Remove(filepath.Dir(path), filepath.Base(path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// writeRecord writes one of the lab's own files in its root (made or
// checked by safefs.MkdirOwn in Up): any old one removed, the new one made
// exclusively, 0600, never through a link.
func writeRecord(path string, data []byte) error {
	if err := removeOwn(path); err != nil {
		return err
	}
	f, err := safefs.CreateFile(path, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// readRecord reads one of the lab's own files, refusing a link or
// anything but a regular file.
func readRecord(path string) ([]byte, error) {
	return safefs.ReadInput(context.Background(), path, maxRecord, fmt.Errorf("%s is larger than the lab ever writes it", path))
}

// Check says, in one sentence, why a stack cannot be built on this
// machine, or nil.
func Check(p Parts) error {
	_, err := ready(p)
	return err
}

// tools are the programs a stack runs, by name, each found once and
// checked with the rule for what calibra runs (proc.Find).
type tools map[string]proc.Program

// ready is Check, giving the stack's tools.
func ready(p Parts) (tools, error) {
	if os.Geteuid() != 0 {
		return nil, fault.Input("run calibra as root (loop devices and mounts need it), or drop --lab", "the storage lab needs root")
	}
	if f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0); err != nil { // safefs: a device node in root's /dev, opened to see that it can be, nothing written
		return nil, fault.Input("load FUSE (modprobe fuse) or run where /dev/fuse exists, or drop --lab", "the storage lab needs FUSE and /dev/fuse cannot be opened: %v", errors.Unwrap(err))
	} else {
		f.Close()
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return nil, fault.Input("load the loop module (modprobe loop) or run where /dev/loop-control exists, or drop --lab", "the storage lab needs loop devices and this machine has none")
	}
	names := []string{"nbdfuse", "fusermount3", "losetup", "mount", "umount"}
	if !p.Served() {
		names = append(names, "nbdkit")
	}
	if p.FS == "xfs" {
		names = append(names, "mkfs.xfs")
	} else {
		names = append(names, "mkfs.ext4", "e2fsck")
	}
	found := tools{}
	for _, t := range names {
		pkg := toolPackage[t]
		prog, err := proc.Need(t, t+" on PATH", fault.Input(fmt.Sprintf("install it: apt-get install %s (sh .ci/setup installs every tool of the lab)", pkg),
			"the storage lab needs %s (Debian package %s), which is not installed", t, pkg))
		if err != nil {
			return nil, err
		}
		found[t] = prog
	}
	if p.Cache != "" {
		if st, err := os.Stat(p.CacheDir); err != nil || !st.IsDir() {
			return nil, fault.Input("give cache_dir=DIR on a fast device or tmpfs", "the lab's cache directory %s is not a directory", p.CacheDir)
		}
		// The cache gets a private directory of a random name there;
		// its parents must still be out of other accounts' reach.
		if err := safefs.CheckParent(p.CacheDir, "give cache_dir=DIR owned by root and writable by no other account, or sticky as /dev/shm is"); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// Up builds the stack under path: a new platter with a new file system
// the first time, the existing one (checked first) afterwards, so that a
// database built on the lab stays there between commands. The caller must
// call Down (or PowerCut) on every path.
func Up(ctx context.Context, path string, p Parts, group *proc.Group) (*Stack, error) {
	tools, err := ready(p)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	s := &Stack{Parts: p, Root: filepath.Join(abs, DirName), group: group, tools: tools}
	s.Mount = MountUnder(abs)
	// calibra-lab and its mount points are calibra's own, made fresh or
	// found so (never a link, never another account's): the platter, the
	// records and both mounts go there by name. 0755: the server's
	// account reaches its data through fs.
	if err := safefs.CheckDir(abs, ""); err != nil {
		return nil, err
	}
	if _, err := safefs.MkdirOwn(abs, DirName, 0o755); err != nil {
		return nil, err
	}
	for _, d := range []string{s.fuseDir(), s.Mount} {
		if _, err := safefs.MkdirOwn(s.Root, filepath.Base(d), 0o755); err != nil {
			return nil, err
		}
	}
	if _, err := os.Lstat(statePath(s.Root)); err == nil {
		return nil, fault.Input(fmt.Sprintf("wait for the other calibra to finish, or run 'calibra clean --path %s'", path),
			"a lab stack is already up under %s (another calibra, or one that was killed)", s.Root)
	}
	if lost, err := readRecord(lostPath(s.Root)); err == nil {
		s.Lost = string(lost)
		_ = removeOwn(lostPath(s.Root))
	}
	fresh := false
	if _, err := os.Stat(s.platter()); errors.Is(err, os.ErrNotExist) {
		if err := s.newPlatter(ctx); err != nil {
			os.Remove(s.platter()) // safefs: the platter just made in calibra-lab, calibra's own
			return nil, err
		}
		fresh = true
	}
	err = s.start(ctx)
	if err == nil && !fresh {
		s.Fsck, err = s.check(ctx)
	}
	if err == nil {
		err = s.mount(ctx)
	}
	if err != nil {
		s.PowerCut()
		return nil, err
	}
	return s, nil
}

// newPlatter makes the sparse backing file and its file system, straight
// on the file (no delay filter in the way).
func (s *Stack) newPlatter(ctx context.Context) error {
	f, err := safefs.CreateFile(s.platter(), 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(s.Parts.SizeBytes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if s.Parts.FS == "xfs" {
		_, err = s.run(ctx, "mkfs.xfs", "-q", "-f", s.platter())
	} else {
		// Initialise the inode tables and journal now, so no background
		// initialisation writes through the emulated tier later.
		_, err = s.run(ctx, "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", s.platter())
	}
	return err
}

// start serves the platter through nbdkit and nbdfuse and attaches a
// loop device with direct I/O (so the host page cache stays out of the
// chain and FLUSH reaches the cache filter).
func (s *Stack) start(ctx context.Context) error {
	if err := safefs.Own(s.fuseDir()); err != nil { // the mount point, checked again just before the mount
		return err
	}
	switch {
	case s.Parts.flashCache():
		// The same directory at every start: a non-volatile cache comes
		// back after a power cut with what it held.
		dir, err := s.flashDir()
		if err != nil {
			return err
		}
		s.cacheDir = dir
	case s.Parts.Cache != "":
		dir, err := safefs.PrivateTemp(s.Parts.CacheDir, cachePrefix)
		if err != nil {
			return fmt.Errorf("the lab's cache directory: %w", err)
		}
		s.cacheDir = dir
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	log, err := os.OpenFile(filepath.Join(s.Root, "nbdfuse.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644) // safefs: in calibra-lab, made or checked by MkdirOwn in Up
	if err != nil {
		return err
	}
	defer log.Close()
	args := append([]string{s.fuseFile(), "--command"}, s.Parts.serverArgs(exe, s.tools["nbdkit"].Path, s.platter(), s.cacheDir)...)
	if s.Parts.Served() {
		if args, err = s.startServer(exe, log); err != nil {
			return err
		}
	}
	cmd := s.tools["nbdfuse"].Command(args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = os.Environ()
	if s.cacheDir != "" && !s.Parts.Served() {
		cmd.Env = append(cmd.Env, "TMPDIR="+s.cacheDir) // where the cache filter keeps its file
	}
	// SIGTERM makes nbdfuse unmount and exit.
	if s.fuse, err = s.group.Start("nbdfuse", cmd, syscall.SIGTERM); err != nil {
		return err
	}
	if err := s.saveState(); err != nil {
		return err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, err := os.Stat(s.fuseFile()); err == nil && st.Size() > 0 {
			break
		}
		select {
		case <-s.fuse.Done():
			out, _ := os.ReadFile(filepath.Join(s.Root, "nbdfuse.log"))
			return fmt.Errorf("nbdfuse exited while starting: %s", lastLine(string(out)))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nbdfuse did not expose %s within 20 s", s.fuseFile())
		}
	}
	loop, err := s.run(ctx, "losetup", "--find", "--show", "--direct-io=on", s.fuseFile())
	if err != nil {
		return err
	}
	s.loop = strings.TrimSpace(loop)
	return s.saveState()
}

// check runs the file system check a machine runs after a crash; e2fsck
// -p exits 1 when it corrected something, which is a recovery, not a failure.
func (s *Stack) check(ctx context.Context) (string, error) {
	if s.Parts.FS == "xfs" {
		return "xfs replays its log at mount", nil
	}
	out, err := s.run(ctx, "e2fsck", "-p", s.loop)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return "e2fsck corrected errors: " + lastLine(out), nil
	}
	if err != nil {
		return "", err
	}
	return "clean", nil
}

func (s *Stack) mount(ctx context.Context) error {
	if err := safefs.Own(s.Mount); err != nil { // the mount point, checked again just before the mount
		return err
	}
	if _, err := s.run(ctx, "mount", "-t", s.Parts.FS, s.loop, s.Mount); err != nil {
		return err
	}
	// The managed server runs unprivileged and creates its directory here.
	return os.Chmod(s.Mount, 0o755)
}

func (s *Stack) saveState() error {
	st := state{Loop: s.loop, CacheDir: s.cacheDir}
	if s.fuse != nil {
		st.Pid = s.fuse.Pid()
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return writeRecord(statePath(s.Root), data)
}

// Record is what meta.storage.lab says about the stack.
func (s *Stack) Record() *results.Lab {
	p := s.Parts
	r := &results.Lab{Spec: p.Spec, FS: p.FS, SizeBytes: p.SizeBytes, Rate: p.Rate, ErrorRate: p.ErrorRate,
		ReadIOPS: p.ReadIOPS, WriteIOPS: p.WriteIOPS, Chain: p.Chain(), TornUnit: p.TornUnit, TornSeed: p.TornSeed}
	if p.RDelay > 0 || p.WDelay > 0 {
		r.ReadDelay, r.WriteDelay = ms(p.RDelay), ms(p.WDelay)
	}
	if p.Cache != "" {
		r.Cache, r.CacheOnRead, r.CacheDir = p.Cache, p.CacheOnRead, p.CacheDir
	}
	return r
}

// startServer starts calibra's NBD server on a new socket in calibra-lab
// (0600, safefs.ListenUnix), the listener passed as its fd 3, and returns
// nbdfuse's arguments: several connections to it (Parts.Connections).
func (s *Stack) startServer(exe string, log *os.File) ([]string, error) {
	// A socket a killed stack left: calibra-lab is calibra's own.
	if err := removeOwn(s.socket()); err != nil {
		return nil, err
	}
	l, err := safefs.ListenUnix(s.socket())
	if err != nil {
		return nil, err
	}
	f, err := l.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		l.Close()
		return nil, err
	}
	defer f.Close()
	args := s.Parts.serverArgs(exe, s.tools["nbdkit"].Path, s.platter(), s.cacheDir)
	torn, err := s.tornArgs()
	if err != nil {
		l.Close()
		return nil, err
	}
	args = append(args, torn...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = log, log, []*os.File{f}
	if s.server, err = s.group.Start("calibra lab serve", cmd, syscall.SIGTERM); err != nil {
		l.Close()
		return nil, err
	}
	s.listener = l
	return []string{"-C", strconv.Itoa(s.Parts.Connections()), s.fuseFile(), "--unix", s.socket()}, nil
}

// tornArgs are the server's flags for this start's torn cut, each start
// with a seed of its own (none when the stack tears nothing).
func (s *Stack) tornArgs() ([]string, error) {
	if s.Parts.TornUnit == 0 {
		return nil, nil
	}
	// A record found now is an earlier cut's, already read or never to
	// be: only this start's cut may be read after it.
	if err := removeOwn(s.tornPath()); err != nil {
		return nil, err
	}
	seed := s.Parts.TornSeed + s.starts
	s.starts++
	return []string{"--torn-unit", strconv.FormatInt(s.Parts.TornUnit, 10),
		"--torn-seed", strconv.FormatUint(seed, 10), "--torn-record", s.tornPath()}, nil
}

// Down takes the stack apart cleanly: unmount (which flushes the file
// system), flush the cache to the platter, detach the loop device, stop
// nbdfuse and nbdkit. The platter stays.
func (s *Stack) Down() error {
	var errs []error
	if err := unmount(s.Mount); err != nil {
		errs = append(errs, err)
	}
	if f, err := os.OpenFile(s.fuseFile(), os.O_RDWR|syscall.O_NOFOLLOW, 0); err == nil { // safefs: nbdfuse's file on calibra-lab/fuse, calibra's own
		// An NBD FLUSH: the write-back cache goes to the platter.
		if err := f.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("flush the lab's cache: %w", err))
		}
		f.Close()
	}
	if s.loop != "" {
		if _, err := s.run(context.Background(), "losetup", "-d", s.loop); err != nil {
			errs = append(errs, err)
		}
	}
	if s.fuse != nil {
		_, _ = s.run(context.Background(), "fusermount3", "-u", s.fuseDir())
		if err := s.fuse.Stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	// The server (calibra's, once nbdfuse has closed its connections, or
	// nbdkit, nbdfuse's child) finishes its own shutdown after nbdfuse; a
	// flash cache first destages what the platter lacks. Killed then, it
	// keeps that for the next start, as flash does.
	wait := 10 * time.Second
	if s.Parts.flashCache() {
		wait = 5 * time.Minute
	}
	for end := time.Now().Add(wait); time.Now().Before(end) && len(labProcs(s.Root)) > 0; {
		time.Sleep(100 * time.Millisecond)
	}
	for _, pid := range labProcs(s.Root) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		errs = append(errs, fmt.Errorf("the lab's NBD server (pid %d) did not exit within %s, killed", pid, wait))
	}
	if s.Parts.KeepsNothing() {
		// The next command finds the platter as it was before this one and
		// must say so, not silently build again.
		lost := fmt.Sprintf("the last command's lab (%s) kept nothing: its cache (cache=unsafe) is never written back, so what it wrote is not on the platter", s.Parts.Spec)
		errs = append(errs, writeRecord(lostPath(s.Root), []byte(lost)))
	}
	if s.Parts.flashCache() && s.cacheDir != "" && safefs.Own(s.cacheDir) != nil {
		// The server destaged everything and removed its cache: the
		// record would only name a place another account may take next.
		_ = removeOwn(filepath.Join(s.Root, flashPointer))
	}
	s.forget()
	return errors.Join(errs...)
}

// Kill is the instant of a power cut: the stack's server (and with it any
// cache it holds in memory) and nbdfuse get SIGKILL, and nothing more is
// written to the platter or a cache. It waits only for a torn cut, which
// the server makes before it dies (tearCut); PowerCut, after the
// database server is killed too, takes the rest apart. Killing the storage
// first matters: given even milliseconds, a destaging cache would write
// back what a power cut loses.
func (s *Stack) Kill() {
	// The server first: nbdfuse's death ends its connections, after which
	// it would destage its cache and exit cleanly. A torn cut is made in
	// it, over all its connections at once, before it goes.
	if s.server != nil {
		if s.Parts.TornUnit > 0 {
			s.tearCut()
		}
		s.server.Kill()
	}
	if s.fuse != nil {
		s.fuse.Kill()
	}
	for _, pid := range labProcs(s.Root) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// tearCut asks the lab's server for a torn cut (SIGUSR1: the writes in
// flight torn, recorded) and waits for it to exit; one that does not
// within 30 s is then killed, its writes whole or absent.
func (s *Stack) tearCut() {
	_ = syscall.Kill(s.server.Pid(), syscall.SIGUSR1)
	select {
	case <-s.server.Done():
	case <-time.After(30 * time.Second):
	}
}

// TakeTornRecord is what the last torn cut did (nil, nil when the stack
// tears nothing or its server made no record), removed once read.
func (s *Stack) TakeTornRecord() (*TornRecord, error) {
	if s.Parts.TornUnit == 0 {
		return nil, nil
	}
	data, err := safefs.ReadInput(context.Background(), s.tornPath(), maxTornRecord, fmt.Errorf("%s is larger than a torn cut writes it", s.tornPath()))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec TornRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", s.tornPath(), err)
	}
	_ = removeOwn(s.tornPath())
	return &rec, nil
}

// maxTornRecord bounds a torn cut's record: some 200,000 writes in flight.
const maxTornRecord = 16 << 20

// WriteTornRecord writes a torn cut's record where the stack reads it.
func WriteTornRecord(path string, rec TornRecord) error { return writeRecord(path, rec.JSON()) }

// PowerCut is a power failure of the stack: nbdkit and nbdfuse die at once
// (SIGKILL), taking the volatile cache with them; the file system, loop
// device and FUSE mount are then detached without flushing anything. The
// database server must be killed first. Up again with the same parts is
// the machine coming back.
func (s *Stack) PowerCut() {
	if s.server != nil {
		s.server.Kill() // first, as in Kill
		<-s.server.Done()
	}
	if s.fuse != nil {
		s.fuse.Kill() // its process group: nbdfuse and any nbdkit
		<-s.fuse.Done()
	}
	for _, pid := range labProcs(s.Root) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_, _ = s.run(context.Background(), "umount", "-l", s.Mount)
	if s.loop != "" {
		_, _ = s.run(context.Background(), "losetup", "-d", s.loop)
	}
	_, _ = s.run(context.Background(), "fusermount3", "-u", "-z", s.fuseDir())
	s.forget()
}

func (s *Stack) forget() {
	if s.cacheDir != "" && !s.Parts.flashCache() {
		removeCache(s.cacheDir) // a volatile cache dies with its server
	}
	if s.listener != nil {
		s.listener.Close() // removes the socket
	}
	s.fuse, s.server, s.listener, s.loop, s.cacheDir = nil, nil, nil, "", ""
	_ = removeOwn(statePath(s.Root))
}

// Restart brings the stack back on the same platter after a PowerCut:
// file system check, mount.
func (s *Stack) Restart(ctx context.Context) error {
	err := s.start(ctx)
	if err == nil {
		s.Fsck, err = s.check(ctx)
	}
	if err == nil {
		err = s.mount(ctx)
	}
	if err != nil {
		s.PowerCut()
	}
	return err
}

// Device is the loop device the file system is on ("" when down).
func (s *Stack) Device() string { return s.loop }

// unmount unmounts dir, retrying while it is busy (a server's last
// files closing), then detaching it lazily.
func unmount(dir string) error {
	var err error
	for i := 0; i < 20; i++ {
		if err = unix.Unmount(dir, 0); err == nil || errors.Is(err, unix.EINVAL) {
			return nil // EINVAL: not mounted
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if lerr := unix.Unmount(dir, unix.MNT_DETACH); lerr == nil {
		return fmt.Errorf("unmount %s: %v; detached it lazily", dir, err)
	}
	return fmt.Errorf("unmount %s: %w", dir, err)
}

// run runs one of the stack's tools, as the package's run.
func (s *Stack) run(ctx context.Context, name string, args ...string) (string, error) {
	return run(ctx, s.tools[name], args...)
}

// run runs a tool and returns its output; an error quotes its last line.
func run(ctx context.Context, prog proc.Program, args ...string) (string, error) {
	out, err := proc.Probe(prog.CommandContext(ctx, args...)).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", filepath.Base(prog.Name), strings.Join(args, " "), err, lastLine(string(out)))
	}
	return string(out), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// toolPackage is the Debian package of each tool the lab runs.
var toolPackage = map[string]string{
	"nbdfuse": "libnbd-bin", "fusermount3": "fuse3", "nbdkit": "nbdkit",
	"losetup": "mount", "mount": "mount", "umount": "mount",
	"mkfs.ext4": "e2fsprogs", "e2fsck": "e2fsprogs", "mkfs.xfs": "xfsprogs",
}

// flashDir is the flash cache's directory: the one this lab's record
// names when it is still there (a non-volatile cache comes back after a
// power cut with what it held), checked again, else a new private one
// (random name, 0700) in cache_dir, recorded.
func (s *Stack) flashDir() (string, error) {
	record := filepath.Join(s.Root, flashPointer)
	parent, err := filepath.Abs(s.Parts.CacheDir)
	if err != nil {
		return "", err
	}
	data, err := readRecord(record)
	switch {
	case err == nil:
		dir := string(data)
		if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
			break // destaged and removed at a clean stop, or lost at a reboot: a new one
		}
		if !filepath.IsAbs(dir) || filepath.Dir(dir) != parent || !strings.HasPrefix(filepath.Base(dir), cachePrefix) {
			return "", fault.Input(fmt.Sprintf("give cache_dir=%s to keep what that cache holds, or run 'calibra clean --path %s' to start again", filepath.Dir(dir), filepath.Dir(s.Root)),
				"the lab's flash cache from an earlier command is %s, not in the cache directory %s", dir, parent)
		}
		if err := safefs.Own(dir); err != nil {
			return "", fmt.Errorf("the lab's flash cache (recorded in %s): %w", record, err)
		}
		return dir, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	dir, err := safefs.PrivateTemp(parent, cachePrefix)
	if err != nil {
		return "", fmt.Errorf("the lab's cache directory: %w", err)
	}
	if err := writeRecord(record, []byte(dir)); err != nil {
		removeCache(dir)
		return "", err
	}
	return dir, nil
}

// removeCache removes a cache directory calibra made (safefs.PrivateTemp),
// by handle from its parent, and only while it is still calibra's own.
func removeCache(dir string) error {
	if err := safefs.Own(dir); err != nil {
		return err
	}
	return safefs.RemoveAll(filepath.Dir(dir), filepath.Base(dir))
}

// WrittenBytes is what the block device dev (a path in /dev) has been
// sent to write since it was attached: its stat's sectors written.
func WrittenBytes(dev string) (int64, error) {
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "stat"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if len(f) < 7 {
		return 0, fmt.Errorf("%s's stat has %d fields", dev, len(f))
	}
	sectors, err := strconv.ParseInt(f[6], 10, 64)
	return sectors * 512, err
}

// WritesInFlight is how many writes the block device dev has in flight.
func WritesInFlight(dev string) (int, error) {
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "inflight"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return 0, fmt.Errorf("%s's inflight is %q", dev, data)
	}
	return strconv.Atoi(f[1])
}
