package study

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/secret"
	"go.yaml.in/yaml/v4"
)

// Encode writes the study as a study file, the form `calibra plan` prints
// and the run directory keeps as study.yaml.
func (s *Study) Encode() ([]byte, error) {
	root := mapping()
	add(root, "version", scalar(strconv.Itoa(Version)))
	if s.Name != "" {
		add(root, "name", scalar(s.Name))
	}
	if s.Description != "" {
		add(root, "description", scalar(s.Description))
	}
	add(root, "target", encodeTarget(s.Target))
	add(root, "cold_start", scalar(strconv.FormatBool(s.ColdStart)))
	if len(s.Variants) > 0 {
		vs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, v := range s.Variants {
			m := mapping()
			add(m, "name", scalar(v.Name))
			add(m, "target", encodeTarget(v.Target))
			vs.Content = append(vs.Content, m)
		}
		add(root, "variants", vs)
	}
	steps := &yaml.Node{Kind: yaml.SequenceNode}
	for _, st := range s.Steps {
		m := mapping()
		add(m, "kind", scalar(st.Kind))
		addString(m, "name", st.Name)
		if st.Repeat > 1 {
			add(m, "repeat", scalar(strconv.Itoa(st.Repeat)))
		}
		if st.ColdStart != nil {
			add(m, "cold_start", scalar(strconv.FormatBool(*st.ColdStart)))
		}
		for _, p := range st.Params {
			add(m, p.Key, scalar(p.Value))
		}
		steps.Content = append(steps.Content, m)
	}
	add(root, "steps", steps)
	if len(s.Thresholds) > 0 {
		th := &yaml.Node{Kind: yaml.SequenceNode}
		for _, t := range s.Thresholds {
			th.Content = append(th.Content, scalar(t.Expr))
		}
		add(root, "thresholds", th)
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, scalar(key), v)
}

func addString(m *yaml.Node, key, v string) {
	if v != "" {
		add(m, key, scalar(v))
	}
}

// encodeTarget writes a target (or a variant's overrides): only what is set.
func encodeTarget(tg Target) *yaml.Node {
	t := mapping()
	addString(t, "path", tg.Path)
	addString(t, "dsn", secret.RedactDSN(tg.DSN))
	addString(t, "dsn_file", tg.DSNFile)
	addString(t, "db_cache", tg.DBCache)
	addString(t, "lab", tg.Lab)
	addString(t, "engine", tg.Engine)
	addString(t, "wal_path", tg.WALPath)
	addString(t, "run_as", tg.RunAs)
	if tg.Replicas != 0 {
		add(t, "replicas", scalar(strconv.Itoa(tg.Replicas)))
	}
	addString(t, "sync", tg.Sync)
	addString(t, "replica_path", tg.ReplicaPath)
	for _, o := range engine.Options() {
		if v := tg.Options[o.Flag]; v != "" && !(o.Int && v == "0") {
			add(t, o.Key, scalar(v))
		}
	}
	if tg.Instances > 1 { // 0 and 1 are both one instance
		add(t, "instances", scalar(strconv.Itoa(tg.Instances)))
	}
	if len(tg.EngineSettings) > 0 {
		m := mapping()
		for _, k := range slices.Sorted(maps.Keys(tg.EngineSettings)) {
			add(m, k, scalar(tg.EngineSettings[k]))
		}
		add(t, "engine_settings", m)
	}
	addString(t, "os_cache_limit", tg.OSCacheLimit)
	if l := tg.StorageLimit; !l.IsZero() {
		m := mapping()
		for _, kv := range []struct {
			k string
			v int64
		}{{"read_iops", l.ReadIOPS}, {"write_iops", l.WriteIOPS}, {"read_mbps", l.ReadMBPS}, {"write_mbps", l.WriteMBPS}} {
			if kv.v > 0 {
				add(m, kv.k, scalar(strconv.FormatInt(kv.v, 10)))
			}
		}
		add(t, "storage_limit", m)
	}
	if tg.LimitsOptional {
		add(t, "limits_optional", scalar("true"))
	}
	return t
}
