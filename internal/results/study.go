package results

import (
	"math"
	"slices"
)

// Verdict is one threshold of a study, judged.
type Verdict struct {
	Threshold string   `json:"threshold"`
	Step      string   `json:"step,omitempty"` // the step judged
	Value     *float64 `json:"value"`          // null when not measured
	OK        bool     `json:"ok"`
	Reason    string   `json:"reason,omitempty"`
}

// Repeats summarises the repetitions of one study step: per metric, the
// median and the spread of the values of the repetitions that measured it.
type Repeats struct {
	StudyStep int            `json:"study_step"`
	Kind      string         `json:"kind"`
	Name      string         `json:"name"`
	N         int            `json:"n"`
	Metrics   []RepeatMetric `json:"metrics"`
}

// RepeatMetric is one metric over the repetitions.
type RepeatMetric struct {
	Name      string    `json:"name"`
	Unit      string    `json:"unit,omitempty"`
	Better    string    `json:"better,omitempty"`
	Values    []float64 `json:"values"`
	Median    float64   `json:"median"`
	Min       float64   `json:"min"`
	Max       float64   `json:"max"`
	SpreadPct *float64  `json:"spread_pct"` // (max - min) / median, null when the median is 0
}

// Median is the middle value (the mean of the two middle ones).
func Median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// SummariseRepeats gives the median and spread of each metric over the
// repetitions of one study step (steps of the same kind and study step).
func SummariseRepeats(steps []Step) []RepeatMetric {
	var out []RepeatMetric
	index := map[string]int{}
	for _, st := range steps {
		for _, m := range Metrics(st) {
			i, ok := index[m.Name]
			if !ok {
				i = len(out)
				index[m.Name] = i
				out = append(out, RepeatMetric{Name: m.Name, Unit: m.Unit, Better: m.Better})
			}
			out[i].Values = append(out[i].Values, m.Value)
		}
	}
	for i := range out {
		r := &out[i]
		r.Median = round4(Median(r.Values))
		r.Min, r.Max = slices.Min(r.Values), slices.Max(r.Values)
		if r.Median != 0 {
			s := round4(100 * (r.Max - r.Min) / math.Abs(r.Median))
			r.SpreadPct = &s
		}
	}
	return out
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
