package results

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Every output is escaped for its reader (docs/security.md, "Outputs"),
// by the one function escape: the terminal (TerminalLine, TerminalText),
// Markdown, CSV (csvsafe.go), JSON (WriteJSON) and the HTML pages
// (HTMLWriter, after html/template's escaping), and tables in each
// (table.go). A run's label, a study's step names, a directory's name and
// a results.json from elsewhere are all text calibra did not write.

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
func escapeHidden(s string) string { return escape(s, Hidden, codePoint) }

// escape is the one escaper every output uses: each character of s that
// esc picks is written as code writes it.
func escape(s string, esc func(rune) bool, code func(rune) string) string {
	if !strings.ContainsFunc(s, esc) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if esc(r) {
			b.WriteString(code(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codePoint writes r as Go writes it in a string: \n, \x1b, \u202e or
// \U000e0001.
func codePoint(r rune) string {
	switch {
	case r == '\n':
		return `\n`
	case r < 0x100:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// jsonCode writes r as a JSON string escape: \u202e, or a UTF-16 pair.
func jsonCode(r rune) string {
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		return fmt.Sprintf(`\u%04x\u%04x`, hi, lo)
	}
	return fmt.Sprintf(`\u%04x`, r)
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
	return escape(s, textUnseen, codePoint)
}

// textUnseen is unseen but a newline.
func textUnseen(r rune) bool { return r != '\n' && unseen(r) }

// TerminalLine escapes every control character of s, newlines too, as
// \x1b, \n or \x9b, and every Hidden one as \u202e: one line of text for
// a terminal, shown in the order it is written.
func TerminalLine(s string) string { return escape(s, unseen, codePoint) }

// HTMLWriter writes an HTML page html/template makes with its control
// characters but newlines and tabs, and its Hidden ones, as code points
// (\x1b, \u202e): html/template escapes markup but passes them, and an
// override in a label would show the page's figures reordered. Calibra's
// own template, style and scripts hold none, so only text read from a run
// or a directory's name changes. Call Flush at the end.
type HTMLWriter struct {
	w    io.Writer
	tail []byte // a character the next write ends
}

// NewHTMLWriter escapes what is written to w (HTMLWriter).
func NewHTMLWriter(w io.Writer) *HTMLWriter { return &HTMLWriter{w: w} }

func htmlUnseen(r rune) bool { return r != '\n' && r != '\t' && unseen(r) }

func (h *HTMLWriter) Write(p []byte) (int, error) {
	b := append(h.tail, p...)
	end := len(b)
	// A character split between two writes is escaped whole.
	for i := max(end-utf8.UTFMax+1, 0); i < end; i++ {
		if utf8.RuneStart(b[i]) && !utf8.FullRune(b[i:]) {
			end = i
			break
		}
	}
	h.tail = append([]byte(nil), b[end:]...)
	if _, err := io.WriteString(h.w, escape(string(b[:end]), htmlUnseen, codePoint)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is left of a character cut short at the page's end.
func (h *HTMLWriter) Flush() error {
	_, err := h.w.Write(h.tail)
	h.tail = nil
	return err
}

// WriteJSON writes v as indented JSON with its control and Hidden
// characters as \u escapes: encoding/json leaves DEL, the C1 controls and
// the bidirectional ones raw, and JSON is read on a terminal too. A JSON
// reader gets the same text back.
func WriteJSON(w io.Writer, v any) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	// The only raw control characters outside strings are the indent's newlines.
	_, err := io.WriteString(w, escape(b.String(), textUnseen, jsonCode))
	return err
}
