//go:build integration

package image

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// TestImage builds the image of this checkout and runs it as shipped:
// its version, fio on a mounted directory, and three partitions of one
// oltp run merged to the database's own count, every container without a
// network.
func TestImage(t *testing.T) {
	testenv.NeedImage(t)
	co := build(t)
	spec := testenv.ReadImageSpec(t, co.root)
	uid, err := strconv.Atoi(spec.ID)
	if err != nil {
		t.Fatalf("image/spec's ACCOUNT_ID %q: %v", spec.ID, err)
	}
	ctrs := newContainers(t, co.image)

	t.Run("config", func(t *testing.T) {
		out, err := podman(t, "image", "inspect", "--format", "{{json .Config}}", co.image).Output()
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			User       string
			WorkingDir string
			Entrypoint []string
		}
		if err := json.Unmarshal(out, &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.User != spec.ID+":"+spec.ID || cfg.WorkingDir != spec.Home || !slices.Equal(cfg.Entrypoint, []string{spec.Entrypoint}) {
			t.Errorf("the image runs %v as %s in %s; image/spec says %s as %s:%s in %s", cfg.Entrypoint, cfg.User, cfg.WorkingDir,
				spec.Entrypoint, spec.ID, spec.ID, spec.Home)
		}
		// image/spec's packages installed, then calibra's own report of
		// what it was built from.
		got := ctrs.run(t, "version", []string{"--entrypoint", "sh"},
			append([]string{"-c", `dpkg-query --show --showformat '${Package} ${Status}\n' "$@" && exec calibra version`, "sh"}, spec.Packages...)...)
		for _, pkg := range spec.Packages {
			if !strings.Contains(got, pkg+" install ok installed\n") {
				t.Errorf("%s is not installed in the image:\n%s", pkg, got)
			}
		}
		want := "commit    " + co.commit
		if co.dirty {
			want += " with uncommitted changes"
		}
		if !strings.Contains(got, want+"\n") {
			t.Errorf("calibra version in the image does not say %q:\n%s", want, got)
		}
	})
	t.Run("device", func(t *testing.T) {
		t.Parallel()
		device(t, ctrs, uid)
	})
	t.Run("partitions", func(t *testing.T) {
		t.Parallel()
		partitions(t, ctrs, uid)
	})
	t.Run("partitions on MariaDB", func(t *testing.T) {
		t.Parallel()
		partitionsMariaDB(t, ctrs, uid)
	})
}

// device runs fio through calibra device as the image's account, on a
// host directory, into a results volume the host reads.
func device(t *testing.T, ctrs *containers, uid int) {
	data, runs := volume(t, uid), volume(t, uid)
	ctrs.run(t, "device", []string{"-v", data + ":/data", "-v", runs + ":/runs"},
		"device", "--path", "/data", "--specs", "4k-randread", "--qd", "1", "--size", "16MiB", "--runtime", "1s", "--ramp", "0s",
		"--out", "/runs/device", "--progress", "none")
	out := filepath.Join(runs, "device")
	st, d := clitest.LastStep[*results.Device](t, out)
	if st.Status != results.StatusComplete || len(d.Points) != 1 || d.Points[0].IOPS <= 0 {
		t.Fatalf("the device run in the image: status %s, points %+v", st.Status, d.Points)
	}
	var info syscall.Stat_t
	if err := syscall.Stat(filepath.Join(out, "results.json"), &info); err != nil || int(info.Uid) != uid {
		t.Errorf("results.json on the host: owner %d (%v), want the image's account %d", info.Uid, err, uid)
	}
	if left, _ := os.ReadDir(data); len(left) != 0 {
		t.Errorf("the device run left %d entries in its --path", len(left))
	}
}

// partitions runs three partitions of one oltp run as three containers
// from one --start-at, against a PostgreSQL on the host reached through
// its Unix socket mounted into each, the DSN (a password in it) in a
// mounted file only the image's account can read; then merges them in a
// fourth.
func partitions(t *testing.T, ctrs *containers, uid int) {
	clitest.RequirePostgres(t)
	ctx := context.Background()
	in := clitest.ExistingInstance(t, clitest.StorageDir(t))
	peer := func(db string) string {
		return fmt.Sprintf("postgres://calibra@/%s?host=%s&port=%d&sslmode=disable", db, in.SocketDir, in.Port)
	}
	password := rand.Text()
	passwordLogin(t, in.DataDir, peer("postgres"), password)

	hostDSN, secrets := dsnFiles(t, in, password, uid)
	socket := filepath.Join(in.SocketDir, fmt.Sprintf(".s.PGSQL.%d", in.Port))
	clitest.MustRun(t, 0, "oltp", "build", "--dsn-file", hostDSN, "--warehouses", "3", "--load-workers", "2", "--progress", "none",
		"--out", filepath.Join(t.TempDir(), "build"))

	db, err := pgx.Connect(ctx, peer("bench"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	before := clitest.NewOrders(t, db)

	runs := volume(t, uid)
	mounts := []string{"-v", secrets + ":/etc/calibra:ro", "-v", socket + ":/run/postgresql/" + filepath.Base(socket), "-v", runs + ":/runs"}
	const n = 3
	runPartitions(t, ctrs, n, mounts, "--users", "6", "--duration", "5s", oltptest.PacedFlag)
	gained := clitest.NewOrders(t, db) - before

	ctrs.run(t, "merge", mounts, "merge", "/runs/p2", "/runs/p3", "/runs/p1", "--out", "/runs/merged")
	parts := []string{filepath.Join(runs, "p1"), filepath.Join(runs, "p2"), filepath.Join(runs, "p3")}
	o := clitest.CheckMerge(t, filepath.Join(runs, "merged"), parts, gained)
	if o.Users != 6 || len(o.Partitions) != n {
		t.Errorf("merged %d users of %d partitions, want 6 of %d", o.Users, len(o.Partitions), n)
	}
	_ = filepath.WalkDir(runs, func(path string, e fs.DirEntry, err error) error {
		if b, _ := os.ReadFile(path); err == nil && !e.IsDir() && strings.Contains(string(b), password) {
			t.Errorf("%s holds the DSN's password", path)
		}
		return nil
	})
}

// partitionsMariaDB runs two partitions of one oltp run as containers
// against a MariaDB on the host reached through its socket, as an account
// with a password (the containers' account has no name on the host for
// unix_socket's login), and merges them to the database's count.
func partitionsMariaDB(t *testing.T, ctrs *containers, uid int) {
	clitest.RequireMariaDB(t)
	ctx := context.Background()
	target, err := mariadb.Prepare(ctx, mariadb.TargetConfig{Path: clitest.StorageDir(t), DBCache: "128MB"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, target)
	cfg := target.Config()
	db, err := mariadb.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	password := rand.Text()
	for _, q := range []string{"CREATE USER bench@localhost IDENTIFIED BY '" + password + "'",
		"GRANT ALL ON `" + cfg.DBName + "`.* TO bench@localhost", "GRANT SELECT ON performance_schema.* TO bench@localhost"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", strings.SplitN(q, " IDENTIFIED", 2)[0], err)
		}
	}
	clitest.MustRun(t, 0, "oltp", "build", "--dsn", fmt.Sprintf("mysql://%s@localhost/%s?socket=%s", cfg.User, cfg.DBName, cfg.Addr),
		"--warehouses", "2", "--progress", "none", "--out", filepath.Join(t.TempDir(), "build"))
	before := clitest.NewOrdersSQL(t, db)
	secrets := secretDir(t, uid, fmt.Appendf(nil, "mysql://bench:%s@localhost/%s?socket=/run/mysqld/mysqld.sock\n", password, cfg.DBName))
	runs := volume(t, uid)
	mounts := []string{"-v", secrets + ":/etc/calibra:ro", "-v", cfg.Addr + ":/run/mysqld/mysqld.sock", "-v", runs + ":/runs"}
	runPartitions(t, ctrs, 2, mounts, "--users", "4", "--duration", "3s", oltptest.PacedFlag)
	gained := clitest.NewOrdersSQL(t, db) - before
	ctrs.run(t, "merge-mariadb", mounts, "merge", "/runs/p2", "/runs/p1", "--out", "/runs/merged")
	clitest.CheckMerge(t, filepath.Join(runs, "merged"), []string{filepath.Join(runs, "p1"), filepath.Join(runs, "p2")}, gained)
}

// runPartitions runs n partitions of one oltp run as n containers started
// together with one --start-at, each reading its DSN from the mounted
// /etc/calibra/dsn and writing its run directory to /runs/pI.
func runPartitions(t *testing.T, ctrs *containers, n int, mounts []string, args ...string) {
	t.Helper()
	// Each container starts in well under a second on overlay, and copies
	// the image's files first on vfs, before calibra connects its users:
	// the start leaves them the time.
	lead := 5 * time.Second
	if slices.Contains(store, "vfs") {
		lead = 15 * time.Second
	}
	startAt := time.Now().Add(lead).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("p%d-%s", i, strings.ReplaceAll(t.Name(), "/", "-"))
			ctrs.run(t, name, mounts, append([]string{"oltp", "run", "--dsn-file", "/etc/calibra/dsn", "--rampup", "0s",
				"--partition", fmt.Sprintf("%d/%d", i, n), "--start-at", startAt, "--progress", "none",
				"--out", fmt.Sprintf("/runs/p%d", i)}, args...)...)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// dsnFiles writes the DSN of the role bench: for the host, in a file of
// its own, and for the containers, over the socket mounted at
// /run/postgresql, in dir/dsn, mode 0600 and owned by the image's account.
func dsnFiles(t *testing.T, in *postgres.Instance, password string, uid int) (host, dir string) {
	t.Helper()
	dsn := func(socketDir string) []byte {
		return fmt.Appendf(nil, "postgres://bench:%s@/bench?host=%s&port=%d&sslmode=disable\n", password, socketDir, in.Port)
	}
	host = filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(host, dsn(in.SocketDir), 0o600); err != nil { // safefs: in the test's own t.TempDir
		t.Fatal(err)
	}
	return host, secretDir(t, uid, dsn("/run/postgresql"))
}

// secretDir is a directory holding dsn in a file dsn, mode 0600 and owned
// by the image's account, to mount at /etc/calibra.
func secretDir(t *testing.T, uid int, dsn []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "dsn")
	if err := os.WriteFile(file, dsn, 0o600); err != nil { // safefs: in the test's own t.TempDir
		t.Fatal(err)
	}
	if err := os.Chown(file, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// passwordLogin adds the role bench, owner of the database bench, that
// logs in with password over the socket: the containers' account has no
// name on the host for the managed instance's peer authentication.
func passwordLogin(t *testing.T, dataDir, dsn, password string) {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	hba := filepath.Join(dataDir, "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hba, append([]byte("local all bench scram-sha-256\n"), old...), 0o600); err != nil { // safefs: the test's server's own file
		t.Fatal(err)
	}
	for _, sql := range []string{"CREATE ROLE bench LOGIN PASSWORD '" + password + "'", "CREATE DATABASE bench OWNER bench", "SELECT pg_reload_conf()"} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", strings.SplitN(sql, " PASSWORD", 2)[0], err)
		}
	}
}
