package live

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp"
)

// second is a second of a fast load: 60,000 transactions of the
// specification's mix, latencies spread over 50 µs to 50 ms.
func second() *oltp.Second {
	s := &oltp.Second{Phase: "measure", Users: 8}
	for i := range 60000 {
		t := oltp.TxType(i) % oltp.NumTxTypes
		lat := 50*time.Microsecond + time.Duration(i%1000)*time.Duration(i%50)*time.Microsecond
		s.Types[t].Count++
		s.Types[t].Sum += lat
		s.Latencies = append(s.Latencies, oltp.TxLatency{Type: t, Lat: lat})
	}
	return s
}

// BenchmarkSecond is the collector's work for the endpoint each second:
// divide by 60,000 for its cost a transaction.
func BenchmarkSecond(b *testing.B) {
	s, board := second(), NewBoard()
	for b.Loop() {
		board.Second(s)
	}
}

// BenchmarkScrape is one scrape of a board holding a fast load's
// histograms, as Prometheus asks for it.
func BenchmarkScrape(b *testing.B) {
	board := NewBoard()
	board.Step("oltp run")
	board.Second(second())
	e, err := Start(b.Context(), Options{Listen: "127.0.0.1:0"}, board)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(false)
	req, _ := http.NewRequest(http.MethodGet, "http://"+e.Addr()+"/metrics", nil)
	req.Header.Set("Accept", openMetrics)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
