package proc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A grandchild whose parent dies stays in calibra's tree, as a killed
// server's backends must for the outside-CPU figure.
func TestAnOrphanStaysInCalibrasTree(t *testing.T) {
	if err := AdoptOrphans(); err != nil {
		t.Skipf("this kernel refuses a child subreaper: %v", err)
	}
	out, err := exec.Command("sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGKILL) }()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if ppid, _ := strconv.Atoi(f[1]); ppid != os.Getpid() {
		t.Fatalf("the orphaned sleep's parent is %d, not calibra (%d)", ppid, os.Getpid())
	}
}
