package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/study"
)

// A run that finds no managed instance under --path builds its schema
// first: the space that build needs is checked as 'oltp build' checks it,
// before anything is made (an unchecked run of 99999999 warehouses grew to
// 13 GB before it was stopped).
func TestRunChecksTheSpaceOfItsImplicitBuild(t *testing.T) {
	for _, c := range []struct {
		name string
		plan func(*Config) (Needs, StepFunc, error)
		want string
	}{
		{"oltp run", func(c *Config) (Needs, StepFunc, error) {
			l := OLTPLoad{Build: OLTPBuild{Warehouses: 99999999, Workers: 1}, WarehousesSet: true, Mode: DefaultOLTPMode,
				Profile: DefaultOLTPProfile, Keying: "off", Driver: DriverAuto, Duration: 1}
			return PlanOLTPRun(c, l, 4)
		}, "oltp run, which makes a build of 99999999 warehouses first, needs about"},
		{"oltp ramp", func(c *Config) (Needs, StepFunc, error) {
			l := OLTPLoad{Build: OLTPBuild{Warehouses: 99999999, Workers: 1}, WarehousesSet: true, Mode: DefaultOLTPMode,
				Profile: DefaultOLTPProfile, Keying: "off", Driver: DriverAuto, Duration: 1}
			return PlanRamp(c, Ramp{Load: l, From: 1, To: 2, By: 1, SLA: 1, SLAMetric: DefaultSLAMetric, Fall: 5})
		}, "oltp ramp, which makes a build of 99999999 warehouses first, needs about"},
		{"dss power", func(c *Config) (Needs, StepFunc, error) {
			return PlanDSSRun(c, DSSRun{Build: DSSBuild{SF: 90000, SFGiven: true, Workers: 1}, Test: "power", Streams: 1})
		}, "dss power, which makes a build at scale factor 90000 first, needs about"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "path")
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := &Config{Target: study.Target{Path: path}, Out: filepath.Join(root, "run"), Progress: "none"}
			needs, body, err := c.plan(cfg)
			if err != nil {
				t.Fatalf("planned: %v", err)
			}
			ran := func(context.Context, *Session) ([]results.Step, error) {
				t.Error("the step ran")
				return body(context.Background(), nil)
			}
			err = Env{Stdout: io.Discard, Stderr: io.Discard, Group: proc.NewGroup()}.Run(context.Background(), c.name, cfg, needs, ran)
			if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("run: %v (exit %d); want one sentence with %q", err, fault.Code(err), c.want)
			}
			for _, dir := range []string{path, root} {
				if ents, _ := os.ReadDir(dir); len(ents) != map[string]int{path: 0, root: 1}[dir] {
					t.Errorf("%s holds %d entries after the refusal", dir, len(ents))
				}
			}
		})
	}
}

// The build's space is checked before the run only when no managed data
// directory lies under --path (its first instance's with --instances);
// otherwise the schema may be there, and the run checks it before it
// builds.
func TestManagedDataUnder(t *testing.T) {
	for _, c := range []struct {
		engine    string
		instances int
		dirs      []string
		want      bool
	}{
		{"postgresql", 0, nil, false},
		{"postgresql", 0, []string{"calibra-runs", "calibra-device"}, false},
		{"postgresql", 0, []string{"calibra-pg"}, true},
		{"postgresql", 0, []string{"calibra-mariadb"}, false},
		{"mariadb", 0, []string{"calibra-mariadb"}, true},
		{"mariadb", 0, []string{"calibra-mariadb-galera-1"}, true},
		{"postgresql", 3, []string{"calibra-pg"}, false},
		{"postgresql", 3, []string{"calibra-instances/1/calibra-pg"}, true},
	} {
		path := t.TempDir()
		for _, d := range c.dirs {
			if err := os.MkdirAll(filepath.Join(path, d), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		cfg := &Config{Target: study.Target{Path: path, Engine: c.engine, Instances: c.instances}}
		if got := managedDataUnder(cfg); got != c.want {
			t.Errorf("%s, %d instances, %v under --path: %v, want %v", c.engine, c.instances, c.dirs, got, c.want)
		}
	}
}
