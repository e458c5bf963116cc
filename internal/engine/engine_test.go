package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
)

// fake is an engine with no capability beyond the required ones.
type fake struct{ cfg Config }

func (f *fake) Name() string { return "fake" }
func (f *fake) Start(context.Context, *proc.Group) (bool, error) {
	return false, nil
}
func (f *fake) Stop() error              { return nil }
func (f *fake) Describe() results.Engine { return results.Engine{Name: "fake", Target: f.cfg.Path} }
func (f *fake) Local() *Local            { return nil }
func (f *fake) SetServerLog(string)      {}

// Adding an engine is its own code and one registration: the registry
// opens it by name, and a workload asking for a capability it lacks gets a
// sentence for missing, not a failure.
func TestAFakeEngineRegistersAndOpens(t *testing.T) {
	Register(Descriptor{Name: "fake", Open: func(_ context.Context, cfg Config) (Engine, error) { return &fake{cfg}, nil }})
	if !slices.Contains(Names(), "fake") {
		t.Fatalf("names %v", Names())
	}
	e, err := Open(context.Background(), "fake", Config{Path: "/mnt/x"})
	if err != nil || e.Describe().Target != "/mnt/x" {
		t.Fatalf("open: %v, %+v", err, e)
	}
	if _, ok := e.(ColdRestarter); ok {
		t.Fatal("the fake engine claims a cold restart")
	}
	if got := NotSupported(e, "a cold start"); got != "a cold start is not supported by fake" {
		t.Fatalf("missing reads %q", got)
	}
	_, err = Open(context.Background(), "oracle", Config{})
	if err == nil || !strings.Contains(err.Error(), `--engine "oracle" is not an engine calibra knows`) {
		t.Fatalf("unknown engine: %v", err)
	}
}

// A workload asks its table for the engine's dialect; an engine without
// one gets the sentence for missing, as an input error.
func TestADialectIsFoundByEngine(t *testing.T) {
	type dialect struct{ engine string }
	d := NewDialects[dialect]("the oltp workload")
	d.Register("fake", func(e Engine) (dialect, error) { return dialect{e.Name()}, nil })
	got, err := d.For(&fake{})
	if err != nil || got.engine != "fake" {
		t.Fatalf("for fake: %+v, %v", got, err)
	}
	_, err = d.For(&other{})
	if err == nil || !strings.Contains(err.Error(), "the oltp workload is not supported by other") || fault.Code(err) != fault.ExitInput {
		t.Fatalf("for an engine without a dialect: %v", err)
	}
}

// A dialect registered for an engine's own type is never handed another's.
func TestRegisterForChecksTheEnginesType(t *testing.T) {
	d := NewDialects[string]("the oltp workload")
	RegisterFor(d, "fake", func(f *fake) (string, error) { return f.Name(), nil })
	RegisterFor(d, "other", func(f *fake) (string, error) { return f.Name(), nil })
	if got, err := d.For(&fake{}); err != nil || got != "fake" {
		t.Fatalf("for fake: %q, %v", got, err)
	}
	if _, err := d.For(&other{}); err == nil || !strings.Contains(err.Error(), "the other dialect was given *engine.other") {
		t.Fatalf("for other: %v", err)
	}
}

type other struct{ fake }

func (o *other) Name() string { return "other" }

// Two engines never share a managed directory: one named so that another
// engine's pattern takes it (a twin of PostgreSQL in calibra-pgtwin, which
// calibra-pg* matches) is refused at registration, before either could
// open or clean the other's instance.
func TestEnginesSharingADirectoryAreRefused(t *testing.T) {
	pg := []Managed{{Pattern: "calibra-pg*", Dir: "calibra-pg"}}
	for _, c := range []struct {
		twin   Managed
		shared bool
	}{
		{Managed{Pattern: "calibra-pg*", Dir: "calibra-pg"}, true},
		{Managed{Pattern: "calibra-pgtwin*", Dir: "calibra-pgtwin"}, true},
		{Managed{Pattern: "calibra-*", Dir: "calibra-twin"}, true},
		{Managed{Pattern: "calibra-twin*", Dir: "calibra-twin"}, false},
	} {
		if dir, shared := shareADirectory(pg, []Managed{c.twin}); shared != c.shared {
			t.Errorf("%+v beside PostgreSQL's: shared %v (%s), want %v", c.twin, shared, dir, c.shared)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a second engine in fake's directory was registered")
		}
	}()
	Register(Descriptor{Name: "fake-in-pg", Managed: pg})
	Register(Descriptor{Name: "fake-twin", Managed: []Managed{{Pattern: "calibra-pgtwin*", Dir: "calibra-pgtwin"}}})
}
