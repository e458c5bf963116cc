package clitest

import (
	"regexp"
	"testing"
	"time"
)

// Each line gets one stamp, however calibra splits its writes.
func TestTimedLinesStampEachLineOnce(t *testing.T) {
	w := &timedLines{start: time.Now()}
	for _, p := range []string{"cycle 1 of 2: ", "load\ncycle 1: durable\n", "", "durability: complete\n"} {
		w.Write([]byte(p))
	}
	want := regexp.MustCompile(`^ +0\.\ds cycle 1 of 2: load\n +0\.\ds cycle 1: durable\n +0\.\ds durability: complete\n$`)
	if !want.MatchString(w.b.String()) {
		t.Errorf("stamped:\n%s", w.b.String())
	}
}
