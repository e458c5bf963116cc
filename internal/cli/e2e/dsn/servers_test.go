//go:build integration

package dsn

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// A server as users have it, reached by --dsn as a least-privilege
// account: admin runs statements as its superuser (to take a grant away),
// newOrders reads the New-Orders its TPC-C-like tables hold, and dsnFile
// holds the account's DSN, password included (a 0600 file, as
// docs/engines.md says to keep one).
type server struct {
	admin     func(t *testing.T, stmts ...string)
	newOrders func(t *testing.T) int64
	dsnFile   string
}

const password = "s3cret-Pw" // the test's own server, private to it

// writeDSN writes dsn to a 0600 file of the test's.
func writeDSN(t *testing.T, dsn string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(f, []byte(dsn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// postgresAsShipped is PostgreSQL with the settings it ships with (calibra's
// managed instance turns track_io_timing on and sizes its WAL and cache;
// these are put back to PostgreSQL's defaults), and a role bench that logs
// in with a password and holds only the grants docs/engines.md names.
func postgresAsShipped(t *testing.T) server {
	t.Helper()
	clitest.RequirePostgres(t)
	target, err := postgres.Prepare(context.Background(), postgres.TargetConfig{Path: clitest.StorageDir(t), Settings: map[string]string{
		"shared_buffers": "128MB", "track_io_timing": "off", "track_wal_io_timing": "off", "max_wal_size": "1GB", "min_wal_size": "80MB",
		"checkpoint_completion_target": "0.9", "jit": "on", "log_checkpoints": "on", "maintenance_work_mem": "64MB"}})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, target)
	in := target.Managed
	admin := func(t *testing.T, stmts ...string) {
		t.Helper()
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, in.ConnString("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		for _, s := range stmts {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	// The managed instance lets only peer logins in; a distribution's
	// lets a password in too.
	hba := filepath.Join(in.DataDir, "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hba, append([]byte("local bench bench scram-sha-256\n"), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	admin(t, "CREATE ROLE bench LOGIN PASSWORD '"+password+"'", "CREATE DATABASE bench",
		"REVOKE ALL ON DATABASE bench FROM PUBLIC", postgresGrant, postgresCheckpoint, postgresMonitor, "SELECT pg_reload_conf()")
	newOrders := func(t *testing.T) int64 {
		t.Helper()
		conn, err := pgx.Connect(context.Background(), in.ConnString("bench"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		return clitest.NewOrders(t, conn)
	}
	return server{admin: admin, newOrders: newOrders,
		dsnFile: writeDSN(t, fmt.Sprintf("postgres://bench:%s@/bench?host=%s&port=%d&sslmode=disable", password, in.SocketDir, in.Port))}
}

// postgresGrant, postgresCheckpoint and postgresMonitor are what
// docs/engines.md says a --dsn role needs (the second for iocal, the third
// for profile).
const (
	postgresGrant      = "GRANT CONNECT, CREATE ON DATABASE bench TO bench"
	postgresCheckpoint = "GRANT pg_checkpoint TO bench"
	postgresMonitor    = "GRANT pg_monitor TO bench"
)

// mariadbAsShipped is MariaDB with performance_schema off, as it ships
// (calibra's managed instance turns it and its wait and transaction
// instruments on), and an account bench that logs in with a password and
// holds only the grants docs/engines.md names.
func mariadbAsShipped(t *testing.T) server {
	t.Helper()
	clitest.RequireMariaDB(t)
	target, err := mariadb.Prepare(context.Background(), mariadb.TargetConfig{Path: clitest.StorageDir(t), DBCache: "128MB",
		Settings: map[string]string{"performance_schema": "OFF"}})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, target)
	cfg := target.Config()
	admin := func(t *testing.T, stmts ...string) {
		t.Helper()
		db := mariadb.Open(cfg)
		defer db.Close()
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	admin(t, append([]string{"CREATE DATABASE bench", "CREATE USER bench@localhost IDENTIFIED BY '" + password + "'"}, mariadbGrants...)...)
	newOrders := func(t *testing.T) int64 {
		t.Helper()
		bench := cfg.Clone()
		bench.DBName = "bench"
		db := mariadb.Open(bench)
		defer db.Close()
		return clitest.NewOrdersSQL(t, db)
	}
	return server{admin: admin, newOrders: newOrders,
		dsnFile: writeDSN(t, fmt.Sprintf("mysql://bench:%s@localhost/bench?socket=%s", password, cfg.Addr))}
}

// mariadbGrants are what docs/engines.md says a --dsn account needs: on
// the DSN's database (oltp), the one dss makes beside it, iocal's, and
// PROCESS for profile.
var mariadbGrants = []string{"GRANT ALL ON bench.* TO bench@localhost", "GRANT ALL ON bench_tpch.* TO bench@localhost",
	"GRANT ALL ON calibra_iocal.* TO bench@localhost", "GRANT RELOAD, PROCESS ON *.* TO bench@localhost"}
