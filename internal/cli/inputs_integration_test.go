//go:build integration

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// High (issue 51): a study file another account wrote (0644 in a 1777
// directory, or its own file) was accepted without a word, and a study
// tells root what to run. One another account owns or can change, or
// that lies in a directory it can change, is refused with exit 2, as
// OpenSSH refuses such an authorized_keys; root's own study still reads.
func TestAStudyAnotherAccountCanChangeIsRefused(t *testing.T) {
	uid, gid := testenv.Stranger(t)
	const study = "version: 1\nsteps:\n  - kind: device\n"
	base := t.TempDir()
	for _, d := range []string{base, filepath.Dir(base)} { // for nobody to reach shared/
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(name string, mode os.FileMode, owner int) string {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, mode); err != nil { // safefs: the test's own TempDir
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, owner, gid); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	shared := mk("shared", 0o777|os.ModeSticky, 0)
	theirs := mk("theirs", 0o755, uid)
	mine := mk("mine", 0o755, 0)
	root := func(dir, name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(study), mode); err != nil { // safefs: the test's own TempDir
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	theirFile := filepath.Join(shared, "theirs.yaml")
	testenv.AsStranger(t, `printf '%s' "$2" > "$1"; chmod 644 "$1"`, theirFile, study)
	theirLink := filepath.Join(shared, "link.yaml")
	ours := root(mine, "ours.yaml", 0o644)
	testenv.AsStranger(t, `ln -s "$2" "$1"`, theirLink, ours)
	for name, c := range map[string]struct{ path, why string }{
		"another account's file in a 1777 directory": {theirFile, "belongs to the account nobody"},
		"another account's link to root's study":     {theirLink, "belongs to the account nobody"},
		"root's file others can write":               {root(mine, "open.yaml", 0o666), "is writable by other accounts"},
		"root's file in another account's directory": {root(theirs, "in-theirs.yaml", 0o644), "belongs to the account nobody"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := clitest.Run(t, "plan", "--study", c.path)
			refusedInOneSentence(t, code, stderr, "the study file "+c.path+": ")
			if !strings.Contains(stderr, c.why) {
				t.Errorf("the refusal does not say the file or a directory above %s:\n%s", c.why, stderr)
			}
		})
	}
	t.Run("root's own study in a sticky directory", func(t *testing.T) {
		_, _, stderr := clitest.Run(t, "plan", "--study", root(shared, "root.yaml", 0o644))
		if strings.Contains(stderr, "the study file") {
			t.Errorf("root's own study was refused:\n%s", stderr)
		}
	})
}
