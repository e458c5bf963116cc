package study

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Threshold is a declared target on a metric, e.g. "oltp.nopm > 20000".
type Threshold struct {
	Expr   string
	Kind   string // the step kind
	Metric string // the metric's name within the kind
	Op     string
	Value  float64
	Pos    Pos
}

// ops in the order they must be tried (">=" before ">").
var ops = []string{">=", "<=", "==", "!=", ">", "<"}

// ParseThreshold reads "kind.metric OP number".
func ParseThreshold(expr string) (Threshold, error) {
	for _, op := range ops {
		left, right, ok := strings.Cut(expr, op)
		if !ok {
			continue
		}
		name, value := strings.TrimSpace(left), strings.TrimSpace(right)
		kind, metric, ok := strings.Cut(name, ".")
		if !ok || kind == "" || metric == "" {
			return Threshold{}, fmt.Errorf("threshold %q does not name kind.metric", expr)
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return Threshold{}, fmt.Errorf("threshold %q does not compare with a number", expr)
		}
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			// NaN holds for != alone and fails every other comparison,
			// whatever was measured; an infinity is no target either.
			return Threshold{}, fmt.Errorf("threshold %q does not compare with a finite number", expr)
		}
		return Threshold{Expr: strings.TrimSpace(expr), Kind: kind, Metric: metric, Op: op, Value: v}, nil
	}
	return Threshold{}, fmt.Errorf("threshold %q has no comparison (>, >=, <, <=, ==, !=)", expr)
}

// Holds reports whether v meets the threshold.
func (t Threshold) Holds(v float64) bool {
	switch t.Op {
	case ">=":
		return v >= t.Value
	case "<=":
		return v <= t.Value
	case "==":
		return v == t.Value
	case "!=":
		return v != t.Value
	case ">":
		return v > t.Value
	default:
		return v < t.Value
	}
}
