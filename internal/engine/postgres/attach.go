package postgres

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
)

// Attach connects to the managed instance another calibra started under
// the path: its socket directory and port are in postmaster.pid (lines 5
// and 4), as the server wrote them; nothing is started or written.
func (t *Target) Attach(ctx context.Context) error {
	in := t.Managed
	if in == nil {
		return nil
	}
	if _, ok := in.runningPID(); !ok {
		return fault.Input("start the load first, e.g. calibra oltp run --path "+in.cfg.Path+", and profile it while it runs",
			"no managed server is running under %s", in.cfg.Path)
	}
	data, err := server.ReadSmall(filepath.Join(in.DataDir, "postmaster.pid"))
	if err != nil {
		return fmt.Errorf("read the running server's address: %w", err)
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) < 5 {
		return fmt.Errorf("read the running server's address: postmaster.pid has %d lines", len(lines))
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err != nil {
		return fmt.Errorf("read the running server's port: %w", err)
	}
	cc, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", strings.TrimSpace(lines[4]), port, Superuser, Database))
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return fmt.Errorf("connect to the managed instance under %s: %w", in.cfg.Path, err)
	}
	defer conn.Close(ctx)
	if t.Info.Version, t.Info.Settings, err = Describe(ctx, conn); err != nil {
		return fmt.Errorf("read server settings: %w", err)
	}
	t.conn = cc
	return nil
}
