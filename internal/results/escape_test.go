package results

import "testing"

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
		{"\x1b[2Jx\ny", "\\x1b[2Jx\ny", "\\x1b[2Jx\ny", " \\[2Jx y"},
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
