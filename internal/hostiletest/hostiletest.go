// Package hostiletest holds the text a run directory another account
// wrote may carry, and the check that an output shows none of it raw
// (docs/security.md, "Every output is escaped for its reader").
package hostiletest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode"

	"github.com/calibra-bench/calibra/internal/results"
)

// Text is a field as a hostile run may hold it: a spreadsheet formula
// first, an OSC that retitles the terminal, BEL, a CSI that clears it, the
// one-character CSI (C1), DEL, a newline and a carriage return that
// would start a row, HTML and Markdown, a right-to-left override, an isolate
// and a line separator.
const Text = "=cmd\x1b]0;pwned\x07\x1b[2J\u009b31m\x7f\nrow\r<img src=x>|`x`[l](u)\u202eexe.txt\u2066\u2028"

// Check fails t for every character of out that a reader does not see
// or that acts on a terminal: the controls but the newline (and the tab
// where tab says the format holds tabs of its own), the Unicode format
// characters (bidirectional controls) and U+2028/U+2029.
func Check(t testing.TB, what, out string, tab bool) {
	t.Helper()
	for i, r := range out {
		ok := r == '\n' || r == '\t' && tab
		if !ok && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029') {
			t.Errorf("%s holds %U raw at byte %d: %q", what, r, i, out[max(i-30, 0):min(i+30, len(out))])
			return
		}
	}
}

// Run writes a copy of the fixture run directory fixture (its
// results.json) under root, in a directory whose name holds Text, with
// Text in every field calibra prints from a run: the label, the host,
// the storage, the engine, the study, the error, a threshold's verdict and
// each step's name and error. It returns the directory.
func Run(t testing.TB, root, fixture string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixture, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r results.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	r.Status, r.Error = results.StatusFailed, Text
	r.Meta.Label, r.Meta.Host.Hostname, r.Meta.Storage.Path, r.Meta.Storage.Device = Text, Text, Text, Text
	r.Meta.Study = map[string]any{"name": Text}
	r.Warnings = append(r.Warnings, Text)
	r.Verdicts = append(r.Verdicts, results.Verdict{Threshold: Text, Step: Text, Reason: Text})
	if r.Meta.Engine != nil {
		r.Meta.Engine.Name, r.Meta.Engine.Version = Text, Text
	}
	for i := range r.Steps {
		r.Steps[i].Name, r.Steps[i].Error = Text, Text
	}
	if data, err = json.MarshalIndent(&r, "", "  "); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "run-"+Text)
	if err := os.Mkdir(dir, 0o755); err != nil { // safefs: in the test's own temporary directory
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil { // safefs: in the directory made just above
		t.Fatal(err)
	}
	return dir
}
