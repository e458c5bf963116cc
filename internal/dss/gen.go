package dss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Generator is tpchgen-cli, the Rust TPC-H generator that reproduces dbgen's
// data exactly; calibra drives it as it drives fio.
type Generator struct {
	Path    string
	Version string // as it prints it, e.g. "tpchgen-cli 2.0.1"
}

// InstallHint says how to get the generator.
const InstallHint = "install it with 'pip install tpchgen-cli' (or 'cargo install tpchgen-cli') or pass --tpchgen PATH"

var generatorVersion = regexp.MustCompile(`^tpchgen-cli (\d+)\.\d+`)

// minGeneratorMajor is the first version with --stdout and --part, which the
// streaming load needs.
const minGeneratorMajor = 1

var generatorTool = proc.Tool{Name: "tpchgen-cli", Flag: "--tpchgen", What: "the TPC-H generator tpchgen-cli",
	Version: generatorVersion, MinMajor: minGeneratorMajor, Hint: InstallHint, Resolve: unshim}

// FindGenerator locates tpchgen-cli (explicit, else on PATH) and checks its
// version.
func FindGenerator(ctx context.Context, explicit string) (Generator, error) {
	path, version, err := generatorTool.Find(ctx, explicit)
	return Generator{Path: path, Version: version}, err
}

// unshim resolves a pyenv shim (where 'pip install' puts the generator
// under pyenv) to the program itself: the shim starts pyenv's shell
// scripts, about 2 s on each of the build's many starts. pyenv, which
// calibra runs to ask, passes the rule for what calibra runs first.
func unshim(ctx context.Context, path string) (string, error) {
	shims := filepath.Dir(path)
	if filepath.Base(shims) != "shims" {
		return path, nil
	}
	root := filepath.Dir(shims) // PYENV_ROOT
	for _, pyenv := range []string{"pyenv", filepath.Join(root, "bin", "pyenv"), filepath.Join(root, "libexec", "pyenv")} {
		prog, err := proc.Find(pyenv, "pyenv, which finds the program behind the shim "+path)
		if errors.Is(err, exec.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		cmd := proc.Probe(prog.CommandContext(ctx, "which", filepath.Base(path)))
		cmd.Env = append(os.Environ(), "PYENV_ROOT="+root)
		out, err := cmd.Output()
		if real := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(real) {
			return real, nil
		}
	}
	return path, nil
}

// args are the generator's arguments for one part of a table in dbgen's
// .tbl format on stdout, on one thread: the load runs parts in parallel.
func (g Generator) args(sf float64, tbl string, part, parts int) []string {
	return []string{"tbl", "--scale-factor", strconv.FormatFloat(sf, 'f', -1, 64), "--tables", tbl,
		"--parts", strconv.Itoa(parts), "--part", strconv.Itoa(part), "--stdout", "--num-threads", "1", "--quiet"}
}

// together generates the small tables, whole, into files of a new private
// directory under temp, all in one generator: each generator starts with
// its text pool, about 0.75 s of CPU, more than a small table's rows cost.
// It returns the directory, which the caller removes; "" when temp cannot
// hold one, and the tables stream on their own.
func (g Generator) together(ctx context.Context, group *proc.Group, temp string, sf float64, tbls []string) (string, error) {
	dir, err := safefs.PrivateTemp(temp, "calibra-tpch-")
	if err != nil {
		return "", nil
	}
	cmd := exec.Command(g.Path, "tbl", "--scale-factor", strconv.FormatFloat(sf, 'f', -1, 64), "--tables", strings.Join(tbls, ","),
		"--output-dir", dir, "--num-threads", "1", "--quiet")
	var stderr tail
	cmd.Stderr = &stderr
	p, err := group.Start("tpchgen-cli", cmd, syscall.SIGTERM)
	if err != nil {
		return dir, fmt.Errorf("start %s: %w", g.Path, err)
	}
	<-p.Done()
	return dir, g.exited(ctx, p, strings.Join(tbls, ","), &stderr)
}

// exited is a generator's end, once Done: nil, the cancellation that
// stopped it, or its failure in its own last words.
func (g Generator) exited(ctx context.Context, p *proc.Proc, what string, stderr *tail) error {
	if err := p.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s %s: %v: %s", g.Path, what, err, stderr.String())
	}
	return nil
}

// stream starts the generator on one part and hands its output to consume;
// it waits for the generator and reports whichever side failed first.
func (g Generator) stream(ctx context.Context, group *proc.Group, sf float64, tbl string, part, parts int, consume func(io.Reader) error) error {
	// An os.Pipe rather than StdoutPipe: the group's Wait would close
	// StdoutPipe's reader as soon as the generator exits, losing the rest.
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	// A 1 MiB pipe lets the generator run ahead of COPY instead of trading
	// the CPU with it every 64 KiB; the default size works too, if slower.
	_, _ = unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	cmd := exec.Command(g.Path, g.args(sf, tbl, part, parts)...)
	cmd.Stdout = w
	var stderr tail
	cmd.Stderr = &stderr
	p, err := group.Start("tpchgen-cli", cmd, syscall.SIGTERM)
	w.Close()
	if err != nil {
		return fmt.Errorf("start %s: %w", g.Path, err)
	}
	cerr := consume(r)
	if cerr != nil {
		_ = p.Stop(time.Second) // it may be blocked writing to a pipe nobody reads
	}
	<-p.Done()
	if cerr != nil {
		return cerr
	}
	return g.exited(ctx, p, fmt.Sprintf("%s part %d/%d", tbl, part, parts), &stderr)
}

// tail keeps the last KiB of the generator's stderr: where it says why.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 1024 {
		t.b = t.b[len(t.b)-1024:]
	}
	return len(p), nil
}

func (t *tail) String() string { return strings.TrimSpace(string(t.b)) }
