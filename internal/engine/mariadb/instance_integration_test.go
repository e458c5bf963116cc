//go:build integration

package mariadb

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// startManaged starts a throwaway managed instance (see requireServer),
// with a small buffer pool unless cfg names one: its redo log, as large
// as the pool, is written through when it is made, 1 GiB at the default.
func startManaged(t *testing.T, cfg TargetConfig) (*Target, *proc.Group) {
	t.Helper()
	requireServer(t)
	if cfg.Path == "" {
		cfg.Path = testenv.StorageDir(t)
	}
	if cfg.DBCache == "" {
		cfg.DBCache = "128MB"
	}
	target, err := Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return target, testenv.Start(t, target)
}

func execIn(t *testing.T, target *Target, sqls ...string) {
	t.Helper()
	db := Open(target.Managed.Config(""))
	defer db.Close()
	for _, q := range sqls {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// The managed instance runs with calibra's settings, each recorded as
// MariaDB prints it, and its redo log on --wal-path's storage.
func TestSettingsAndTheRedoLogsPlace(t *testing.T) {
	t.Parallel()
	wal := testenv.StorageDir(t)
	target, _ := startManaged(t, TargetConfig{DBCache: "256MB", WALPath: wal, MaxConnections: 300,
		Settings: map[string]string{"innodb-io-capacity": "1000"}})
	want := map[string]string{
		"innodb_buffer_pool_size":             "268435456",
		"innodb_flush_method":                 "O_DIRECT",
		"innodb_flush_log_at_trx_commit":      "1",
		"innodb_buffer_pool_dump_at_shutdown": "OFF",
		"innodb_buffer_pool_load_at_startup":  "OFF",
		"innodb_log_file_size":                "268435456", // as large as the pool
		"performance_schema":                  "ON",
		"skip_networking":                     "ON",
		"max_connections":                     "300",
		"innodb_io_capacity":                  "1000",
		"innodb_log_group_home_dir":           filepath.Join(wal, RedoDirName),
		"tmpdir":                              target.Managed.TmpDir(),
	}
	got := target.Describe().Settings
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s reads back as %q, want %q", k, got[k], v)
		}
	}
	redoLog := filepath.Join(wal, RedoDirName, "ib_logfile0")
	if _, err := os.Stat(redoLog); err != nil {
		t.Errorf("the redo log is not under --wal-path: %v", err)
	}
	// Written through, not fallocated and unwritten, so that the first
	// commits' fdatasync does not also convert the log's extents (ext4
	// here; filefrag names them "unwritten"). Checked here, as a log on
	// storage of its own is the initialiser's own run, never the tests'
	// (sparse) copy of a cached one.
	if filefrag, err := exec.LookPath("filefrag"); err != nil {
		t.Log("no filefrag (e2fsprogs) to read the redo log's extents")
	} else if out, err := exec.Command(filefrag, "-v", redoLog).CombinedOutput(); err != nil {
		t.Logf("this file system shows no extents (filefrag -v %s: %v: %s)", redoLog, err, out)
	} else if n := strings.Count(string(out), "unwritten"); n > 0 {
		t.Errorf("%d of the redo log's extents are unwritten:\n%s", n, out)
	}
	if _, err := os.Stat(filepath.Join(target.Managed.DataDir, "ib_logfile0")); err == nil {
		t.Error("a redo log is in the data directory too")
	}
	// The waits the evidence reads are instrumented.
	db := target.DB()
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM performance_schema.setup_instruments
		WHERE NAME LIKE 'wait/io/file/innodb/%' AND ENABLED = 'YES'`).Scan(&n); err != nil || n == 0 {
		t.Errorf("%d InnoDB file I/O instruments enabled (%v)", n, err)
	}
	// Asked to keep it elsewhere, the existing instance refuses.
	_, err := Prepare(context.Background(), TargetConfig{Path: filepath.Dir(target.Managed.DataDir)})
	if fault.Code(err) != fault.ExitInput || !strings.Contains(fmt.Sprint(err), "keeps its redo log in") {
		t.Errorf("the redo log moved by a setting: %v", err)
	}
}

// A setting calibra owns, a setting the server does not know and a cache
// size that is none are each one sentence, before or at the start.
func TestBadSettingsAreOneSentence(t *testing.T) {
	t.Parallel()
	requireServer(t)
	ctx := context.Background()
	path := testenv.StorageDir(t)
	_, err := Prepare(ctx, TargetConfig{Path: path, Settings: map[string]string{"skip-networking": "OFF"}})
	if fault.Code(err) != fault.ExitInput || !strings.Contains(fmt.Sprint(err), "calibra's own") {
		t.Errorf("skip-networking=OFF: %v", err)
	}
	_, err = Prepare(ctx, TargetConfig{Path: path, DBCache: "lots"})
	if fault.Code(err) != fault.ExitInput {
		t.Errorf("--db-cache lots: %v", err)
	}
	// 128 MB: at the default cache the start would first copy a 1 GiB
	// redo log it never uses.
	target, err := Prepare(ctx, TargetConfig{Path: path, DBCache: "128MB", Settings: map[string]string{"innodb_no_such_thing": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	group := proc.NewGroup()
	defer group.StopAll(time.Minute)
	defer target.Stop()
	_, err = target.Start(ctx, group)
	if fault.Code(err) != fault.ExitInput || !strings.Contains(fmt.Sprint(err), "does not know the engine setting innodb_no_such_thing=1") {
		t.Errorf("an unknown setting: %v", err)
	}
}

// A second calibra on a path whose server runs is told so, once the
// server has stayed past the wait for one a killed calibra left exiting;
// a dead server's pid file (a crash's) is no obstacle (enginetest kills
// one).
func TestASecondServerOnTheSameDataIsRefused(t *testing.T) {
	t.Parallel()
	target := sharedManaged(t)
	ctx := context.Background()
	second, err := Prepare(ctx, TargetConfig{Path: filepath.Dir(target.Managed.DataDir)})
	if err != nil {
		t.Fatal(err)
	}
	group := proc.NewGroup()
	defer group.StopAll(time.Minute)
	defer second.Stop()
	defer func(w time.Duration) { server.LeftoverWait = w }(server.LeftoverWait)
	server.LeftoverWait = time.Second
	_, err = second.Start(ctx, group)
	if fault.Code(err) != fault.ExitInput || !strings.Contains(fmt.Sprint(err), "still runs on") {
		t.Errorf("a second start on a running instance: %v", err)
	}
	// The refused start and its Stop left the running server alone.
	second.Stop()
	db := target.DB()
	defer db.Close()
	if err := db.Ping(); err != nil {
		t.Errorf("the running server after a refused second start: %v", err)
	}
}

// No other local account can log in: nothing listens on TCP, the socket's
// directory is private to the server's account, and past it the server
// knows no account but root and calibra's, both authenticated by the
// connecting process's OS account (unix_socket). No password exists.
func TestAnotherAccountCannotLogIn(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("logging in as another local account needs root to switch accounts")
	}
	stranger, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no 'nobody' account to play the other local user: %v", err)
	}
	target := sharedManaged(t)
	// No other test's account is on the shared instance while its
	// accounts are read.
	shared.accounts.Lock()
	defer shared.accounts.Unlock()
	in := target.Managed
	db := target.DB()
	defer db.Close()
	var port int
	var networking string
	if err := db.QueryRow("SELECT @@port, @@skip_networking").Scan(&port, &networking); err != nil || networking != "1" && networking != "ON" {
		t.Errorf("skip_networking reads %q (%v): the server listens on TCP port %d", networking, err, port)
	}
	rows, err := db.Query(`SELECT CONCAT(User, '@', Host), JSON_VALUE(Priv, '$.authentication_string') FROM mysql.global_priv`)
	if err != nil {
		t.Fatal(err)
	}
	var accounts []string
	for rows.Next() {
		var name, auth string
		if err := rows.Scan(&name, &auth); err != nil {
			t.Fatal(err)
		}
		if auth != "" && auth != "invalid" {
			t.Errorf("the account %s has a password", name)
		}
		accounts = append(accounts, name)
	}
	rows.Close()
	// mariadb.sys owns the sys schema's views and cannot log in.
	if strings.Join(accounts, " ") != "mariadb.sys@localhost root@localhost" {
		t.Errorf("the instance has the accounts %v, want only root's (and mariadb.sys)", accounts)
	}
	login := func(account *user.User) (string, error) {
		uid, _ := strconv.Atoi(account.Uid)
		gid, _ := strconv.Atoi(account.Gid)
		cmd := exec.Command("mariadb", "--no-defaults", "-S", in.socket(), "-u", "root", "-e", "SELECT 'in'")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/", "LC_ALL=C"}
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := login(stranger); err == nil {
		t.Errorf("the account nobody logged in through the socket: %s", out)
	}
	// Past the private directory, authentication itself must refuse.
	if err := os.Chmod(in.SocketDir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(in.SocketDir, 0o700) // the shared instance's, private again
	out, err := login(stranger)
	if err == nil {
		t.Errorf("the account nobody logged in through an open socket directory: %s", out)
	} else if !strings.Contains(out, "Access denied") {
		t.Errorf("the account nobody was refused for another reason than authentication: %s", out)
	}
	// The server's own account, which can reach the socket, has no login.
	if in.Account.Name != "" {
		server, err := user.Lookup(in.Account.Name)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := login(server); err == nil {
			t.Errorf("the server's account %s logged in as root: %s", in.Account.Name, out)
		}
	}
}

// A server reached by DSN (here the managed instance's socket, with an
// account that has a password): a wrong password and an unknown database
// are one sentence each, and the password is printed nowhere.
func TestDSNLoginErrorsAreOneSentence(t *testing.T) {
	t.Parallel()
	target := sharedManaged(t)
	// The account bench, with a password, is on the shared instance only
	// while no other test reads its accounts.
	shared.accounts.Lock()
	defer shared.accounts.Unlock()
	const password = "pw-7c1e-secret"
	execIn(t, target, "CREATE USER bench@localhost IDENTIFIED BY '"+password+"'", "CREATE DATABASE bench",
		"GRANT ALL ON bench.* TO bench@localhost")
	defer execIn(t, target, "DROP USER bench@localhost", "DROP DATABASE bench")
	ctx := context.Background()
	dsn := func(pw, db string) string {
		return "mysql://bench:" + url.PathEscape(pw) + "@localhost/" + db + "?socket=" + url.QueryEscape(target.Managed.socket())
	}
	got, err := Prepare(ctx, TargetConfig{DSN: dsn(password, "bench")})
	if err != nil {
		t.Fatalf("the right password: %v", err)
	}
	if got.Info.Managed || strings.Contains(got.Info.Target, password) || got.Info.Version == "" {
		t.Errorf("the DSN's target reads %+v", got.Info)
	}
	if n, err := got.Transactions(ctx); err != nil || n < 0 {
		t.Errorf("transactions on a DSN: %d, %v", n, err)
	}
	if _, err := got.SaveTemplate(ctx, "x"); err == nil {
		t.Error("a template saved on a server calibra does not manage")
	}
	for _, c := range []struct{ pw, db, want string }{
		{"wrong", "bench", "the server refused the login of bench@"},
		{password, "nosuch", "may not use the database"},
	} {
		_, err := Prepare(ctx, TargetConfig{DSN: dsn(c.pw, c.db)})
		if fault.Code(err) != fault.ExitInput || !strings.Contains(fmt.Sprint(err), c.want) || strings.Contains(fmt.Sprint(err), "\n") {
			t.Errorf("password %q, database %s: %v, want %q", c.pw, c.db, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), password) {
			t.Errorf("the password was printed: %v", err)
		}
	}
}

// errCut stands for a signal arriving between two steps of a swap.
var errCut = errors.New("cut")

// Each window of the template save and the reset, cut short as a signal
// would cut it, leaves the loaded data and the template whole at the next
// start, which clears the leftovers.
func TestSwapsSurviveAnInterruption(t *testing.T) {
	t.Parallel() // an instance of its own, cut through its own hook
	target, group := startManaged(t, TargetConfig{})
	ctx := context.Background()
	rows := func() int {
		t.Helper()
		db := target.DB()
		defer db.Close()
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM loaded").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	fill := func(n int) {
		t.Helper()
		execIn(t, target, "DROP TABLE IF EXISTS calibra.loaded",
			"CREATE TABLE calibra.loaded (w INT PRIMARY KEY, v INT, g INT AS (w * 2) VIRTUAL, KEY (v))",
			fmt.Sprintf("INSERT INTO calibra.loaded (w, v) SELECT seq, seq %% 7 FROM calibra.seq_1_to_%d", n))
	}
	fill(800)
	if _, err := target.SaveTemplate(ctx, "800"); err != nil {
		t.Fatal(err)
	}
	restart := func() {
		t.Helper()
		target.swapHook = func(string) {}
		if err := target.Stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := target.Start(ctx, group); err != nil {
			t.Fatal(err)
		}
	}
	cutAt := func(step string) {
		target.swapHook = func(at string) {
			if at == step {
				panic(errCut)
			}
		}
	}
	call := func(swap func() error) (cut bool) {
		defer func() {
			if r := recover(); r != nil {
				if r != errCut {
					panic(r)
				}
				cut = true
			}
		}()
		if err := swap(); err != nil {
			t.Fatal(err)
		}
		return false
	}
	for _, step := range []string{"files copied", "template copied", "template switched"} {
		fill(100)
		cutAt(step)
		if !call(func() error { _, err := target.SaveTemplate(ctx, "100"); return err }) {
			t.Fatalf("save was not cut at %q", step)
		}
		restart()
		if len(target.Repairs) == 0 {
			t.Errorf("a save cut at %q left nothing to clear", step)
		}
		if err := target.RestoreTemplate(ctx); err != nil {
			t.Fatalf("after a save cut at %q the reset fails: %v (repairs %q)", step, err, target.Repairs)
		}
		n := rows()
		if n != 800 && n != 100 || step == "template switched" && n != 100 {
			t.Fatalf("after a save cut at %q the template holds %d rows", step, n)
		}
		if note, ok, err := target.TemplateNote(ctx); err != nil || !ok || note != strconv.Itoa(n) {
			t.Fatalf("after a save cut at %q the template of %d rows is noted %q (%v, %v)", step, n, note, ok, err)
		}
		fill(800)
		if _, err := target.SaveTemplate(ctx, "800"); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []string{"files copied", "database copied", "tables swapped"} {
		execIn(t, target, "DELETE FROM calibra.loaded", "CREATE TABLE calibra.extra (i INT)")
		cutAt(step)
		if !call(func() error { return target.RestoreTemplate(ctx) }) {
			t.Fatalf("reset was not cut at %q", step)
		}
		restart()
		if len(target.Repairs) == 0 {
			t.Errorf("a reset cut at %q left nothing to clear", step)
		}
		if n := rows(); step == "tables swapped" && n != 800 || step != "tables swapped" && n != 0 {
			t.Fatalf("after a reset cut at %q, %d rows", step, n)
		}
		if err := target.RestoreTemplate(ctx); err != nil {
			t.Fatalf("after a reset cut at %q the next reset fails: %v", step, err)
		}
		if n := rows(); n != 800 {
			t.Fatalf("after a reset cut at %q and another reset, %d rows, want 800", step, n)
		}
	}
	// A reset ends the sessions that hold calibra's tables, and takes
	// away a table the template does not have.
	db := target.DB()
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE extra (i INT)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE loaded SET v = 0 WHERE w < 10"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- target.RestoreTemplate(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a reset waits for a session holding calibra's tables")
	}
	_ = tx.Rollback()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'calibra'").Scan(&n); err != nil || n != 1 {
		t.Errorf("%d tables in calibra after the reset (%v), want the template's one", n, err)
	}
}

// clean's Remove stops a server a crashed calibra left running and
// deletes its data, redo log and temporary directories.
func TestRemoveStopsTheServerAndDeletesItsData(t *testing.T) {
	t.Parallel()
	wal := testenv.StorageDir(t)
	target, _ := startManaged(t, TargetConfig{WALPath: wal})
	in := target.Managed
	path := filepath.Dir(in.DataDir)
	pid := in.PID()
	removed, err := Remove(path)
	if err != nil || !removed {
		t.Fatalf("remove: %v, %v", removed, err)
	}
	if syscall.Kill(pid, 0) == nil {
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && !strings.HasPrefix(string(comm), "mariadbd") {
			t.Logf("pid %d is now %s", pid, comm)
		} else if stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(stat), ") Z ") {
			t.Errorf("the server (pid %d) still runs after remove", pid)
		}
	}
	for _, dir := range []string{in.DataDir, in.TmpDir(), filepath.Join(wal, RedoDirName)} {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s is still there", dir)
		}
	}
	if removed, err := Remove(path); removed || err != nil {
		t.Errorf("a second remove: %v, %v", removed, err)
	}
}

// A template holds every kind of table: those InnoDB can import as files
// and those copied row by row (full-text, partitioned, another engine),
// and a save and a reset leave no file behind.
func TestTemplatesCopyEveryKindOfTable(t *testing.T) {
	t.Parallel()
	target, _ := startManaged(t, TargetConfig{})
	ctx := context.Background()
	execIn(t, target,
		"CREATE TABLE calibra.plain (id INT PRIMARY KEY, v VARCHAR(20), g INT AS (id * 2) STORED, KEY (v))",
		"CREATE TABLE calibra.texts (id INT PRIMARY KEY, body TEXT, FULLTEXT (body)) ENGINE=InnoDB",
		"CREATE TABLE calibra.parts (id INT PRIMARY KEY) PARTITION BY HASH (id) PARTITIONS 3",
		"CREATE TABLE calibra.aria (id INT PRIMARY KEY) ENGINE=Aria",
		"INSERT INTO calibra.plain (id, v) SELECT seq, CONCAT('v', seq) FROM calibra.seq_1_to_5000",
		"INSERT INTO calibra.texts SELECT seq, CONCAT('word', seq) FROM calibra.seq_1_to_300",
		"INSERT INTO calibra.parts SELECT seq FROM calibra.seq_1_to_400",
		"INSERT INTO calibra.aria SELECT seq FROM calibra.seq_1_to_500")
	checksums := func() string {
		t.Helper()
		db := target.DB()
		defer db.Close()
		var out []string
		// CHECKSUM TABLE varies from run to run on a table with a
		// generated column: a digest of every column's text instead.
		for tb, cols := range map[string]string{"plain": "id, v, g", "texts": "id, body", "parts": "id", "aria": "id"} {
			var n, sum int64
			if err := db.QueryRow("SELECT COUNT(*), SUM(CRC32(CONCAT_WS(',', "+cols+"))) FROM "+tb).Scan(&n, &sum); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s=%d/%d", tb, n, sum))
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	want := checksums()
	if _, err := target.SaveTemplate(ctx, "kinds"); err != nil {
		t.Fatal(err)
	}
	execIn(t, target, "DELETE FROM calibra.plain WHERE id > 10", "DELETE FROM calibra.texts", "DELETE FROM calibra.parts",
		"UPDATE calibra.aria SET id = id + 1000")
	for range 2 {
		if err := target.RestoreTemplate(ctx); err != nil {
			t.Fatal(err)
		}
		if got := checksums(); got != want {
			t.Fatalf("after the reset %s, want %s", got, want)
		}
	}
	db := target.DB()
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM texts WHERE MATCH (body) AGAINST ('word42')").Scan(&n); err != nil || n != 1 {
		t.Errorf("the full-text index finds %d rows (%v) after the reset", n, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(target.Managed.DataDir, "*", "*.cfg"))
	for _, s := range []string{stagingNew, stagingOld} {
		if _, err := os.Stat(filepath.Join(target.Managed.DataDir, s)); err == nil {
			leftovers = append(leftovers, s)
		}
	}
	if len(leftovers) > 0 {
		t.Errorf("left behind: %v", leftovers)
	}
}

// A server that has run for a while counts past a million commits, and past
// 2^31: the fallback transaction count (performance_schema's transaction
// instruments off, as distributions ship MariaDB) must read such counters
// as integers, exactly.
func TestTheHandlerCountReadsLargeCounters(t *testing.T) {
	t.Parallel()
	target := sharedManaged(t)
	db := Open(target.Managed.Config(""))
	defer db.Close()
	status := `(SELECT 'HANDLER_COMMIT' AS VARIABLE_NAME, '3000000001' AS VARIABLE_VALUE
		UNION ALL SELECT 'HANDLER_ROLLBACK', '2173537'
		UNION ALL SELECT 'HANDLER_READ_KEY', '99') AS status`
	var n int64
	if err := db.QueryRowContext(context.Background(), fmt.Sprintf(handlerTotal, status)).Scan(&n); err != nil {
		t.Fatalf("the fallback count of commits past 2^31: %v", err)
	}
	if n != 3002173538 {
		t.Errorf("the fallback count read %d, want 3002173538", n)
	}
}
