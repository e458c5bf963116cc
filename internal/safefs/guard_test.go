package safefs_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// unsafeCall is a call that writes, makes or removes by a path string.
var unsafeCall = regexp.MustCompile(`\bos\.(Create|OpenFile|WriteFile|Mkdir|MkdirAll|Remove|RemoveAll|Rename)\(`)

// TestEveryWriteGoesThroughSafefs fails on every line outside safefs that
// writes, makes, renames or removes by name with os.Create, os.OpenFile,
// os.WriteFile, os.Mkdir, os.MkdirAll, os.Remove, os.RemoveAll or
// os.Rename, unless the line says why it
// is safe in a "// safefs: <why>" comment (issue 36: one rule, in one
// package, for where calibra writes).
func TestEveryWriteGoesThroughSafefs(t *testing.T) {
	var bad []string
	sources(t, "internal/safefs", func(path, rel string) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if unsafeCall.MatchString(line) && !justified(line) {
				bad = append(bad, rel+":"+itoa(n)+": "+strings.TrimSpace(line))
			}
		}
		return sc.Err()
	})
	if len(bad) > 0 {
		t.Errorf("%d writes by name outside internal/safefs; use safefs (MkdirOwn, CreateFile, OpenWrite, RemoveAll...) or say why the line is safe with a trailing // safefs: <why>:\n%s",
			len(bad), strings.Join(bad, "\n"))
	}
}

// maxFuncLines is the longest a function of the module's own code may be,
// from its func to its closing brace: one a reader takes in at once.
const maxFuncLines = 80

// TestNoFunctionIsLonger scans every non-test function of the module
// (function literals too) and fails on one over maxFuncLines lines.
func TestNoFunctionIsLonger(t *testing.T) {
	var long []string
	sources(t, "", func(path, rel string) error {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			name := "a function literal"
			switch n := n.(type) {
			case *ast.FuncDecl:
				name = n.Name.Name
				if n.Body == nil {
					return true
				}
			case *ast.FuncLit:
			default:
				return true
			}
			from, to := fset.Position(n.Pos()).Line, fset.Position(n.End()).Line
			if lines := to - from + 1; lines > maxFuncLines {
				long = append(long, rel+":"+itoa(from)+": "+name+" is "+itoa(lines)+" lines")
			}
			return true
		})
		return nil
	})
	if len(long) > 0 {
		t.Errorf("%d functions over %d lines; split each into steps that say what they do:\n%s", len(long), maxFuncLines, strings.Join(long, "\n"))
	}
}

// sources calls file with the path of each non-test Go file of the
// module, and that path relative to the module's root, but those under
// the directory skip.
func sources(t *testing.T, skip string, file func(path, rel string) error) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root %s has no go.mod: %v", root, err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == skip || (rel != "." && strings.HasPrefix(d.Name(), ".")) || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		return file(path, rel)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// justified says whether line carries "// safefs: " with a reason.
func justified(line string) bool {
	_, why, ok := strings.Cut(line, "// safefs:")
	return ok && strings.TrimSpace(why) != ""
}

func itoa(n int) string {
	var b []byte
	for ; n > 0 || len(b) == 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
