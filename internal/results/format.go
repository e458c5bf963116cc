package results

import (
	"math"
	"strconv"
	"strings"
)

// Num formats a figure for reading, the one way the summary, report and
// compare write one: thousands grouped; a whole number without decimals
// (figures such as users, jobs and seconds asked are whole: 8 users, not
// 8.00), else as many decimals as its size deserves (three significant
// digits below 100); "n/a" for NaN and infinities.
func Num(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case a >= 100 || v == math.Trunc(v) && a < 1e15:
		return group(strconv.FormatFloat(v, 'f', 0, 64))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
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

// Micros writes a latency bound in µs as it was given, exactly, in the
// unit people say it in: 500 µs, 1 ms, 2.5 ms. A bound is a setting, not
// a measured figure: no digits are added to it or taken from it.
func Micros(us float64) string {
	if us >= 1000 {
		return strconv.FormatFloat(us/1000, 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(us, 'f', -1, 64) + " µs"
}

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

// Round rounds v to places decimal places, half away from zero: the one
// rounding of a recorded figure.
func Round(v float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(v*p) / p
}
