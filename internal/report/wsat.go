package report

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
)

// deviceWSAT draws, per spec that writes, the write-saturation plot: IOPS
// each second against the data the point had written by then, a series a
// queue depth, each burst's fall marked. Runs before calibra kept IOPS
// per second draw nothing.
func (b *builder) deviceWSAT(specs []string, bySpec map[string][]results.DevicePoint) {
	var refs []ChartRef
	for _, s := range specs {
		c := assets.Chart{XName: "GiB written", YName: "IOPS"}
		for _, p := range bySpec[s] {
			if len(p.WriteIOPSPerS) == 0 || len(p.WriteIOPSPerS) != len(p.IOPSPerS) {
				continue
			}
			x := make([]float64, len(p.IOPSPerS))
			written := 0.0
			for i, w := range p.WriteIOPSPerS {
				written += w * float64(p.BlockSize) / (1 << 30)
				x[i] = written
			}
			c.Series = append(c.Series, assets.Series{Name: fmt.Sprintf("qd %d", p.QD), X: assets.Nums(x), Y: assets.Nums(p.IOPSPerS)})
			if bu := p.Burst; bu != nil && bu.FellAtS > 0 && bu.FellAtS <= len(x) {
				c.MarkX = append(c.MarkX, assets.Mark{Label: fmt.Sprintf("qd %d fell", p.QD), Value: x[bu.FellAtS-1]})
			}
		}
		if len(c.Series) > 0 {
			refs = append(refs, b.chart(s+": IOPS each second against data written", c))
		}
	}
	if len(refs) > 0 {
		b.charts("Write saturation: IOPS each second against data written", refs...)
	}
}
