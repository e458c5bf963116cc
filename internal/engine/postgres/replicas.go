package postgres

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Standbys of the managed instance (--replicas). Each is made once by
// pg_basebackup into PATH/calibra-pg-replica-K (or under --replica-path)
// and kept between commands with a replication slot on the primary, so it
// catches up at the next start; a command without it removes it, since an
// idle slot would keep WAL on the primary and change what is measured.
// A standby runs as calibra's child like the primary: the same account and
// settings, its own private socket, the same peer-only access; it streams
// from the primary over the primary's private socket (a peer-mapped
// replication connection), so no TCP listener exists anywhere.

// ReplicaDirPrefix names a standby's data directory, K appended.
const ReplicaDirPrefix = "calibra-pg-replica-"

const (
	replicaSlotPrefix = "calibra_replica_"   // slot and application_name, K appended
	replicaList       = "calibra-replicas"   // in the primary's data directory: its standbys' directories
	standbyMarker     = "calibra-standby-of" // in a complete standby: the primary's system identifier
)

// The --sync modes.
const (
	SyncOff         = "off"          // asynchronous standbys
	SyncOn          = "on"           // a commit waits until every standby has flushed it
	SyncRemoteApply = "remote_apply" // ... until every standby has replayed it
)

// SyncModes are the values --sync takes.
var SyncModes = []string{SyncOff, SyncOn, SyncRemoteApply}

// ReplicaSettings are the settings --replicas and --sync own: a study
// cannot set them beside those flags.
var ReplicaSettings = []string{"synchronous_standby_names", "synchronous_commit", "primary_conninfo", "primary_slot_name"}

// ReplicaConfig is how many standbys run, how commits wait for them and
// where their data live.
type ReplicaConfig struct {
	N    int
	Sync string // SyncModes; empty is on
	Path string // the directory the standbys' data directories go in
	// prefix names each standby's directory, K appended (Dirs.Replica).
	prefix string
}

func (rc ReplicaConfig) sync() string {
	if rc.Sync == "" {
		return SyncOn
	}
	return rc.Sync
}

// settings adds what the primary runs with for rc; the standbys get the
// same, as hot standby needs at least the primary's WAL senders.
func (rc ReplicaConfig) settings(s map[string]string) {
	if rc.N <= 0 {
		return
	}
	if rc.sync() == SyncRemoteApply {
		s["synchronous_commit"] = "remote_apply"
	}
	if n := rc.N + 4; n > 10 { // 10 is the default of both
		s["max_wal_senders"] = strconv.Itoa(n)
		s["max_replication_slots"] = strconv.Itoa(n)
	}
}

// SyncNames is synchronous_standby_names for rc: every standby confirms
// each commit, as every side of a mirror takes each write; empty for
// asynchronous standbys.
func (rc ReplicaConfig) SyncNames() string {
	if rc.N <= 0 || rc.sync() == SyncOff {
		return ""
	}
	names := make([]string, rc.N)
	for k := range names {
		names[k] = replicaName(k + 1)
	}
	return fmt.Sprintf("FIRST %d (%s)", rc.N, strings.Join(names, ", "))
}

func replicaName(k int) string { return replicaSlotPrefix + strconv.Itoa(k) }

func (rc ReplicaConfig) dir(k int) string {
	return filepath.Join(rc.Path, rc.prefix+strconv.Itoa(k))
}

// replicaSet runs a primary's standbys; a nil set has none.
type replicaSet struct {
	primary  *Instance
	standbys []*Instance // standby K at K-1, made at the first start
	notes    []string    // what start made, one sentence each

	mu   sync.Mutex
	pids []int // each standby's postmaster, 0 when stopped: read by the observers
}

func (r *replicaSet) cfg() ReplicaConfig { return r.primary.cfg.Replicas }

// start makes the standbys that are missing or stale, starts every one,
// waits until each streams, then makes commits wait for them as --sync
// says.
func (r *replicaSet) start(ctx context.Context, group *proc.Group, conn *pgx.Conn) error {
	if r == nil {
		return nil
	}
	rc := r.cfg()
	var sysID string
	if err := conn.QueryRow(ctx, "SELECT system_identifier::text FROM pg_control_system()").Scan(&sysID); err != nil {
		return fmt.Errorf("read the primary's system identifier: %w", err)
	}
	for k := 1; k <= rc.N; k++ {
		if len(r.standbys) < k {
			r.standbys = append(r.standbys, r.newStandby(k))
		}
		sb := r.standbys[k-1]
		if !r.usable(ctx, conn, k, sysID) {
			began := time.Now()
			if err := r.baseBackup(ctx, group, conn, k, sysID); err != nil {
				return err
			}
			r.notes = append(r.notes, fmt.Sprintf("made the standby %s in %s by pg_basebackup (%.1f s)", replicaName(k), sb.DataDir, time.Since(began).Seconds()))
		}
		sb.Overrides = map[string]string{
			"primary_conninfo": fmt.Sprintf("host=%s port=%d user=%s application_name=%s",
				r.primary.SocketDir, r.primary.Port, Superuser, replicaName(k)),
			"primary_slot_name": replicaName(k),
		}
		if err := sb.Start(ctx, group); err != nil {
			return fmt.Errorf("start the standby %s: %w", replicaName(k), err)
		}
		r.setPID(k, sb)
	}
	if err := r.waitStreaming(ctx, conn, false); err != nil {
		return err
	}
	if names := rc.SyncNames(); names != "" {
		if err := setSyncNames(ctx, conn, names); err != nil {
			return err
		}
		return r.waitStreaming(ctx, conn, true)
	}
	return nil
}

// newStandby is standby k as an instance: the primary's account and
// settings, its own directory, log and socket, outside the primary's
// cgroup (a mirror is another machine's memory).
func (r *replicaSet) newStandby(k int) *Instance {
	cfg := r.primary.cfg
	cfg.WALPath, cfg.Cgroup = "", nil
	if cfg.LogFile != "" {
		cfg.LogFile = filepath.Join(filepath.Dir(cfg.LogFile), replicaName(k)+".log")
	}
	return &Instance{cfg: cfg, DataDir: cfg.Replicas.dir(k), Process: newProcess(r.primary.Account, nil)}
}

func (r *replicaSet) setPID(k int, sb *Instance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.pids) < k {
		r.pids = append(r.pids, 0)
	}
	r.pids[k-1] = sb.PID()
}

// usable reports whether standby k is a complete copy of this primary
// whose slot still holds the WAL it needs.
func (r *replicaSet) usable(ctx context.Context, conn *pgx.Conn, k int, sysID string) bool {
	mark, err := server.ReadSmall(filepath.Join(r.cfg().dir(k), standbyMarker))
	if err != nil || strings.TrimSpace(string(mark)) != sysID {
		return false
	}
	var ok bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND restart_lsn IS NOT NULL)", replicaName(k)).Scan(&ok)
	return err == nil && ok
}

// baseBackup makes standby k anew: a copy of the primary under a
// temporary name, renamed once complete, so an interruption leaves no
// half-made standby to start.
func (r *replicaSet) baseBackup(ctx context.Context, group *proc.Group, conn *pgx.Conn, k int, sysID string) error {
	dir := r.cfg().dir(k)
	partial := dir + ".partial"
	for _, d := range []string{dir, partial} {
		stopLeftoverIn(d)
		if err := server.RemoveDir(d); err != nil {
			return fmt.Errorf("clear %s: %w", d, err)
		}
	}
	if err := dropSlot(ctx, conn, replicaName(k)); err != nil {
		return err
	}
	if _, err := r.primary.Account.Mkdir(filepath.Dir(partial), filepath.Base(partial)); err != nil {
		return err
	}
	cmd := r.primary.cfg.Bin.Command("pg_basebackup", "-D", partial, "-h", r.primary.SocketDir,
		"-p", strconv.Itoa(r.primary.Port), "-U", Superuser, "-w", "-X", "stream", "-c", "fast", "-C", "-S", replicaName(k), "-R")
	if out, err := r.primary.Account.Run(ctx, group, "pg_basebackup", cmd); err != nil {
		return fmt.Errorf("pg_basebackup into %s: %w: %s", partial, err, server.LastLines(out, 3, " | "))
	}
	if err := r.primary.Account.WriteFile(filepath.Join(partial, standbyMarker), []byte(sysID+"\n"), 0o600); err != nil {
		return err
	}
	return safefs.Rename(filepath.Dir(dir), filepath.Base(partial), filepath.Base(dir))
}

// waitStreaming waits until every standby streams (and, with sync, is
// synchronous), up to 5 minutes, failing early if one stops.
func (r *replicaSet) waitStreaming(ctx context.Context, conn *pgx.Conn, sync bool) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		rows, err := conn.Query(ctx, "SELECT application_name, state, sync_state FROM pg_stat_replication")
		if err != nil {
			return fmt.Errorf("read pg_stat_replication: %w", err)
		}
		seen := map[string]string{}
		var name, state, syncState string
		_, err = pgx.ForEachRow(rows, []any{&name, &state, &syncState}, func() error {
			if state == "streaming" && (!sync || syncState == "sync") {
				seen[name] = state
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("read pg_stat_replication: %w", err)
		}
		waiting, waitingLog := "", ""
		for k, sb := range r.standbys[:r.cfg().N] {
			if sb.Done() == nil {
				return fmt.Errorf("the standby %s is not running", replicaName(k+1))
			}
			if !sb.Running() {
				return fmt.Errorf("the standby %s stopped before it streamed (its log: %s)", replicaName(k+1), sb.cfg.LogFile)
			}
			if seen[replicaName(k+1)] == "" && waiting == "" {
				waiting, waitingLog = replicaName(k+1), sb.cfg.LogFile
			}
		}
		if waiting == "" {
			return nil
		}
		if time.Now().After(deadline) {
			what := "stream"
			if sync {
				what = "become synchronous"
			}
			return fmt.Errorf("the standby %s did not %s within 5 minutes (its log: %s)", waiting, what, waitingLog)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop stops every standby; safe on a nil set and twice.
func (r *replicaSet) stop() error {
	if r == nil {
		return nil
	}
	var errs []error
	for k, sb := range r.standbys {
		errs = append(errs, sb.Stop())
		r.setPID(k+1, sb)
	}
	return errors.Join(errs...)
}

// kill kills every standby at once, as a crash of their machines would.
func (r *replicaSet) kill() {
	if r == nil {
		return
	}
	for k, sb := range r.standbys {
		sb.Kill()
		r.setPID(k+1, sb)
	}
}

// describe is the set as results.json records it.
func (r *replicaSet) describe() *results.Replicas {
	if r == nil {
		return nil
	}
	rc := r.cfg()
	out := &results.Replicas{Count: rc.N, Sync: rc.sync()}
	for k := 1; k <= rc.N; k++ {
		out.Standbys = append(out.Standbys, results.Standby{Name: replicaName(k), DataDir: rc.dir(k)})
	}
	return out
}

// Replicas are the standbys as they run now (engine.Replicator); none
// without --replicas.
func (t *Target) Replicas() []engine.Replica {
	r := t.replicas
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]engine.Replica, r.cfg().N)
	for k := range out {
		out[k] = engine.Replica{Name: replicaName(k + 1), DataDir: r.cfg().dir(k + 1)}
		if k < len(r.pids) {
			out[k].PID = r.pids[k]
		}
	}
	return out
}

// settleReplication makes the primary's replication what this command
// asks before anything commits: no standby list an earlier command left
// in force (its commits would wait for standbys not running), and no
// standby or slot of an earlier command that this one does not run (r
// nil: none). It says what it removed, one sentence each.
func settleReplication(ctx context.Context, conn *pgx.Conn, in *Instance, r *replicaSet) ([]string, error) {
	var names, source string
	err := conn.QueryRow(ctx, "SELECT setting, source FROM pg_settings WHERE name = 'synchronous_standby_names'").Scan(&names, &source)
	if err != nil {
		return nil, fmt.Errorf("read synchronous_standby_names: %w", err)
	}
	if names != "" && source == "configuration file" {
		if err := setSyncNames(ctx, conn, ""); err != nil {
			return nil, err
		}
	}
	wanted := map[string]bool{} // directories and slot names
	var keep []string
	if r != nil {
		for k := 1; k <= r.cfg().N; k++ {
			wanted[r.cfg().dir(k)], wanted[replicaName(k)] = true, true
			keep = append(keep, r.cfg().dir(k))
		}
	}
	var done []string
	recorded := readReplicaList(in.DataDir, in.cfg.Dirs.Replica)
	for _, dir := range recorded {
		// The record is the server account's to change: only that
		// account's standbys are taken from it.
		if wanted[dir] || !server.OwnedLike(dir, in.DataDir) && !server.OwnedLike(dir+".partial", in.DataDir) {
			continue
		}
		stopLeftoverIn(dir)
		if err := removeStandby(dir); err != nil {
			return done, fmt.Errorf("remove the standby %s: %w", dir, err)
		}
		done = append(done, fmt.Sprintf("removed the standby %s, which this command does not run (its replication slot would keep WAL on the primary)", dir))
	}
	rows, err := conn.Query(ctx, `SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE 'calibra\_replica\_%'`)
	if err != nil {
		return done, fmt.Errorf("read the replication slots: %w", err)
	}
	slots, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return done, fmt.Errorf("read the replication slots: %w", err)
	}
	for _, s := range slots {
		if !wanted[s] {
			if err := dropSlot(ctx, conn, s); err != nil {
				return done, err
			}
		}
	}
	if len(recorded) > 0 || len(keep) > 0 {
		// Recorded before any is made, so clean finds even a half-made one.
		if err := writeReplicaList(in, keep); err != nil {
			return done, err
		}
	}
	return done, nil
}

// setSyncNames sets synchronous_standby_names by ALTER SYSTEM (a reload
// setting, so it needs no restart, and the primary can start without it:
// its first commits must not wait for standbys not yet made) and waits
// until the server uses it.
func setSyncNames(ctx context.Context, conn *pgx.Conn, names string) error {
	stmt := "ALTER SYSTEM RESET synchronous_standby_names"
	if names != "" {
		stmt = "ALTER SYSTEM SET synchronous_standby_names = " + quoteLiteral(names)
	}
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("set synchronous_standby_names: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("reload the server's settings: %w", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var now string
		if err := conn.QueryRow(ctx, "SELECT current_setting('synchronous_standby_names')").Scan(&now); err != nil {
			return err
		}
		if now == names {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not take synchronous_standby_names = %q within 10 s", names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dropSlot drops a replication slot if it exists, waiting a few seconds
// for a standby just stopped to let go of it.
func dropSlot(ctx context.Context, conn *pgx.Conn, name string) error {
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", name)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("drop the replication slot %s: %w", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stopLeftoverIn stops a server a dead run left on dir, if any.
func stopLeftoverIn(dir string) {
	pidFile := filepath.Join(dir, "postmaster.pid")
	if pid, ok := server.PIDIn(pidFile, dir, "postgres"); ok {
		server.StopLeftover(pid, syscall.SIGQUIT, 10*time.Second, func() bool { _, ok := server.PIDIn(pidFile, dir, "postgres"); return ok })
	}
}

// removeStandby removes a standby's directory and its partial copy, each
// by handle in its parent (server.RemoveDir).
func removeStandby(dir string) error {
	return errors.Join(server.RemoveDir(dir), server.RemoveDir(dir+".partial"))
}

// readReplicaList reads the standbys' directories the primary in dataDir
// recorded, those named with prefix only.
func readReplicaList(dataDir, prefix string) []string {
	data, err := server.ReadSmall(filepath.Join(dataDir, replicaList))
	if err != nil {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); filepath.IsAbs(line) && line == filepath.Clean(line) && strings.HasPrefix(filepath.Base(line), prefix) {
			dirs = append(dirs, line)
		}
	}
	return dirs
}

func writeReplicaList(in *Instance, dirs []string) error {
	path := filepath.Join(in.DataDir, replicaList)
	tmp := path + ".tmp"
	text := ""
	for _, d := range dirs {
		text += d + "\n"
	}
	// The server reads every file of its directory for a base backup, so
	// the record is its account's; made anew, never through a link.
	if err := in.Account.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return fmt.Errorf("record the standbys: %w", err)
	}
	return safefs.Rename(in.DataDir, filepath.Base(tmp), replicaList)
}

// removeReplicas stops and removes the standbys recorded in dataDir and
// any under path named with prefix, reporting whether there were any.
func removeReplicas(path, dataDir, prefix string) (bool, error) {
	var dirs []string
	for _, d := range readReplicaList(dataDir, prefix) {
		// Only the standbys the primary's own account made.
		if server.OwnedLike(d, dataDir) || server.OwnedLike(d+".partial", dataDir) {
			dirs = append(dirs, d)
		}
	}
	found, _ := filepath.Glob(filepath.Join(path, prefix+"*"))
	for _, d := range found {
		if d = strings.TrimSuffix(d, ".partial"); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	var errs []error
	for _, d := range dirs {
		stopLeftoverIn(d)
		errs = append(errs, removeStandby(d))
	}
	return len(dirs) > 0, errors.Join(errs...)
}
