package results

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestEscapers(t *testing.T) {
	for _, c := range []struct{ in, csv, term, md string }{
		{"plain", "plain", "plain", "plain"},
		{"=1+2", "'=1+2", "=1+2", "=1+2"},
		{"+cmd", "'+cmd", "+cmd", "+cmd"},
		{"-x", "'-x", "-x", "-x"},
		{"@SUM(A1)", "'@SUM(A1)", "@SUM(A1)", "@SUM(A1)"},
		{"\tx", `\x09x`, `\x09x`, " x"},
		{"\rx", `\x0dx`, `\x0dx`, " x"},
		{"-1.5", "-1.5", "-1.5", "-1.5"},
		{"+Inf", "+Inf", "+Inf", "+Inf"},
		{"", "", "", ""},
		{"a|b`c`\\|[l](u)", "a|b`c`\\|[l](u)", "a|b`c`\\|[l](u)", "a\\|b\\`c\\`\\\\\\|\\[l\\](u)"},
		// A CSV cell stays on its line: readers that split lines find one
		// record a line.
		{"\x1b[2Jx\ny", "\\x1b[2Jx\\ny", "\\x1b[2Jx\ny", " \\[2Jx y"},
		// Bidirectional controls and other invisible format characters
		// are written as their code points, so the text shows in the
		// order it is written.
		{"run\u202eexe.txt", `run\u202eexe.txt`, `run\u202eexe.txt`, `run\\u202eexe.txt`},
		{"a\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069b", `a\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069b`, `a\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069b`,
			`a\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069b`},
		{"\u200ex\u200f\u200b\ufeff\u00ad", `\u200ex\u200f\u200b\ufeff\xad`, `\u200ex\u200f\u200b\ufeff\xad`, `\\u200ex\\u200f\\u200b\\ufeff\\xad`},
		{"a\u2028b\u2029\U000e0001", `a\u2028b\u2029\U000e0001`, `a\u2028b\u2029\U000e0001`, `a\\u2028b\\u2029\\U000e0001`},
		{"\u202e=cmd", `\u202e=cmd`, `\u202e=cmd`, `\\u202e=cmd`},
		{"日本語 é", "日本語 é", "日本語 é", "日本語 é"},
	} {
		if got := CSVCell(c.in); got != c.csv {
			t.Errorf("CSVCell(%q) = %q, want %q", c.in, got, c.csv)
		}
		if got := TerminalText(c.in); got != c.term {
			t.Errorf("TerminalText(%q) = %q, want %q", c.in, got, c.term)
		}
		if got := MarkdownEscaper.Replace(c.in); got != c.md {
			t.Errorf("Markdown(%q) = %q, want %q", c.in, got, c.md)
		}
	}
	if got := TerminalLine("a\nb\u009b"); got != `a\nb\x9b` {
		t.Errorf("TerminalLine = %q", got)
	}
}

// An HTML page keeps its markup, newlines and tabs, and shows every other
// control and Hidden character as its code point, however html/template
// cuts its writes: here one byte at a time, splitting every character.
func TestHTMLWriter(t *testing.T) {
	page := "<p title=\"a\u202eb\">\x1b]0;pwned\x07 日本語\u2066\u009b\x7f</p>\n\t<br>\U000e0001"
	want := "<p title=\"a\\u202eb\">\\x1b]0;pwned\\x07 日本語\\u2066\\x9b\\x7f</p>\n\t<br>\\U000e0001"
	var b bytes.Buffer
	h := NewHTMLWriter(&b)
	for i := range len(page) {
		if _, err := h.Write([]byte{page[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("HTMLWriter wrote %q, want %q", b.String(), want)
	}
}

// WriteJSON's output shows no control or format character on a terminal,
// and a JSON reader gets every string back as it was.
func TestWriteJSON(t *testing.T) {
	in := map[string]string{"label": "a\x1b]0;x\x07\n\u009b\x7f\u202e\u2028\U000e0001<b>"}
	var b bytes.Buffer
	if err := WriteJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexFunc(b.String(), textUnseen); i >= 0 {
		t.Errorf("WriteJSON left %q raw: %s", []rune(b.String()[i:])[0], b.String())
	}
	var out map[string]string
	if err := json.Unmarshal(b.Bytes(), &out); err != nil || out["label"] != in["label"] {
		t.Errorf("WriteJSON's %s reads back as %q (%v)", b.String(), out["label"], err)
	}
}
