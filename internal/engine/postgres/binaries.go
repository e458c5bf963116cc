// Package postgres is calibra's PostgreSQL engine: finding the server
// binaries, the managed throwaway instance on the storage under test, and
// connections to it or to an existing server.
package postgres

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
)

// Binaries is one PostgreSQL server installation.
type Binaries struct {
	Dir     string `json:"dir"`
	Version string `json:"version"` // e.g. "15.18"
	Major   int    `json:"major"`
}

const installHint = "install the server package (Debian/Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server) or pass --pg-bin DIR"

// FindBinaries locates initdb and postgres: --pg-bin, then pg_config
// --bindir, then /usr/lib/postgresql/*/bin (highest major), then PATH.
func FindBinaries(explicit string) (Binaries, error) {
	if explicit != "" {
		if !hasServer(explicit) {
			return Binaries{}, fault.Input(installHint, "--pg-bin %s holds no initdb and postgres", explicit)
		}
		return describe(explicit)
	}
	var candidates []string
	if out, err := proc.Probe(exec.Command("pg_config", "--bindir")).Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	candidates = append(candidates, debianBinDirs()...)
	if p, err := exec.LookPath("postgres"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, dir := range candidates {
		if hasServer(dir) {
			return describe(dir)
		}
	}
	return Binaries{}, fault.Input(installHint, "no PostgreSQL server binaries (initdb, postgres) were found")
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// debianBinDirs lists /usr/lib/postgresql/N/bin, highest major first.
func debianBinDirs() []string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	major := func(p string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		return n
	}
	sort.Slice(matches, func(i, j int) bool { return major(matches[i]) > major(matches[j]) })
	return matches
}

var versionRE = regexp.MustCompile(`\(PostgreSQL\) (\d+)(?:\.(\d+))?`)

func describe(dir string) (Binaries, error) {
	out, err := proc.Probe(exec.Command(filepath.Join(dir, "postgres"), "--version")).Output()
	if err != nil {
		return Binaries{}, fault.Input(installHint, "%s/postgres --version failed: %v", dir, err)
	}
	v, major, err := parseVersion(out)
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{Dir: dir, Version: v, Major: major}, nil
}

func parseVersion(out []byte) (string, int, error) {
	m := versionRE.FindSubmatch(bytes.TrimSpace(out))
	if m == nil {
		return "", 0, fmt.Errorf("unrecognised postgres --version output %q", out)
	}
	major, _ := strconv.Atoi(string(m[1]))
	v := string(m[1])
	if len(m[2]) > 0 {
		v += "." + string(m[2])
	}
	return v, major, nil
}

// Path returns the full path of one of the installation's programs.
func (b Binaries) Path(name string) string { return filepath.Join(b.Dir, name) }
