package hist

import (
	"strings"
	"testing"
	"time"
)

// A damaged interval log is refused, naming the line, rather than read as
// a shorter one.
func TestReadLogRefusesAMalformedLine(t *testing.T) {
	l := NewLog(time.Unix(1000, 0), "test")
	h := New()
	h.Record(5 * time.Millisecond)
	if err := l.Add(h, time.Unix(1000, 0), time.Unix(1001, 0), "new_order"); err != nil {
		t.Fatal(err)
	}
	good := string(l.Bytes())
	if ivs, err := ReadLog([]byte(good)); err != nil || len(ivs) != 1 {
		t.Fatalf("a good log: %d intervals, %v", len(ivs), err)
	}
	for name, bad := range map[string]string{
		"garbage line":     good + "this is not a histogram\n",
		"tag without data": good + "Tag=payment\n",
		"truncated":        good + "Tag=payment,0.000000,1.0",
	} {
		_, err := ReadLog([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), "is not a histogram log line") || !strings.Contains(err.Error(), "line 7") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
