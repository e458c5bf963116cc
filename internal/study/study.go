// Package study reads study files: a versioned YAML plan of steps over one
// target, with thresholds. It knows the file's shape, not what the steps
// do: each step's keys are the flags of its layer's command, checked by
// the runner, so a study and a command accept exactly the same settings.
package study

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
)

// Version is the study file format this calibra reads.
const Version = 1

// Study is a resolved study file.
type Study struct {
	Version     int
	Name        string
	Description string
	Target      Target
	// ColdStart restarts the server and drops the OS page cache before
	// every step and repeat but the first, and starts each OLTP load from
	// the loaded template.
	ColdStart  bool
	Steps      []Step
	Thresholds []Threshold
	// Variants run the whole study once each, on the same storage, with
	// their target settings over the study's (another server version,
	// engine settings, a lab stack), each in its own run directory and
	// under PATH/NAME, then set side by side as compare does.
	Variants []Variant
}

// Variant is one configuration a study is run on.
type Variant struct {
	Name   string
	Target Target // its non-empty fields replace the study's
	Pos    Pos
}

// Apply returns the study's target with the variant's settings over it.
func (v Variant) Apply(t Target) Target { return t.Over(v.Target) }

// Target is where the study runs and the limits it runs under: the one
// place a target's settings live. The command line's flags and a study
// file fill it (the flag tag names the flag of each field); the runner's
// configuration and the engine's are made from it.
type Target struct {
	Path    string `flag:"path"`
	Engine  string `flag:"engine"` // the database engine (engine.Names); engine.Default when empty
	DSN     string `flag:"dsn"`
	DSNFile string // a file holding the DSN, so its password is in no study file
	DBCache string `flag:"db-cache"` // the managed instance's data cache, in its engine's units
	Lab     string `flag:"lab"`      // an emulated storage stack built under Path (internal/lab)
	WALPath string `flag:"wal-path"` // storage for the managed instance's WAL, apart from Path
	RunAs   string `flag:"run-as"`   // the unprivileged account of the managed server
	// Replicas standbys of the managed instance, commits waiting for them
	// as Sync says (off, on, remote_apply), their data under ReplicaPath.
	Replicas    int    `flag:"replicas"`
	Sync        string `flag:"sync"`
	ReplicaPath string `flag:"replica-path"`
	// Options are the engine's own options (engine.Descriptor.Options),
	// by flag; a study writes each under its key.
	Options map[string]string `flag:"*"`
	// Instances runs that many managed instances side by side (0: one).
	Instances int `flag:"instances"`
	// EngineSettings are server settings over calibra's defaults, e.g.
	// io_method: worker; recorded, and refused when the server refuses them.
	EngineSettings map[string]string
	OSCacheLimit   string `flag:"os-cache-limit"` // memory cgroup bound on the server's page cache
	StorageLimit   StorageLimit
	// LimitsOptional lets the study run, marked, when a limit cannot be
	// applied; otherwise that is an error.
	LimitsOptional bool
}

// Over is t with the fields o sets over it (a variant's over the study's,
// the command line's over the file's); maps are merged, key by key,
// into new ones.
func (t Target) Over(o Target) Target {
	tv, ov := reflect.ValueOf(&t).Elem(), reflect.ValueOf(o)
	for i := range tv.NumField() {
		f, v := tv.Field(i), ov.Field(i)
		switch {
		case v.IsZero():
		case f.Kind() == reflect.Map:
			merged := reflect.MakeMap(f.Type())
			for _, m := range []reflect.Value{f, v} {
				for it := m.MapRange(); it.Next(); {
					merged.SetMapIndex(it.Key(), it.Value())
				}
			}
			f.Set(merged)
		default:
			f.Set(v)
		}
	}
	return t
}

// Given is t with only the fields whose flag given reports set (and the
// options whose flag it reports): what the command line said.
func (t Target) Given(given func(flag string) bool) Target {
	var out Target
	tv, ov := reflect.ValueOf(t), reflect.ValueOf(&out).Elem()
	for i := range tv.NumField() {
		switch flag := tv.Type().Field(i).Tag.Get("flag"); {
		case flag == "*":
			for k, v := range t.Options {
				if given(k) {
					if out.Options == nil {
						out.Options = map[string]string{}
					}
					out.Options[k] = v
				}
			}
		case flag != "" && given(flag):
			ov.Field(i).Set(tv.Field(i))
		}
	}
	return out
}

// SetFlag sets the string field whose flag is flag to v, reporting
// whether t has one.
func (t *Target) SetFlag(flag, v string) bool {
	tv := reflect.ValueOf(t).Elem()
	for i := range tv.NumField() {
		if tv.Type().Field(i).Tag.Get("flag") == flag && tv.Field(i).Kind() == reflect.String {
			tv.Field(i).SetString(v)
			return true
		}
	}
	return false
}

// StorageLimit throttles the storage under test (the block-I/O cgroup
// controller); zero fields are unlimited.
type StorageLimit struct {
	ReadIOPS, WriteIOPS int64
	ReadMBPS, WriteMBPS int64
}

// IsZero reports whether no storage limit is set.
func (s StorageLimit) IsZero() bool { return s == StorageLimit{} }

// Step is one step of the plan: a layer kind and its settings.
type Step struct {
	Kind      string
	Name      string
	Repeat    int
	ColdStart *bool // overrides the study's
	Params    []Param
	Pos       Pos
}

// Param is one setting of a step: a flag of its layer's command.
type Param struct {
	Key, Value string
	Pos        Pos
}

// Set replaces the value of key, or adds it.
func (s *Step) Set(key, value string, pos Pos) {
	for i := range s.Params {
		if s.Params[i].Key == key {
			s.Params[i].Value, s.Params[i].Pos = value, pos
			return
		}
	}
	s.Params = append(s.Params, Param{Key: key, Value: value, Pos: pos})
}

// Pos is where a setting came from: file, line and column, or a flag.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Problem is an error at a position in a study.
func Problem(pos Pos, fix, format string, args ...any) error {
	return fault.Input(fix, "%s: %s", pos, fmt.Sprintf(format, args...))
}

// Parse reads a study file, reporting every problem at once, each with its
// file:line:col. Unless the YAML itself is broken, it also returns what it
// could read, so the caller can check the steps and report their problems
// with these.
func Parse(data []byte, file string) (*Study, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(file, err)
	}
	p := &parser{file: file}
	s := &Study{}
	if len(doc.Content) == 0 {
		return nil, fault.Input("start from an example under examples/ or 'calibra plan --preset quick'", "%s is empty", file)
	}
	root := doc.Content[0]
	seen := p.mapping(root, "the study", map[string]func(v *yaml.Node){
		"version": func(v *yaml.Node) {
			if s.Version = p.int(v); s.Version != Version {
				p.add(p.pos(v), "write 'version: 1'", "this version is not a study format this calibra reads (it reads %d)", Version)
			}
		},
		"name":        func(v *yaml.Node) { s.Name = p.str(v) },
		"description": func(v *yaml.Node) { s.Description = p.str(v) },
		"cold_start":  func(v *yaml.Node) { s.ColdStart = p.bool(v) },
		"target":      func(v *yaml.Node) { p.target(v, &s.Target) },
		"steps":       func(v *yaml.Node) { s.Steps = p.steps(v) },
		"thresholds":  func(v *yaml.Node) { s.Thresholds = p.thresholds(v) },
		"variants":    func(v *yaml.Node) { s.Variants = p.variants(v) },
	})
	if root.Kind == yaml.MappingNode {
		if !seen["version"] {
			p.add(p.pos(root), "add 'version: 1' at the top", "the study has no version")
		}
		if !seen["steps"] || len(s.Steps) == 0 {
			p.add(p.pos(root), "list the steps under 'steps:'", "the study has no steps")
		}
	}
	return s, errors.Join(p.errs...)
}

// syntaxError is a YAML syntax error of file as one sentence with its line
// and column, without the bytes the YAML parser may quote (the file may be
// any file root can read, /etc/shadow given as a study).
func syntaxError(file string, err error) error {
	var le *yaml.LoadError
	if errors.As(err, &le) && le.Mark.Line > 0 {
		return fault.Input("fix the YAML syntax", "%s: line %d, column %d: %s", file, le.Mark.Line, le.Mark.Column, unquote(le.Message))
	}
	return fault.Input("fix the YAML syntax", "%s is not YAML", file)
}

// quoted is what a message quotes from the file: an anchor's name, a
// threshold, a value. A quoted single character (a ':') is the parser's.
var quoted = regexp.MustCompile("'[^']{2,}'|\"[^\"]{2,}\"|`[^`]+`")

// unquote is msg without what it quotes from the file.
func unquote(msg string) string { return quoted.ReplaceAllString(msg, "...") }

type parser struct {
	file string
	errs []error
}

func (p *parser) pos(n *yaml.Node) Pos { return Pos{File: p.file, Line: n.Line, Col: n.Column} }

func (p *parser) add(pos Pos, fix, format string, args ...any) {
	p.errs = append(p.errs, Problem(pos, fix, format, args...))
}

// mapping calls the handler of each key of a mapping node, refusing
// unknown and repeated keys, and returns the keys it saw.
func (p *parser) mapping(n *yaml.Node, what string, keys map[string]func(v *yaml.Node)) map[string]bool {
	seen := map[string]bool{}
	if n.Kind != yaml.MappingNode {
		p.add(p.pos(n), "write it as 'key: value' lines", "%s is not a mapping", what)
		return seen
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		h, ok := keys[k.Value]
		switch {
		case !ok:
			p.add(p.pos(k), "use one of: "+keyList(keys), "this is not a key of %s", what)
		case seen[k.Value]:
			p.add(p.pos(k), "give it once", "this key is given twice in %s", what)
		default:
			seen[k.Value] = true
			h(v)
		}
	}
	return seen
}

func keyList(keys map[string]func(v *yaml.Node)) string {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (p *parser) scalar(n *yaml.Node, what string) bool {
	if n.Kind != yaml.ScalarNode {
		p.add(p.pos(n), "give a single value", "%s is not a single value", what)
		return false
	}
	return true
}

func (p *parser) str(n *yaml.Node) string {
	if !p.scalar(n, "this") {
		return ""
	}
	return n.Value
}

func (p *parser) int(n *yaml.Node) int {
	if !p.scalar(n, "this") {
		return 0
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		p.add(p.pos(n), "give a whole number", "this is not a whole number")
	}
	return v
}

func (p *parser) int64(n *yaml.Node) int64 {
	if !p.scalar(n, "this") {
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil || v < 0 {
		p.add(p.pos(n), "give a whole number of 0 or more", "this is not a whole number of 0 or more")
	}
	return v
}

// upTo reads a whole number of 0 to most, what names it.
func (p *parser) upTo(n *yaml.Node, what string, most int64) int64 {
	v := p.int64(n)
	if v > most {
		p.add(p.pos(n), fmt.Sprintf("%s must be at most %d", what, most), "%s is too high", what)
	}
	return v
}

// The bounds of a study's own keys (the steps' are their flags').
const (
	// MaxRepeat bounds a step's repeat.
	MaxRepeat = 1000
	// MaxIOPS and MaxMBPS bound a storage limit: past them it limits
	// nothing a device does (and MB/s past MaxMBPS overflows bytes a second).
	MaxIOPS = 100_000_000
	MaxMBPS = 1_000_000
)

func (p *parser) bool(n *yaml.Node) bool {
	if !p.scalar(n, "this") {
		return false
	}
	v, err := strconv.ParseBool(n.Value)
	if err != nil {
		p.add(p.pos(n), "give true or false", "this is not true or false")
	}
	return v
}

func (p *parser) target(n *yaml.Node, t *Target) {
	keys := map[string]func(v *yaml.Node){
		"path":         func(v *yaml.Node) { t.Path = p.str(v) },
		"engine":       func(v *yaml.Node) { t.Engine = p.str(v) },
		"dsn":          func(v *yaml.Node) { t.DSN = p.str(v) },
		"dsn_file":     func(v *yaml.Node) { t.DSNFile = p.str(v) },
		"db_cache":     func(v *yaml.Node) { t.DBCache = p.str(v) },
		"lab":          func(v *yaml.Node) { t.Lab = p.str(v) },
		"wal_path":     func(v *yaml.Node) { t.WALPath = p.str(v) },
		"run_as":       func(v *yaml.Node) { t.RunAs = p.str(v) },
		"replicas":     func(v *yaml.Node) { t.Replicas = p.int(v) },
		"sync":         func(v *yaml.Node) { t.Sync = p.str(v) },
		"replica_path": func(v *yaml.Node) { t.ReplicaPath = p.str(v) },
		"instances":    func(v *yaml.Node) { t.Instances = p.int(v) },
		"engine_settings": func(v *yaml.Node) {
			if v.Kind != yaml.MappingNode {
				p.add(p.pos(v), "write it as a mapping, e.g. engine_settings: {io_method: worker}", "engine_settings is not a mapping")
				return
			}
			t.EngineSettings = map[string]string{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				t.EngineSettings[v.Content[i].Value] = p.str(v.Content[i+1])
			}
		},
		"os_cache_limit":  func(v *yaml.Node) { t.OSCacheLimit = p.str(v) },
		"limits_optional": func(v *yaml.Node) { t.LimitsOptional = p.bool(v) },
		"storage_limit": func(v *yaml.Node) {
			l := &t.StorageLimit
			p.mapping(v, "storage_limit", map[string]func(v *yaml.Node){
				"read_iops":  func(v *yaml.Node) { l.ReadIOPS = p.upTo(v, "storage_limit.read_iops", MaxIOPS) },
				"write_iops": func(v *yaml.Node) { l.WriteIOPS = p.upTo(v, "storage_limit.write_iops", MaxIOPS) },
				"read_mbps":  func(v *yaml.Node) { l.ReadMBPS = p.upTo(v, "storage_limit.read_mbps", MaxMBPS) },
				"write_mbps": func(v *yaml.Node) { l.WriteMBPS = p.upTo(v, "storage_limit.write_mbps", MaxMBPS) },
			})
		},
	}
	// Each engine's own options, checked by the runner as their flags are.
	for _, o := range engine.Options() {
		keys[o.Key] = func(v *yaml.Node) {
			if t.Options == nil {
				t.Options = map[string]string{}
			}
			if o.Int {
				t.Options[o.Flag] = strconv.Itoa(p.int(v))
			} else {
				t.Options[o.Flag] = p.str(v)
			}
		}
	}
	p.mapping(n, "target", keys)
}

// validVariantName keeps a variant's name usable as a directory name.
var validVariantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func (p *parser) variants(n *yaml.Node) []Variant {
	if n.Kind != yaml.SequenceNode {
		p.add(p.pos(n), "write each variant as a '- name: ...' item", "variants is not a list")
		return nil
	}
	var out []Variant
	names := map[string]bool{}
	for _, item := range n.Content {
		v := Variant{Pos: p.pos(item)}
		p.mapping(item, "a variant", map[string]func(n *yaml.Node){
			"name":   func(n *yaml.Node) { v.Name = p.str(n) },
			"target": func(n *yaml.Node) { p.target(n, &v.Target) },
		})
		switch {
		case !validVariantName.MatchString(v.Name):
			p.add(v.Pos, "name it with letters, digits, '.', '_' or '-', e.g. pg18-worker", "a variant's name cannot name a directory")
		case names[v.Name]:
			p.add(v.Pos, "give each variant its own name", "the variant %s is named twice", v.Name)
		}
		if v.Target.Path != "" || v.Target.DSN != "" {
			p.add(v.Pos, "set path and dsn on the study's target: the variants run under PATH/NAME", "the variant %s sets path or dsn", v.Name)
		}
		names[v.Name] = true
		out = append(out, v)
	}
	return out
}

func (p *parser) steps(n *yaml.Node) []Step {
	if n.Kind != yaml.SequenceNode {
		p.add(p.pos(n), "write each step as a '- kind: ...' item", "steps is not a list")
		return nil
	}
	var steps []Step
	for _, item := range n.Content {
		st := Step{Repeat: 1, Pos: p.pos(item)}
		if item.Kind != yaml.MappingNode {
			p.add(p.pos(item), "write the step as 'kind: oltp' and its settings", "a step is not a mapping")
			continue
		}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			switch k.Value {
			case "kind":
				st.Kind = p.str(v)
			case "name":
				st.Name = p.str(v)
			case "repeat":
				if st.Repeat = p.int(v); st.Repeat <= 0 {
					p.add(p.pos(v), "give a whole number of 1 or more", "repeat is not positive")
				} else if st.Repeat > MaxRepeat {
					p.add(p.pos(v), fmt.Sprintf("repeat must be at most %d", MaxRepeat), "repeat is too many")
				}
			case "cold_start":
				b := p.bool(v)
				st.ColdStart = &b
			default:
				val, ok := p.value(v)
				if ok {
					st.Params = append(st.Params, Param{Key: k.Value, Value: val, Pos: p.pos(k)})
				}
			}
		}
		if st.Kind == "" {
			p.add(st.Pos, "add 'kind:' (device, iocal, oltp_build, oltp, ramp, dss_build, dss...)", "the step has no kind")
		}
		steps = append(steps, st)
	}
	return steps
}

// value reads a setting: a scalar, or a list of scalars written as the
// comma list its flag takes.
func (p *parser) value(v *yaml.Node) (string, bool) {
	switch v.Kind {
	case yaml.ScalarNode:
		return v.Value, true
	case yaml.SequenceNode:
		parts := make([]string, 0, len(v.Content))
		for _, e := range v.Content {
			if !p.scalar(e, "a list item") {
				return "", false
			}
			parts = append(parts, e.Value)
		}
		return strings.Join(parts, ","), true
	}
	p.add(p.pos(v), "give a value or a list of values", "a step setting is not a value or a list")
	return "", false
}

func (p *parser) thresholds(n *yaml.Node) []Threshold {
	if n.Kind != yaml.SequenceNode {
		p.add(p.pos(n), "write each as a '- oltp.nopm > 20000' item", "thresholds is not a list")
		return nil
	}
	var out []Threshold
	for _, item := range n.Content {
		if !p.scalar(item, "a threshold") {
			continue
		}
		t, err := ParseThreshold(item.Value)
		if err != nil {
			p.errs = append(p.errs, Problem(p.pos(item), "write it as 'kind.metric OP number', e.g. 'oltp.nopm > 20000'", "%s", unquote(err.Error())))
			continue
		}
		t.Pos = p.pos(item)
		out = append(out, t)
	}
	return out
}
