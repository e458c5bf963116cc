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
// characters written as spaces.
func (markdownEscaper) Replace(s string) string {
	return markdown.Replace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\r' {
			return ' '
		}
		return r
	}, s))
}

// MarkdownEscaper escapes text for Markdown (its Replace).
var MarkdownEscaper markdownEscaper

// TerminalText escapes the control characters of s but its newlines
// (TerminalLine), so that text read from a file cannot move the cursor,
// recolour or retitle the terminal it is printed on.
func TerminalText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = TerminalLine(l)
	}
	return strings.Join(lines, "\n")
}

// TerminalLine escapes every control character of s, newlines too, as
// \x1b, \n or \x9b: one line of text for a terminal.
func TerminalLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unicode.IsControl(r):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
