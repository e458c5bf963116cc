package report

import (
	"math"
	"strconv"
	"strings"
)

// Num formats a figure for reading: thousands grouped, and as many decimals
// as its size deserves (three significant digits below 100).
func Num(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case a >= 100:
		return group(strconv.FormatFloat(v, 'f', 0, 64))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// NumPtr formats an optional figure; "n/a" when it was not measured.
func NumPtr(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return Num(*v)
}

// Int formats a count with thousands grouped.
func Int(v int64) string { return group(strconv.FormatInt(v, 10)) }

func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func cells(texts ...string) []Cell {
	out := make([]Cell, len(texts))
	for i, t := range texts {
		out[i] = Cell{Text: t}
	}
	out[0].Class = "t"
	return out
}

func verdictCell(ok bool, yes, no string) Cell {
	if ok {
		return Cell{Text: yes, Class: "good"}
	}
	return Cell{Text: no, Class: "bad"}
}
