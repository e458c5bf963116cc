package observe

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/terms"
)

func TestReplicasBetweenTakesLagsFromEverySampleAndIOFromTheEdges(t *testing.T) {
	s := &Sampler{replicas: []replicaWatch{{name: "r1"}}, db: &dbObserver{}}
	t0 := time.Unix(1000, 0)
	f := func(v float64) *float64 { return &v }
	lagBytes := func(v int64) *int64 { return &v }
	at := func(sec int, stat *ReplicaStat, read, wchar int64) reading {
		db := &dbReading{}
		if stat != nil {
			db.Replicas = map[string]ReplicaStat{"r1": *stat}
		}
		return reading{at: t0.Add(time.Duration(sec) * time.Second), db: db,
			replicas: []replicaIO{{pid: 42, readB: read, wchar: wchar, writeN: wchar / 100}}}
	}
	rs := []reading{
		at(0, &ReplicaStat{State: "streaming", SyncState: "sync", ReplayLagMs: f(2), ReplayLagBytes: lagBytes(100)}, 0, 0),
		at(1, &ReplicaStat{State: "streaming", SyncState: "sync", ReplayLagMs: f(4), ReplayLagBytes: lagBytes(300)}, 0, 1e6),
		at(2, nil, 0, 1.5e6), // not connected at that sample
		at(4, &ReplicaStat{State: "streaming", SyncState: "sync"}, 4e6, 4e6), // caught up: no lag time
	}
	missing := map[string]string{}
	out := s.replicasBetween(rs, missing)
	if len(out) != 1 {
		t.Fatalf("%d replicas, want 1", len(out))
	}
	o := out[0]
	if o.Samples != 4 || o.States["streaming/sync"] != 3 || o.States["absent"] != 1 || o.State != "streaming" {
		t.Errorf("samples %d, states %v, state %q", o.Samples, o.States, o.State)
	}
	if o.ReplayLagMs == nil || o.ReplayLagMs.Mean != 3 || o.ReplayLagMs.Max != 4 {
		t.Errorf("replay lag %+v, want mean 3 and max 4 over the samples that had one", o.ReplayLagMs)
	}
	if o.ReplayLagBytes == nil || o.ReplayLagBytes.Max != 300 {
		t.Errorf("replay lag bytes %+v", o.ReplayLagBytes)
	}
	if o.WriteLagMs != nil {
		t.Errorf("write lag %+v, want none: no sample had one", o.WriteLagMs)
	}
	if o.WriteCallBytes == nil || *o.WriteCallBytes != 4e6 || o.WriteMBps == nil || *o.WriteMBps != 1 || o.ReadMBps == nil || *o.ReadMBps != 1 {
		t.Errorf("I/O %v %v %v", o.WriteCallBytes, o.WriteMBps, o.ReadMBps)
	}
	if missing["replicas[0].disk"] == "" {
		t.Errorf("no reason for the standby's disk: %v", missing)
	}
	// A standby restarted inside the window has no I/O delta.
	rs[len(rs)-1].replicas[0].pid = 43
	missing = map[string]string{}
	if out = s.replicasBetween(rs, missing); out[0].WriteCallBytes != nil || missing["replicas[0].io"] == "" {
		t.Errorf("restarted standby: %v, missing %v", out[0].WriteCallBytes, missing)
	}
}

func TestReadProcIO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "io")
	text := "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 999999\ncancelled_write_bytes: 0\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := readProcIO(path)
	if err != nil || v["read_bytes"] != 4096 || v["wchar"] != 20 || v["syscw"] != 2 {
		t.Errorf("readProcIO: %v, %v", v, err)
	}
	if err := os.WriteFile(path, []byte("rchar: 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readProcIO(path); err == nil {
		t.Error("a file without the counters was read without an error")
	}
}

// standbyFixture is an engine whose words name where its standbys' lag is
// read.
type standbyFixture struct{ engine.Engine }

func (standbyFixture) Name() string { return "standby-fixture" }

// A standby never read in the window: its lag is missing, saying where
// the engine reads it, in the engine's words.
func TestReplicaLagMissingNamesTheEnginesView(t *testing.T) {
	terms.Register("standby-fixture", terms.Words{StandbyLag: "the fixture's replication view"})
	s := &Sampler{cfg: Config{Engine: standbyFixture{}}, replicas: []replicaWatch{{name: "r1"}}, db: &dbObserver{}}
	failed := &dbReading{err: errors.New("connection refused")}
	rs := []reading{{at: time.Unix(1000, 0), db: failed}, {at: time.Unix(1002, 0), db: failed}}
	missing := map[string]string{}
	s.replicasBetween(rs, missing)
	if got := missing["replicas[0].lag"]; got != "no reading of the fixture's replication view succeeded in the window" {
		t.Errorf("missing lag: %q", got)
	}
}
