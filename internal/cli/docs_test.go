package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/calibra-bench/calibra/internal/proc"
)

// The documentation's shell examples name only commands and flags calibra
// has: every calibra command line in a sh, bash or shell block of
// README.md, CONTRIBUTING.md and docs/*.md is resolved in the command tree,
// and each of its flags looked up on the command it reaches. A renamed flag
// or command then fails here, naming the file and line, instead of in a
// reader's terminal.
func TestDocsCommandsExist(t *testing.T) {
	files := docFiles(t)
	root := (&app{stdout: io.Discard, stderr: io.Discard, group: proc.NewGroup()}).rootCommand()
	seen := map[string]int{}
	for _, file := range files {
		for _, c := range docCommands(t, file) {
			seen[file]++
			if msg := checkCommand(root, c.words); msg != "" {
				t.Errorf("%s:%d: %s\n\t%s", c.file, c.line, msg, strings.Join(c.words, " "))
			}
		}
	}
	// A parser that finds nothing would pass every doc: the README's own
	// examples must be found.
	if seen[filepath.Join("..", "..", "README.md")] == 0 {
		t.Errorf("no calibra command found in README.md's sh blocks: the extraction is broken")
	}
	total := 0
	for _, n := range seen {
		total += n
	}
	t.Logf("checked %d calibra command lines in %d files", total, len(files))
}

// docFiles are the documents whose examples are checked, relative to this
// package's directory.
func docFiles(t *testing.T) []string {
	t.Helper()
	top := filepath.Join("..", "..")
	files := []string{filepath.Join(top, "README.md")}
	if _, err := os.Stat(filepath.Join(top, "CONTRIBUTING.md")); err == nil {
		files = append(files, filepath.Join(top, "CONTRIBUTING.md"))
	}
	docs, err := filepath.Glob(filepath.Join(top, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append(files, docs...)
}

// docCommand is one calibra command line of a document: its words after
// the program name, and the line it starts on.
type docCommand struct {
	file  string
	line  int
	words []string
}

// docCommands extracts the calibra command lines of file's shell blocks.
func docCommands(t *testing.T, file string) []docCommand {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out     []docCommand
		inShell bool // inside a sh, bash or shell block
		inOther bool // inside another fenced block
		logical strings.Builder
		start   int
		n       int
	)
	name := strings.TrimPrefix(file, filepath.Join("..", "..")+string(filepath.Separator))
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			switch {
			case inShell || inOther:
				inShell, inOther = false, false
			default:
				lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
				inShell = lang == "sh" || lang == "bash" || lang == "shell"
				inOther = !inShell
			}
			continue
		}
		if !inShell {
			continue
		}
		if logical.Len() == 0 {
			start = n
		}
		// A backslash at the end continues the command on the next line.
		if strings.HasSuffix(line, `\`) {
			logical.WriteString(strings.TrimSuffix(line, `\`))
			logical.WriteString(" ")
			continue
		}
		logical.WriteString(line)
		for _, words := range shellCommands(logical.String()) {
			if args, ok := calibraArgs(words); ok {
				out = append(out, docCommand{file: name, line: start, words: args})
			}
		}
		logical.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// shellCommands splits a shell line into simple commands (at ;, &&, ||, |,
// & and parentheses), each a list of words with quotes removed; a comment
// ends the line and a redirection's target is dropped.
func shellCommands(line string) [][]string {
	var (
		cmds  [][]string
		words []string
		word  strings.Builder
		inW   bool // a word has started (it may be an empty quoted one)
		redir bool // the next word is a redirection's target
	)
	endWord := func() {
		if !inW {
			return
		}
		if redir {
			redir = false
		} else {
			words = append(words, word.String())
		}
		word.Reset()
		inW = false
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			word.WriteString(line[i+1 : i+1+j])
			inW = true
			i += j + 1
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				word.WriteByte(line[i])
			}
			inW = true
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inW = true
		case c == '#' && !inW:
			endCmd()
			return cmds
		case c == ' ' || c == '\t':
			endWord()
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			endCmd()
		case c == '>' || c == '<':
			endWord()
			redir = true
			if i+1 < len(line) && (line[i+1] == '>' || line[i+1] == '&') {
				i++
			}
		default:
			word.WriteByte(c)
			inW = true
		}
	}
	endCmd()
	return cmds
}

// calibraArgs returns the arguments of a simple command that runs calibra
// (calibra, ./calibra or go run ./cmd/calibra, after any VAR=value
// assignments), and whether it does.
func calibraArgs(words []string) ([]string, bool) {
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		words = words[1:]
	}
	switch {
	case len(words) >= 1 && (words[0] == "calibra" || words[0] == "./calibra"):
		return words[1:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/calibra":
		return words[3:], true
	}
	return nil, false
}

// checkCommand resolves args in the command tree from root and returns what
// is wrong with them: an unknown subcommand, or a flag the command it
// reaches does not have (or hides). "" when all is well.
func checkCommand(root *cobra.Command, args []string) string {
	cmd := root
	positional := false // a positional argument came: no more subcommands
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			f, msg := lookupFlag(cmd, a)
			if msg != "" {
				return msg
			}
			// A flag that takes a value and was not given one with '='
			// takes the next word.
			if !strings.Contains(a, "=") && f.NoOptDefVal == "" {
				i++
			}
			continue
		}
		if positional {
			continue
		}
		if sub := subcommand(cmd, a); sub != nil {
			cmd = sub
			continue
		}
		if cmd.HasSubCommands() {
			return fmt.Sprintf("%q has no command %q", cmd.CommandPath(), a)
		}
		positional = true
	}
	return ""
}

// lookupFlag finds the flag arg names (--name, --name=value, -x) on cmd.
func lookupFlag(cmd *cobra.Command, arg string) (*pflag.Flag, string) {
	var f *pflag.Flag
	if strings.HasPrefix(arg, "--") {
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		f = cmd.Flags().Lookup(name)
		if f == nil {
			f = cmd.InheritedFlags().Lookup(name)
		}
		if f == nil && name == "help" {
			return &pflag.Flag{Name: "help", NoOptDefVal: "true"}, ""
		}
		if f == nil {
			return nil, fmt.Sprintf("%q has no flag --%s", cmd.CommandPath(), name)
		}
	} else {
		short := strings.TrimPrefix(arg, "-")[:1]
		f = cmd.Flags().ShorthandLookup(short)
		if f == nil {
			f = cmd.InheritedFlags().ShorthandLookup(short)
		}
		if f == nil && short == "h" {
			return &pflag.Flag{Name: "help", NoOptDefVal: "true"}, ""
		}
		if f == nil {
			return nil, fmt.Sprintf("%q has no flag -%s", cmd.CommandPath(), short)
		}
	}
	if f.Hidden {
		return nil, fmt.Sprintf("%q hides --%s (it is not for this command; see its --help)", cmd.CommandPath(), f.Name)
	}
	return f, ""
}

// subcommand is cmd's subcommand called name (or by an alias), or nil.
func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, sub := range cmd.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}

// The checker finds what it exists to find, and reads shell as a reader
// would.
func TestDocsCheckCatchesMistakes(t *testing.T) {
	root := (&app{stdout: io.Discard, stderr: io.Discard, group: proc.NewGroup()}).rootCommand()
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{"./calibra oltp run --users 8 --path /mnt/array --label a", true},
		{"PGPASSWORD=secret ./calibra oltp build --dsn postgres://bench@db1.invalid/bench --warehouses 10", true},
		{"go run ./cmd/calibra run --preset tprocc --threshold 'oltp.nopm > 1' # a comment --nope", true},
		{"./calibra compare a b --format csv > deltas.csv", true},
		{"./calibra oltp run --usres 8", false},
		{"./calibra olpt run", false},
		{"./calibra oltp rnu --users 8", false},
		{"./calibra device --dsn postgres://x@db1.invalid/x", false},
		{"sh .ci/setup && go run ./cmd/calibra run --pth /tmp", false},
	} {
		var found bool
		for _, words := range shellCommands(c.line) {
			args, ok := calibraArgs(words)
			if !ok {
				continue
			}
			found = true
			if msg := checkCommand(root, args); (msg == "") != c.ok {
				t.Errorf("%s: %q, want ok %v", c.line, msg, c.ok)
			}
		}
		if !found {
			t.Errorf("%s: no calibra command found", c.line)
		}
	}
}
