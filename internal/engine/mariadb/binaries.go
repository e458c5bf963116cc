// Package mariadb is calibra's MariaDB engine: the managed throwaway
// instance on the storage under test (mariadb-install-db, then mariadbd
// as calibra's child), and connections to it or, by DSN, to an existing
// MariaDB or MySQL server.
package mariadb

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Binaries is one MariaDB server installation.
type Binaries struct {
	Server    string       // mariadbd
	InstallDB proc.Program // mariadb-install-db
	Basedir   string       // given to both when the installation is not the system's
	Version   string       // e.g. "10.11.19"
	// DD is dd, with which the server's account writes the new redo log
	// over (writeRedoLog).
	DD proc.Program
}

const installHint = "install the server package (Debian/Ubuntu: apt-get install mariadb-server) or pass the directory holding mariadbd and mariadb-install-db"

// FindBinaries locates mariadbd and mariadb-install-db: in dir when given
// (a bin directory, or an installation's base directory), else where the
// system's package puts them. Each, dir and dd pass the rule for what
// calibra runs before any runs; Server is its real path.
func FindBinaries(dir string) (Binaries, error) {
	var b Binaries
	var installDB string
	what := "the MariaDB server found here"
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return b, err
		}
		what = "the MariaDB installation " + dir
		if err := safefs.CheckTrustedDir(abs, what); err != nil {
			return b, err
		}
		b.Server = firstExecutable(filepath.Join(abs, "mariadbd"), filepath.Join(abs, "bin", "mariadbd"), filepath.Join(abs, "sbin", "mariadbd"), filepath.Join(abs, "..", "sbin", "mariadbd"))
		installDB = firstExecutable(filepath.Join(abs, "mariadb-install-db"), filepath.Join(abs, "scripts", "mariadb-install-db"),
			filepath.Join(abs, "bin", "mariadb-install-db"), filepath.Join(abs, "..", "scripts", "mariadb-install-db"))
		if b.Server == "" || installDB == "" {
			return b, fault.Input(installHint, "%s holds no mariadbd and mariadb-install-db", dir)
		}
		if base := filepath.Dir(filepath.Dir(b.Server)); base != "/usr" {
			b.Basedir = base
		}
	} else {
		b.Server = firstExecutable(lookPath("mariadbd"), "/usr/sbin/mariadbd", "/usr/local/sbin/mariadbd", "/usr/local/mysql/bin/mariadbd")
		installDB = firstExecutable(lookPath("mariadb-install-db"), "/usr/bin/mariadb-install-db", "/usr/local/bin/mariadb-install-db")
		if b.Server == "" || installDB == "" {
			return b, fault.Input(installHint, "no MariaDB server (mariadbd, mariadb-install-db) was found")
		}
	}
	server, err := proc.Find(b.Server, what)
	if err != nil {
		return b, err
	}
	b.Server = server.Path
	if b.InstallDB, err = proc.Find(installDB, what); err != nil {
		return b, err
	}
	if b.DD, err = proc.Need("dd", "dd on PATH", fault.Input("install coreutils", "dd, with which calibra writes MariaDB's new redo log, is not on PATH")); err != nil {
		return b, err
	}
	out, err := proc.VersionOutput(server.Command("--version"))
	if err != nil {
		return b, fault.Input(installHint, "%s --version failed: %v", b.Server, err)
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return b, fault.Input(installHint, "%s is not a MariaDB server (it says %q)", b.Server, out)
	}
	b.Version = string(m[1])
	return b, nil
}

var versionRE = regexp.MustCompile(`Ver (\d+\.\d+\.\d+)-MariaDB`)

// Installed reports whether a MariaDB server is installed here.
func Installed() bool {
	_, err := FindBinaries("")
	return err == nil
}

func lookPath(name string) string {
	p, _ := exec.LookPath(name)
	return p
}

func firstExecutable(paths ...string) string {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return filepath.Clean(p)
		}
	}
	return ""
}
