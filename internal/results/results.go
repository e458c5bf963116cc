// Package results is the model of results.json, shared by the runner, the
// report and compare, and the run directory that holds it.
package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Schema identifies the results.json format.
const Schema = "calibra.results/v1"

// Run and step statuses.
const (
	StatusRunning     = "running"
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Run is the whole of results.json.
type Run struct {
	Schema     string     `json:"schema"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	Error      string     `json:"error,omitempty"`
	Meta       Meta       `json:"meta"`
	Steps      []Step     `json:"steps"`
	// Verdicts are the study's thresholds, judged; Repeats summarise the
	// steps that ran more than once.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	Repeats  []Repeats `json:"repeats,omitempty"`
	// Baseline is the run judged against the store's earlier runs of
	// the same study on the same target (--baseline), when asked.
	Baseline *Baseline `json:"baseline,omitempty"`
	// Warnings are the run's caveats that belong to no one step (limits not
	// applied, another load on the host, an engine counter this server
	// lacks), each one sentence, said once.
	Warnings []string `json:"warnings,omitempty"`
}

// Meta describes what was measured and with what.
type Meta struct {
	ToolVersion string `json:"tool_version"`
	// ToolCommit is the commit calibra was built from, when known.
	ToolCommit string  `json:"tool_commit,omitempty"`
	Command    string  `json:"command"`
	Label      string  `json:"label,omitempty"`
	Seed       uint64  `json:"seed"`
	Host       Host    `json:"host"`
	Storage    Storage `json:"storage"`
	Engine     *Engine `json:"engine,omitempty"`
	// Limits are the cache and storage limits the run asked for, as applied.
	Limits *AppliedLimits `json:"limits,omitempty"`
	Study  map[string]any `json:"study,omitempty"`
}

// Host is the machine calibra ran on.
type Host struct {
	Hostname string `json:"hostname"`
	CPUs     int    `json:"cpus"`
	MemBytes uint64 `json:"mem_bytes"`
	Kernel   string `json:"kernel"`
	CPUModel string `json:"cpu_model"`
}

// Storage is the storage under test.
type Storage struct {
	Path   string `json:"path"`
	FS     string `json:"fs"`
	Device string `json:"device"`
	Lab    *Lab   `json:"lab,omitempty"` // the emulated stack, when calibra built one
	// WAL is the storage of the managed instance's WAL when --wal-path put
	// it apart from the data.
	WAL *Storage `json:"wal,omitempty"`
	// Replicas is the storage of the managed instance's standbys
	// (--replicas), on Path's storage or under --replica-path.
	Replicas *Storage `json:"replicas,omitempty"`
}

// Engine is the database under test.
type Engine struct {
	Name     string            `json:"name"`
	Version  string            `json:"version"`
	Managed  bool              `json:"managed"`
	Target   string            `json:"target"` // redacted DSN or data directory
	Settings map[string]string `json:"settings"`
	// Replicas are the managed instance's standbys, when it has any.
	Replicas *Replicas `json:"replicas,omitempty"`
	// Instances counts the independent instances driven together
	// (--instances); absent for one.
	Instances int `json:"instances,omitempty"`
	// ClusterNodes counts the nodes of a cluster sharing one database
	// (MariaDB's --galera); absent for a single server. Its JSON name is
	// the one older runs have.
	ClusterNodes int `json:"galera_nodes,omitempty"`
}

// Replicas are the standbys of a managed instance (--replicas): made by a
// base backup of it, streaming its WAL, each commit waiting for all of
// them as Sync says.
type Replicas struct {
	Count int `json:"count"`
	// Sync is "off" (asynchronous standbys), "on" (a commit waits until
	// every standby has flushed its WAL) or "remote_apply" (until every
	// standby has replayed it).
	Sync     string    `json:"sync"`
	Standbys []Standby `json:"standbys"`
}

// Standby is one standby: its name on the primary and its data directory.
type Standby struct {
	Name    string `json:"name"`
	DataDir string `json:"data_dir"`
}

// StepHeader holds the keys every step has.
type StepHeader struct {
	Kind       string     `json:"kind"`
	Name       string     `json:"name"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	Error      string     `json:"error,omitempty"`
	// StudyStep is the step's place in the study (from 1), and Repeat its
	// repetition of Repeats; all absent for a single command.
	StudyStep int `json:"study_step,omitempty"`
	Repeat    int `json:"repeat,omitempty"`
	Repeats   int `json:"repeats,omitempty"`
	// Observe is what the host and the database did over the step's timed
	// window (or the whole step when it has none).
	Observe *Observe `json:"observe,omitempty"`
	// LimitedBy is what bounded the step's figures (internal/verdict):
	// storage, cpu, cache, wal, lock, driver, host or unknown, with its evidence.
	LimitedBy         string    `json:"limited_by,omitempty"`
	LimitedByEvidence *Evidence `json:"limited_by_evidence,omitempty"`
}

// Step is one step's result: the header keys plus its kind's keys, flat in
// one JSON object as docs/design.md specifies.
type Step struct {
	StepHeader
	Body any // a pointer to the kind's struct, e.g. *OLTP
}

// kinds maps a step kind to a constructor of its body, for decoding.
var kinds = map[string]func() any{}

// RegisterKind declares the body type of a step kind.
func RegisterKind(kind string, newBody func() any) { kinds[kind] = newBody }

// MarshalJSON writes the header and body keys into one object.
func (s Step) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(s.StepHeader)
	if err != nil {
		return nil, err
	}
	if s.Body == nil {
		return head, nil
	}
	body, err := json.Marshal(s.Body)
	if err != nil {
		return nil, err
	}
	body = bytes.TrimSpace(body)
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("step %s: body is not a JSON object", s.Kind)
	}
	if len(body) == 2 {
		return head, nil
	}
	out := make([]byte, 0, len(head)+len(body))
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	return append(out, body[1:]...), nil
}

// UnmarshalJSON reads the header, then the body of the registered kind.
func (s *Step) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &s.StepHeader); err != nil {
		return err
	}
	newBody, ok := kinds[s.Kind]
	if !ok {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		s.Body = m
		return nil
	}
	s.Body = newBody()
	return json.Unmarshal(data, s.Body)
}

// HeadlineLimiter is a step body whose headline figure comes from one of
// its points (a sweep, a ramp), each with its own window and verdict: the
// step is limited by what limited that point, not by its whole window,
// which mixes them.
type HeadlineLimiter interface {
	HeadlineLimit() (string, *Evidence, bool)
}

// At is a copy of the evidence whose rule says which point it is about.
func (e *Evidence) At(point string) *Evidence {
	if e == nil {
		return nil
	}
	c := *e
	c.Rule = point + ": " + e.Rule
	return &c
}

// Evidence is what a step's limited_by was decided from (internal/verdict):
// the window's figures the rules read, and the rule that fired.
type Evidence struct {
	Rule            string   `json:"rule"`
	CPUBusyPct      *float64 `json:"cpu_busy_pct,omitempty"`
	DriverCPUPct    *float64 `json:"driver_cpu_pct,omitempty"`
	CPUOutsidePct   *float64 `json:"cpu_outside_pct,omitempty"`
	DiskUtilPct     *float64 `json:"disk_util_pct,omitempty"`
	DiskAwaitMs     *float64 `json:"disk_await_ms,omitempty"`
	DiskReadIOPS    *float64 `json:"disk_r_iops,omitempty"`
	DBReadsPerS     *float64 `json:"db_block_reads_per_s,omitempty"`
	HitPct          *float64 `json:"hit_pct,omitempty"`
	TopWait         string   `json:"top_wait_class,omitempty"`
	TopWaitSharePct *float64 `json:"top_wait_share_pct,omitempty"`
	// DeviceLoadPct is what reached the device over the window (its own
	// counters) as a share of what the run's device step did at the
	// nearest spec; FlushSharePct a commit's time spent in the WAL flush.
	DeviceLoadPct *float64 `json:"device_load_pct,omitempty"`
	FlushSharePct *float64 `json:"flush_share_pct,omitempty"`
}

// SetMissing records why key is absent in a missing map, making the map
// when there is none yet, and returns it.
func SetMissing(m map[string]string, key, why string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = why
	return m
}
