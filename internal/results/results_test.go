package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestStepKeysAreFlatAndRoundTrip(t *testing.T) {
	nopm := 1234.5
	st := Step{StepHeader: StepHeader{Kind: KindOLTP, Name: "oltp", Status: StatusComplete,
		StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		Body: &OLTP{Warehouses: 2, Users: 4, NOPM: &nopm, Transactions: map[string]TxStats{"new_order": {Count: 10}}}}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]any
	if err := json.Unmarshal(data, &flat); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "status", "warehouses", "nopm", "tpm_db", "transactions"} {
		if _, ok := flat[k]; !ok {
			t.Errorf("step JSON lacks the top-level key %q: %s", k, data)
		}
	}
	if flat["tpm_db"] != nil {
		t.Errorf("an unmeasured tpm_db must be null, got %v", flat["tpm_db"])
	}
	var back Step
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, st) {
		t.Fatalf("round trip changed the step:\n got %+v\nwant %+v", back, st)
	}
}

func TestCreateRefusesADirectoryThatHoldsARun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	d, err := Create(out, &Run{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(StatusComplete, nil); err != nil {
		t.Fatal(err)
	}
	r, err := Load(out)
	if err != nil || r.Status != StatusComplete || r.Schema != Schema {
		t.Fatalf("Load = %+v, %v", r, err)
	}
	_, err = Create(out, &Run{})
	if err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Fatalf("Create over an existing run: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(out, ".results.json.tmp*"))
	if len(left) > 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(out, "raw")); err != nil {
		t.Fatal("the run directory has no raw/")
	}
}

// A relative run directory is kept as an absolute path, so that programs
// started in another directory write into it.
func TestCreateMakesTheRunDirectoryAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	d, err := Create(filepath.Join("runs", "a"), &Run{})
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(d.Path) || !filepath.IsAbs(d.File("raw")) {
		t.Errorf("run directory %s is not absolute", d.Path)
	}
}

func TestRampSaysWhenTheSLAWasNotReached(t *testing.T) {
	eight, yes, no := 8, true, false
	for _, c := range []struct {
		r    Ramp
		want string
	}{
		{Ramp{}, "n/a"},
		{Ramp{MaxUsersWithinSLA: &eight, SLAReached: &yes}, "8"},
		{Ramp{MaxUsersWithinSLA: &eight, SLAReached: &no}, "≥ 8 (SLA not reached)"},
	} {
		if got := c.r.UsersWithinSLA(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
	if got := (&Ramp{StopReason: "throughput_fell"}).StopReasonText(); got != "throughput fell below the best load's" {
		t.Errorf("stop reason %q", got)
	}
}

// Two commands started in the same second get two run directories.
func TestDefaultPathNeverReusesARunDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	at := time.Date(2026, 11, 22, 18, 47, 9, 0, time.UTC)
	first, err := DefaultPath(at, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(first, &Run{}); err != nil {
		t.Fatal(err)
	}
	second, err := DefaultPath(at, "x")
	if err != nil {
		t.Fatal(err)
	}
	if second == first || filepath.Base(second) != "20261122T184709Z_x-2" {
		t.Fatalf("second path %s, first %s", second, first)
	}
}
