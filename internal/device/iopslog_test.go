package device

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Two workers' logs of a mixed run: summed per second, the writes apart;
// fio's 999 ms and 2001 ms stamps are the first and second seconds.
func TestReadIOPSLogs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("001-x-qd1_iops.1.log", "999, 700, 0, 0, 0\n999, 300, 1, 0, 0\n2001, 600, 0, 0, 0\n2001, 200, 1, 0, 0\n")
	write("001-x-qd1_iops.2.log", "1000, 70, 0, 0, 0\n1000, 30, 1, 0, 0\n2000, 60, 0, 0, 0\n2000, 20, 1, 0, 0\n")
	write("002-x-qd1_iops.1.log", "1000, 5, 0, 0, 0\n")
	iv, err := readIOPSLogs(dir, "001-x-qd1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(iv.All, []float64{1100, 880}) || !slices.Equal(iv.Writes, []float64{330, 220}) {
		t.Errorf("all %v writes %v", iv.All, iv.Writes)
	}
	none, err := readIOPSLogs(dir, "003-none")
	if err != nil || len(none.All) != 0 {
		t.Errorf("no logs: %+v %v", none, err)
	}
	write("004-bad_iops.1.log", "999, many, 0, 0, 0\n")
	if _, err := readIOPSLogs(dir, "004-bad"); err == nil || !strings.Contains(err.Error(), "004-bad_iops.1.log:1 is not an IOPS log line") {
		t.Errorf("a damaged log: %v", err)
	}
}
