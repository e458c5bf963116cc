package report

import (
	gobuild "go/build"
	"strings"
	"testing"
)

// The report and compare read results and nothing of the runner: no
// package that measures may be pulled in by them (docs/design.md).
func TestImportsOnlyResults(t *testing.T) {
	const internal = "github.com/calibra-bench/calibra/internal/"
	// fault classifies a report refused for its size as bad input (exit 2).
	allowed := map[string]bool{internal + "results": true, internal + "report/assets": true, internal + "fault": true, internal + "terms": true}
	for _, dir := range []string{".", "assets", "../compare"} {
		pkg, err := gobuild.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, internal) && !allowed[imp] {
				t.Errorf("%s imports %s; it may import only results, fault, the engines' terms and the chart assets", pkg.ImportPath, imp)
			}
		}
	}
}
