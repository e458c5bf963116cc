package mariadb

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/fault"
)

// Attach connects to the managed instance another calibra started under
// the path: its socket is on the running mariadbd's command line (its
// private socket directory is made anew at each start), as calibra gave
// it; nothing is started or written.
func (t *Target) Attach(ctx context.Context) error {
	in := t.Managed
	if in == nil {
		return nil
	}
	pid, ok := in.runningPID()
	if !ok {
		return fault.Input("start the load first, e.g. calibra oltp run --engine "+Name+" --path "+in.cfg.Path+", and profile it while it runs",
			"no managed server is running under %s", in.cfg.Path)
	}
	// The kernel's record of the process, not an input (safefs refuses it).
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return fmt.Errorf("read the running server's socket: %w", err)
	}
	cfg := in.Config(Database)
	cfg.Addr = ""
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		if s, ok := strings.CutPrefix(string(arg), "--socket="); ok {
			cfg.Addr = s
		}
	}
	if cfg.Addr == "" {
		return fmt.Errorf("read the running server's socket: mariadbd %d was started without --socket", pid)
	}
	db, err := Connect(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to the managed instance under %s: %w", in.cfg.Path, err)
	}
	defer db.Close()
	if t.Info.Version, t.Info.Settings, err = Describe(ctx, db); err != nil {
		return fmt.Errorf("read server settings: %w", err)
	}
	t.exactTx = transactionsInstrumented(ctx, db)
	t.cfg = cfg
	return nil
}
