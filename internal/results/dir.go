package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Dir is a run directory: results.json, logs/, raw/ and the reports.
type Dir struct {
	Path string

	mu  sync.Mutex
	run *Run
}

// DefaultParent is where run directories go when --out is not given.
const DefaultParent = "calibra-runs"

var unsafeLabel = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultFix is the cure for a current directory calibra may not make
// calibra-runs in.
const defaultFix = "give --out in a directory only calibra's account (or root) can write to, or run calibra from one"

// maxSuffix bounds the names DefaultPath tries in one second.
const maxSuffix = 1000

// DefaultPath names a run directory by its UTC start time and label, in
// calibra-runs of the current directory; a second command started in the
// same second gets "-2" (then "-3"...), so scripted runs never collide.
// The current directory must pass the rule of internal/safefs (others
// could swap calibra-runs for a link mid-run otherwise), and calibra-runs
// is made, or taken, as calibra's own. A name the file system refuses (a
// label too long) is an error, never a loop.
func DefaultPath(start time.Time, label string) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", fault.Input(defaultFix, "the current directory cannot be read: %v", err)
	}
	if err := safefs.CheckParent(cwd, defaultFix); err != nil {
		return "", err
	}
	parent, err := safefs.MkdirOwn(cwd, DefaultParent, 0o755)
	if err != nil {
		return "", err
	}
	name := start.UTC().Format("20060102T150405Z")
	if l := unsafeLabel.ReplaceAllString(label, "-"); l != "" {
		name += "_" + l
	}
	path := filepath.Join(parent, name)
	for n := 2; n <= maxSuffix; n++ {
		_, err := os.Lstat(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return path, nil
		case errors.Is(err, syscall.ENAMETOOLONG):
			return "", fault.Input("give a shorter --label, or an --out", "the run directory's name %s... is longer than the file system allows", path[:min(len(path), len(parent)+40)])
		case err != nil:
			return "", fault.Input("give an --out", "the run directory %s cannot be named: %v", path, unwrapPathError(err))
		}
		path = filepath.Join(parent, fmt.Sprintf("%s-%d", name, n))
	}
	return "", fault.Input("give an --out", "%d run directories named %s already exist in %s", maxSuffix, name, parent)
}

// Create makes a new run directory at path and writes an initial results.json
// with status "running". It refuses a directory that already holds a run.
// The directory's path is made absolute: tools calibra starts elsewhere
// (fio, the server) write into it.
func Create(path string, run *Run) (*Dir, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if err := makeRunDir(path); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(filepath.Join(path, "results.json")); err == nil {
		return nil, fault.Input("choose another --out or remove the old run",
			"the run directory %s already holds a run", path)
	}
	for _, sub := range []string{"logs", "raw"} {
		if _, err := safefs.MkdirOwn(path, sub, 0o755); err != nil {
			return nil, err
		}
	}
	run.Schema = Schema
	run.Status = StatusRunning
	d := &Dir{Path: path, run: run}
	return d, d.Save()
}

// outFix is the cure for an --out calibra may not use.
const outFix = "choose an --out that does not exist yet, in a directory only calibra's account (or root) can write to"

// makeRunDir makes the run directory path (absolute), or takes an
// existing one of calibra's own account that no other account can write
// (safefs.Own). Its parent, made as calibra's own where missing, must
// pass safefs.CheckParent: calibra, fio and the server write the run by
// path, and a run directory swapped for a link mid-run, or one holding
// another account's links, would have them write wherever the links
// point. A directory such as /tmp is never a run directory.
func makeRunDir(path string) error {
	parent := filepath.Dir(path)
	if _, err := os.Lstat(parent); errors.Is(err, os.ErrNotExist) {
		// Missing parents are made as calibra's own below one that
		// passes CheckParent.
		if parent, err = safefs.MkdirAllOwn(parent, 0o755); err != nil {
			return err
		}
	}
	if err := safefs.CheckParent(parent, outFix); err != nil {
		return err
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err == nil {
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			if st.Mode&0o022 != 0 {
				return fault.Input(outFix, "the run directory %s is writable by other accounts, who could plant links in it", path)
			}
		case syscall.S_IFLNK:
		default:
			return fault.Input("choose another --out", "the run directory %s is not a directory", path)
		}
	}
	if _, err := safefs.MkdirOwn(parent, filepath.Base(path), 0o755); err != nil {
		var in *fault.InputError
		if errors.As(err, &in) && strings.Contains(in.Msg, "symbolic link") {
			return fault.Input("choose another --out, or remove the link (another account may have made it)", "the run directory %s is a symbolic link, which calibra does not follow", path)
		}
		return err
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// File returns the path of a file inside the run directory.
func (d *Dir) File(parts ...string) string {
	return filepath.Join(append([]string{d.Path}, parts...)...)
}

// Update gives f the run under the directory's lock, then saves results.json.
func (d *Dir) Update(f func(*Run)) error {
	d.mu.Lock()
	f(d.run)
	d.mu.Unlock()
	return d.Save()
}

// Steps are the steps kept so far.
func (d *Dir) Steps() []Step {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.run.Steps)
}

// AddStep appends a finished step and saves results.json at once, so a step
// survives whatever happens later.
func (d *Dir) AddStep(s Step) error {
	return d.Update(func(r *Run) { r.Steps = append(r.Steps, s) })
}

// Finish sets the final status and saves.
func (d *Dir) Finish(status string, err error) error {
	return d.Update(func(r *Run) {
		now := time.Now().UTC()
		r.FinishedAt = &now
		r.Status = status
		if err != nil {
			r.Error = err.Error()
		}
	})
}

// Save writes results.json atomically.
func (d *Dir) Save() error {
	d.mu.Lock()
	data, err := json.MarshalIndent(d.run, "", "  ")
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	return WriteFileAtomic(d.File("results.json"), append(data, '\n'))
}

// Load reads a run directory's results.json. A missing file, broken JSON or
// a schema this version does not know is bad input: the user gave the wrong
// directory or a file from another tool or version.
func Load(path string) (*Run, error) {
	file := filepath.Join(path, "results.json")
	data, err := ReadBounded(file, MaxResultsBytes)
	var in *fault.InputError
	if errors.As(err, &in) {
		return nil, err
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, fault.Input("give the run directory that calibra wrote (it holds results.json)",
			"%s holds no results.json", path)
	}
	if err != nil {
		return nil, fault.Input("check the path and its permissions", "cannot read %s: %v", file, unwrapPathError(err))
	}
	return Decode(data, file)
}

// Decode reads results.json's content, data, read from file (the store
// keeps it); its errors are Load's, naming file.
func Decode(data []byte, file string) (*Run, error) {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fault.Input("rerun the command that wrote it, or restore the file", "%s is not valid JSON (%v)", file, err)
	}
	if head.Schema != Schema {
		return nil, fault.Input("use the calibra version that wrote it",
			"%s has schema %q, but this calibra reads %q", file, head.Schema, Schema)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fault.Input("rerun the command that wrote it, or restore the file", "%s does not match its schema (%v)", file, err)
	}
	return &r, nil
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it and
// renames it over path, so readers never see a half-written file.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // safefs: the CreateTemp file in the run directory, calibra's own
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return safefs.Rename(filepath.Dir(path), filepath.Base(tmp.Name()), filepath.Base(path))
}
