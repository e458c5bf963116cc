//go:build integration

package mariadb

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// shared is the managed instance the tests that neither restart, break,
// remove nor reconfigure a server share, one per test binary: started by
// the first that asks (sharedManaged), stopped and removed by TestMain.
// It is the instance a user gets with no flags (engine.Open, the 1 GiB
// default cache); each test writes only databases, tables or accounts of
// its own.
var shared struct {
	once   sync.Once
	path   string
	remove func() // the path's, made by testenv.NewStorageDir
	target *Target
	group  *proc.Group
	err    error
	// accounts is held by a test while it reads the instance's account
	// list or while it has an account of its own on it.
	accounts sync.Mutex
}

// sharedManaged returns the shared instance, started on first use (see
// requireServer).
func sharedManaged(t *testing.T) *Target {
	t.Helper()
	requireServer(t)
	shared.once.Do(func() {
		shared.err = startShared()
	})
	if shared.err != nil {
		t.Fatalf("the shared instance: %v", shared.err)
	}
	return shared.target
}

func startShared() error {
	dir, remove, err := testenv.NewStorageDir()
	if err != nil {
		return err
	}
	shared.path, shared.remove = dir, remove
	e, err := engine.Open(context.Background(), Name, engine.Config{Path: dir})
	if err != nil {
		return err
	}
	shared.target = e.(*Target)
	shared.group = proc.NewGroup()
	_, err = shared.target.Start(context.Background(), shared.group)
	return err
}

// stopShared stops and removes the shared instance, if one was started,
// and says what it left running.
func stopShared() error {
	if shared.path == "" {
		return nil
	}
	var errs []error
	if shared.target != nil {
		if err := shared.target.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if shared.group != nil {
		if err := shared.group.StopAll(time.Minute); err != nil {
			errs = append(errs, err)
		}
	}
	if pids := testenv.ProcessesUnder(shared.path); len(pids) > 0 {
		errs = append(errs, fmt.Errorf("processes still work under %s: %v", shared.path, pids))
	}
	shared.remove()
	if len(errs) > 0 {
		return fmt.Errorf("the shared instance: %v", errs)
	}
	return nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := stopShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
