//go:build integration

package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/proc"
)

// TestLabKeepsWhatItPromises: a file written on a lab and synced is on the
// platter after a clean stop, so the next command finds it, whatever cache
// the stack has; a stack whose cache is never written back (cache=unsafe)
// loses it, and the next command says so instead of building again in
// silence.
func TestLabKeepsWhatItPromises(t *testing.T) {
	t.Parallel()
	clitest.RequireLab(t)
	for _, c := range []struct {
		spec  string
		keeps bool
	}{
		{"hdd+nv-cache:size=256M", true},
		{"hdd+flash-cache:size=256M,cache_size=64M", true},
		{"hdd:size=256M,cache=writeback", true},
		{"hdd:size=256M,cache=unsafe", false},
	} {
		t.Run(c.spec, func(t *testing.T) {
			t.Parallel()
			dir := clitest.StorageDir(t)
			parts, err := lab.Parse(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if parts.KeepsNothing() == c.keeps {
				t.Fatalf("KeepsNothing() is %t for %s", parts.KeepsNothing(), c.spec)
			}
			defer clitest.Run(t, "clean", "--path", dir)
			group := proc.NewGroup()
			stack, err := lab.Up(context.Background(), dir, parts, group)
			if err != nil {
				t.Fatal(err)
			}
			if err := writeSynced(filepath.Join(stack.Mount, "kept"), "what a build leaves"); err != nil {
				stack.Down()
				t.Fatal(err)
			}
			if err := stack.Down(); err != nil {
				t.Fatalf("a clean stop: %v", err)
			}
			// The next command, as a user runs it.
			code, out, stderr := clitest.Run(t, "lab", "check", "--lab", c.spec, "--path", dir)
			if code != 0 {
				t.Fatalf("lab check: exit %d: %s%s", code, out, stderr)
			}
			said := strings.Contains(stderr, "kept nothing")
			if said == c.keeps {
				t.Errorf("the next command said it kept nothing: %t, want %t; stderr:\n%s", said, !c.keeps, stderr)
			}
			stack, err = lab.Up(context.Background(), dir, parts, group)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(stack.Mount, "kept"))
			if derr := stack.Down(); derr != nil {
				t.Fatal(derr)
			}
			if kept := err == nil && string(data) == "what a build leaves"; kept != c.keeps {
				t.Fatalf("the file written before the clean stop is there: %t (%v), want %t", kept, err, c.keeps)
			}
			clitest.NoLabLeft(t, dir)
		})
	}
}

func writeSynced(path, text string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
