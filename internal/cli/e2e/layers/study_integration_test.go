//go:build integration

package layers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/examples"
	"github.com/calibra-bench/calibra/internal/results"
)

// Every preset resolves, and its resolved form reads back the same.
func TestEveryPresetPlans(t *testing.T) {
	dir := t.TempDir()
	for _, name := range examples.Names() {
		code, out, stderr := clitest.Run(t, "plan", "--preset", name, "--path", dir)
		if code != 0 {
			t.Errorf("plan --preset %s: exit %d\n%s", name, code, stderr)
			continue
		}
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		code, again, stderr := clitest.Run(t, "plan", "--study", file)
		if code != 0 || again != out {
			t.Errorf("plan --study of the resolved %s: exit %d, differs: %v\n%s", name, code, again != out, stderr)
		}
	}
}

// Precedence: flags over the environment over the study file.
func TestStudyPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	study := "version: 1\ntarget: {path: /from/file, db_cache: 256MB}\nsteps:\n  - kind: oltp\n    users: 3\n"
	if err := os.WriteFile(file, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CALIBRA_PATH", "/from/env")
	t.Setenv("CALIBRA_DB_CACHE", "512MB")
	_, out, _ := clitest.Run(t, "plan", "--study", file, "--db-cache", "2GB", "--set", "oltp.users=7")
	for _, want := range []string{"path: /from/env", "db_cache: 2GB", "users: 7"} {
		if !strings.Contains(out, want) {
			t.Errorf("resolved study lacks %q:\n%s", want, out)
		}
	}
}

// TestStudyOnAManagedInstance runs a small study with a repeated timed run
// started cold, a ramp and thresholds, one of which fails: exit 3, and
// every repetition, the repeats' medians and the verdicts are kept. A
// device step comes first: iocal's points and the oltp windows state
// their share of it, the verdict weighs what reached the device, and the
// summary puts the share beside the figure (checkDeviceShare).
func TestStudyOnAManagedInstance(t *testing.T) {
	t.Parallel() // real servers and fio: they overlap their waits
	if testing.Short() {
		t.Skip("a minute of real PostgreSQL work; run without -short")
	}
	clitest.RequirePostgres(t)
	clitest.RequireFio(t)
	path := clitest.StorageDir(t)
	file := filepath.Join(t.TempDir(), "small.yaml")
	study := `version: 1
name: small
cold_start: true
target: {db_cache: 16MB}
steps:
  - kind: device
    specs: [8k-randread, 1m-seqwrite]
    qd: [1]
    size: 64MiB
    ramp: 0s
    runtime: 1s
  - kind: iocal
    size: 64MiB
    jobs: [1]
    tests: [random]
    warmup: 0s
    point: 1s
  - kind: oltp_build
    warehouses: 1
  - kind: oltp
    users: 2
    rampup: 1s
    duration: 3s
    rate_per_user: 40
    repeat: 2
  - kind: ramp
    name: to the SLA
    from: 1
    to: 2
    step: 1
    rampup: 1s
    duration: 2s
    sla: 10s
    fall: 99
thresholds:
  - oltp.nopm > 1
  - ramp.max_tps < 1
`
	if err := os.WriteFile(file, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	stderr := clitest.MustRun(t, 3, "run", "--study", file, "--path", path, "--out", out, "--progress", "plain")
	clitest.NoServerLeft(t, path)
	if !strings.Contains(stderr, "FAIL ramp.max_tps < 1") || strings.Index(stderr, "thresholds") > strings.Index(stderr, "  oltp ") {
		t.Errorf("the summary does not lead with the failed threshold:\n%s", stderr)
	}
	if !strings.Contains(stderr, "cold start: restarting the server with its files out of the OS page cache") || strings.Contains(stderr, "could not be evicted") {
		t.Errorf("no cold start between the repeats, or one that left files in the page cache:\n%s", stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, st := range r.Steps {
		kinds = append(kinds, st.Kind)
		if st.Status != results.StatusComplete || st.Kind != results.KindDevice && st.Observe == nil {
			t.Errorf("step %s: status %s, observe %v", st.Name, st.Status, st.Observe != nil)
		}
	}
	if got := strings.Join(kinds, ","); got != "device,iocal,oltp_build,oltp,oltp,ramp" {
		t.Fatalf("steps %s", got)
	}
	// The timed steps ran paced, as the study said (a check of what ran,
	// not how fast).
	if o, ok := r.Steps[3].Body.(*results.OLTP); !ok || o.RatePerUser != 40 {
		t.Errorf("the oltp step's body %+v: want rate_per_user 40", r.Steps[3].Body)
	}
	if r.Steps[4].Repeat != 2 || r.Steps[4].Repeats != 2 || r.Steps[3].StudyStep != 4 {
		t.Errorf("repeat marks: %+v", r.Steps[4].StepHeader)
	}
	if len(r.Repeats) != 1 || r.Repeats[0].N != 2 || r.Repeats[0].Metrics[0].Name != "nopm" || len(r.Repeats[0].Metrics[0].Values) != 2 {
		t.Errorf("repeats: %+v", r.Repeats)
	}
	if len(r.Verdicts) != 2 || !r.Verdicts[0].OK || r.Verdicts[1].OK || r.Verdicts[0].Reason != "median of 2 repeats" {
		t.Errorf("verdicts: %+v", r.Verdicts)
	}
	ramp := r.Steps[5].Body.(*results.Ramp)
	if r.Steps[5].Name != "to the SLA" || len(ramp.Steps) != 2 || ramp.MaxTPS == nil || *ramp.MaxTPS <= 0 ||
		ramp.MaxUsersWithinSLA == nil || *ramp.MaxUsersWithinSLA != 2 || ramp.StopReason != "last_load" || ramp.ARTAtMs != nil ||
		ramp.SLAReached == nil || *ramp.SLAReached || ramp.UsersWithinSLA() != "≥ 2 (SLA not reached)" {
		t.Errorf("ramp: %+v", ramp)
	}
	for i, st := range ramp.Steps {
		if st.Users != i+1 || st.TPS <= 0 || st.CPUBusyPct == nil || st.LittleUsers == nil {
			t.Errorf("ramp load %d: %+v", i, st)
		}
	}
	if data, err := os.ReadFile(filepath.Join(out, "study.yaml")); err != nil || !strings.Contains(string(data), "name: to the SLA") {
		t.Errorf("study.yaml: %v\n%s", err, data)
	}
	if _, err := os.Stat(filepath.Join(out, "raw", "step06-ramp-2u-latency.hlog")); err != nil {
		t.Errorf("the ramp's histograms: %v", err)
	}
	checkDeviceShare(t, r, stderr)
}

// A study's storage limit throttles fio as it would the server: 4 KiB
// random reads capped at 2000 IOPS measure no more than that.
func TestStudyStorageLimitThrottlesFio(t *testing.T) {
	t.Parallel()
	clitest.RequireFio(t)
	path := clitest.StorageDir(t)
	file := filepath.Join(t.TempDir(), "limit.yaml")
	study := "version: 1\ntarget: {storage_limit: {read_iops: 2000}}\nsteps:\n" +
		"  - {kind: device, specs: [4k-randread], qd: [16], size: 64MiB, ramp: 1s, runtime: 3s}\n"
	if err := os.WriteFile(file, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := clitest.Run(t, "run", "--study", file, "--path", path, "--out", out, "--progress", "none")
	if code == 2 && strings.Contains(stderr, "cannot be applied") {
		t.Skipf("block-I/O limits cannot be applied here (not root, or no blkio/io controller): %s", stderr)
	}
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Limits == nil || r.Meta.Limits.StorageLimit["read_iops"] != "2000" {
		t.Errorf("meta.limits %+v", r.Meta.Limits)
	}
	d := r.Steps[0].Body.(*results.Device)
	if iops := d.Points[0].IOPS; iops <= 0 || iops > 2000*1.1 {
		t.Errorf("4k-randread at qd 16 under a 2000 IOPS limit: %.0f IOPS", iops)
	}
}

// Ctrl-C in the middle of a study keeps the steps already done and the one
// cut short, marks the run interrupted, exits 130 and leaves no server.
func TestStudyInterruptKeepsTheStepsDone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs on a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	path := clitest.StorageDir(t)
	file := filepath.Join(t.TempDir(), "cut.yaml")
	study := "version: 1\nsteps:\n  - {kind: oltp_build, warehouses: 1}\n  - {kind: oltp, users: 2, rampup: 1s, duration: 5m, rate_per_user: 40}\n" +
		"  - {kind: ramp, from: 1, to: 2, duration: 5s}\n"
	if err := os.WriteFile(file, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, stderr := clitest.InterruptChild(t, "study step 2 of 3", 4*time.Second, "run", "--study", file, "--path", path,
		"--out", out, "--progress", "plain")
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	clitest.NoServerLeft(t, path)
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range r.Steps {
		got = append(got, st.Kind+":"+st.Status)
	}
	if r.Status != results.StatusInterrupted || strings.Join(got, ",") != "oltp_build:complete,oltp:interrupted" {
		t.Errorf("status %s, steps %v", r.Status, got)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report of the interrupted run: %v", err)
	}
}
