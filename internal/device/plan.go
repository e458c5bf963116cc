package device

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/fault"
)

// DefaultQDs is the queue-depth sweep when none is given.
const DefaultQDs = "1,2,4,8,16,32"

// Run is one fio run of a sweep: a spec at one queue depth, one repeat.
type Run struct {
	Index   int // position in the sweep, from 0
	Point   int // the (spec, queue depth) point it belongs to, from 0
	Spec    Spec
	QD      int
	Repeat  int // from 1
	Repeats int
}

// Name names the run's files under raw/, in sweep order.
func (r Run) Name() string {
	name := fmt.Sprintf("%03d-%s-qd%d", r.Index+1, r.Spec.Name, r.QD)
	if r.Repeats > 1 {
		name += fmt.Sprintf("-r%d", r.Repeat)
	}
	return name
}

// Plan lists a sweep's runs: each spec in the order given, each queue depth,
// and the repeats of a point back to back, so that an interrupted sweep
// leaves whole points behind it.
func Plan(specs []Spec, qds []int, repeats int) []Run {
	var runs []Run
	point := 0
	for _, s := range specs {
		for _, qd := range qds {
			for rep := 1; rep <= repeats; rep++ {
				runs = append(runs, Run{Index: len(runs), Point: point, Spec: s, QD: qd, Repeat: rep, Repeats: repeats})
			}
			point++
		}
	}
	return runs
}

// ParseQDs reads a comma-separated list of queue depths.
func ParseQDs(list string) ([]int, error) {
	fix := "give whole numbers of 1 or more, e.g. --qd 1,2,4,8,16,32"
	var qds []int
	seen := map[int]bool{}
	for _, tok := range strings.Split(list, ",") {
		qd, err := strconv.Atoi(strings.TrimSpace(tok))
		if err != nil {
			return nil, fault.Input(fix, "--qd %q holds %q, not a whole number", list, tok)
		}
		if qd <= 0 {
			return nil, fault.Input(fix, "--qd %q holds %d, which is not positive", list, qd)
		}
		if seen[qd] {
			return nil, fault.Input("list each queue depth once", "--qd %q lists %d twice", list, qd)
		}
		seen[qd] = true
		qds = append(qds, qd)
	}
	return qds, nil
}
