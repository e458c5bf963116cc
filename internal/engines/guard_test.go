package engines

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine"
)

// aboveTheSeam are the packages that consult the engines' descriptors
// and dialects' declarations, and name no engine: a workload's or the
// observer's own package (not its dialects), and the verdict, which reads
// each engine's words for its waits.
var aboveTheSeam = []string{"runner", "cli", "study", "results", "compare", "secret", "report", "verdict", "observe", "oltp", "iocal", "dss", "durability"}

// engineImport is an import that belongs to an engine: its package, its
// driver, or a workload's dialect for it (the internal/engines list, which
// links them, names none).
var engineImport = regexp.MustCompile(`/internal/engine/[^/]+$|/internal/\w+/\w+(pg|my)$|^github\.com/(jackc|go-sql-driver)/`)

// A new engine is its package, its dialects and a line in this package:
// the runner, the command line, studies, results, comparisons,
// redaction, verdicts, the observer and the oltp workload neither import
// an engine nor spell one's name, its DSN schemes, its options, its
// settings or its wait classes in a string (struct tags aside, which keep
// results.json's names). Test files may.
func TestNoEngineNamedAboveTheSeam(t *testing.T) {
	words := []string{"galera", "innodb", "mysql", "pgx", "pg_", "lwlock", "performance_schema", "synch/"}
	for _, d := range engine.Descriptors() {
		words = append(words, d.Name, strings.ToLower(d.Title), d.Cache.Setting)
		words = append(words, d.DSNSchemes...)
		for _, o := range d.Options {
			words = append(words, o.Flag, o.Key)
		}
	}
	for _, pkg := range aboveTheSeam {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no files (%v)", pkg, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			for _, problem := range namesAnEngine(t, file, words) {
				t.Errorf("%s: %s", file, problem)
			}
		}
	}
}

// namesAnEngine lists the imports and string literals of file that name
// an engine by one of words.
func namesAnEngine(t *testing.T, file string, words []string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); engineImport.MatchString(path) && !strings.HasSuffix(path, "/engine/server") {
			problems = append(problems, "imports "+path)
		}
	}
	tags := map[*ast.BasicLit]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if n.Tag != nil {
				tags[n.Tag] = true
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING || tags[n] {
				return true
			}
			text := strings.ToLower(n.Value)
			for _, w := range words {
				if w != "" && strings.Contains(text, strings.ToLower(w)) {
					problems = append(problems, fset.Position(n.Pos()).String()+" names "+w+" in "+n.Value)
					break
				}
			}
		}
		return true
	})
	return problems
}
