package oltppg

import (
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// The client's cost of a batch in COPY's binary format: the generator's
// text turned into it, per table (go test -bench ToBinary -benchmem).
func BenchmarkToBinary(b *testing.B) {
	g := tpcc.NewGenerator(1, 1, time.Date(2026, 11, 26, 1, 2, 3, 0, time.UTC), tpcc.Constants{CLast: 157})
	for table, types := range binaryTables {
		b.Run(table.String(), func(b *testing.B) {
			text := g.AppendBatch(nil, table, 0)
			var dst []byte
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = toBinary(dst[:0], text, types); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
