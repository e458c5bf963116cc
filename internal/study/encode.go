package study

import (
	"strconv"
	"strings"

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
	t := mapping()
	addString(t, "path", s.Target.Path)
	addString(t, "dsn", secret.RedactDSN(s.Target.DSN))
	addString(t, "dsn_file", s.Target.DSNFile)
	addString(t, "db_cache", s.Target.DBCache)
	addString(t, "lab", s.Target.Lab)
	addString(t, "os_cache_limit", s.Target.OSCacheLimit)
	if l := s.Target.StorageLimit; !l.IsZero() {
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
	if s.Target.LimitsOptional {
		add(t, "limits_optional", scalar("true"))
	}
	add(root, "target", t)
	add(root, "cold_start", scalar(strconv.FormatBool(s.ColdStart)))
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
