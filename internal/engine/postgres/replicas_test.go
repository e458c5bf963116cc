package postgres

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReplicaSettingsFollowSync(t *testing.T) {
	for _, c := range []struct {
		rc         ReplicaConfig
		names      string
		syncCommit string
	}{
		{ReplicaConfig{}, "", ""},
		{ReplicaConfig{N: 1}, "FIRST 1 (calibra_replica_1)", ""},
		{ReplicaConfig{N: 2, Sync: SyncOn}, "FIRST 2 (calibra_replica_1, calibra_replica_2)", ""},
		{ReplicaConfig{N: 2, Sync: SyncRemoteApply}, "FIRST 2 (calibra_replica_1, calibra_replica_2)", "remote_apply"},
		// Asynchronous standbys leave the primary's own commit durable.
		{ReplicaConfig{N: 3, Sync: SyncOff}, "", ""},
	} {
		if got := c.rc.SyncNames(); got != c.names {
			t.Errorf("%+v: synchronous_standby_names %q, want %q", c.rc, got, c.names)
		}
		s := map[string]string{}
		c.rc.settings(s)
		if s["synchronous_commit"] != c.syncCommit {
			t.Errorf("%+v: synchronous_commit %q, want %q", c.rc, s["synchronous_commit"], c.syncCommit)
		}
	}
	s := map[string]string{}
	ReplicaConfig{N: 8}.settings(s)
	if s["max_wal_senders"] != "12" || s["max_replication_slots"] != "12" {
		t.Errorf("8 standbys: %v, want 12 WAL senders and slots", s)
	}
}

// The list in the primary's directory names what clean removes: a line
// that is not a standby's directory is never taken for one.
func TestReplicaListKeepsOnlyStandbyDirectories(t *testing.T) {
	dir := t.TempDir()
	text := "/mnt/a/calibra-pg-replica-1\n/etc\nrelative/calibra-pg-replica-2\n\n/mnt/b/calibra-pg-replica-2\n/mnt/c/calibra-twin-replica-1\n"
	if err := os.WriteFile(filepath.Join(dir, replicaList), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	got := readReplicaList(dir, ReplicaDirPrefix)
	want := []string{"/mnt/a/calibra-pg-replica-1", "/mnt/b/calibra-pg-replica-2"}
	if !slices.Equal(got, want) {
		t.Errorf("list %v, want %v", got, want)
	}
}

// An engine that wraps this package under other directories' names keeps
// its standbys when PostgreSQL's are removed.
func TestRemoveReplicasFindsUnlistedOnes(t *testing.T) {
	path := t.TempDir()
	for _, d := range []string{"calibra-pg-replica-1", "calibra-pg-replica-2.partial", "calibra-twin-replica-1"} {
		if err := os.MkdirAll(filepath.Join(path, d, "base"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	had, err := removeReplicas(path, filepath.Join(path, DataDirName), ReplicaDirPrefix)
	if err != nil || !had {
		t.Fatalf("removeReplicas: %v, %v", had, err)
	}
	left, _ := filepath.Glob(filepath.Join(path, "*"))
	if len(left) != 1 || filepath.Base(left[0]) != "calibra-twin-replica-1" {
		t.Errorf("left %v, want only the other engine's standby", left)
	}
}
