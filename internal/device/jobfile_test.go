package device

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/golden"
)

// Every built-in spec's job: two workers on a directory (own files) and on
// a block device (own regions), with a ':' in a path that fio must not split.
func TestJobFileBuiltins(t *testing.T) {
	targets := []Target{{Path: "/mnt/array:1", Kind: KindDir}, {Path: "/dev/sdb", Kind: KindBlock, Destroy: true}}
	for _, s := range Builtin {
		t.Run(s.Name, func(t *testing.T) {
			job := Job{Title: "calibra device: " + s.Name + " at queue depth 8", Engine: "io_uring", Direct: true,
				Spec: s, QD: 8, Ramp: 10 * time.Second, Runtime: 300 * time.Second, Seed: 7,
				Size: 5 << 30, Workers: 2, Targets: targets}
			golden.Check(t, filepath.Join("testdata", "jobs", s.Name+".fio"), []byte(job.JobFile()))
		})
	}
}

func TestJobFileShapes(t *testing.T) {
	dir := []Target{{Path: "/d", Kind: KindDir}}
	tests := []struct {
		name       string
		job        Job
		has, lacks []string
	}{
		{"partly random mix", Job{Spec: Spec{BlockSize: 16384, ReadPct: 50, RandomPct: 30, Align: 16384}, Runtime: time.Second, Workers: 1, Targets: dir},
			[]string{"rw=randrw\n", "rwmixread=50\n", "percentage_random=30\n", "norandommap=1\n"}, []string{"blockalign"}},
		{"sequential mix", Job{Spec: Spec{BlockSize: 4096, ReadPct: 70, Align: 4096}, Runtime: time.Second, Workers: 1, Targets: dir},
			[]string{"rw=rw\n", "rwmixread=70\n"}, []string{"norandommap", "percentage_random"}},
		{"sub-second times", Job{Spec: Spec{BlockSize: 4096, ReadPct: 100}, Ramp: 1500 * time.Millisecond, Runtime: 2 * time.Second, Workers: 1, Targets: dir},
			[]string{"ramp_time=1500ms\n", "runtime=2s\n", "time_based=1\n"}, nil},
		{"not time-based, flushed", Job{Spec: Spec{BlockSize: 1 << 20}, Workers: 3, Size: 1 << 20, Fsync: true, Targets: []Target{{Path: "/f", Kind: KindFile, Destroy: true}}},
			[]string{"rw=write\n", "end_fsync=1\n", "[t0w2]\nfilename=/f\noffset=2097152\n"}, []string{"time_based", "ramp_time", "runtime", "loops", "write_iops_log"}},
		{"preconditioning, twice over", Job{Spec: Spec{BlockSize: 128 << 10}, Workers: 1, Size: 1 << 20, Loops: 2, Targets: dir},
			[]string{"rw=write\n", "bs=131072\n", "loops=2\n"}, []string{"time_based"}},
		{"per-second IOPS log", Job{Spec: Spec{BlockSize: 4096, ReadPct: 0, RandomPct: 100}, Runtime: time.Second, Workers: 1, IOPSLog: "001-r01", Targets: dir},
			[]string{"write_iops_log=001-r01\n", "log_avg_msec=1000\n"}, nil},
		{"buffered", Job{Spec: Spec{BlockSize: 4096, ReadPct: 100}, Workers: 1, Targets: dir},
			[]string{"direct=0\n", "filename=/d/calibra-device/w0\n"}, []string{"offset="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.job.JobFile()
			for _, s := range tt.has {
				if !strings.Contains(got, s) {
					t.Errorf("job file lacks %q:\n%s", s, got)
				}
			}
			for _, s := range tt.lacks {
				if strings.Contains(got, s) {
					t.Errorf("job file has %q:\n%s", s, got)
				}
			}
		})
	}
}
