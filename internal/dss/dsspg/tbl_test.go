package dsspg

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestTblReaderDropsEachLinesClosingDelimiter(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"1|a|\n2|b|\n", "1|a\n2|b\n"},
		{"1|a|\n2|b|", "1|a\n2|b|"}, // no newline at the end: the last '|' is data
		{"1||\n", "1|\n"},
		{"|\n|\n", "\n\n"},
		{"x|y\n", "x|y\n"},
	}
	for _, c := range cases {
		// One byte at a time puts every '|' at a chunk's end.
		for name, r := range map[string]io.Reader{"whole": strings.NewReader(c.in), "bytewise": iotest.OneByteReader(strings.NewReader(c.in))} {
			got, err := io.ReadAll(newTblReader(r))
			if err != nil || string(got) != c.want {
				t.Errorf("%s %q: got %q, %v; want %q", name, c.in, got, err, c.want)
			}
		}
	}
}

// BenchmarkTblReader measures the pass over the data the load adds: it
// runs on every byte of the build.
func BenchmarkTblReader(b *testing.B) {
	line := "1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|egular courts above the|\n"
	data := []byte(strings.Repeat(line, 64<<10))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := io.Copy(io.Discard, newTblReader(bytes.NewReader(data))); err != nil {
			b.Fatal(err)
		}
	}
}
