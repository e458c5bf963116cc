//go:build integration

package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/fault"
)

// An existing server that asks for a password gets it from PGPASSWORD or a
// .pgpass file (PGPASSFILE), as libpq would: calibra's DSN handling must not
// defeat them. A wrong password, an unknown database and a missing socket
// are each one sentence with the fix, and no password is ever printed.
func TestPasswordsComeFromTheEnvironmentOrAPassFile(t *testing.T) {
	target, _ := startManaged(t)
	in := target.Managed
	ctx := context.Background()
	const password = "pw-5e7a-secret"
	admin, err := pgx.Connect(ctx, in.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// A second role that logs in with a password on the socket, as on a
	// server of the user's own (the managed instance itself never does).
	for _, sql := range []string{
		"SET password_encryption = 'scram-sha-256'",
		"CREATE ROLE bench LOGIN PASSWORD '" + password + "'",
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	hba := "local all " + Superuser + " peer map=calibra\nlocal all bench scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(in.DataDir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	dsn := func(db string) string {
		return fmt.Sprintf("postgres://bench@/%s?host=%s&port=%d&sslmode=disable", db, in.SocketDir, in.Port)
	}
	prepare := func(dsn string) error {
		t.Helper()
		got, err := Prepare(ctx, TargetConfig{DSN: dsn})
		if err == nil && got.Info.Managed {
			t.Errorf("%s prepared the managed instance", dsn)
		}
		if err != nil && strings.Contains(err.Error(), password) {
			t.Errorf("the password was printed: %v", err)
		}
		return err
	}
	t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none")) // not this account's ~/.pgpass

	t.Setenv("PGPASSWORD", password)
	if err := prepare(dsn("postgres")); err != nil {
		t.Errorf("with PGPASSWORD: %v", err)
	}
	t.Setenv("PGPASSWORD", "wrong")
	err = prepare(dsn("postgres"))
	if fault.Code(err) != fault.ExitInput || !strings.Contains(fmt.Sprint(err), "PostgreSQL refused the login of bench@") ||
		!strings.Contains(fmt.Sprint(err), "PGPASSWORD, ~/.pgpass or --dsn-file") || strings.Contains(fmt.Sprint(err), "\n") {
		t.Errorf("with a wrong password: %v", err)
	}
	os.Unsetenv("PGPASSWORD")

	passFile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passFile, []byte("*:*:*:bench:"+password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", passFile)
	if err := prepare(dsn("postgres")); err != nil {
		t.Errorf("with a pass file: %v", err)
	}
	err = prepare(dsn("nosuchdb"))
	if fault.Code(err) != fault.ExitInput || !strings.Contains(fmt.Sprint(err), `the database "nosuchdb" does not exist`) {
		t.Errorf("an unknown database: %v", err)
	}
}
