package engines

import (
	"go/build"
	"strings"
	"testing"
)

// The workloads name no engine: their engine-specific parts live in the
// dialect packages below them, so a second engine changes none of them.
func TestWorkloadsNameNoEngine(t *testing.T) {
	for _, pkg := range []string{"oltp", "dss", "iocal", "observe", "durability"} {
		// By directory: an import path needs GOROOT, which a test built
		// with -trimpath does not know.
		p, err := build.ImportDir("../"+pkg, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			if engineImport.MatchString(imp) && !strings.HasSuffix(imp, "/engine/server") {
				t.Errorf("%s imports %s outside its dialects", pkg, imp)
			}
		}
	}
}
