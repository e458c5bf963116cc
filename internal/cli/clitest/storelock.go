package clitest

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"testing"

	_ "modernc.org/sqlite" // the store's own driver
)

// holdStore makes the test binary hold a write transaction on the SQLite
// store it names (see HoldStoreLock).
const holdStore = "CALIBRA_TEST_HOLD_STORE"

// HoldStoreLock starts a second process that holds a write transaction
// on the SQLite results store at path until the test ends: another
// calibra, or any program, in the middle of a long write.
func HoldStoreLock(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), holdStore+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the holder rolls back and exits
		_ = cmd.Wait()
	})
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("the second process did not take the store's write lock: %q", line)
	}
}

// holdWriteLock is the second process of HoldStoreLock: it begins a write
// transaction on the store at path, says "held", and keeps it until its
// standard input ends.
func holdWriteLock(path string) int {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_txlock=immediate")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer tx.Rollback()
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}
