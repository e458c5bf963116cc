package iocalmy

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// Each row becomes perPage records keyed from 0, whatever its id, its
// filler cut in equal parts; a line that is no row is an error.
func TestParts(t *testing.T) {
	got, err := io.ReadAll(&parts{in: bufio.NewReader(strings.NewReader("7\taabb\n8\tccdd\n"))})
	if want := "0\taa\n1\tbb\n2\tcc\n3\tdd\n"; err != nil || string(got) != want {
		t.Errorf("%q, %v; want %q", got, err, want)
	}
	if _, err := io.ReadAll(&parts{in: bufio.NewReader(strings.NewReader("no tab\n"))}); err == nil {
		t.Error("a line without a tab was loaded")
	}
}
