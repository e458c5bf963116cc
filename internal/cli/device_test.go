package cli

import (
	"bytes"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/device"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// readOnlyDir is a directory calibra may not write to: permission bits for
// a normal user, a read-only mount for root, who ignores them ("" if
// neither can be had).
func readOnlyDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).Run(); err != nil {
		return ""
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

// fio that fails at run time: exit 1, a failed run with fio's reason, the
// job files and logs kept, nothing left under --path.
func TestDeviceFioFails(t *testing.T) {
	target, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	code, _, stderr := clitest.Run(t, "device", "--path", target, "--fio", clitest.FakeFio(t, "fio-3.33"), "--out", out, "--progress", "none")
	want := "no fio ioengine could read " + target + ": io_uring: fio probe-io_uring wrote no report (exit status 1): fio: pretend failure"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr, want)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusFailed || len(r.Steps) != 1 || r.Steps[0].Status != results.StatusFailed {
		t.Errorf("status %s, steps %+v", r.Status, r.Steps)
	}
	for _, f := range []string{"probe-psync.fio", "probe-psync.log"} {
		if _, err := os.Stat(filepath.Join(out, "raw", f)); err != nil {
			t.Errorf("raw/: %v", err)
		}
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("left under --path: %v", entries)
	}
}

func TestDeviceBadInput(t *testing.T) {
	target := t.TempDir()
	readOnly := readOnlyDir(t)
	emptyPath := t.TempDir()
	tests := []struct {
		name string
		args []string
		want []string // sentences, each naming the problem then the fix
		env  map[string]string
		skip bool
	}{
		{name: "unknown spec", args: []string{"--specs", "4k-randread,4k-randrite"},
			want: []string{`"4k-randrite" is not a known access spec; use one of 4k-randread, 8k-randrw70`}},
		{name: "bad custom spec", args: []string{"--specs", "mine:bs=3k,read=101"},
			want: []string{`the custom spec "mine:bs=3k,read=101" has a bad read: "101" is not a whole percentage from 0 to 100; write it as NAME:bs=SIZE`}},
		{name: "queue depth", args: []string{"--qd", "1,0"},
			want: []string{`--qd "1,0" holds 0, which is not positive; give whole numbers of 1 or more`}},
		{name: "workers", args: []string{"--workers", "0"},
			want: []string{"--workers 0 is not positive; give a whole number of 1 or more"}},
		{name: "size zero", args: []string{"--size", "0"},
			want: []string{"--size 0 is not positive; give a size such as 256MiB"}},
		{name: "size not a size", args: []string{"--size", "lots"},
			want: []string{`--size "lots" is not a size such as 4k, 256MiB or 1g; give a size such as 256MiB`}},
		{name: "size below a block", args: []string{"--size", "64k", "--specs", "1m-seqread"},
			want: []string{"--size 64k is smaller than one block of 1m-seqread; give a --size of at least 1 MiB"}},
		{name: "runtime", args: []string{"--runtime", "0s"},
			want: []string{"--runtime 0s is not positive; give a duration such as 30s"}},
		{name: "runtime too short", args: []string{"--runtime", "200ms"},
			want: []string{"--runtime 200ms is shorter than 1s; give 1s or more"}},
		{name: "ramp", args: []string{"--ramp", "-1s"},
			want: []string{"--ramp -1s is negative; give 0s or a duration"}},
		{name: "repeat", args: []string{"--repeat", "0"},
			want: []string{"--repeat 0 is not positive; give a whole number of 1 or more"}},
		{name: "max latency", args: []string{"--max-latency", "0s"},
			want: []string{"--max-latency 0s is not positive; give a duration such as 1ms"}},
		{name: "ioengine", args: []string{"--ioengine", "posixaio"},
			want: []string{`--ioengine "posixaio" is not an ioengine calibra drives; use auto, io_uring, libaio, psync`}},
		{name: "no room", args: []string{"--size", "1000TiB"},
			want: []string{"free but calibra device needs about 1000.0 TiB; free some space or choose another --path"}},
		{name: "no room on one file system for two targets", args: []string{"--path", target + "," + emptyPath, "--size", "600TiB"},
			want: []string{"needs about 1.2 PiB; free some space"}},
		{name: "missing path", args: []string{"--path", filepath.Join(target, "nope")},
			want: []string{"the path " + filepath.Join(target, "nope") + " does not exist; create it or choose another --path"}},
		{name: "read-only path", args: []string{"--path", readOnly}, skip: readOnly == "",
			want: []string{"the path " + readOnly + " is not writable", "choose a --path you can write to"}},
		{name: "target twice", args: []string{"--path", target, "--path", target + "/."},
			want: []string{"--path names " + target + "/. twice; give each target once"}},
		{name: "allow-destroy of no target", args: []string{"--allow-destroy", "/dev/null"},
			want: []string{"--allow-destroy /dev/null is not one of the --path targets; name a file or block device also given to --path"}},
		{name: "a database", args: []string{"--dsn", "postgres://x@y/z"},
			want: []string{"calibra device measures the storage under --path and uses no database (--dsn); drop --dsn"}},
		{name: "fio missing", args: []string{"--fio", "/nonexistent/fio"},
			want: []string{"--fio /nonexistent/fio is not an executable program; install fio 3.0 or newer (Debian/Ubuntu: apt-get install fio"}},
		{name: "fio not on PATH", env: map[string]string{"PATH": emptyPath},
			want: []string{"fio was not found on PATH; install fio 3.0 or newer (Debian/Ubuntu: apt-get install fio"}},
		{name: "fio too old", args: []string{"--fio", clitest.FakeFio(t, "fio-2.2.10")},
			want: []string{"is fio-2.2.10, older than the fio 3.0 calibra needs; install fio 3.0 or newer"}},
		{name: "every problem at once", args: []string{"--qd", "0", "--workers", "-1", "--specs", "nope"},
			want: []string{"--qd \"0\" holds 0", "--workers -1 is not positive", `"nope" is not a known access spec`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip {
				t.Skip("no read-only directory: root needs a read-only mount")
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"device", "--path", target, "--out", out, "--progress", "none"}, tt.args...)
			code, stdout, stderr := clitest.Run(t, args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !strings.HasPrefix(line, "calibra: ") {
					t.Errorf("stderr line %q is not a calibra sentence", line)
				}
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("bad input left the run directory %s behind", out)
			}
			if entries, _ := os.ReadDir(target); len(entries) != 0 {
				t.Errorf("bad input left %v under --path", entries)
			}
		})
	}
}

// The acceptance command's shape, tiny: two specs at two depths.
func TestDeviceRunsFio(t *testing.T) {
	t.Parallel() // real servers and fio: they overlap their waits
	clitest.RequireFio(t)
	target, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	code, _, stderr := clitest.Run(t, "device", "--path", target, "--specs", "4k-randread,1m-seqwrite", "--qd", "1,4",
		"--runtime", "1s", "--ramp", "0s", "--size", "16MiB", "--out", out, "--progress", "plain")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusComplete || len(r.Steps) != 1 || r.Steps[0].Kind != results.KindDevice {
		t.Fatalf("status %s, steps %+v", r.Status, r.Steps)
	}
	d := r.Steps[0].Body.(*results.Device)
	if len(d.Points) != 4 {
		t.Fatalf("%d points, want 4", len(d.Points))
	}
	for _, p := range d.Points {
		if p.IOPS <= 0 || p.MBps <= 0 || p.LatUs == nil || p.LatUs.P99 <= 0 || p.Errors != 0 {
			t.Errorf("point %s qd %d: iops %v mbps %v lat %+v errors %d", p.Spec, p.QD, p.IOPS, p.MBps, p.LatUs, p.Errors)
		}
		for _, name := range p.Raw {
			for _, ext := range []string{".fio", ".json"} {
				if _, err := os.Stat(filepath.Join(out, "raw", name+ext)); err != nil {
					t.Errorf("raw/: %v", err)
				}
			}
		}
	}
	if d.FioVersion == "" || d.IOEngine == "" || len(d.Specs) != 2 {
		t.Errorf("fio %q, ioengine %q, %d specs", d.FioVersion, d.IOEngine, len(d.Specs))
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("test files left under --path: %v", entries)
	}
	for _, want := range []string{"device: point 4/4 1m-seqwrite qd 4:", "p99 ≤ 1.00 ms  4k-randread"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// The first SIGINT stops fio, keeps the points measured, removes the test
// files and exits 130. calibra runs as a child (the test binary, see
// TestMain) to get a real signal.
func TestDeviceInterrupt(t *testing.T) {
	t.Parallel() // real servers and fio: they overlap their waits
	clitest.RequireFio(t)
	if testing.Short() {
		t.Skip("interrupts a run (-short)")
	}
	target, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	// The pause takes the signal into the second run.
	code, stderr := clitest.InterruptChild(t, "device: point 1/3", 500*time.Millisecond, "device", "--path", target,
		"--specs", "4k-randread", "--qd", "1,2,4", "--runtime", "2s", "--ramp", "0s", "--size", "16MiB",
		"--out", out, "--progress", "plain")
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusInterrupted || len(r.Steps) != 1 || r.Steps[0].Status != results.StatusInterrupted {
		t.Fatalf("status %s, steps %+v", r.Status, r.Steps)
	}
	if d := r.Steps[0].Body.(*results.Device); len(d.Points) != 1 || d.Points[0].IOPS <= 0 {
		t.Errorf("points %+v, want the one measured before the signal", d.Points)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("test files left under --path: %v", entries)
	}
	if pids := fioProcesses(t, out); len(pids) > 0 {
		t.Errorf("fio still runs: %v", pids)
	}
}

// fioProcesses lists processes whose command line names dir.
func fioProcesses(t *testing.T, dir string) []string {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []string
	for _, c := range cmdlines {
		b, err := os.ReadFile(c)
		if err == nil && bytes.Contains(b, []byte("fio")) && bytes.Contains(b, []byte(dir)) {
			pids = append(pids, filepath.Base(filepath.Dir(c)))
		}
	}
	return pids
}

// A loop device stands in for a raw disk: writing needs --allow-destroy.
func TestDeviceBlockDevice(t *testing.T) {
	t.Parallel()
	clitest.RequireFio(t)
	if testing.Short() {
		t.Skip("not short")
	}
	loop := testenv.LoopDevice(t, 64<<20)

	args := []string{"device", "--path", loop, "--specs", "4k-randread,8k-randwrite", "--qd", "2",
		"--workers", "2", "--size", "16MiB", "--runtime", "1s", "--ramp", "0s", "--progress", "none"}
	code, _, stderr := clitest.Run(t, append(args, "--out", filepath.Join(t.TempDir(), "run"))...)
	if want := "the specs 8k-randwrite would overwrite the block device " + loop + "; pass --allow-destroy " + loop; code != 2 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, want)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr = clitest.Run(t, append(args, "--out", out, "--allow-destroy", loop)...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Steps[0].Body.(*results.Device)
	if len(d.Points) != 2 || d.Targets[0].Kind != device.KindBlock || r.Meta.Storage.Device != loop {
		t.Errorf("points %d, targets %+v, storage %+v", len(d.Points), d.Targets, r.Meta.Storage)
	}
	for _, p := range d.Points {
		if p.IOPS <= 0 || p.Errors != 0 || p.Workers != 2 {
			t.Errorf("point %+v", p)
		}
	}
}
