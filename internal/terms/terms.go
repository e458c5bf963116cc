// Package terms holds each engine's own words for what a report shows:
// where its waits and counters come from, what its log of changes and
// its cluster are called. Each engine gives them with its descriptor, so
// the report names no engine, and an engine that gives none (or a run of
// an engine this calibra does not link) is described in neutral words.
package terms

import "sync"

// Words are one engine's terms; an empty one is said in Neutral's.
type Words struct {
	// Waits defines the top waits: where the sampled waits come from and
	// what "CPU" and avg ms mean there.
	Waits string
	// Transactions is where the server's count of transactions (TPM (db))
	// comes from, e.g. "pg_stat_database".
	Transactions string
	// Checkpoints says what the checkpoints counted in a timed window are.
	Checkpoints string
	// Log names the log of changes in captions and heads: "WAL", "redo
	// log".
	Log string
	// Counters are the database counters shown, in the order and words of
	// the engine; CountersOf qualifies their table's caption (the storage
	// engine, e.g. "InnoDB"). None: every counter measured, in neutral
	// words.
	Counters   []Counter
	CountersOf string
	// StandbyLag is where the standbys' lag is read.
	StandbyLag string
	// Cluster names the engine's cluster of nodes: "Galera cluster".
	Cluster string
	// WaitKind says what each of the engine's sampled waits means to the
	// verdict on what limited a step; nil: no wait decides one.
	WaitKind WaitKinds
}

// WaitKinds takes a sampled wait's class and event, as the engine's
// observer records them, to the class the verdict sums it under (one
// for several of the engine's, where they mean one thing) and its kind.
type WaitKinds func(class, event string) (string, WaitKind)

// WaitKind is what a wait means to the verdict.
type WaitKind int

const (
	// OtherWait decides no verdict: the client, IPC, a timeout.
	OtherWait WaitKind = iota
	// OnCPU is an active session in no wait: not a wait at all.
	OnCPU
	// StorageWait is the data files' I/O.
	StorageWait
	// CommitWait is the log's writes and syncs, which commits wait for.
	CommitWait
	// LockWait is locks and latches.
	LockWait
)

// Counter is one database counter shown: its name in results.json
// (observe.db) and the head it is shown under.
type Counter struct{ Field, Head string }

// Neutral are the words for an engine that gives none.
var Neutral = Words{
	Waits:       "Database time per wait event, from samples of the server's active sessions (the ASH idea); seconds = samples × the time a sample stands for (the sampling interval, or the samples' mean spacing where a busy machine kept them further apart); \"CPU\" is an active session in no wait. Avg ms comes from the server's counters where they give it.",
	Checkpoints: "Checkpoints begun in the timed window",
	Log:         "log",
	StandbyLag:  "the primary's view",
	Cluster:     "cluster",
}

var (
	mu    sync.Mutex
	words = map[string]Words{}
)

// Register gives the words of the engine called engine; its descriptor's
// registration calls it.
func Register(engine string, w Words) {
	mu.Lock()
	defer mu.Unlock()
	words[engine] = w
}

// Of are the words of the engine called engine, each it gives none of
// (or all, for an engine not registered) Neutral's.
func Of(engine string) Words {
	mu.Lock()
	w := words[engine]
	mu.Unlock()
	n := Neutral
	for _, f := range []struct {
		to   *string
		from string
	}{
		{&n.Waits, w.Waits}, {&n.Transactions, w.Transactions}, {&n.Checkpoints, w.Checkpoints}, {&n.Log, w.Log},
		{&n.CountersOf, w.CountersOf}, {&n.StandbyLag, w.StandbyLag}, {&n.Cluster, w.Cluster},
	} {
		if f.from != "" {
			*f.to = f.from
		}
	}
	n.Counters, n.WaitKind = w.Counters, w.WaitKind
	return n
}
