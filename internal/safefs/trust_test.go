package safefs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// file writes a file with mode and owner uid.
func file(t *testing.T, path string, mode os.FileMode, uid int) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o600); err != nil { // safefs: in t.TempDir, root's
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
	return path
}

func symlink(t *testing.T, target, link string, uid int) string {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, uid, uid); err != nil {
		t.Fatal(err)
	}
	return link
}

func TestCheckTrusted(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	mine := mkdir(t, filepath.Join(base, "mine"), 0o755, 0)
	prog := file(t, filepath.Join(mine, "fio"), 0o755, 0)
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755, nobody)
	open := mkdir(t, filepath.Join(base, "open"), 0o777, 0)
	sticky := mkdir(t, filepath.Join(base, "sticky"), 0o777|os.ModeSticky, 0)
	cases := []struct {
		name, path, refusal string
	}{
		{"root's program in root's directory", prog, ""},
		{"root's link to it", symlink(t, "fio", filepath.Join(mine, "fio-link"), 0), ""},
		{"root's program in a sticky directory", file(t, filepath.Join(sticky, "fio"), 0o755, 0), ""},
		{"another account's program", file(t, filepath.Join(mine, "theirs"), 0o755, nobody), "belongs to the account"},
		{"a program others can write", file(t, filepath.Join(mine, "open"), 0o757, 0), "is writable by other accounts"},
		{"a program its group can write", file(t, filepath.Join(mine, "group"), 0o775, 0), "is writable by other accounts"},
		{"root's program in another account's directory", file(t, filepath.Join(theirs, "fio"), 0o755, 0), "theirs belongs to the account"},
		{"root's program in a directory others can write", file(t, filepath.Join(open, "fio"), 0o755, 0), "open is writable by other accounts"},
		{"another account's link to root's program", symlink(t, prog, filepath.Join(sticky, "their-link"), nobody), "belongs to the account"},
		{"root's link into another account's directory", symlink(t, filepath.Join(theirs, "fio"), filepath.Join(mine, "to-theirs"), 0), "theirs belongs to the account"},
		{"a directory", mine, "is a directory"},
		{"a missing file", filepath.Join(mine, "none"), "cannot be read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			real, err := CheckTrusted(c.path, "--fio "+c.path)
			if c.refusal == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
					t.Fatalf("gave %q, not the file itself (%v)", real, err)
				}
				return
			}
			if err == nil || !isInput(err) {
				t.Fatalf("got %v, want an input error saying %q", err, c.refusal)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.refusal) || !strings.HasPrefix(msg, "--fio "+c.path) || strings.Count(msg, "\n") != 0 {
				t.Errorf("refusal %q: want one sentence naming --fio and saying %q", msg, c.refusal)
			}
		})
	}
}

func TestCheckTrustedDir(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	mine := mkdir(t, filepath.Join(base, "bin"), 0o755, 0)
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755, nobody)
	// Sticky keeps others from replacing a program, not from adding one
	// that calibra (or initdb, beside itself) looks for.
	sticky := mkdir(t, filepath.Join(base, "sticky"), 0o777|os.ModeSticky, 0)
	if err := CheckTrustedDir(mine, "--pg-bin "+mine); err != nil {
		t.Errorf("root's directory refused: %v", err)
	}
	for _, dir := range []string{theirs, sticky} {
		if err := CheckTrustedDir(dir, "--pg-bin "+dir); err == nil || !isInput(err) {
			t.Errorf("%s: got %v, want a refusal", dir, err)
		}
	}
}
