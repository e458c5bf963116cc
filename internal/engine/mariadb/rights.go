package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/calibra-bench/calibra/internal/fault"
)

// The grants a --dsn account needs, checked before a run directory exists
// so that a missing one is one sentence naming its GRANT (docs/engines.md,
// "Grants"), not a failed run.

// Privileges are what a workload does in its database: tables, indexes,
// rows, and stored procedures.
var Privileges = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "INDEX", "ALTER",
	"CREATE ROUTINE", "ALTER ROUTINE", "EXECUTE"}

// CheckGrants refuses an account that lacks one of privs on the database
// db, or one of global (such as RELOAD) on the server; why says what needs
// them. The server resolves wildcards and roles only when a statement
// runs, so the grants are read as information_schema lists them for the
// account and its enabled roles: global, or on a database pattern db
// matches.
func (t *Target) CheckGrants(ctx context.Context, db string, privs, global []string, why string) error {
	conn := Open(t.Config())
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, `SELECT 'global', PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE IN (`+grantees+`)
		UNION ALL SELECT 'db', PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE IN (`+grantees+`) AND ? LIKE TABLE_SCHEMA`, db)
	if err != nil {
		return fmt.Errorf("check the grants of --dsn: %w", err)
	}
	has, onDB, err := readGrants(rows)
	if err != nil {
		return fmt.Errorf("check the grants of --dsn: %w", err)
	}
	var user string
	if err := conn.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user); err != nil {
		return fmt.Errorf("check the grants of --dsn: %w", err)
	}
	account := quoteAccount(user)
	if missing := lacking(privs, has, onDB); len(missing) > 0 {
		return fault.Input(fmt.Sprintf("run 'GRANT ALL ON %s.* TO %s' on the server, or use an account that has it", db, account),
			"the --dsn account %s lacks %s on the database %s, which %s", account, strings.Join(missing, ", "), db, why)
	}
	if missing := lacking(global, has, nil); len(missing) > 0 {
		return fault.Input(fmt.Sprintf("run 'GRANT %s ON *.* TO %s' on the server, or use an account that has it", strings.Join(missing, ", "), account),
			"the --dsn account %s lacks %s, which %s", account, strings.Join(missing, ", "), why)
	}
	return nil
}

// grantees are the account's and its enabled roles' names as
// information_schema writes them ('user'@'host', 'role').
const grantees = `SELECT CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')
	UNION ALL SELECT CONCAT('''', ROLE_NAME, '''') FROM information_schema.ENABLED_ROLES`

// readGrants sorts the rows into global privileges and those on the
// database.
func readGrants(rows *sql.Rows) (global, onDB map[string]bool, err error) {
	defer rows.Close()
	global, onDB = map[string]bool{}, map[string]bool{}
	for rows.Next() {
		var level, priv string
		if err := rows.Scan(&level, &priv); err != nil {
			return nil, nil, err
		}
		if level == "global" {
			global[priv] = true
		} else {
			onDB[priv] = true
		}
	}
	return global, onDB, rows.Err()
}

// lacking are the privileges of want held neither globally nor on the
// database.
func lacking(want []string, global, onDB map[string]bool) []string {
	return slices.DeleteFunc(slices.Clone(want), func(p string) bool { return global[p] || onDB[p] })
}

// quoteAccount writes user@host as a GRANT names it: 'user'@'host'.
func quoteAccount(userHost string) string {
	at := strings.LastIndex(userHost, "@")
	return fmt.Sprintf("'%s'@'%s'", userHost[:max(at, 0)], userHost[at+1:])
}
