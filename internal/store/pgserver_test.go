package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// StorePassword is the store role's; no message may hold it.
const StorePassword = "st0re-pw-5e1f"

// pgStore starts a socket-only PostgreSQL server that calibra does not
// manage (the test starts it by hand), with a role that logs in by
// password and the databases dbs it owns; it returns a URL maker
// without the password. One server serves the test and its subtests.
func pgStore(t testing.TB, dbs ...string) func(db string) string {
	t.Helper()
	_, missing := postgres.FindBinaries("")
	testenv.Need(t, "postgresql", missing, "apt-get install postgresql")
	ctx := context.Background()
	target, err := postgres.Prepare(ctx, postgres.TargetConfig{Path: testenv.StorageDir(t), DBCache: "32MB"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, target)
	admin, err := pgx.ConnectConfig(ctx, target.ConnConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	stmts := []string{`CREATE ROLE bench LOGIN PASSWORD '` + StorePassword + `'`}
	for _, db := range dbs {
		stmts = append(stmts, `CREATE DATABASE `+db+` OWNER bench`)
	}
	for _, s := range stmts {
		if _, err := admin.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// The managed instance lets in only its own accounts, by peer: this
	// role logs in with its password, as on a team's server.
	hba := filepath.Join(target.Managed.DataDir, "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hba, append([]byte("local all bench scram-sha-256\n"), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}
	sock, port := target.Managed.SocketDir, target.Managed.Port
	return func(db string) string {
		return fmt.Sprintf("postgres://bench@/%s?host=%s&port=%d&sslmode=disable", db, sock, port)
	}
}
