package cli

import (
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"runtime"
	"strings"
	"testing"
)

// The version names the commit and whether it had uncommitted changes,
// from Go's vcs.* stamps or -ldflags, and says so when neither gave it.
func TestVersionNamesTheCommit(t *testing.T) {
	for _, c := range []struct {
		b    build
		want []string
	}{
		{build{Version: "1.2.0", Module: "github.com/calibra-bench/calibra v1.2.0", Commit: "7b36fdd", Modified: "false", Time: "2026-11-21T20:53:35Z", Go: "go1.26.8", Platform: "linux/arm64"},
			[]string{"calibra 1.2.0\n", "  module    github.com/calibra-bench/calibra v1.2.0\n", "  commit    7b36fdd\n", "  committed 2026-11-21T20:53:35Z\n", "  go        go1.26.8 linux/arm64\n"}},
		{build{Version: "1.2.0", Commit: "7b36fdd", Modified: "true", Go: "go1.26.8", Platform: "linux/amd64"},
			[]string{"  commit    7b36fdd with uncommitted changes\n"}},
		{build{Version: "1.2.0", Go: "go1.26.8", Platform: "linux/amd64"},
			[]string{"  commit    unknown: built without VCS information"}},
	} {
		var b strings.Builder
		c.b.write(&b)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("version of %+v:\n%s\nwant %q", c.b, b.String(), w)
			}
		}
	}
	code, stdout, _ := clitest.Run(t, "version")
	if code != 0 || !strings.Contains(stdout, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) || !strings.Contains(stdout, "  commit    ") {
		t.Errorf("version: exit %d, stdout %q", code, stdout)
	}
}
