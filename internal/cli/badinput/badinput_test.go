// Package badinput holds calibra's bad-input matrix, apart from
// internal/cli's other tests: it changes directory, so its cases run one
// at a time, and in a package of its own they run beside those tests.
package badinput

import (
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/pathlock"
)

// badCase is one bad input: calibra must exit 2 with one sentence (or one
// per problem when it reports several at once) that names the problem and
// the fix, and create nothing.
type badCase struct {
	name  string
	args  []string
	want  []string // fragments of the sentence on stderr
	lines int      // lines on stderr when not one
	env   []string // KEY=VALUE set for the case
	needs string   // "root": the answer needs root and a PostgreSQL server
}

// standbyMakers are "--replicas is" and the replication of each engine
// that makes standbys, as the refusal on an engine that makes none names
// them all.
func standbyMakers() []string {
	want := []string{"--replicas is "}
	for _, d := range engine.Descriptors() {
		if d.Standbys != nil {
			want = append(want, d.Standbys.What)
		}
	}
	return want
}

// fixtureRuns are the golden run directories.
const fixtureRuns = "../../results/testdata/runs"

// TestMain lets the test binary stand in for calibra when a case runs it as
// a child process.
func TestMain(m *testing.M) { clitest.Main(m, cli.Main) }

// The bad-input matrix: every flag of every command, and the cases
// (sizes that overflow, NaN and Inf, values the server would refuse,
// unreachable servers, files that cannot be read). Unreachable servers are
// closed loopback ports or .invalid names only.
func TestBadInputExitsTwoWithOneClearSentence(t *testing.T) {
	runs, err := filepath.Abs(fixtureRuns)
	if err != nil {
		t.Fatal(err)
	}
	root := clitest.StorageDir(t)         // the server's account must reach it, or that is the first complaint
	dir := filepath.Join(root, "path")    // the storage path the cases name
	fx := filepath.Join(root, "fixtures") // inputs, written before the cases
	cwd := filepath.Join(root, "cwd")     // where a default ./calibra-runs would appear
	for _, d := range []string{dir, fx, cwd} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shared := filepath.Join(root, "shared") // a directory every account can write
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		path := filepath.Join(fx, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	file := write("a-file", "")
	missing := filepath.Join(root, "nope")
	brokenStudy := write("broken.yaml", "version: 1\nsteps:\n  - kind: oltp\n    userz: 3\n  - kind: rampp\n")
	futureStudy := write("future.yaml", "version: 2\nsteps:\n  - kind: oltp\n")
	yamlError := write("syntax.yaml", "version: 1\nsteps:\n  - kind: oltp\n    users: [1\n")
	emptyStudy := write("empty.yaml", "")
	missingPathStudy := write("far.yaml", "version: 1\ntarget: {path: "+missing+"}\nsteps:\n  - kind: oltp\n")
	missingDSNFileStudy := write("dsnfile.yaml", "version: 1\ntarget: {dsn_file: "+missing+"}\nsteps:\n  - kind: oltp\n")
	dsnFile := write("dsn", "postgres://bench:hunter2@127.0.0.1:1/bench\n")
	if err := os.Chmod(dsnFile, 0o600); err != nil { // as a DSN file should be: others get a warning
		t.Fatal(err)
	}
	variantStudy := write("variants.yaml", "version: 1\nvariants:\n  - name: ok\n  - name: old\n    target: {pg_bin: \"9\"}\nsteps:\n  - kind: oltp\n")
	bothDSNStudy := write("both.yaml", "version: 1\ntarget: {dsn_file: "+dsnFile+", dsn: 'postgres://bench@127.0.0.1:1/bench'}\nsteps:\n  - kind: oltp\n")
	emptyDSNFile := write("empty-dsn", "\n")
	emptyRun := filepath.Join(fx, "empty-run")
	brokenRun := filepath.Join(fx, "broken-run")
	for _, d := range []string{emptyRun, brokenRun} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("broken-run/results.json", "{not json")
	devRun, oltpRun := filepath.Join(runs, "device-a"), filepath.Join(runs, "oltp-base")
	t.Chdir(cwd)

	const closed = "postgres://bench@127.0.0.1:1/bench" // a closed loopback port
	long := strings.Repeat("x", 5000)                   // a label no directory's name holds
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	cases := []badCase{
		// calibra itself
		{name: "unknown command", args: []string{"olpt"}, want: []string{`unknown command "olpt"`, "calibra --help"}},
		{name: "unknown subcommand", args: []string{"oltp", "rnu"}, want: []string{`unknown command "rnu" for "calibra oltp"`}},
		{name: "unknown dss subcommand", args: []string{"dss", "bild"}, want: []string{`unknown command "bild" for "calibra dss"`}},
		{name: "unknown root flag", args: []string{"--verbose"}, want: []string{"unknown flag: --verbose"}},
		{name: "version takes no argument", args: []string{"version", "2"}, want: []string{`calibra version takes no arguments, but was given "2"`}},

		// oltp build, and the flags every running command shares
		{name: "build: unknown flag", args: []string{"oltp", "build", "--wharehouses", "2"}, want: []string{"unknown flag: --wharehouses", "calibra oltp build --help"}},
		{name: "build: an argument", args: []string{"oltp", "build", "10", "--path", dir}, want: []string{`calibra oltp build takes no arguments, but was given "10"`, "--help"}},
		{name: "build: warehouses zero", args: []string{"oltp", "build", "--warehouses", "0", "--path", dir}, want: []string{"--warehouses 0 is not positive", "1 or more"}},
		{name: "build: warehouses negative", args: []string{"oltp", "build", "--warehouses", "-4", "--path", dir}, want: []string{"--warehouses -4 is not positive"}},
		{name: "build: warehouses not a number", args: []string{"oltp", "build", "--warehouses", "ten", "--path", dir}, want: []string{`invalid argument "ten" for "--warehouses"`}},
		{name: "build: warehouses past any size", args: []string{"oltp", "build", "--warehouses", "274877906944", "--path", dir}, want: []string{"--warehouses 274877906944 makes no possible size"}},
		{name: "build: warehouses past int", args: []string{"oltp", "build", "--warehouses", "99999999999999999999", "--path", dir}, want: []string{"--warehouses", "value out of range"}},
		{name: "build: not enough space", args: []string{"oltp", "build", "--warehouses", "100000000", "--path", dir}, want: []string{"free but oltp build needs about", "free some space"}},
		{name: "build: load workers zero", args: []string{"oltp", "build", "--load-workers", "0", "--path", dir}, want: []string{"--load-workers 0 is not positive"}},
		{name: "build: rebuild not a bool", args: []string{"oltp", "build", "--rebuild=maybe", "--path", dir}, want: []string{`invalid argument "maybe" for "--rebuild"`}},
		{name: "build: missing path", args: []string{"oltp", "build", "--path", missing}, want: []string{"the path " + missing + " does not exist", "create it"}},
		{name: "build: path is a file", args: []string{"oltp", "build", "--path", file}, want: []string{"is not a directory"}},
		{name: "build: out is a file", args: []string{"oltp", "build", "--out", file, "--path", dir}, want: []string{"the run directory " + file + " is not a directory", "choose another --out"}},
		{name: "build: db cache zero", args: []string{"oltp", "build", "--db-cache", "0", "--path", dir}, want: []string{"--db-cache 0 is below PostgreSQL's minimum"}},
		{name: "build: mariadb db cache below its minimum", args: []string{"oltp", "build", "--engine", "mariadb", "--db-cache", "1M", "--path", dir}, want: []string{"--db-cache 1M is below MariaDB's minimum of 2MB"}},
		{name: "build: mariadb db cache not its size", args: []string{"oltp", "build", "--engine", "mariadb", "--db-cache", "8Q", "--path", dir}, want: []string{`--db-cache "8Q" is not a memory size`, "256M or 8G"}},
		{name: "build: db cache past memory", args: []string{"oltp", "build", "--db-cache", "64TB", "--path", dir}, want: []string{"--db-cache 64TB is more than this machine's"}},
		{name: "build: db cache past uint64", args: []string{"oltp", "build", "--db-cache", "99999999999TB", "--path", dir}, want: []string{`--db-cache "99999999999TB" is not a memory size`}},
		{name: "build: db cache not a size", args: []string{"oltp", "build", "--db-cache", "lots", "--path", dir}, want: []string{`--db-cache "lots" is not a memory size`}},
		{name: "build: db cache negative", args: []string{"oltp", "build", "--db-cache", "-1GB", "--path", dir}, want: []string{`--db-cache "-1GB" is not a memory size`}},
		{name: "build: db cache unit", args: []string{"oltp", "build", "--db-cache", "1GiB", "--path", dir}, want: []string{`--db-cache "1GiB" is not a memory size`, "256MB or 8GB"}},
		{name: "build: no postgres binaries", args: []string{"oltp", "build", "--pg-bin", missing, "--path", dir}, want: []string{"holds no initdb and postgres", "apt-get install postgresql"}},
		{name: "build: pg-bin is a file", args: []string{"oltp", "build", "--pg-bin", file, "--path", dir}, want: []string{"--pg-bin " + file + " holds no initdb and postgres"}},
		{name: "build: pg-bin names no installed version", args: []string{"oltp", "build", "--pg-bin", "9", "--path", dir}, want: []string{"no PostgreSQL 9 build is installed here"}},
		{name: "build: engine setting not KEY=VALUE", args: []string{"oltp", "build", "--engine-setting", "io_method", "--path", dir}, want: []string{`--engine-setting "io_method" is not KEY=VALUE`}},
		{name: "build: engine setting calibra owns", args: []string{"oltp", "build", "--engine-setting", "listen_addresses=*", "--path", dir}, want: []string{"the engine setting listen_addresses is calibra's own"}},
		{name: "build: engine setting unknown to the version", args: []string{"oltp", "build", "--pg-bin", "15", "--engine-setting", "io_method=worker", "--path", dir}, want: []string{"has no setting io_method"}},
		{name: "run: engine setting with a dsn", args: []string{"oltp", "run", "--engine-setting", "work_mem=8MB", "--dsn", "postgres://bench@127.0.0.1:1/bench"}, want: []string{"engine settings apply to the managed instance only"}},
		{name: "build: an unknown engine", args: []string{"oltp", "build", "--engine", "oracle", "--path", dir}, want: []string{`--engine "oracle" is not an engine calibra knows`, "use one of: " + strings.Join(engine.Names(), ", ")}},
		{name: "build: pg-bin for mariadb", args: []string{"oltp", "build", "--engine", "mariadb", "--pg-bin", "15", "--path", dir}, want: []string{"--pg-bin names PostgreSQL's binaries, and the engine is MariaDB"}},
		{name: "run: a mysql dsn with engine postgresql", args: []string{"oltp", "run", "--engine", "postgresql", "--dsn", "mysql://bench@127.0.0.1:1/bench"}, want: []string{"--dsn names a mariadb server, and --engine postgresql"}},
		{name: "run: a mysql dsn that cannot connect", args: []string{"oltp", "run", "--dsn", "mysql://bench@127.0.0.1:1/bench"}, want: []string{"127.0.0.1:1"}},
		{name: "run: a mysql dsn on an invalid host", args: []string{"oltp", "run", "--dsn", "mysql://bench@db.invalid:3306/bench"}, want: []string{"db.invalid"}},
		{name: "build: mariadb setting calibra owns", args: []string{"oltp", "build", "--engine", "mariadb", "--engine-setting", "skip_networking=0", "--path", dir}, want: []string{"the engine setting skip_networking is calibra's own on the managed MariaDB instance"}},
		{name: "build: galera without mariadb", args: []string{"oltp", "build", "--galera", "3", "--path", dir}, want: []string{"--galera makes a MariaDB Galera cluster, and the engine is PostgreSQL", "add --engine mariadb"}},
		{name: "run: galera with a dsn", args: []string{"oltp", "run", "--galera", "2", "--dsn", "mysql://bench@127.0.0.1:1/bench"}, want: []string{"--galera starts managed MariaDB nodes; it cannot run on a --dsn server"}},
		{name: "build: galera with instances", args: []string{"oltp", "build", "--engine", "mariadb", "--galera", "2", "--instances", "2", "--path", dir}, want: []string{"--galera's nodes share one database"}},
		{name: "build: galera of too many nodes", args: []string{"oltp", "build", "--engine", "mariadb", "--galera", "10", "--path", dir}, want: []string{"--galera 10 is not a number of nodes", "give 1 to 9 nodes"}},
		{name: "build: galera of negative nodes", args: []string{"oltp", "build", "--engine", "mariadb", "--galera", "-1", "--path", dir}, want: []string{"--galera -1 is not a number of nodes"}},
		{name: "build: galera setting calibra owns", args: []string{"oltp", "build", "--engine", "mariadb", "--galera", "2", "--engine-setting", "wsrep_provider_options=gmcast.listen_addr=tcp://0.0.0.0:4567", "--path", dir}, want: []string{"wsrep_provider_options's addresses is calibra's own"}},
		{name: "build: wal path missing", args: []string{"oltp", "build", "--wal-path", missing, "--path", dir}, want: []string{"--wal-path " + missing + " is not a directory"}},
		{name: "build: wal path others can write", args: []string{"oltp", "build", "--wal-path", shared, "--path", dir}, want: []string{shared + " is writable by other accounts", "chmod go-w"}},
		{name: "build: path others can write", args: []string{"oltp", "build", "--path", shared}, want: []string{shared + " is writable by other accounts", "chmod go-w"}},
		{name: "run: replicas with a dsn", args: []string{"oltp", "run", "--replicas", "1", "--dsn", closed}, want: []string{"--replicas makes standbys of the managed instance", "drop --dsn"}},
		{name: "build: replicas on mariadb", args: []string{"oltp", "build", "--replicas", "1", "--engine", "mariadb", "--path", dir}, want: append(standbyMakers(), "and the engine is "+engine.Title(mariadb.Name))},
		{name: "run: negative replicas", args: []string{"oltp", "run", "--replicas", "-1", "--path", dir}, want: []string{"--replicas -1 is negative"}},
		{name: "run: too many replicas", args: []string{"oltp", "run", "--replicas", "9", "--path", dir}, want: []string{"--replicas 9 is more standbys", "at most 8"}},
		{name: "run: bad sync", args: []string{"oltp", "run", "--replicas", "1", "--sync", "quorum", "--path", dir}, want: []string{`--sync "quorum" is not a synchronous replication mode`, "off, on or remote_apply"}},
		{name: "run: sync without replicas", args: []string{"oltp", "run", "--sync", "on", "--path", dir}, want: []string{"--sync says how commits wait for standbys", "add --replicas N"}},
		{name: "run: replica path without replicas", args: []string{"oltp", "run", "--replica-path", dir, "--path", dir}, want: []string{"--replica-path places standbys"}},
		{name: "run: replica path missing", args: []string{"oltp", "run", "--replicas", "1", "--replica-path", missing, "--path", dir}, want: []string{"--replica-path " + missing + " is not a directory"}},
		{name: "run: replica path others can write", args: []string{"oltp", "run", "--replicas", "1", "--replica-path", shared, "--path", dir}, want: []string{shared + " is writable by other accounts"}},
		{name: "run: replicas with instances", args: []string{"oltp", "run", "--replicas", "1", "--instances", "2", "--path", dir}, want: []string{"--replicas makes standbys of one managed instance, and --instances asks for 2"}},
		{name: "run: replicas and a sync setting", args: []string{"oltp", "run", "--replicas", "1", "--engine-setting", "synchronous_commit=off", "--path", dir}, want: []string{"the engine setting synchronous_commit is calibra's with --replicas", "--sync sets it"}},
		{name: "run: negative instances", args: []string{"oltp", "run", "--instances", "-1", "--path", dir}, want: []string{"--instances -1 is not a number of instances"}},
		{name: "run: too many instances", args: []string{"oltp", "build", "--instances", "99", "--path", dir}, want: []string{"--instances 99", "give 1 to 16"}},
		{name: "run: instances with a dsn", args: []string{"oltp", "run", "--instances", "2", "--dsn", "postgres://bench@127.0.0.1:1/bench"}, want: []string{"--instances starts managed instances"}},
		{name: "scale: more servers than instances", args: []string{"oltp", "scale", "--servers", "1,2", "--path", dir}, want: []string{"--servers goes up to 2, and --instances starts 1", "give --instances 2"}},
		{name: "scale: falling servers", args: []string{"oltp", "scale", "--instances", "2", "--servers", "2,1", "--path", dir}, want: []string{`--servers "2,1" is not a rising list`}},
		{name: "scale: fewer users than servers", args: []string{"oltp", "scale", "--instances", "2", "--servers", "1,2", "--users", "1", "--path", dir}, want: []string{"1 users leave some of the 2 servers without load"}},
		{name: "run: wal path with a dsn", args: []string{"oltp", "run", "--wal-path", dir, "--dsn", "postgres://bench@127.0.0.1:1/bench"}, want: []string{"--wal-path places the managed instance's WAL"}},
		{name: "build: run-as unknown account", args: []string{"oltp", "build", "--run-as", "no-such-account", "--path", dir}, want: []string{`the account "no-such-account" does not exist`, "--run-as USER"}, needs: "root"},
		{name: "build: run-as root", args: []string{"oltp", "build", "--run-as", "root", "--path", dir}, want: []string{"calibra runs PostgreSQL as an unprivileged account, not root (--run-as root)"}, needs: "root"},
		{name: "build: unknown lab", args: []string{"oltp", "build", "--lab", "ssd", "--path", dir}, want: []string{`--lab "ssd" names no lab preset`}},
		{name: "build: lab size not a size", args: []string{"oltp", "build", "--lab", "hdd:size=big", "--path", dir}, want: []string{`"big" is not a size`}},
		{name: "build: lab too small for the build", args: []string{"oltp", "build", "--lab", "hdd:size=512M", "--path", dir},
			want: []string{"the lab hdd:size=512M holds about 471.0 MiB for the database, and oltp build needs about 576.0 MiB", "give the lab a larger size= in --lab (size=627M or more)"}},
		{name: "build: lab too small for instances", args: []string{"oltp", "build", "--instances", "3", "--lab", "hdd:size=1G", "--path", dir},
			want: []string{"and oltp build on 3 servers needs about 1.7 GiB", "(size=1879M or more)"}},
		// A 3-node audit on a 4 GiB lab at the default 1 GiB cache filled
		// it building the nodes' redo logs.
		{name: "durability: lab too small for a cluster", args: []string{"durability", "--engine", "mariadb", "--galera", "3", "--lab", "hdd:size=4G", "--path", dir},
			want: []string{"the lab hdd:size=4G holds about 3.7 GiB for the database, and durability on 3 servers needs about 4.7 GiB", "(size=6G or more), or a smaller --db-cache"}},
		{name: "build: seed negative", args: []string{"oltp", "build", "--seed", "-1", "--path", dir}, want: []string{`invalid argument "-1" for "--seed"`}},
		{name: "build: bad progress mode", args: []string{"oltp", "build", "--progress", "loud", "--path", dir}, want: []string{`--progress "loud" is not a progress mode`, "auto, plain or none"}},
		{name: "build: json not a bool", args: []string{"oltp", "build", "--json=yes please", "--path", dir}, want: []string{`invalid argument "yes please" for "--json"`}},
		{name: "oltp run: metrics on every interface", args: []string{"oltp", "run", "--metrics-listen", ":9464", "--path", dir}, want: []string{`--metrics-listen ":9464" is not a loopback address`, "add --allow-remote"}},
		{name: "oltp run: metrics not host:port", args: []string{"oltp", "run", "--metrics-listen", "9464", "--path", dir}, want: []string{`--metrics-listen "9464" is not HOST:PORT`}},
		{name: "oltp ramp: metrics remote without a token", args: []string{"oltp", "ramp", "--metrics-listen", "0.0.0.0:9464", "--allow-remote", "--path", dir}, want: []string{"needs a bearer token", "--metrics-token-file"}},
		{name: "run: metrics token others can read", args: []string{"run", "--metrics-listen", "127.0.0.1:0", "--metrics-token-file", write("open-token", "s3cret\n"), "--path", dir}, want: []string{"can be read by other accounts (mode 0644)", "chmod 600"}},
		{name: "durability: metrics token missing", args: []string{"durability", "--metrics-listen", "127.0.0.1:0", "--metrics-token-file", missing, "--path", dir}, want: []string{"--metrics-token-file " + missing + " cannot be read"}},
		{name: "device: metrics token without the endpoint", args: []string{"device", "--metrics-token-file", missing, "--path", dir}, want: []string{"--metrics-listen, which is not given"}},
		{name: "build: dsn file missing", args: []string{"oltp", "build", "--dsn-file", missing}, want: []string{"--dsn-file " + missing + " cannot be read"}},
		{name: "build: dsn file empty", args: []string{"oltp", "build", "--dsn-file", emptyDSNFile, "--path", dir}, want: []string{"--dsn-file " + emptyDSNFile + " is empty", "write the DSN in it"}},
		{name: "build: dsn and dsn file", args: []string{"oltp", "build", "--dsn", closed, "--dsn-file", dsnFile}, want: []string{"--dsn and --dsn-file are both given"}},
		{name: "build: dsn file unreachable", args: []string{"oltp", "build", "--dsn-file", dsnFile}, want: []string{"cannot connect to bench@127.0.0.1:1/bench: nothing listens there", "check the host and port"}},

		// An --out that would be new is not made either.
		{name: "build: out not made", args: []string{"oltp", "build", "--warehouses", "0", "--out", filepath.Join(root, "new-run"), "--path", dir}, want: []string{"--warehouses 0 is not positive"}},
		{name: "run: out not made for a refused port", args: []string{"oltp", "run", "--dsn", closed, "--out", filepath.Join(root, "new-run")}, want: []string{"nothing listens there"}},
		{name: "dss: out not made", args: []string{"dss", "build", "--sf", "0", "--out", filepath.Join(root, "new-run"), "--path", dir}, want: []string{"--sf 0 is not positive"}},
		// A label names the default run directory: one longer than a
		// directory's name can hold is refused, whatever the command.
		{name: "build: label too long for a run directory", args: []string{"oltp", "build", "--label", long, "--path", dir}, want: []string{"--label is 5000 bytes long as a run directory's name holds it", "at most 200"}},
		{name: "run: label too long for a run directory", args: []string{"oltp", "run", "--label", long, "--path", dir}, want: []string{"--label is 5000 bytes long"}},
		{name: "device: label too long for a run directory", args: []string{"device", "--label", long, "--path", dir}, want: []string{"--label is 5000 bytes long"}},
		{name: "iocal: label too long for a run directory", args: []string{"iocal", "--label", long, "--path", dir}, want: []string{"--label is 5000 bytes long"}},
		{name: "durability: label too long for a run directory", args: []string{"durability", "--label", long, "--path", dir}, want: []string{"--label is 5000 bytes long"}},
		{name: "study: label too long for a run directory", args: []string{"run", "--label", long, "--path", dir}, want: []string{"--label is 5000 bytes long"}},
		{name: "study: label too long with a --out", args: []string{"run", "--label", long, "--out", filepath.Join(root, "new-run"), "--path", dir}, want: []string{"--label is 5000 bytes long"}},
		{name: "merge: label too long for a run directory", args: []string{"merge", "--label", long, oltpRun}, want: []string{"--label is 5000 bytes long"}},
		{name: "build: label too long once sanitised", args: []string{"oltp", "build", "--label", strings.Repeat("a  b", 67), "--path", dir}, want: []string{"--label is 201 bytes long"}},
		{name: "study: out not made", args: []string{"run", "--set", "oltp.users=0", "--out", filepath.Join(root, "new-run"), "--path", dir}, want: []string{"--users 0 is not positive"}},

		// oltp run
		{name: "run: unknown flag", args: []string{"oltp", "run", "--wharehouses", "2"}, want: []string{"unknown flag: --wharehouses", "calibra oltp run --help"}},
		{name: "run: users not positive", args: []string{"oltp", "run", "--users", "-3", "--path", dir}, want: []string{"--users -3 is not positive"}},
		{name: "run: users zero", args: []string{"oltp", "run", "--users", "0", "--path", dir}, want: []string{"--users 0 is not positive"}},
		{name: "run: users not a number", args: []string{"oltp", "run", "--users", "many", "--path", dir}, want: []string{`invalid argument "many" for "--users"`}},
		{name: "run: duration zero", args: []string{"oltp", "run", "--duration", "0s", "--path", dir}, want: []string{"--duration 0s is not positive"}},
		{name: "run: duration without unit", args: []string{"oltp", "run", "--duration", "5", "--path", dir}, want: []string{`invalid argument "5" for "--duration"`, "missing unit"}},
		{name: "run: rampup negative", args: []string{"oltp", "run", "--rampup", "-1s", "--path", dir}, want: []string{"--rampup -1s is negative"}},
		{name: "run: unknown mode", args: []string{"oltp", "run", "--mode", "fast", "--path", dir}, want: []string{`--mode "fast" is not a transaction mode`, "procedures, client or client-simple"}},
		{name: "run: pipelined client on mariadb", args: []string{"oltp", "run", "--engine", "mariadb", "--mode", "client", "--path", dir}, want: []string{"MariaDB has no pipelined client mode", "client-simple"}},
		{name: "run: unknown profile", args: []string{"oltp", "run", "--profile", "tpcc", "--path", dir}, want: []string{`--profile "tpcc" is not a workload profile`}},
		{name: "run: bad keying scale", args: []string{"oltp", "run", "--keying-thinking", "-1", "--path", dir}, want: []string{`--keying-thinking "-1"`, "off, on"}},
		{name: "run: keying not a scale", args: []string{"oltp", "run", "--keying-thinking", "sometimes", "--path", dir}, want: []string{`--keying-thinking "sometimes" is not off, on or a scale`}},
		{name: "run: more users than terminals", args: []string{"oltp", "run", "--warehouses", "2", "--users", "21", "--keying-thinking", "on", "--path", dir},
			want: []string{"a warehouse has at most 10", "at most 20 users"}},
		{name: "run: warehouses zero", args: []string{"oltp", "run", "--warehouses", "0", "--path", dir}, want: []string{"--warehouses 0 is not positive"}},
		// The build a run makes first when --path holds no managed
		// instance is checked as 'oltp build' is, before anything is made.
		{name: "run: implicit build past the free space", args: []string{"oltp", "run", "--warehouses", "99999999", "--path", dir},
			want: []string{"free but oltp run, which makes a build of 99999999 warehouses first, needs about", "free some space"}},
		{name: "run: implicit build past any size", args: []string{"oltp", "run", "--warehouses", "274877906944", "--path", dir}, want: []string{"--warehouses 274877906944 makes no possible size"}},
		{name: "ramp: implicit build past the free space", args: []string{"oltp", "ramp", "--warehouses", "99999999", "--path", dir},
			want: []string{"free but oltp ramp, which makes a build of 99999999 warehouses first, needs about"}},
		{name: "power: implicit build past the free space", args: []string{"dss", "power", "--sf", "90000", "--path", dir},
			want: []string{"free but dss power, which makes a build at scale factor 90000 first, needs about"}},
		{name: "run: load workers zero", args: []string{"oltp", "run", "--load-workers", "0", "--path", dir}, want: []string{"--load-workers 0 is not positive"}},
		{name: "run: rate negative", args: []string{"oltp", "run", "--rate-per-user", "-1", "--path", dir}, want: []string{"--rate-per-user -1 is negative"}},
		{name: "run: rate NaN", args: []string{"oltp", "run", "--rate-per-user", "NaN", "--path", dir}, want: []string{"--rate-per-user NaN is not a number"}},
		{name: "run: rate infinite", args: []string{"oltp", "run", "--rate-per-user", "Inf", "--path", dir}, want: []string{"--rate-per-user +Inf is not a number"}},
		{name: "run: open and keyed at once", args: []string{"oltp", "run", "--rate-per-user", "5", "--keying-thinking", "on", "--path", dir}, want: []string{"both pace the users"}},
		{name: "run: unknown driver", args: []string{"oltp", "run", "--driver", "threads", "--path", dir}, want: []string{"--driver \"threads\" is not a driver", "give auto or goroutines"}},
		{name: "run: reset with dsn", args: []string{"oltp", "run", "--reset", "--dsn", closed}, want: []string{"--reset needs the managed instance's template and cannot be used with --dsn"}},
		{name: "run: reset not a bool", args: []string{"oltp", "run", "--reset=sure", "--path", dir}, want: []string{`invalid argument "sure" for "--reset"`}},
		{name: "run: partition on the managed instance", args: []string{"oltp", "run", "--partition", "1/2", "--start-at", soon, "--path", dir},
			want: []string{"--partition splits the load on an existing server", "--dsn or --dsn-file"}},
		{name: "run: partition without start-at", args: []string{"oltp", "run", "--partition", "1/2", "--dsn", closed}, want: []string{"--partition needs --start-at"}},
		{name: "run: partition out of range", args: []string{"oltp", "run", "--partition", "3/2", "--start-at", soon, "--dsn", closed}, want: []string{"--partition 3/2 is not one of N from 1 to N", "JOB_COMPLETION_INDEX"}},
		{name: "run: partition not i/N", args: []string{"oltp", "run", "--partition", "2", "--start-at", soon, "--dsn", closed}, want: []string{`--partition "2" is not i/N`}},
		{name: "run: partition without users", args: []string{"oltp", "run", "--partition", "1/3", "--users", "2", "--start-at", soon, "--dsn", closed},
			want: []string{"leaves some partitions without a user", "--users 3 or more"}},
		{name: "run: partition without warehouses", args: []string{"oltp", "run", "--partition", "1/3", "--warehouses", "2", "--users", "6", "--start-at", soon, "--dsn", closed},
			want: []string{"there are only 2 warehouses"}},
		{name: "run: start-at past", args: []string{"oltp", "run", "--start-at", "2020-01-01T00:00:00Z", "--path", dir}, want: []string{"--start-at 2020-01-01T00:00:00Z is already past"}},
		{name: "run: start-at too far", args: []string{"oltp", "run", "--start-at", time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339), "--path", dir}, want: []string{"away", "within a day"}},
		{name: "run: start-at not a time", args: []string{"oltp", "run", "--start-at", "soon", "--path", dir}, want: []string{`--start-at "soon" is not a time`}},
		{name: "run: several problems at once", args: []string{"oltp", "run", "--users", "0", "--duration", "-1s", "--path", dir},
			want: []string{"--users 0 is not positive", "--duration -1s is not positive"}, lines: 2},
		{name: "run: an argument", args: []string{"oltp", "run", "fast"}, want: []string{`calibra oltp run takes no arguments, but was given "fast"`}},
		{name: "run: missing path", args: []string{"oltp", "run", "--path", missing}, want: []string{"the path " + missing + " does not exist"}},
		{name: "merge: a run that is no partition", args: []string{"merge", oltpRun}, want: []string{"holds no partition of a split oltp run", "--partition i/N"}},
		{name: "merge: not a run directory", args: []string{"merge", emptyRun}, want: []string{"holds no results.json"}},
		{name: "merge: nothing to merge", args: []string{"merge"}, want: []string{"the partitions' run directories"}},
		{name: "run: refused port", args: []string{"oltp", "run", "--dsn", closed},
			want: []string{"cannot connect to bench@127.0.0.1:1/bench: nothing listens there (connection refused)", "check the host and port in --dsn"}},
		{name: "run: unknown host", args: []string{"oltp", "run", "--dsn", "postgres://bench@db.invalid:5432/bench"},
			want: []string{"cannot connect to bench@db.invalid:5432/bench", "check the host"}},
		{name: "run: no server socket", args: []string{"oltp", "run", "--dsn", "postgres://bench@/bench?host=" + missing},
			want: []string{"cannot connect to bench@" + missing, "no server socket is in " + missing, "check the socket directory"}},
		{name: "run: password on the command line", args: []string{"oltp", "run", "--dsn", "postgres://bench:hunter2@127.0.0.1:1/bench"},
			want: []string{"warning: the password in --dsn shows in ps", "PGPASSWORD", "cannot connect to bench@127.0.0.1:1/bench"}, lines: 2},
		{name: "run: unparsable dsn", args: []string{"oltp", "run", "--dsn", "postgres://bench:hunter2@[::1/bench"}, want: []string{"cannot be parsed"}, lines: 2},
		{name: "run: key=value dsn unreachable", args: []string{"oltp", "run", "--dsn", "host=127.0.0.1 port=1 user=bench dbname=bench"}, want: []string{"cannot connect to bench@127.0.0.1:1/bench"}},

		// oltp ramp
		{name: "ramp: range empty", args: []string{"oltp", "ramp", "--from", "8", "--to", "4", "--path", dir}, want: []string{"the ramp from 8 to 4 users is empty"}},
		{name: "ramp: from zero", args: []string{"oltp", "ramp", "--from", "0", "--path", dir}, want: []string{"--from 0 is not positive"}},
		{name: "ramp: step zero", args: []string{"oltp", "ramp", "--step", "0", "--path", dir}, want: []string{"--step 0 is not positive"}},
		{name: "ramp: to not a number", args: []string{"oltp", "ramp", "--to", "lots", "--path", dir}, want: []string{`invalid argument "lots" for "--to"`}},
		{name: "ramp: sla zero", args: []string{"oltp", "ramp", "--sla", "0s", "--path", dir}, want: []string{"--sla 0s is not positive"}},
		{name: "ramp: sla negative", args: []string{"oltp", "ramp", "--sla", "-2s", "--path", dir}, want: []string{"--sla -2s is not positive"}},
		{name: "ramp: sla metric", args: []string{"oltp", "ramp", "--sla-metric", "p95", "--path", dir}, want: []string{`--sla-metric "p95"`, "art or p90"}},
		{name: "ramp: art-at outside the ramp", args: []string{"oltp", "ramp", "--from", "4", "--to", "16", "--step", "4", "--art-at", "6", "--path", dir}, want: []string{"--art-at 6 is not a load of the ramp", "4 to 16 by 4"}},
		{name: "ramp: art-at negative", args: []string{"oltp", "ramp", "--art-at", "-1", "--path", dir}, want: []string{"--art-at -1 is not a load of the ramp"}},
		{name: "ramp: fall negative", args: []string{"oltp", "ramp", "--fall", "-1", "--path", dir}, want: []string{"--fall -1 is not between 0 and 100"}},
		{name: "ramp: fall past 100", args: []string{"oltp", "ramp", "--fall", "200", "--path", dir}, want: []string{"--fall 200 is not between 0 and 100"}},
		{name: "ramp: fall NaN", args: []string{"oltp", "ramp", "--fall", "NaN", "--path", dir}, want: []string{"--fall NaN is not a number"}},
		{name: "ramp: rate infinite", args: []string{"oltp", "ramp", "--rate-per-user", "-Inf", "--path", dir}, want: []string{"--rate-per-user -Inf is not a number"}},
		{name: "ramp: unknown profile", args: []string{"oltp", "ramp", "--profile", "tpcc", "--path", dir}, want: []string{`--profile "tpcc" is not a workload profile`, "spec or hammerdb"}},
		{name: "ramp: duration zero", args: []string{"oltp", "ramp", "--duration", "0s", "--path", dir}, want: []string{"--duration 0s is not positive"}},
		{name: "ramp: rampup negative", args: []string{"oltp", "ramp", "--rampup", "-5s", "--path", dir}, want: []string{"--rampup -5s is negative"}},
		{name: "ramp: users is run's flag", args: []string{"oltp", "ramp", "--users", "4", "--path", dir}, want: []string{"unknown flag: --users", "calibra oltp ramp --help"}},

		// oltp check
		{name: "check: db cache zero", args: []string{"oltp", "check", "--db-cache", "0", "--path", dir}, want: []string{"--db-cache 0 is below"}},
		{name: "check: missing path", args: []string{"oltp", "check", "--path", missing}, want: []string{"the path " + missing + " does not exist"}},
		{name: "check: an argument", args: []string{"oltp", "check", "now"}, want: []string{"calibra oltp check takes no arguments"}},
		{name: "check: unknown flag", args: []string{"oltp", "check", "--warehouses", "2"}, want: []string{"unknown flag: --warehouses"}},
		{name: "check: refused port", args: []string{"oltp", "check", "--dsn", closed}, want: []string{"nothing listens there"}},

		// dss
		{name: "dss build: sf zero", args: []string{"dss", "build", "--sf", "0", "--path", dir}, want: []string{"--sf 0 is not positive", "above 0"}},
		{name: "dss build: sf negative", args: []string{"dss", "build", "--sf", "-1", "--path", dir}, want: []string{"--sf -1 is not positive"}},
		{name: "dss build: sf NaN", args: []string{"dss", "build", "--sf", "NaN", "--path", dir}, want: []string{"--sf NaN is not a number"}},
		{name: "dss build: sf infinite", args: []string{"dss", "build", "--sf", "Inf", "--path", dir}, want: []string{"--sf +Inf is not a number"}},
		{name: "dss build: sf not a number", args: []string{"dss", "build", "--sf", "one", "--path", dir}, want: []string{`invalid argument "one" for "--sf"`}},
		{name: "dss build: sf past any size", args: []string{"dss", "build", "--sf", "1e12", "--path", dir}, want: []string{"--sf 1000000000000 makes no possible size"}},
		{name: "dss build: load workers zero", args: []string{"dss", "build", "--load-workers", "0", "--path", dir}, want: []string{"--load-workers 0 is not positive"}},
		{name: "dss build: no generator", args: []string{"dss", "build", "--tpchgen", missing, "--path", dir},
			want: []string{"--tpchgen " + missing + " is not an executable program", "pip install tpchgen-cli"}},
		{name: "dss build: generator not executable", args: []string{"dss", "build", "--tpchgen", file, "--path", dir}, want: []string{"--tpchgen " + file + " is not an executable program"}},
		{name: "dss build: rebuild not a bool", args: []string{"dss", "build", "--rebuild=perhaps", "--path", dir}, want: []string{`invalid argument "perhaps" for "--rebuild"`}},
		{name: "dss build: missing path", args: []string{"dss", "build", "--path", missing}, want: []string{"the path " + missing + " does not exist"}},
		{name: "dss power: dop below -1", args: []string{"dss", "power", "--dop", "-2", "--path", dir}, want: []string{"--dop -2 is below -1"}},
		{name: "dss power: timeout negative", args: []string{"dss", "power", "--query-timeout", "-1s", "--path", dir}, want: []string{"--query-timeout -1s is negative"}},
		{name: "dss power: timeout not a duration", args: []string{"dss", "power", "--query-timeout", "long", "--path", dir}, want: []string{`invalid argument "long" for "--query-timeout"`}},
		{name: "dss power: sf NaN", args: []string{"dss", "power", "--sf", "NaN", "--path", dir}, want: []string{"--sf NaN is not a number"}},
		{name: "dss power: sf negative", args: []string{"dss", "power", "--sf", "-1", "--path", dir}, want: []string{"--sf -1 is not positive"}},
		{name: "dss power: streams is not its flag", args: []string{"dss", "power", "--streams", "2", "--path", dir}, want: []string{"unknown flag: --streams"}},
		{name: "dss throughput: streams zero", args: []string{"dss", "throughput", "--streams", "0", "--path", dir}, want: []string{"--streams 0 is not positive"}},
		{name: "dss throughput: streams negative", args: []string{"dss", "throughput", "--streams", "-1", "--path", dir}, want: []string{"--streams -1 is not positive"}},
		{name: "dss throughput: dop below -1", args: []string{"dss", "throughput", "--dop", "-3", "--path", dir}, want: []string{"--dop -3 is below -1"}},
		{name: "dss run: streams zero", args: []string{"dss", "run", "--streams", "0", "--path", dir}, want: []string{"--streams 0 is not positive"}},
		{name: "dss run: dop negative", args: []string{"dss", "run", "--dop", "-2", "--path", dir}, want: []string{"--dop -2 is below -1"}},
		{name: "dss run: sf infinite", args: []string{"dss", "run", "--sf", "Inf", "--path", dir}, want: []string{"--sf +Inf is not a number"}},
		{name: "dss run: sf zero", args: []string{"dss", "run", "--sf", "0", "--path", dir}, want: []string{"--sf 0 is not positive"}},
		{name: "dss run: an argument", args: []string{"dss", "run", "q1"}, want: []string{`calibra dss run takes no arguments, but was given "q1"`}},
		{name: "dss run: refused port", args: []string{"dss", "run", "--dsn", closed}, want: []string{"nothing listens there"}},

		// iocal
		{name: "iocal: jobs not positive", args: []string{"iocal", "--jobs", "1,0", "--path", dir}, want: []string{`--jobs "1,0" holds 0, which is not positive`}},
		{name: "iocal: too many jobs", args: []string{"iocal", "--jobs", "2048", "--path", dir}, want: []string{"more than 1024"}},
		{name: "iocal: jobs empty", args: []string{"iocal", "--jobs", "", "--path", dir}, want: []string{`--jobs "" holds "", not a whole number`}},
		{name: "iocal: jobs not numbers", args: []string{"iocal", "--jobs", "a,b", "--path", dir}, want: []string{`holds "a", not a whole number`}},
		{name: "iocal: size zero", args: []string{"iocal", "--size", "0", "--path", dir}, want: []string{"--size 0 is not positive"}},
		{name: "iocal: size not a size", args: []string{"iocal", "--size", "big", "--path", dir}, want: []string{`"big" is not a size`}},
		{name: "iocal: size negative", args: []string{"iocal", "--size", "-1", "--path", dir}, want: []string{`--size "-1" is not a size`}},
		{name: "iocal: size below a chunk", args: []string{"iocal", "--size", "8KiB", "--path", dir}, want: []string{"--size 8KiB is below one 4 MiB sequential chunk"}},
		{name: "iocal: size does not fit", args: []string{"iocal", "--size", "1000000GiB", "--path", dir}, want: []string{"free but iocal needs about", "free some space"}},
		{name: "iocal: max latency zero", args: []string{"iocal", "--max-latency", "0s", "--path", dir}, want: []string{"--max-latency 0s is not positive"}},
		{name: "iocal: max latency negative", args: []string{"iocal", "--max-latency", "-1ms", "--path", dir}, want: []string{"--max-latency -1ms is not positive"}},
		{name: "iocal: point zero", args: []string{"iocal", "--point", "0s", "--path", dir}, want: []string{"--point 0s is not positive"}},
		{name: "iocal: point not a duration", args: []string{"iocal", "--point", "abc", "--path", dir}, want: []string{`invalid argument "abc" for "--point"`}},
		{name: "iocal: warmup negative", args: []string{"iocal", "--warmup", "-1s", "--path", dir}, want: []string{"--warmup -1s is negative"}},
		{name: "iocal: loaders zero", args: []string{"iocal", "--loaders", "0", "--path", dir}, want: []string{"--loaders 0 is not positive"}},
		{name: "iocal: unknown test", args: []string{"iocal", "--tests", "random,fast", "--path", dir}, want: []string{`holds "fast", not a test`}},
		{name: "iocal: no test", args: []string{"iocal", "--tests", "", "--path", dir}, want: []string{`--tests "" holds "", not a test`}},
		{name: "iocal: keep not a bool", args: []string{"iocal", "--keep=later", "--path", dir}, want: []string{`invalid argument "later" for "--keep"`}},
		{name: "iocal: os cache limit zero", args: []string{"iocal", "--os-cache-limit", "0", "--path", dir}, want: []string{"--os-cache-limit 0 is not positive"}},
		{name: "iocal: os cache limit not a size", args: []string{"iocal", "--os-cache-limit", "abc", "--path", dir}, want: []string{`--os-cache-limit "abc" is not a size`}},
		{name: "iocal: db cache past memory", args: []string{"iocal", "--db-cache", "64TB", "--path", dir}, want: []string{"--db-cache 64TB is more than this machine's"}},
		{name: "iocal: a mysql dsn that cannot connect", args: []string{"iocal", "--dsn", "mysql://bench@127.0.0.1/bench"}, want: []string{"127.0.0.1:3306", "--dsn"}},
		{name: "iocal: os cache limit with dsn", args: []string{"iocal", "--dsn", closed, "--os-cache-limit", "1GiB"}, want: []string{"cannot be used with --dsn"}},
		{name: "iocal: unknown host", args: []string{"iocal", "--dsn", "postgres://bench@calibra.invalid/bench"}, want: []string{"cannot connect to bench@calibra.invalid:5432/bench"}},
		{name: "iocal: reads per call zero", args: []string{"iocal", "--reads-per-call", "0", "--path", dir}, want: []string{"--reads-per-call 0 is not from 1 to 65536"}},
		{name: "iocal: reads per call too many", args: []string{"iocal", "--reads-per-call", "70000", "--path", dir}, want: []string{"--reads-per-call 70000 is not from 1 to 65536"}},
		{name: "iocal: reads per call not a number", args: []string{"iocal", "--reads-per-call", "many", "--path", dir}, want: []string{`invalid argument "many" for "--reads-per-call"`}},
		{name: "iocal: wal path missing", args: []string{"iocal", "--tests", "wal", "--wal-path", missing, "--path", dir}, want: []string{"--wal-path " + missing + " is not a directory"}},
		{name: "iocal: unknown test wall", args: []string{"iocal", "--tests", "wall", "--path", dir}, want: []string{`holds "wall", not a test`, "clientread"}},

		// device
		{name: "device: unknown spec", args: []string{"device", "--specs", "4k-randred", "--path", dir}, want: []string{`"4k-randred" is not a known access spec`}},
		{name: "device: empty spec list", args: []string{"device", "--specs", "", "--path", dir}, want: []string{"--specs has an empty entry"}},
		{name: "device: custom spec without bs", args: []string{"device", "--specs", "x:bs=0", "--path", dir}, want: []string{`the custom spec "x:bs=0"`}},
		{name: "device: custom spec read past 100", args: []string{"device", "--specs", "x:bs=4k,read=150", "--path", dir}, want: []string{`has a bad read: "150" is not a whole percentage`}},
		{name: "device: custom spec random negative", args: []string{"device", "--specs", "x:bs=4k,random=-1", "--path", dir}, want: []string{`has a bad random`}},
		{name: "device: custom spec unknown option", args: []string{"device", "--specs", "x:bs=4k,depth=8", "--path", dir}, want: []string{`has an unknown option "depth=8"`}},
		{name: "device: qd zero", args: []string{"device", "--qd", "0", "--path", dir}, want: []string{`--qd "0" holds 0, which is not positive`}},
		{name: "device: qd not a number", args: []string{"device", "--qd", "deep", "--path", dir}, want: []string{`--qd "deep" holds "deep", not a whole number`}},
		{name: "device: qd empty", args: []string{"device", "--qd", "", "--path", dir}, want: []string{`--qd "" holds ""`}},
		{name: "device: workers zero", args: []string{"device", "--workers", "0", "--path", dir}, want: []string{"--workers 0 is not positive"}},
		{name: "device: repeat zero", args: []string{"device", "--repeat", "0", "--path", dir}, want: []string{"--repeat 0 is not positive"}},
		{name: "device: runtime zero", args: []string{"device", "--runtime", "0s", "--path", dir}, want: []string{"--runtime 0s is not positive"}},
		{name: "device: runtime below a second", args: []string{"device", "--runtime", "500ms", "--path", dir}, want: []string{"--runtime 500ms is shorter than 1s"}},
		{name: "device: ramp negative", args: []string{"device", "--ramp", "-1s", "--path", dir}, want: []string{"--ramp -1s is negative"}},
		{name: "device: size zero", args: []string{"device", "--size", "0", "--path", dir}, want: []string{"--size 0 is not positive"}},
		{name: "device: size not a block multiple", args: []string{"device", "--size", "1000", "--path", dir}, want: []string{"--size 1000 is not a multiple of 4 KiB"}},
		{name: "device: size not a size", args: []string{"device", "--size", "big", "--path", dir}, want: []string{`--size "big" is not a size`}},
		{name: "device: size does not fit", args: []string{"device", "--size", "100000TiB", "--path", dir}, want: []string{"free but calibra device needs about"}},
		{name: "device: max latency zero", args: []string{"device", "--max-latency", "0s", "--path", dir}, want: []string{"--max-latency 0s is not positive"}},
		{name: "device: unknown ioengine", args: []string{"device", "--ioengine", "spdk", "--path", dir}, want: []string{`--ioengine "spdk" is not an ioengine calibra drives`}},
		{name: "device: no fio", args: []string{"device", "--fio", missing, "--path", dir}, want: []string{"--fio " + missing + " is not an executable program", "apt-get install fio"}},
		{name: "device: file too small", args: []string{"device", "--path", file}, want: []string{"holds 0 B but the workers need 1 GiB"}},
		{name: "device: not a file or device", args: []string{"device", "--path", "/dev/null"}, want: []string{"the path /dev/null is none of a directory, a file or a block device"}},
		{name: "device: missing path", args: []string{"device", "--path", missing}, want: []string{"the path " + missing + " does not exist"}},
		{name: "device: direct not a bool", args: []string{"device", "--direct=often", "--path", dir}, want: []string{`invalid argument "often" for "--direct"`}},
		{name: "device: with a dsn", args: []string{"device", "--dsn", closed, "--path", dir}, want: []string{"calibra device measures the storage under --path and uses no database"}},
		{name: "device: unknown lab", args: []string{"device", "--lab", "tape", "--path", dir}, want: []string{`--lab "tape" names no lab preset`}},
		{name: "device: an argument", args: []string{"device", dir}, want: []string{"calibra device takes no arguments"}},

		// the results store: --store and CALIBRA_STORE, store import and check, history
		{name: "store: a password on the command line", args: []string{"history", "--store", "postgres://bench:hunter2@127.0.0.1:1/bench"}, want: []string{"--store holds a password, which ps shows to every local account", "give it in PGPASSWORD"}},
		{name: "store: an unreadable PostgreSQL URL", args: []string{"store", "check"}, env: []string{"CALIBRA_STORE=postgresql://bench:hunter2@127.0.0.1:port/bench"}, want: []string{"CALIBRA_STORE names a PostgreSQL store whose URL calibra cannot read"}},
		{name: "store: no database", args: []string{"history", "--store", "postgres://bench@127.0.0.1:1"}, want: []string{"--store names no PostgreSQL database"}},
		{name: "store: --store and --store-file", args: []string{"history", "--store", "none", "--store-file", dsnFile}, want: []string{"--store and --store-file are both given"}},
		{name: "store: an empty --store-file", args: []string{"history", "--store-file", emptyDSNFile}, want: []string{"--store-file " + emptyDSNFile + " is empty"}},
		{name: "store: unknown store", args: []string{"oltp", "run", "--store", "mysql://127.0.0.1:1/bench", "--path", dir}, want: []string{`--store "mysql://127.0.0.1:1/bench" is not a store calibra knows`, "use sqlite:PATH, postgres://USER@HOST/DB or none"}},
		{name: "store: sqlite names no file", args: []string{"device", "--store", "sqlite:", "--path", dir}, want: []string{`--store "sqlite:" names no file`}},
		{name: "store: sqlite names a directory", args: []string{"history", "--store", "sqlite:" + dir + "/"}, want: []string{"names a directory, not a file", "results.db"}},
		{name: "store: a store in a shared directory", args: []string{"store", "import", "--store", "sqlite:" + filepath.Join(shared, "r.db"), oltpRun}, want: []string{"writable by other accounts"}},
		{name: "store import: nothing to import", args: []string{"store", "import", "--store", "sqlite:" + filepath.Join(root, "store", "r.db")}, want: []string{"calibra store import takes the run directories to record, but was given 0"}},
		{name: "store import: a broken run among good ones", args: []string{"store", "import", "--store", "sqlite:" + filepath.Join(root, "store", "r.db"), oltpRun, brokenRun}, want: []string{"is not valid JSON", "restore the file"}},
		{name: "store import: not a run directory", args: []string{"store", "import", "--store", "sqlite:" + filepath.Join(root, "store", "r.db"), emptyRun}, want: []string{"holds no results.json"}},
		{name: "store import: the store off", args: []string{"store", "import", "--store", "none", oltpRun}, want: []string{"the results store is off (--store none)", "give --store sqlite:PATH"}},
		{name: "store check: an argument", args: []string{"store", "check", dir}, want: []string{"calibra store check takes no arguments, but was given 1"}},
		{name: "store check: the store off", args: []string{"store", "check"}, want: []string{"the results store is off"}},
		{name: "store: unknown subcommand", args: []string{"store", "imprt"}, want: []string{`unknown command "imprt" for "calibra store"`}},
		{name: "history: metric without its kind", args: []string{"history", "--metric", "nopm"}, want: []string{`--metric "nopm" names no metric`, "KIND.METRIC", "oltp.nopm"}},
		{name: "history: metric of no kind", args: []string{"history", "--metric", "olpt.nopm"}, want: []string{`--metric "olpt.nopm" names no kind of step`, "use one of:"}},
		{name: "history: metric unknown to its kind", args: []string{"history", "--metric", "oltp.nopn"}, want: []string{`--metric "oltp.nopn" names no metric of oltp`, "nopm"}},
		{name: "history: label not a glob", args: []string{"history", "--label", "[a"}, want: []string{`--label "[a" is not a glob`}},
		{name: "history: limit negative", args: []string{"history", "--limit", "-1"}, want: []string{"--limit -1 is negative"}},
		{name: "history: limit not a number", args: []string{"history", "--limit", "ten"}, want: []string{`invalid argument "ten" for "--limit"`}},
		{name: "history: an argument", args: []string{"history", "oltp"}, want: []string{"calibra history takes no arguments"}},
		{name: "history: unknown format", args: []string{"history", "--format", "html"}, want: []string{`--format "html" is not a history format`, "text, md, csv, json"}},
		{name: "history: --json and another format", args: []string{"history", "--json", "--format", "csv"}, want: []string{"--json and --format csv are both given"}},
		{name: "history: storage not a glob", args: []string{"history", "--storage", "/mnt/[x"}, want: []string{`--storage "/mnt/[x" is not a glob`}},
		{name: "history: unknown status", args: []string{"history", "--status", "done"}, want: []string{`--status "done" is not a run's status`, "complete, failed, interrupted"}},
		{name: "history: since neither time nor age", args: []string{"history", "--since", "last week"}, want: []string{`--since "last week" is neither a time nor an age`, "7d"}},
		{name: "history: since after until", args: []string{"history", "--since", "2026-03-02", "--until", "2026-03-01"}, want: []string{"--since 2026-03-02 is not before --until 2026-03-01"}},

		// report and compare
		{name: "report: no run", args: []string{"report"}, want: []string{"calibra report takes one run directory, but was given 0"}},
		{name: "report: two runs", args: []string{"report", devRun, oltpRun}, want: []string{"calibra report takes one run directory, but was given 2"}},
		{name: "report: missing directory", args: []string{"report", missing}, want: []string{missing + " holds no results.json"}},
		{name: "report: no results", args: []string{"report", emptyRun}, want: []string{"holds no results.json", "give the run directory"}},
		{name: "report: broken results", args: []string{"report", brokenRun}, want: []string{"is not valid JSON", "restore the file"}},
		{name: "report: a file", args: []string{"report", file}, want: []string{"cannot read " + file + "/results.json"}},
		{name: "compare: no run", args: []string{"compare"}, want: []string{"calibra compare takes two or more run directories, but was given 0"}},
		{name: "compare: one run", args: []string{"compare", devRun}, want: []string{"but was given 1"}},
		{name: "compare: missing run", args: []string{"compare", missing, devRun}, want: []string{missing + " holds no results.json"}},
		{name: "compare: broken run", args: []string{"compare", devRun, brokenRun}, want: []string{"is not valid JSON"}},
		{name: "compare: no step in common", args: []string{"compare", devRun, oltpRun}, want: []string{"share no step"}},
		// run and compare --baseline: a verdict against the store's runs
		{name: "baseline: the store off", args: []string{"run", "--baseline", "last", "--store", "none", "--path", dir}, want: []string{"--baseline reads the results store, which is off (--store none)", "give --store sqlite:PATH"}},
		{name: "baseline: no runs", args: []string{"run", "--baseline", "last", "--baseline-runs", "0", "--store", "sqlite:" + filepath.Join(root, "store", "r.db"), "--path", dir}, want: []string{"--baseline-runs 0 is not a number of runs"}},
		{name: "baseline: a negative allowance", args: []string{"run", "--baseline", "last", "--max-regression", "-5", "--store", "sqlite:" + filepath.Join(root, "store", "r.db"), "--path", dir}, want: []string{"--max-regression -5 is not a share of change"}},
		{name: "baseline: NaN allowance", args: []string{"compare", "--baseline", "last", "--max-regression", "NaN", "--store", "sqlite:" + filepath.Join(root, "store", "r.db"), devRun}, want: []string{"--max-regression NaN is not a share of change"}},
		{name: "baseline: an allowance without a baseline", args: []string{"run", "--max-regression", "3", "--path", dir}, want: []string{"--max-regression judges against a baseline, and no --baseline was given", "add --baseline last"}},
		{name: "baseline: compare of two runs", args: []string{"compare", "--baseline", "last", devRun, devRun}, want: []string{"calibra compare takes one run directory with --baseline, but was given 2"}},
		{name: "baseline: compare with html", args: []string{"compare", "--baseline", "last", "--store", "sqlite:" + filepath.Join(root, "store", "r.db"), devRun, "--html", filepath.Join(root, "c.html")}, want: []string{"--html draws a comparison of run directories", "drop --html"}},
		{name: "compare: unknown format", args: []string{"compare", devRun, devRun, "--format", "xml"}, want: []string{`--format "xml" is not a compare format`}},
		{name: "compare: html where no directory is", args: []string{"compare", devRun, devRun, "--html", filepath.Join(missing, "c.html")},
			want: []string{"cannot write " + filepath.Join(missing, "c.html"), "choose a --html file"}},

		// clean and lab
		{name: "clean: missing path", args: []string{"clean", "--path", missing}, want: []string{"the path " + missing + " does not exist"}},
		{name: "clean: path is a file", args: []string{"clean", "--path", file}, want: []string{"is not a directory"}},
		{name: "clean: an argument", args: []string{"clean", dir}, want: []string{"calibra clean takes no arguments", "calibra clean --help"}},
		{name: "clean: dsn is not its flag", args: []string{"clean", "--dsn", closed}, want: []string{"unknown flag: --dsn"}},
		{name: "lab check: no lab", args: []string{"lab", "check", "--path", dir}, want: []string{"calibra lab check needs --lab"}},
		{name: "lab check: unknown lab", args: []string{"lab", "check", "--lab", "tape", "--path", dir}, want: []string{`--lab "tape" names no lab preset`}},
		{name: "lab check: bad size", args: []string{"lab", "check", "--lab", "hdd:size=abc", "--path", dir}, want: []string{`"abc" is not a size`}},
		{name: "lab check: missing path", args: []string{"lab", "check", "--lab", "hdd", "--path", missing}, want: []string{"the path " + missing + " does not exist"}},

		// durability
		{name: "durability: cycles zero", args: []string{"durability", "--cycles", "0", "--path", dir}, want: []string{"--cycles 0 is not positive"}},
		{name: "durability: clients zero", args: []string{"durability", "--clients", "0", "--path", dir}, want: []string{"--clients 0 is not positive"}},
		{name: "durability: load zero", args: []string{"durability", "--load", "0s", "--path", dir}, want: []string{"--load 0s is not positive"}},
		{name: "durability: warehouses zero", args: []string{"durability", "--warehouses", "0", "--path", dir}, want: []string{"--warehouses 0 is not positive"}},
		{name: "durability: threshold unparsable", args: []string{"durability", "--threshold", "lost", "--path", dir}, want: []string{`threshold "lost" has no comparison`}},
		{name: "durability: threshold on an unknown metric", args: []string{"durability", "--threshold", "durability.lost == 0", "--path", dir}, want: []string{"names no durability metric"}},
		{name: "durability: with a dsn", args: []string{"durability", "--dsn", closed}, want: []string{"cannot do to a server it does not manage (--dsn)"}},
		{name: "durability: an argument", args: []string{"durability", "now"}, want: []string{"calibra durability takes no arguments"}},
		{name: "durability: page protection neither on nor off", args: []string{"durability", "--page-protection", "maybe", "--path", dir}, want: []string{`--page-protection "maybe" is neither on nor off`}},
		{name: "durability: matrix without a lab", args: []string{"durability", "--matrix", "--path", dir}, want: []string{"--matrix tears writes at the lab's power cut, and there is no --lab"}},
		{name: "durability: matrix with page protection off", args: []string{"durability", "--matrix", "--page-protection", "off", "--lab", "hdd", "--path", dir}, want: []string{"--matrix runs page protection on and off itself"}},
		{name: "lab: torn cut on nbdkit", args: []string{"durability", "--lab", "hdd:cache=writeback,torn=4k", "--path", dir}, want: []string{"a torn cut needs calibra's own server"}},
		{name: "lab: torn unit not whole sectors", args: []string{"durability", "--lab", "hdd:torn=1000", "--path", dir}, want: []string{"not a multiple of 512"}},

		// plan
		{name: "plan: unknown preset", args: []string{"plan", "--preset", "quik"}, want: []string{`--preset "quik" is not a built-in study`}},
		{name: "plan: missing study", args: []string{"plan", "--study", missing}, want: []string{"the study file " + missing + " cannot be read"}},
		{name: "plan: bad set", args: []string{"plan", "--set", "x"}, want: []string{`--set "x" is not KIND.KEY=VALUE`}},
		{name: "plan: threshold unparsable", args: []string{"plan", "--threshold", "oltp.nopm is big"}, want: []string{"has no comparison"}},
		{name: "plan: db cache not a size", args: []string{"plan", "--db-cache", "lots"}, want: []string{`--db-cache "lots" is not a memory size`}},
		{name: "plan: os cache limit not a size", args: []string{"plan", "--os-cache-limit", "abc"}, want: []string{`os_cache_limit "abc" is not a size`}},
		{name: "plan: unknown lab", args: []string{"plan", "--lab", "tape"}, want: []string{`--lab "tape" names no lab preset`}},
		{name: "plan: an argument", args: []string{"plan", "quick"}, want: []string{`calibra plan takes no arguments, but was given "quick"`}},
		{name: "plan: study with both dsn and dsn_file", args: []string{"plan", "--study", bothDSNStudy}, want: []string{"target has both dsn and dsn_file"}},

		// run: a study
		{name: "study: unknown preset", args: []string{"run", "--preset", "quik", "--path", dir}, want: []string{`--preset "quik" is not a built-in study`, "quick"}},
		{name: "study: missing study file", args: []string{"run", "--study", missing, "--path", dir}, want: []string{"the study file " + missing + " cannot be read"}},
		{name: "study: broken study", args: []string{"run", "--study", brokenStudy, "--path", dir},
			want: []string{"broken.yaml:4:5: \"userz\" is not a setting of kind oltp", "broken.yaml:5:5: \"rampp\" is not a step kind"}, lines: 2},
		{name: "study: future version", args: []string{"run", "--study", futureStudy, "--path", dir}, want: []string{"future.yaml:1:10: this version is not a study format this calibra reads"}},
		{name: "study: yaml syntax", args: []string{"run", "--study", yamlError, "--path", dir}, want: []string{"syntax.yaml: line 5", "fix the YAML syntax"}},
		{name: "study: empty file", args: []string{"run", "--study", emptyStudy, "--path", dir}, want: []string{"empty.yaml is empty"}},
		{name: "study: target path missing", args: []string{"run", "--study", missingPathStudy}, want: []string{"the path " + missing + " does not exist"}},
		{name: "study: dsn_file missing", args: []string{"run", "--study", missingDSNFileStudy, "--path", dir}, want: []string{"target.dsn_file " + missing + " cannot be read"}},
		{name: "study: preset and study", args: []string{"run", "--preset", "quick", "--study", brokenStudy}, want: []string{"--preset and --study both choose the study"}},
		{name: "study: bad set", args: []string{"run", "--set", "oltp.users", "--path", dir}, want: []string{`--set "oltp.users" is not KIND.KEY=VALUE`}},
		{name: "study: set on a missing kind", args: []string{"run", "--set", "oltp_check.x=1", "--path", dir}, want: []string{"the study has no step of kind oltp_check"}},
		{name: "study: set a bad value", args: []string{"run", "--set", "oltp.users=0", "--path", dir}, want: []string{"(oltp): --users 0 is not positive"}},
		{name: "study: set not a number", args: []string{"run", "--set", "oltp.users=abc", "--path", dir}, want: []string{`--set oltp.users=abc: users: invalid argument "abc"`}},
		{name: "study: set repeat zero", args: []string{"run", "--set", "oltp.repeat=0", "--path", dir}, want: []string{`repeat "0" is not positive`}},
		{name: "study: set NaN", args: []string{"run", "--set", "oltp.rate_per_user=NaN", "--path", dir}, want: []string{"--rate-per-user NaN is not a number"}},
		{name: "study: threshold on an unknown metric", args: []string{"run", "--threshold", "oltp.nopmm > 5", "--path", dir}, want: []string{`names no metric of oltp`, "nopm"}},
		{name: "study: threshold unparsable", args: []string{"run", "--threshold", "oltp.nopm is big", "--path", dir}, want: []string{"has no comparison"}},
		{name: "study: threshold NaN", args: []string{"run", "--threshold", "oltp.nopm > NaN", "--path", dir}, want: []string{`threshold "oltp.nopm > NaN" does not compare with a finite number`}},
		{name: "study: threshold infinite", args: []string{"run", "--threshold", "oltp.nopm < Inf", "--path", dir}, want: []string{"does not compare with a finite number"}},
		{name: "study: threshold past a float", args: []string{"run", "--threshold", "oltp.art_ms < 1e999", "--path", dir}, want: []string{"does not compare with a finite number"}},
		{name: "plan: threshold NaN", args: []string{"plan", "--threshold", "oltp.nopm != NaN"}, want: []string{"does not compare with a finite number"}},
		{name: "durability: threshold NaN", args: []string{"durability", "--threshold", "durability.lost_commits == NaN", "--path", dir}, want: []string{"does not compare with a finite number"}},
		{name: "study: threshold not a number", args: []string{"run", "--threshold", "oltp.nopm > many", "--path", dir}, want: []string{"does not compare with a number"}},
		{name: "study: path missing", args: []string{"run", "--path", missing}, want: []string{"the path " + missing + " does not exist"}},
		{name: "study: db cache zero, said once", args: []string{"run", "--db-cache", "0", "--path", dir}, want: []string{"--db-cache 0 is below PostgreSQL's minimum"}},
		{name: "study: progress, said once", args: []string{"run", "--progress", "loud", "--path", dir}, want: []string{`--progress "loud" is not a progress mode`}},
		{name: "study: os cache limit zero", args: []string{"run", "--os-cache-limit", "0", "--path", dir}, want: []string{"os_cache_limit 0 is not positive"}},
		{name: "study: cold start not a bool", args: []string{"run", "--cold-start=often", "--path", dir}, want: []string{`invalid argument "often" for "--cold-start"`}},
		{name: "study: a variant's version is not installed", args: []string{"run", "--study", variantStudy, "--path", dir}, want: []string{"variant old: no PostgreSQL 9 build is installed here"}},
		{name: "study: no postgres binaries", args: []string{"run", "--pg-bin", missing, "--path", dir}, want: []string{"holds no initdb and postgres"}},
		{name: "study: out is a file", args: []string{"run", "--out", file, "--path", dir}, want: []string{"the run directory " + file + " is not a directory"}},
		{name: "study: dsn file empty", args: []string{"run", "--dsn-file", emptyDSNFile, "--path", dir}, want: []string{"is empty"}},
		{name: "study: a device step with a dsn", args: []string{"run", "--dsn-file", dsnFile}, want: []string{"step 1 (device): calibra device measures the storage under --path and uses no database"}},
		{name: "study: db cache from the environment", args: []string{"run", "--path", dir}, env: []string{"CALIBRA_DB_CACHE=lots"}, want: []string{`--db-cache "lots" is not a memory size`}},
		{name: "study: path from the environment", args: []string{"run"}, env: []string{"CALIBRA_PATH=" + missing}, want: []string{"the path " + missing + " does not exist"}},

		// Every flag's upper bound, NaN and Inf, said before anything starts.
		{name: "run: duration past a week", args: []string{"oltp", "run", "--duration", "200h", "--path", dir}, want: []string{"--duration 200h0m0s is too long", "--duration must be at most 7 days (168h)"}},
		{name: "run: rampup past a week", args: []string{"oltp", "run", "--rampup", "876000h", "--path", dir}, want: []string{"--rampup 876000h0m0s is too long"}},
		{name: "run: a billion users", args: []string{"oltp", "run", "--users", "1000000000", "--path", dir}, want: []string{"--users 1000000000 is too many", "--users must be at most 100000"}},
		{name: "run: more connections than a server takes", args: []string{"oltp", "run", "--users", "20000", "--path", dir}, want: []string{"--users 20000 needs", "connections to the managed server", "--connections"}},
		{name: "run: too many connections", args: []string{"oltp", "run", "--connections", "20000", "--path", dir}, want: []string{"--connections 20000 is too many"}},
		{name: "run: too many load workers", args: []string{"oltp", "run", "--load-workers", "5000", "--path", dir}, want: []string{"--load-workers 5000 is too many", "at most 1024"}},
		{name: "build: too many load workers", args: []string{"oltp", "build", "--load-workers", "5000", "--path", dir}, want: []string{"--load-workers 5000 is too many"}},
		{name: "run: rate too high", args: []string{"oltp", "run", "--rate-per-user", "1e6", "--path", dir}, want: []string{"--rate-per-user 1e+06 is too high", "at most 10000"}},
		{name: "run: keying infinite", args: []string{"oltp", "run", "--keying-thinking", "Inf", "--path", dir}, want: []string{`--keying-thinking "Inf" is not off, on or a scale`}},
		{name: "run: keying NaN", args: []string{"oltp", "run", "--keying-thinking", "NaN", "--path", dir}, want: []string{`--keying-thinking "NaN" is not off, on or a scale`}},
		{name: "run: keying too slow", args: []string{"oltp", "run", "--keying-thinking", "1000", "--path", dir}, want: []string{"--keying-thinking 1000 is too slow a scale", "at most 100"}},
		{name: "run: fewer users than instances", args: []string{"oltp", "run", "--instances", "3", "--users", "2", "--path", dir}, want: []string{"2 users leave some of the 3 servers without load"}},
		{name: "run: fewer users than galera nodes", args: []string{"oltp", "run", "--engine", "mariadb", "--galera", "3", "--users", "2", "--path", dir}, want: []string{"2 users leave some of the 3 servers without load"}},
		{name: "run: connections over instances", args: []string{"oltp", "run", "--instances", "2", "--users", "8", "--connections", "2", "--path", dir}, want: []string{"--connections pools one server's connections"}},
		{name: "ramp: to past the users' bound", args: []string{"oltp", "ramp", "--to", "200000", "--path", dir}, want: []string{"--to 200000 is too many"}},
		{name: "ramp: sla past an hour", args: []string{"oltp", "ramp", "--sla", "2h", "--path", dir}, want: []string{"--sla 2h0m0s is too long", "at most 1 hour"}},
		{name: "ramp: fall infinite", args: []string{"oltp", "ramp", "--fall", "Inf", "--path", dir}, want: []string{"--fall +Inf is not a number"}},
		{name: "ramp: rate NaN", args: []string{"oltp", "ramp", "--rate-per-user", "NaN", "--path", dir}, want: []string{"--rate-per-user NaN is not a number"}},
		{name: "scale: too many users", args: []string{"oltp", "scale", "--instances", "2", "--users", "200000", "--path", dir}, want: []string{"--users 200000 is too many"}},
		{name: "dss build: sf below the smallest", args: []string{"dss", "build", "--sf", "1e-300", "--path", dir}, want: []string{"--sf 1e-300 is too small", "at least 0.01"}},
		{name: "dss build: sf past TPC-H's largest", args: []string{"dss", "build", "--sf", "200000", "--path", dir}, want: []string{"--sf 200000 makes no possible size", "at most 100000"}},
		{name: "dss build: sf minus infinity", args: []string{"dss", "build", "--sf", "-Inf", "--path", dir}, want: []string{"--sf -Inf is not a number"}},
		{name: "dss build: too many load workers", args: []string{"dss", "build", "--load-workers", "5000", "--path", dir}, want: []string{"--load-workers 5000 is too many"}},
		{name: "dss run: too many streams", args: []string{"dss", "run", "--streams", "5000", "--path", dir}, want: []string{"--streams 5000 is too many"}},
		{name: "dss run: sf NaN", args: []string{"dss", "run", "--sf", "NaN", "--path", dir}, want: []string{"--sf NaN is not a number"}},
		{name: "dss power: dop too high", args: []string{"dss", "power", "--dop", "5000", "--path", dir}, want: []string{"--dop 5000 is too many"}},
		{name: "dss power: timeout past a week", args: []string{"dss", "power", "--query-timeout", "200h", "--path", dir}, want: []string{"--query-timeout 200h0m0s is too long"}},
		{name: "iocal: point past a week", args: []string{"iocal", "--point", "200h", "--path", dir}, want: []string{"--point 200h0m0s is too long"}},
		{name: "iocal: warmup past a week", args: []string{"iocal", "--warmup", "200h", "--path", dir}, want: []string{"--warmup 200h0m0s is too long"}},
		{name: "iocal: max latency past an hour", args: []string{"iocal", "--max-latency", "2h", "--path", dir}, want: []string{"--max-latency 2h0m0s is too long"}},
		{name: "iocal: too many loaders", args: []string{"iocal", "--loaders", "5000", "--path", dir}, want: []string{"--loaders 5000 is too many"}},
		{name: "iocal: os cache limit past memory", args: []string{"iocal", "--os-cache-limit", "1000TiB", "--path", dir}, want: []string{"--os-cache-limit 1000TiB bounds nothing", "below this machine's"}},
		{name: "device: queue too deep", args: []string{"device", "--qd", "1,10000", "--path", dir}, want: []string{`--qd "1,10000" holds 10000, too deep a queue`, "at most 4096"}},
		{name: "device: too many workers", args: []string{"device", "--workers", "5000", "--path", dir}, want: []string{"--workers 5000 is too many"}},
		{name: "device: too many repeats", args: []string{"device", "--repeat", "5000", "--path", dir}, want: []string{"--repeat 5000 is too many"}},
		{name: "device: runtime past a week", args: []string{"device", "--runtime", "200h", "--path", dir}, want: []string{"--runtime 200h0m0s is too long"}},
		{name: "device: ramp past a week", args: []string{"device", "--ramp", "200h", "--path", dir}, want: []string{"--ramp 200h0m0s is too long"}},
		{name: "device: max latency past an hour", args: []string{"device", "--max-latency", "2h", "--path", dir}, want: []string{"--max-latency 2h0m0s is too long"}},
		{name: "device: steady rounds past the bound", args: []string{"device", "--steady-state", "--steady-max-rounds", "5000", "--path", dir}, want: []string{"--steady-max-rounds 5000 is too many"}},
		{name: "device: steady rounds fewer than a window", args: []string{"device", "--steady-state", "--steady-max-rounds", "4", "--path", dir}, want: []string{"--steady-max-rounds 4 is fewer than the 5 rounds of a steady-state window"}},
		{name: "device: steady rounds negative", args: []string{"device", "--steady-max-rounds", "-1", "--path", dir}, want: []string{"--steady-max-rounds -1 is fewer than the 5 rounds"}},
		{name: "device: steady rounds not a number", args: []string{"device", "--steady-max-rounds", "many", "--path", dir}, want: []string{`invalid argument "many" for "--steady-max-rounds"`}},
		{name: "device: steady state not a bool", args: []string{"device", "--steady-state=often", "--path", dir}, want: []string{`invalid argument "often" for "--steady-state"`}},
		{name: "device: p99 bound zero", args: []string{"device", "--p99-bounds", "1ms,0s", "--path", dir}, want: []string{`--p99-bounds "1ms,0s" holds 0s, which is not positive`}},
		{name: "device: p99 bound not a duration", args: []string{"device", "--p99-bounds", "1ms,fast", "--path", dir}, want: []string{`--p99-bounds "1ms,fast" holds "fast", not a duration`}},
		{name: "device: p99 bound past an hour", args: []string{"device", "--p99-bounds", "2h", "--path", dir}, want: []string{`--p99-bounds "2h" holds 2h, too long a bound`}},
		{name: "device: p99 bound twice", args: []string{"device", "--p99-bounds", "1ms,1ms", "--path", dir}, want: []string{`--p99-bounds "1ms,1ms" lists 1ms twice`}},
		{name: "device: p99 bounds empty", args: []string{"device", "--p99-bounds", "", "--path", dir}, want: []string{`--p99-bounds "" holds "", not a duration`}},
		{name: "device: steady state with repeats", args: []string{"device", "--steady-state", "--repeat", "3", "--path", dir}, want: []string{"--repeat 3 would repeat whole windows", "drop --repeat with --steady-state"}},
		{name: "durability: too many cycles", args: []string{"durability", "--cycles", "5000", "--path", dir}, want: []string{"--cycles 5000 is too many"}},
		{name: "durability: too many clients", args: []string{"durability", "--clients", "5000", "--path", dir}, want: []string{"--clients 5000 is too many"}},
		{name: "durability: load past a week", args: []string{"durability", "--load", "200h", "--path", dir}, want: []string{"--load 200h0m0s is too long"}},
		{name: "durability: warehouses past any size", args: []string{"durability", "--warehouses", "274877906944", "--path", dir}, want: []string{"--warehouses 274877906944 makes no possible size"}},
		{name: "study: set repeat past the bound", args: []string{"run", "--set", "oltp.repeat=5000", "--path", dir}, want: []string{"repeat 5000 is too many", "at most 1000"}},
		{name: "study: set a duration past a week", args: []string{"run", "--set", "oltp.duration=200h", "--path", dir}, want: []string{"--duration 200h0m0s is too long"}},
		{name: "study: set keying infinite", args: []string{"run", "--set", "oltp.keying_thinking=Inf", "--path", dir}, want: []string{`--keying-thinking "Inf" is not off, on or a scale`}},
		{name: "study: repeat past the bound", args: []string{"run", "--study", write("repeat.yaml", "version: 1\nsteps:\n  - kind: oltp\n    repeat: 5000\n"), "--path", dir}, want: []string{"repeat.yaml:4:13: repeat is too many", "at most 1000"}},
		{name: "study: storage limit past the bound", args: []string{"run", "--study", write("mbps.yaml", "version: 1\ntarget:\n  storage_limit: {read_mbps: 9223372036854}\nsteps:\n  - kind: oltp\n"), "--path", dir},
			want: []string{"mbps.yaml:3:30: storage_limit.read_mbps is too high"}},
		{name: "study: os cache limit past memory", args: []string{"run", "--os-cache-limit", "1000TiB", "--path", dir}, want: []string{"os_cache_limit 1000TiB bounds nothing"}},
		{name: "lab check: rate NaN", args: []string{"lab", "check", "--lab", "plain:rate=NaN", "--path", dir}, want: []string{`"NaN" is not a rate`}},
		{name: "lab check: rate infinite", args: []string{"lab", "check", "--lab", "plain:rate=Inf", "--path", dir}, want: []string{`"Inf" is not a rate`}},
		{name: "lab check: error rate NaN", args: []string{"lab", "check", "--lab", "plain:error_rate=NaN", "--path", dir}, want: []string{`"NaN" is not a fraction`}},
		{name: "lab check: error rate past 100%", args: []string{"lab", "check", "--lab", "plain:error_rate=200%", "--path", dir}, want: []string{`"200%" is not a fraction`}},
		{name: "lab check: size past int64", args: []string{"lab", "check", "--lab", "hdd:size=9999999999T", "--path", dir}, want: []string{"is more than the 1P a lab's file may be"}},
		{name: "lab check: delay past a minute", args: []string{"lab", "check", "--lab", "hdd:rdelay=1h", "--path", dir}, want: []string{"1h is longer than the 1m0s a delay may be"}},
		{name: "lab check: too many spindles", args: []string{"lab", "check", "--lab", "hdd:spindles=1000", "--path", dir}, want: []string{"at most 256"}},
		{name: "lab check: iops past the bound", args: []string{"lab", "check", "--lab", "throttled:read_iops=1000000000000", "--path", dir}, want: []string{"is not a whole number from 0 to 100000000"}},
		{name: "build: lab rate NaN", args: []string{"oltp", "build", "--lab", "plain:rate=NaN", "--path", dir}, want: []string{`"NaN" is not a rate`}},
		{name: "build: dsn file readable by others", args: []string{"oltp", "build", "--dsn-file", write("open-dsn", "postgres://bench:hunter2@127.0.0.1:1/bench\n")},
			want: []string{"warning: --dsn-file " + filepath.Join(fx, "open-dsn") + " is readable by its group or others (mode 0644)", "chmod 600 " + filepath.Join(fx, "open-dsn"), "nothing listens there"}, lines: 2},
		{name: "study: dsn_file readable by others", args: []string{"run", "--study", write("open.yaml", "version: 1\ntarget: {dsn_file: "+filepath.Join(fx, "open-dsn")+"}\nsteps:\n  - kind: oltp_check\n")},
			want: []string{"target.dsn_file " + filepath.Join(fx, "open-dsn") + " is readable by its group or others", "chmod 600", "nothing listens there"}, lines: 2},
	}
	if len(cases) < 150 {
		t.Errorf("the matrix holds %d cases, fewer than the 150 the issue asks for", len(cases))
	}
	_, pgErr := postgres.FindBinaries("")
	u, _ := user.Current()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.needs == "root" && (pgErr != nil || u == nil || u.Uid != "0") {
				t.Skip("needs root and a PostgreSQL server: only root picks the server's account")
			}
			for _, kv := range c.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			before := tree(t, root)
			code, stdout, stderr := clitest.Run(t, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "hunter2") || strings.Contains(stdout, "hunter2") {
				t.Errorf("the password was printed:\n%s", stderr)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("a stack trace was printed:\n%s", stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if want := max(c.lines, 1); len(lines) != want {
				t.Errorf("%d lines on stderr, want %d:\n%s", len(lines), want, stderr)
			}
			for _, line := range lines {
				if !strings.HasPrefix(line, "calibra: ") {
					t.Errorf("stderr line %q is not a calibra sentence", line)
				}
			}
			if after := tree(t, root); len(after) != len(before) {
				for p := range after {
					if !before[p] {
						t.Errorf("created %s", p)
					}
				}
			}
		})
	}
}

// tree is every path under root.
func tree(t *testing.T, root string) map[string]bool {
	t.Helper()
	paths := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		paths[p] = true
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func TestVersionPrintsToStdout(t *testing.T) {
	code, stdout, _ := clitest.Run(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "calibra ") {
		t.Fatalf("version: exit %d, stdout %q", code, stdout)
	}
}

// A read-only file system is the one way to refuse writes to root, who
// ignores permission bits; it needs a mount, which needs root.
func TestReadOnlyPathExitsTwo(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a read-only file system here (needs root): %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	code, _, stderr := clitest.Run(t, "oltp", "build", "--path", dir)
	if code != 2 || !strings.Contains(stderr, "is not writable") || !strings.Contains(stderr, "choose a --path you can write to") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

// One command at a time per path: a second one is refused with the
// holder's name, before anything starts; clean does not remove a running
// command's instance.
func TestABusyPathIsRefused(t *testing.T) {
	clitest.RequirePostgres(t)
	dir := clitest.StorageDir(t)
	lock, err := pathlock.Acquire(dir, "oltp run")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, args := range [][]string{
		{"oltp", "build", "--path", dir, "--out", filepath.Join(dir, "run")},
		{"clean", "--path", dir},
	} {
		code, _, stderr := clitest.Run(t, args...)
		if code != 2 || !strings.Contains(stderr, "another calibra is using "+dir+" (pid ") || !strings.Contains(stderr, "calibra oltp run)") {
			t.Errorf("%v on a busy path: exit %d\n%s", args, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
			t.Errorf("%v on a busy path created a run directory", args)
		}
	}
}
