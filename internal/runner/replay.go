package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/profile"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/replay"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/study"
	"github.com/calibra-bench/calibra/internal/terms"
)

// ReplayDefaultSLA is the replay's --sla when not given.
const ReplayDefaultSLA = replay.DefaultSLA

// Replay is a replay step: the profile, the SLA each multiple is judged
// by, and the data's scale.
type Replay struct {
	Profile, SLA   string
	Scale          float64
	Window, Warmup time.Duration
	MaxMultiple    float64
	Loaders        int
}

// PlanReplay reads the profile and checks the step.
func PlanReplay(ctx context.Context, c *Config, f Replay) (Needs, StepFunc, error) {
	var p Problems
	c.Validate(&p)
	var prof *profile.Profile
	if f.Profile == "" {
		p.Add("give --profile FILE, written by calibra profile --out FILE", "a replay needs a profile")
	} else if pr, err := profile.Read(ctx, f.Profile); err != nil {
		p = append(p, err)
	} else {
		prof = pr
	}
	sla, err := replay.ParseSLA(f.SLA)
	if err != nil {
		p = append(p, err)
	}
	if f.Scale <= 0 || f.Scale > 1000 {
		p.Add("give a factor such as 0.1 or 1", "--scale %g is not from above 0 to 1000", f.Scale)
	}
	if f.Window <= 0 {
		p.Add("give a duration such as 30s", "--window %s is not positive", f.Window)
	}
	if f.Warmup < 0 {
		p.Add("give 0s or a duration such as 10s", "--warmup %s is negative", f.Warmup)
	}
	if f.MaxMultiple < 1 || f.MaxMultiple > 1024 {
		p.Add("give a multiple from 1 to 1024, such as 16", "--max-multiple %g is not from 1 to 1024", f.MaxMultiple)
	}
	if f.Loaders <= 0 {
		p.Add("give a whole number of 1 or more", "--loaders %d is not positive", f.Loaders)
	}
	p.longest("--window", f.Window, MaxWindow)
	p.longest("--warmup", f.Warmup, MaxWindow)
	p.most("--loaders", f.Loaders, MaxWorkers)
	var need uint64
	if prof != nil {
		if need, err = spaceFor("--scale", float64(prof.Shape.DataBytes)*f.Scale, 3); err != nil {
			p = append(p, err)
		}
	}
	if err := p.Err(); err != nil {
		return Needs{}, nil, err
	}
	cfg := replay.Config{Profile: prof, File: f.Profile, Scale: f.Scale, SLA: sla, Window: f.Window, Warmup: f.Warmup,
		MaxMultiple: f.MaxMultiple, Seed: c.Seed, Loaders: f.Loaders}
	return Needs{Database: true, MaxConns: 2*replay.MaxWorkers + f.Loaders + 10, Bytes: need}, replayBody(cfg), nil
}

// replayCacheShare is the replay's data over its database cache unless
// --db-cache is given: the replay drives the profile's page reads (its
// cache misses), not its hits, so most of its uniform reads must miss.
const replayCacheShare = 8

// ReplayStudy is 'run --profile FILE': a study of one replay step, and
// the managed instance's cache for it, an eighth of the replay's data.
func ReplayStudy(ctx context.Context, file, sla string, scale float64) (*study.Study, string, error) {
	p, err := profile.Read(ctx, file)
	if err != nil {
		return nil, "", err
	}
	cache := fmt.Sprintf("%dMB", max(16, int64(float64(p.Shape.DataBytes)*scale/replayCacheShare)>>20))
	data, err := yaml.Marshal(map[string]any{"version": study.Version, "name": "replay",
		"steps": []map[string]string{{"kind": results.KindReplay, "profile": file, "sla": sla, "scale": strconv.FormatFloat(scale, 'g', -1, 64)}}})
	if err != nil {
		return nil, "", err
	}
	st, err := study.Parse(data, "--profile")
	return st, cache, err
}

func replayBody(cfg replay.Config) StepFunc {
	return func(ctx context.Context, s *Session) ([]results.Step, error) {
		started := time.Now()
		env := replay.Env{Prog: s.prog, Log: terms.Of(s.target.Name()).Log}
		if s.obs != nil {
			env.Edge, env.Window = s.obs.Edge, s.obs.Window
		}
		out, err := replay.Run(ctx, s.target, cfg, env)
		return []results.Step{newStep(results.KindReplay, "replay", started, out)}, err
	}
}

// attachRunning opens the engine c names and reaches its server. With
// neither --engine nor --dsn given, the managed instance running under
// --path may be any engine's: the others are tried when the default's
// is not running there.
func attachRunning(ctx context.Context, c *Config, named bool) (engine.Engine, error) {
	e, err := attach(ctx, c)
	var notRunning *fault.InputError
	if err == nil || named || !errors.As(err, &notRunning) {
		return e, err
	}
	for _, name := range engine.Names() {
		if name == c.Engine {
			continue
		}
		other := *c
		other.Engine = name
		if e, otherErr := attach(ctx, &other); otherErr == nil {
			*c = other
			return e, nil
		}
	}
	return nil, err
}

func attach(ctx context.Context, c *Config) (engine.Engine, error) {
	e, err := engine.Open(ctx, c.Engine, c.engineConfig())
	if err != nil {
		return nil, err
	}
	if a, ok := e.(engine.Attacher); ok {
		return e, a.Attach(ctx)
	}
	if e.Local() != nil {
		return nil, fault.Input("give --dsn for it", "calibra profile cannot reach a running managed instance of %s", c.Engine)
	}
	return e, nil
}

// Profile captures the I/O shape of the server c names (a --dsn server,
// or the managed instance another command runs under --path) over d and
// writes it to out (stdout when empty). It starts nothing and changes
// nothing on the server.
func Profile(ctx context.Context, env Env, c *Config, d time.Duration, out string) error {
	var p Problems
	named := c.Engine != "" || c.DSN != ""
	c.Validate(&p)
	if d < time.Second || d > MaxWindow {
		p.Add("give a duration such as 20s or 5m", "--duration %s is not from 1s to %s", d, MaxWindow)
	}
	if out != "" {
		if err := safefs.CheckDir(filepath.Dir(out), ""); err != nil {
			p = append(p, err)
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	e, err := attachRunning(ctx, c, named)
	if err != nil {
		return err
	}
	pe := profile.Env{Prog: progress.New(env.Stderr, c.Progress, env.StderrTTY), Tool: env.Version}
	if local := e.Local(); local != nil {
		// The device under the data, when the server is on this machine.
		if obs, err := observe.Start(ctx, observe.Config{Path: local.DataDir, WALPath: local.LogDir}); err == nil {
			defer obs.Stop()
			pe.Edge, pe.Window = obs.Edge, obs.Window
		}
	}
	prof, err := profile.Capture(ctx, e, d, pe)
	if err != nil {
		return err
	}
	data, err := prof.Encode()
	if err != nil {
		return err
	}
	if out == "" {
		_, err = env.Stdout.Write(data)
		return err
	}
	if err := results.WriteFileAtomic(out, data); err != nil {
		return fmt.Errorf("write the profile: %w", err)
	}
	pe.Prog.Phase("profile: %.0f page reads/s, %.0f commits/s, %.0f WAL bytes a commit, %.1f active sessions; written to %s",
		prof.Rates.PageReadsPS, prof.Rates.CommitsPS, prof.Shape.WALBytesPerCommit, prof.Shape.Concurrency, out)
	return nil
}
