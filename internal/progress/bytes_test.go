package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A bar over bytes says MB, MB/s and the time left, and one whose
// estimated total is corrected at the end says 100%.
func TestABytesBarSaysMBAndTimeLeft(t *testing.T) {
	var out bytes.Buffer
	bar := New(&out, Plain, false).BytesBar(100e6, "loading")
	pb := bar.(*plainBar)
	pb.start = time.Now().Add(-10 * time.Second)
	if line := pb.line(50e6); !strings.Contains(line, "50/100 MB") || !strings.Contains(line, "5.0 MB/s") || !strings.Contains(line, "about 10s left") {
		t.Errorf("half-way line %q, want 50/100 MB at 5.0 MB/s, about 10s left", line)
	}
	bar.Add(98e6)
	bar.SetTotal(98e6)
	bar.Finish()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "100% (98/98 MB") || strings.Contains(last, "left") {
		t.Errorf("finished bar %q, want 100%% of 98 MB and no time left", last)
	}
}
