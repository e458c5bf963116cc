package compare

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/golden"
	"github.com/calibra-bench/calibra/internal/hostiletest"
)

// hostileLabel is a label no calibra writes but a results.json from
// elsewhere may hold: a spreadsheet formula, Markdown's table and code
// syntax, a link, and a terminal escape that would clear the screen.
const hostileLabel = "=HYPERLINK(\"http://x\")|`rm`\\|[a](b)\n\x1b[2Jx"

// Every output of compare is escaped for its reader: the Markdown keeps
// one row a line and one cell a column, the CSV holds no formula, the
// text no terminal escape (golden files testdata/hostile.*).
func TestHostileLabelIsEscapedInEveryFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hostile")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(runs, "oltp-xss", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\x1b", `\u001b`).Replace(hostileLabel)
	data = bytes.ReplaceAll(data, []byte(`\u003cscript\u003ealert(1)\u003c/script\u003e`), []byte(quoted))
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := Load([]string{filepath.Join(runs, "oltp-base"), dir})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"md", "csv", "text"} {
		var b bytes.Buffer
		if err := tab.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "hostile."+f), b.Bytes())
		out := b.String()
		if strings.Contains(out, "\x1b") {
			t.Errorf("%s: a terminal escape got through", f)
		}
		switch f {
		case "csv":
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs[1:] {
				if label := r[6]; label != "base" && !strings.HasPrefix(label, "'=") {
					t.Errorf("csv: the label %q is a formula", label)
				}
				if strings.HasPrefix(r[9], "'") {
					t.Errorf("csv: the number %q was escaped", r[9])
				}
			}
		case "md":
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "| metric") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 5 {
					t.Errorf("md: the header row has other than 4 cells: %s", line)
				}
			}
		}
	}
}

// Bidirectional controls and the other invisible format characters in a
// label are written as their code points in every format: a right-to-left
// override would show the rest of a line, figures included, reversed.
func TestBidiControlsAreEscapedInEveryFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bidi")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(runs, "oltp-xss", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte(`\u003cscript\u003ealert(1)\u003c/script\u003e`), []byte(`base\u202e\u2066\u200f\u200b\ufeff`))
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := Load([]string{filepath.Join(runs, "oltp-base"), dir})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"md", "csv", "text"} {
		var b bytes.Buffer
		if err := tab.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if i := strings.IndexFunc(b.String(), func(r rune) bool {
			return r == '\u202e' || r == '\u2066' || r == '\u200f' || r == '\u200b' || r == '\ufeff'
		}); i >= 0 {
			t.Errorf("%s: a format character got through: %q", f, b.String()[max(i-20, 0):i+3])
		}
		if !strings.Contains(b.String(), `u202e`) {
			t.Errorf("%s: the override is not shown as its code point", f)
		}
	}
}

// A run another account wrote, every field hostile (hostiletest.Text),
// compared in every format and drawn in the HTML page: no terminal
// escape, control or bidirectional character reaches the reader raw, in
// the page's text, attributes or chart data; each shows as its code point.
func TestHostileRunIsEscapedInEveryFormat(t *testing.T) {
	for _, base := range []string{"oltp-base", "study-a"} {
		hostile := hostiletest.Run(t, t.TempDir(), filepath.Join(runs, base))
		rs, err := Load([]string{filepath.Join(runs, base), hostile})
		if err != nil {
			t.Fatal(err)
		}
		tab, err := Compare(rs)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(Formats, "html") {
			var b bytes.Buffer
			if f == "html" {
				err = HTML(&b, tab, rs)
			} else {
				err = tab.Write(&b, f)
			}
			if err != nil {
				t.Fatal(err)
			}
			what := "compare " + base + " --format " + f
			hostiletest.Check(t, what, b.String(), f == "html")
			if !strings.Contains(b.String(), `u202e`) {
				t.Errorf("%s does not show the override as its code point", what)
			}
			if f == "html" && strings.Contains(b.String(), "<img src=x>") {
				t.Errorf("%s holds the run's HTML", what)
			}
		}
	}
}
