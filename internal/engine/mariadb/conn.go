package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/secret"
)

const dsnForm = "write it as mysql://user:password@host:port/database"

// ParseDSN reads mysql://user:password@host:port/database (mariadb:// too;
// ?socket=PATH for a local server's Unix socket; other query parameters
// are the driver's, e.g. ?tls=true) into the driver's
// configuration. A malformed one is an input error that never repeats the
// password.
func ParseDSN(dsn string) (*mysql.Config, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "mysql" && u.Scheme != "mariadb") || u.Host == "" {
		return nil, fault.Input(dsnForm, "the --dsn %s is not a MySQL or MariaDB URL", secret.RedactDSN(dsn))
	}
	db := strings.Trim(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, fault.Input(dsnForm+": calibra works in that database only", "the --dsn %s names no database", secret.RedactDSN(dsn))
	}
	// ?socket=PATH reaches a local server on its Unix socket instead.
	query := u.Query()
	socket := query.Get("socket")
	query.Del("socket")
	// The rest of the query goes through the driver's own parser; user,
	// password and address are set from the URL, so no escaping rule of
	// the driver's DSN syntax can mangle them.
	cfg, err := mysql.ParseDSN("/" + db + "?" + query.Encode())
	if err != nil {
		return nil, fault.Input(dsnForm, "the --dsn %s has a parameter the driver refuses: %v", secret.RedactDSN(dsn), err)
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	if socket != "" {
		cfg.Net, cfg.Addr = "unix", socket
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = defaultConnectTimeout
	}
	cfg.ParseTime = true
	return cfg, nil
}

// defaultConnectTimeout bounds each connection attempt to an existing
// server whose DSN sets none.
const defaultConnectTimeout = 30 * time.Second

// Open opens a pool on cfg (it connects lazily).
func Open(cfg *mysql.Config) *sql.DB {
	return sql.OpenDB(mustConnector(cfg))
}

// Connect opens a pool on cfg and checks one connection, explaining a
// failure in one sentence with the password never printed.
func Connect(ctx context.Context, cfg *mysql.Config) (*sql.DB, error) {
	db := Open(cfg)
	err := db.PingContext(ctx)
	if err == nil {
		return db, nil
	}
	db.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	where := fmt.Sprintf("%s@%s/%s", cfg.User, cfg.Addr, cfg.DBName)
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		switch myErr.Number {
		case 1045, 1698:
			return nil, fault.Input("check the user and the password in --dsn, and the account's allowed hosts",
				"the server refused the login of %s", where)
		case 1049:
			return nil, fault.Input("create the database or name an existing one in --dsn",
				"the database %q does not exist on %s", cfg.DBName, cfg.Addr)
		case 1044:
			return nil, fault.Input("grant the account access to the database, or name another in --dsn",
				"%s may not use the database %q", cfg.User, cfg.DBName)
		}
	}
	why, fix := engine.Unreachable(err, cfg.Passwd, "")
	return nil, fault.Input(fix, "cannot connect to %s: %s", where, why)
}

// Describe returns the server's version and every global variable set
// other than by its compiled-in default or its own sizing (the command
// line, an option file, SET GLOBAL), each as MariaDB prints it: sizes in
// bytes, times in seconds, no unit glued on. Names are lower case.
func Describe(ctx context.Context, db *sql.DB) (string, map[string]string, error) {
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return "", nil, err
	}
	settings := map[string]string{}
	rows, err := db.QueryContext(ctx, `SELECT LOWER(VARIABLE_NAME), COALESCE(GLOBAL_VALUE, '') FROM information_schema.SYSTEM_VARIABLES
		WHERE GLOBAL_VALUE_ORIGIN IN ('COMMAND-LINE', 'CONFIG', 'SQL')
		AND VARIABLE_NAME NOT IN ('PID_FILE', 'SOCKET', 'DATADIR', 'BASEDIR', 'PLUGIN_DIR', 'LOG_ERROR', 'GENERAL_LOG_FILE', 'SLOW_QUERY_LOG_FILE')
		ORDER BY 1`)
	if err != nil {
		// MySQL has no SYSTEM_VARIABLES table: performance_schema's
		// variables_info says where each came from.
		rows, err = db.QueryContext(ctx, `SELECT LOWER(i.VARIABLE_NAME), COALESCE(g.VARIABLE_VALUE, '') FROM performance_schema.variables_info i
			JOIN performance_schema.global_variables g USING (VARIABLE_NAME)
			WHERE i.VARIABLE_SOURCE <> 'COMPILED' ORDER BY 1`)
		if err != nil {
			return version, settings, nil // the version alone, from a server that shows no more
		}
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return "", nil, err
		}
		settings[k] = v
	}
	return version, settings, rows.Err()
}
