package iocalmy

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Each row becomes perPage records keyed from 0, whatever its id, each
// the next 11/63 of its filler; a line that is no row is an error.
func TestParts(t *testing.T) {
	filler := strings.Repeat("abcdefghi", 7) // 63 bytes: parts of 11
	got, err := io.ReadAll(&parts{in: bufio.NewReader(strings.NewReader("7\t" + filler + "\n8\t" + filler + "\n"))})
	var want strings.Builder
	for k := range 2 * perPage {
		i := k % perPage
		fmt.Fprintf(&want, "%d\t%s\n", k, filler[11*i:11*(i+1)])
	}
	if err != nil || string(got) != want.String() {
		t.Errorf("%q, %v; want %q", got, err, want.String())
	}
	if _, err := io.ReadAll(&parts{in: bufio.NewReader(strings.NewReader("no tab\n"))}); err == nil {
		t.Error("a line without a tab was loaded")
	}
}

// A block is read by its page's middle record: the first page holds
// firstPage records, every later one perPage.
func TestBlockKey(t *testing.T) {
	for b, want := range map[int64]int64{0: 4, 1: 9, 1000: 5004} {
		if got := blockKey(b); got != want {
			t.Errorf("block %d: key %d, want %d", b, got, want)
		}
	}
}
