package cli

import (
	gobuild "go/build"
	"strings"
	"testing"
)

// The command line maps flags to the runner's configuration and errors to
// exit codes: it imports the runner, never a layer (oltp, dss, iocal,
// device, durability), the observers or an engine, so that a new layer or
// engine changes the runner and its own files, not cli.
func TestImportsRunnerNotTheLayers(t *testing.T) {
	const module = "github.com/calibra-bench/calibra/"
	allowed := map[string]string{
		"examples":          "the built-in studies, for --preset and its help",
		"internal/runner":   "the session, the steps and the summary",
		"internal/study":    "study files, resolved from flags",
		"internal/results":  "step kinds and run directories",
		"internal/report":   "calibra report",
		"internal/compare":  "calibra compare",
		"internal/merge":    "calibra merge",
		"internal/fault":    "errors to exit codes",
		"internal/progress": "the --progress modes",
		"internal/lab":      "calibra lab and its NBD server",
		"internal/proc":     "the children a run owns",
		"internal/secret":   "the DSN's password kept off the screen",
		"internal/safefs":   "where calibra writes its reports and profiles",
		"internal/store":    "the results store: recording, import, check, history",
		"internal/regress":  "run and compare --baseline: a run judged against the store's runs",
		"internal/serve":    "calibra serve, the web view of the store",
		"internal/live":     "the loopback-only listener serve shares with --metrics-listen",
	}
	pkg, err := gobuild.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	runner := false
	for _, imp := range pkg.Imports {
		runner = runner || imp == module+"internal/runner"
		switch {
		case strings.HasPrefix(imp, "github.com/jackc/"):
			t.Errorf("cli imports %s: a database driver belongs to an engine, behind the runner", imp)
		case strings.HasPrefix(imp, module) && allowed[strings.TrimPrefix(imp, module)] == "":
			t.Errorf("cli imports %s: a layer, the observers or an engine belong behind internal/runner", imp)
		}
	}
	if !runner {
		t.Error("cli does not import internal/runner")
	}
}
