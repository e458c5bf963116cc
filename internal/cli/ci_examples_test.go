package cli

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/proc"
)

// workflow is the part of a GitHub Actions workflow the example uses:
// decoding with unknown fields refused catches a misplaced key.
type workflow struct {
	Name        string         `yaml:"name"`
	On          map[string]any `yaml:"on"`
	Concurrency map[string]any `yaml:"concurrency"`
	Jobs        map[string]struct {
		RunsOn         []string          `yaml:"runs-on"`
		TimeoutMinutes int               `yaml:"timeout-minutes"`
		Env            map[string]string `yaml:"env"`
		Steps          []struct {
			Name string            `yaml:"name"`
			If   string            `yaml:"if"`
			Run  string            `yaml:"run"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// calibraLines are the calibra command lines of a shell text, a backslash
// at a line's end continuing it.
func calibraLines(text string) [][]string {
	var out [][]string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
		for _, words := range shellCommands(line) {
			if args, ok := calibraArgs(words); ok {
				out = append(out, args)
			}
		}
	}
	return out
}

// The CI examples cannot drift from calibra: the calibra command of the
// workflow's steps and of the shell script is parsed by calibra's own
// flag parser, asks for a verdict a run can give (a baseline in a store
// that is not off, steps repeated 3 times), is the same in both, and its
// study resolves (calibra plan).
func TestCIExamplesParse(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "ci")
	f, err := os.Open(filepath.Join(dir, "nightly.yml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	var wf workflow
	if err := dec.Decode(&wf); err != nil {
		t.Fatalf("nightly.yml is not the workflow it should be: %v", err)
	}
	var steps strings.Builder
	for _, j := range wf.Jobs {
		if !slices.Contains(j.RunsOn, "self-hosted") {
			t.Errorf("the job runs on %v, not a self-hosted runner on the storage under test", j.RunsOn)
		}
		for _, s := range j.Steps {
			steps.WriteString(s.Run + "\n")
		}
	}
	script, err := os.ReadFile(filepath.Join(dir, "nightly.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]string
	for name, text := range map[string]string{"nightly.yml": steps.String(), "nightly.sh": string(script)} {
		got := calibraLines(text)
		if len(got) != 1 {
			t.Fatalf("%s runs calibra %d times, want once: %q", name, len(got), got)
		}
		lines = append(lines, got[0])
	}
	if strings.Join(withoutFlag(lines[0], "--out"), " ") != strings.Join(withoutFlag(lines[1], "--out"), " ") {
		t.Errorf("the workflow and the script run different commands:\n%q\n%q", lines[0], lines[1])
	}
	args := lines[0]
	root := (&app{stdout: io.Discard, stderr: io.Discard, group: proc.NewGroup()}).rootCommand()
	if msg := checkCommand(root, args); msg != "" {
		t.Fatal(msg)
	}
	cmd, rest, err := root.Find(args)
	if err != nil || cmd.Name() != "run" {
		t.Fatalf("%q is not calibra run (%v)", args, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("calibra's flag parser refuses %q: %v", args, err)
	}
	fl := cmd.Flags()
	if v := fl.Lookup("baseline").Value.String(); v != "last" {
		t.Errorf("--baseline %q, want last", v)
	}
	if v := fl.Lookup("store").Value.String(); !strings.HasPrefix(v, "sqlite:") {
		t.Errorf("--store %q: the store must outlive the job, named", v)
	}
	sets, _ := fl.GetStringArray("set")
	if !slices.Contains(sets, "device.repeat=3") || !slices.Contains(sets, "oltp.repeat=3") {
		t.Errorf("--set %q: the judged steps need 3 repeats for a verdict", sets)
	}
	// The study resolves: plan takes the same study flags, on a path that exists.
	plan := []string{"plan"}
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case "--baseline", "--baseline-runs", "--max-regression", "--store":
			i++
		case "--path":
			plan, i = append(plan, "--path", t.TempDir()), i+1
		default:
			plan = append(plan, rest[i])
		}
	}
	code, out, stderr := clitest.Run(t, plan...)
	if code != 0 {
		t.Fatalf("calibra %s: exit %d\n%s", strings.Join(plan, " "), code, stderr)
	}
	if strings.Count(out, "repeat: 3") != 2 {
		t.Errorf("the resolved study does not repeat two steps 3 times:\n%s", out)
	}
}

// withoutFlag drops a flag and its value from args.
func withoutFlag(args []string, flag string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == flag {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}
