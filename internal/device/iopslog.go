package device

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/safefs"
)

// IntervalIOPS is a run's IOPS per second from fio's IOPS logs (one file
// per worker, log_avg_msec=1000): every worker and direction summed per
// second, and the writes alone, both in order from the first second.
type IntervalIOPS struct {
	All, Writes []float64
}

// maxLogSeconds bounds a log's length: a week of seconds (runner.MaxWindow).
const maxLogSeconds = 7 * 24 * 3600

// readIOPSLogs reads the logs fio wrote for the run name under dir
// (name_iops.N.log). Each line is "msec, iops, direction, bs, offset";
// a line's second is its time rounded to the nearest second. No logs
// read as no intervals.
func readIOPSLogs(dir, name string) (IntervalIOPS, error) {
	files, err := filepath.Glob(filepath.Join(dir, name+"_iops.*.log"))
	if err != nil {
		return IntervalIOPS{}, err
	}
	var out IntervalIOPS
	for _, f := range files {
		if err := out.add(f); err != nil {
			return IntervalIOPS{}, err
		}
	}
	return out, nil
}

func (iv *IntervalIOPS) add(file string) error {
	// fio wrote it in calibra's own directory; read all the same as any
	// input is: a link or a FIFO there is refused, not followed or waited on.
	fh, err := safefs.OpenInput(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for line := 1; sc.Scan(); line++ {
		f := strings.Split(sc.Text(), ",")
		if len(f) < 3 {
			continue
		}
		ms, err1 := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
		v, err2 := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
		dir := strings.TrimSpace(f[2])
		if err1 != nil || err2 != nil || ms < 0 || v < 0 {
			return fmt.Errorf("%s:%d is not an IOPS log line: %q", filepath.Base(file), line, sc.Text())
		}
		sec := int((ms + 500) / 1000)
		if sec > maxLogSeconds {
			return fmt.Errorf("%s:%d is %d ms into the run, past a week", filepath.Base(file), line, ms)
		}
		i := max(sec-1, 0) // the second ending at 1000 ms is the first
		for len(iv.All) <= i {
			iv.All, iv.Writes = append(iv.All, 0), append(iv.Writes, 0)
		}
		iv.All[i] += v
		if dir == "1" {
			iv.Writes[i] += v
		}
	}
	return sc.Err()
}

// Append adds a later run's seconds after these.
func (iv *IntervalIOPS) Append(o IntervalIOPS) {
	iv.All = append(iv.All, o.All...)
	iv.Writes = append(iv.Writes, o.Writes...)
}
