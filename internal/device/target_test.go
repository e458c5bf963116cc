package device

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRawTargetFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(file, make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		allow   []string
		writers []string
		need    int64
		wantErr string
		destroy bool
	}{
		{name: "read-only specs need no permission", need: 64 << 10},
		{name: "writes need --allow-destroy", writers: []string{"1m-seqwrite"}, need: 4096,
			wantErr: "the specs 1m-seqwrite would overwrite the file " + file + "; pass --allow-destroy " + file},
		{name: "--allow-destroy naming it", allow: []string{file}, writers: []string{"8k-randwrite"}, need: 4096, destroy: true},
		{name: "--allow-destroy naming another", allow: []string{"/dev/null"}, writers: []string{"8k-randwrite"}, need: 4096, wantErr: "would overwrite"},
		{name: "too small", need: 1 << 20, wantErr: "holds 64 KiB but the workers need 1 MiB; lower --size or --workers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RawTarget(file, tt.allow, tt.writers, tt.need)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != KindFile || got.Destroy != tt.destroy || got.writable() != tt.destroy {
				t.Errorf("target %+v", got)
			}
		})
	}
	if _, err := RawTarget("/dev/null", nil, nil, 0); err == nil || !strings.Contains(err.Error(), "none of a directory, a file or a block device") {
		t.Errorf("a character device: %v", err)
	}
}

func TestDirTarget(t *testing.T) {
	dir := t.TempDir()
	if got, err := DirTarget(dir); err != nil || got.Kind != KindDir || !got.writable() {
		t.Fatalf("DirTarget = %+v, %v", got, err)
	}
	// A test directory left by an earlier run is reused...
	test := filepath.Join(dir, TestDir)
	if err := os.Mkdir(test, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := DirTarget(dir); err != nil {
		t.Fatalf("a leftover test directory: %v", err)
	}
	// ...but never through a symbolic link.
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), filepath.Join(test, "w0")); err != nil {
		t.Fatal(err)
	}
	if _, err := DirTarget(dir); err == nil || !strings.Contains(err.Error(), "holds a symbolic link, w0; remove "+test) {
		t.Errorf("a link in the test directory: %v", err)
	}
	other := t.TempDir()
	if err := os.Symlink(dir, filepath.Join(other, TestDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := DirTarget(other); err == nil || !strings.Contains(err.Error(), "is not a directory of calibra's test files") {
		t.Errorf("a test directory that is a link: %v", err)
	}
}

// Cleanup removes calibra's files and directory, and nothing else.
func TestCleanup(t *testing.T) {
	mine, shared := t.TempDir(), t.TempDir()
	for _, d := range []string{mine, shared} {
		if err := os.MkdirAll(filepath.Join(d, TestDir), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"w0", "w12"} {
			if err := os.WriteFile(filepath.Join(d, TestDir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	stranger := filepath.Join(shared, TestDir, "notes.txt")
	if err := os.WriteFile(stranger, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Cleanup([]Target{{Path: mine, Kind: KindDir}, {Path: shared, Kind: KindDir}, {Path: "/dev/null", Kind: KindBlock}})
	if err == nil {
		t.Error("Cleanup should report the directory it could not remove")
	}
	if entries, _ := os.ReadDir(mine); len(entries) != 0 {
		t.Errorf("%s still holds %v", mine, entries)
	}
	entries, _ := os.ReadDir(filepath.Join(shared, TestDir))
	if len(entries) != 1 || entries[0].Name() != "notes.txt" {
		t.Errorf("the shared test directory holds %v, want only the stranger's file", entries)
	}
	if err := Cleanup([]Target{{Path: mine, Kind: KindDir}}); err != nil {
		t.Errorf("Cleanup of a clean target: %v", err)
	}
}

func TestCheckDirect(t *testing.T) {
	dir := t.TempDir()
	if err := CheckDirect(Target{Path: dir, Kind: KindDir}); err != nil {
		t.Skipf("this file system refuses O_DIRECT: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("CheckDirect left %v behind", entries)
	}
}

// ramfs refuses O_DIRECT at open (as tmpfs did before Linux 6.6): calibra
// refuses the target with the fix, and leaves nothing behind. Mounting one
// needs root.
func TestCheckDirectRefused(t *testing.T) {
	dir := t.TempDir()
	if err := exec.Command("mount", "-t", "ramfs", "ramfs", dir).Run(); err != nil {
		t.Skipf("cannot mount a ramfs here (needs root): %v", err)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	err := CheckDirect(Target{Path: dir, Kind: KindDir})
	want := "the file system of " + dir + " (ramfs) refuses direct I/O (O_DIRECT); pass --direct=false to measure buffered I/O"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckDirect: %v, want %q", err, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("CheckDirect left %v behind", entries)
	}
}
