package device

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Fio is the fio binary calibra drives.
type Fio struct {
	Path    string
	Version string // as fio prints it, e.g. "fio-3.33"
}

// minMajor is the oldest fio major version calibra reads: fio 3.0 moved
// latencies to nanoseconds (clat_ns), the keys the parser reads.
const minMajor = 3

const installHint = "install fio 3.0 or newer (Debian/Ubuntu: apt-get install fio; Fedora/RHEL: dnf install fio) or pass --fio PATH"

// stopGrace is how long fio gets to stop its jobs after SIGINT: it only has
// to finish the I/Os in flight.
const stopGrace = 10 * time.Second

var fioVersion = regexp.MustCompile(`^fio-(\d+)\.(\d+)`)

var fioTool = proc.Tool{Name: "fio", Flag: "--fio", What: "fio", Version: fioVersion, MinMajor: minMajor, Hint: installHint}

// FindFio locates fio (explicit, else on PATH) and checks its version.
func FindFio(ctx context.Context, explicit string) (Fio, error) {
	path, version, err := fioTool.Find(ctx, explicit)
	return Fio{Path: path, Version: version}, err
}

// run runs one job under raw/ as name: it writes name.fio, has fio write its
// JSON to a temporary file that becomes name.json once fio is done (so raw/
// never holds half a report), keeps fio's other output in name.log when
// there is any, and returns the parsed report. A report whose jobs hit I/O
// errors is returned with them; a run that produced no report is an error.
func (f Fio) run(ctx context.Context, env Env, name string, job Job) (*Report, error) {
	// raw/ is calibra's own, in a run directory under the safefs rule
	// (results.Create): no other account can plant a link at a name fio
	// or calibra writes there, so they write by name.
	rawDir := env.RawDir
	base := filepath.Join(rawDir, name)
	if err := results.WriteFileAtomic(base+".fio", []byte(job.JobFile())); err != nil {
		return nil, err
	}
	tmp := filepath.Join(rawDir, "."+name+".json.tmp")
	defer os.Remove(tmp) // safefs: fio's output in the run directory's raw/, calibra's own
	cmd := exec.Command(f.Path, "--output-format=json+", "--output="+tmp, "--eta=never", base+".fio")
	cmd.Dir = rawDir // whatever else fio writes lands in raw/
	log := &capped{limit: 1 << 20}
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	env.Cgroup.Prepare(cmd.SysProcAttr)
	p, err := env.Group.Start("fio", cmd, syscall.SIGINT)
	if err != nil {
		return nil, err
	}
	// A storage limit throttles fio as it does the server.
	if err := env.Cgroup.Attach(p.Pid()); err != nil {
		_ = p.Stop(stopGrace)
		return nil, err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		_ = p.Stop(stopGrace)
	}
	if log.Len() > 0 {
		if err := results.WriteFileAtomic(base+".log", log.Bytes()); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, rerr := os.ReadFile(tmp)
	if rerr == nil {
		rerr = safefs.Rename(rawDir, filepath.Base(tmp), name+".json")
	}
	if rerr != nil || len(data) == 0 {
		return nil, fmt.Errorf("fio %s wrote no report (%s): %s", name, exitText(p.Err()), lastLine(log.String()))
	}
	rep, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("fio %s: %w", name, err)
	}
	if p.Err() != nil && rep.Errors == 0 {
		return nil, fmt.Errorf("fio %s failed (%s): %s", name, exitText(p.Err()), lastLine(log.String()))
	}
	return rep, nil
}

// capped keeps the first limit bytes written to it and drops the rest:
// fio may print a line per I/O error.
type capped struct {
	bytes.Buffer
	limit int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// lastLine is the last non-empty line of fio's output: where it says why.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return "no output"
}

// errnoSuffix names the error a job ended on, if one did: " (invalid
// argument, errno 22)".
func errnoSuffix(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s, errno %d)", syscall.Errno(n).Error(), n)
}
