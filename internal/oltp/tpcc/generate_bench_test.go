package tpcc

import "testing"

// The generators of the tables generator_test.go's benchmarks leave out,
// and a whole warehouse: every batch of a one-warehouse database (item's
// ten included), the text a loader connection generates per warehouse.
// Run with -benchmem: every generator appends to a reused buffer and
// allocates nothing per row.
func BenchmarkGenerateItem(b *testing.B)     { benchGenerate(b, Item) }
func BenchmarkGenerateHistory(b *testing.B)  { benchGenerate(b, History) }
func BenchmarkGenerateOrders(b *testing.B)   { benchGenerate(b, Orders) }
func BenchmarkGenerateNewOrder(b *testing.B) { benchGenerate(b, NewOrder) }
func BenchmarkGenerateDistrict(b *testing.B) { benchGenerate(b, District) }

// Every table in PostgreSQL's COPY binary format, which the loader sends
// for the tables whose server-side parse it spares most.
func BenchmarkGenerateBinary(b *testing.B) {
	g := NewGenerator(1, 1, testLoadTime, Constants{CLast: 157, CID: 259, OLIID: 7911})
	for _, tb := range Tables() {
		b.Run(tb.String(), func(b *testing.B) {
			dst := g.AppendBatchAs(nil, tb, 0, Binary)
			b.SetBytes(int64(len(dst)))
			b.ReportAllocs()
			for b.Loop() {
				dst = g.AppendBatchAs(dst[:0], tb, 0, Binary)
			}
		})
	}
}

func BenchmarkGenerateWarehouse(b *testing.B) {
	g := NewGenerator(1, 1, testLoadTime, Constants{CLast: 157, CID: 259, OLIID: 7911})
	var buf []byte
	all := func() int64 {
		n := int64(0)
		for _, t := range Tables() {
			for k := range g.Batches(t) {
				buf = g.AppendBatch(buf[:0], t, k)
				n += int64(len(buf))
			}
		}
		return n
	}
	b.SetBytes(all())
	b.ReportAllocs()
	for b.Loop() {
		all()
	}
}
