package device

import (
	"fmt"
	"strings"
	"time"
)

// Job is one fio run: a spec at one queue depth over every worker of every
// target, reported as one group.
type Job struct {
	Title   string // the job file's comment line
	Engine  string
	Direct  bool
	Spec    Spec
	QD      int
	Ramp    time.Duration
	Runtime time.Duration // 0: not time-based, each worker does its region once
	Fsync   bool          // flush to stable storage when done
	Loops   int           // passes over the region when not time-based; 0 or 1: one
	// IOPSLog, when set, has fio log IOPS averaged over each second to
	// IOPSLog_iops.N.log (one file per worker) in its working directory.
	IOPSLog string
	Seed    uint64
	Size    int64 // bytes per worker
	Workers int   // per target
	Targets []Target
}

// JobFile writes the job as a fio job file. Sizes are plain bytes because
// fio reads unit suffixes in its own way (kb_base). Every worker is its own
// section, with its file and offset spelled out, so the file says exactly
// what ran.
func (j Job) JobFile() string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("; %s", j.Title)
	line("[global]")
	line("ioengine=%s", j.Engine)
	line("direct=%d", btoi(j.Direct))
	line("rw=%s", rw(j.Spec))
	if j.Spec.ReadPct > 0 && j.Spec.ReadPct < 100 {
		line("rwmixread=%d", j.Spec.ReadPct)
	}
	if j.Spec.RandomPct > 0 && j.Spec.RandomPct < 100 {
		line("percentage_random=%d", j.Spec.RandomPct)
	}
	line("bs=%d", j.Spec.BlockSize)
	if j.Spec.RandomPct > 0 {
		if j.Spec.Align != j.Spec.BlockSize {
			line("blockalign=%d", j.Spec.Align)
		}
		// A random map costs CPU and, once every block was touched, changes
		// the access pattern; a timed run wants neither.
		line("norandommap=1")
	}
	line("iodepth=%d", j.QD)
	line("size=%d", j.Size)
	if j.Runtime > 0 {
		line("time_based=1")
		line("ramp_time=%s", fioTime(j.Ramp))
		line("runtime=%s", fioTime(j.Runtime))
	}
	if j.Loops > 1 {
		line("loops=%d", j.Loops)
	}
	if j.Fsync {
		line("end_fsync=1")
	}
	if j.IOPSLog != "" {
		line("write_iops_log=%s", j.IOPSLog)
		line("log_avg_msec=1000")
	}
	// A seed per run: fresh offsets each run (so an array cache does not
	// learn them), yet the same ones when the study is run again. fio
	// (3.33) seeds its offsets from randseed only with randrepeat=0; with
	// its default every run wrote the same blocks in the same order.
	line("randrepeat=0")
	line("randseed=%d", j.Seed)
	line("group_reporting=1")
	// Count I/O errors and go on, as Iometer's error column does.
	line("continue_on_error=io")
	for ti, t := range j.Targets {
		for w := range j.Workers {
			file, offset := t.worker(w, j.Size)
			line("")
			line("[t%dw%d]", ti, w)
			line("filename=%s", strings.ReplaceAll(file, ":", `\:`)) // fio splits filenames at ':'
			if offset > 0 {
				line("offset=%d", offset)
			}
		}
	}
	return b.String()
}

// rw maps a spec's read and random shares onto fio's rw option.
func rw(s Spec) string {
	dir := "rw"
	switch s.ReadPct {
	case 100:
		dir = "read"
	case 0:
		dir = "write"
	}
	if s.RandomPct > 0 {
		return "rand" + dir
	}
	return dir
}

func fioTime(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
