package results

import (
	"fmt"
	"strings"
	"unicode"
)

// Every output is escaped for its reader (docs/security.md, "Outputs"):
// html/template escapes the HTML reports; the helpers here do Markdown,
// CSV (csvsafe.go) and the terminal. A run's label, a study's step names
// and a results.json from elsewhere are all text calibra did not write.

// markdown is the escaper of text in report.md and compare's Markdown: a
// | ends a table cell, a newline a row, a backslash escapes what follows,
// backticks, *, _ and [ ] format or link, and raw HTML passes through
// most renderers.
var markdown = strings.NewReplacer("\\", `\\`, "|", `\|`, "\n", " ", "\r", " ", "&", "&amp;", "<", "&lt;", ">", "&gt;",
	"`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`)

type markdownEscaper struct{}

// Replace escapes s for a Markdown line or table cell, its other control
// characters written as spaces and its invisible format characters as
// \u202e (Hidden).
func (markdownEscaper) Replace(s string) string {
	return markdown.Replace(escapeHidden(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\r' {
			return ' '
		}
		return r
	}, s)))
}

// Hidden says r is a character a reader does not see that changes how the
// text around it shows: the Unicode format characters (category Cf: the
// bidirectional overrides, embeddings and isolates U+202A-U+202E and
// U+2066-U+2069, the marks U+200E and U+200F, zero-width characters, the
// byte-order mark) and the line and paragraph separators U+2028 and
// U+2029. A right-to-left override makes "exe.txt" read "txt.exe".
func Hidden(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// escapeHidden writes every Hidden character of s as \u202e.
func escapeHidden(s string) string {
	if !strings.ContainsFunc(s, Hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if Hidden(r) {
			b.WriteString(codePoint(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codePoint writes r as Go writes it in a string: \x1b, \u202e or
// \U000e0001.
func codePoint(r rune) string {
	switch {
	case r < 0x100:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// unseen is a character TerminalLine escapes: a control or Hidden one.
func unseen(r rune) bool { return unicode.IsControl(r) || Hidden(r) }

// MarkdownEscaper escapes text for Markdown (its Replace).
var MarkdownEscaper markdownEscaper

// TerminalText escapes the control and Hidden characters of s but its
// newlines (TerminalLine), so that text read from a file cannot move the
// cursor, recolour or retitle the terminal it is printed on, nor show in
// another order than it is written.
func TerminalText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = TerminalLine(l)
	}
	return strings.Join(lines, "\n")
}

// TerminalLine escapes every control character of s, newlines too, as
// \x1b, \n or \x9b, and every Hidden one as \u202e: one line of text for
// a terminal, shown in the order it is written.
func TerminalLine(s string) string {
	if !strings.ContainsFunc(s, unseen) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unseen(r):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		default:
			b.WriteString(codePoint(r))
		}
	}
	return b.String()
}
