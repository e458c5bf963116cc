package study

import (
	"os"
	"reflect"
	"strings"
	"testing"

	_ "github.com/calibra-bench/calibra/internal/engines" // the engines' own keys, such as pg_bin
)

// Every problem of a broken study is reported at once, each at its place.
func TestParseReportsEveryProblemWithItsPosition(t *testing.T) {
	data, err := os.ReadFile("testdata/broken.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data, "broken.yaml")
	if err == nil {
		t.Fatal("a broken study parsed")
	}
	want := []string{
		`broken.yaml:1:10: this version is not a study format`,
		`broken.yaml:2:7: this is not a single value`,
		`broken.yaml:5:3: this is not a key of target`,
		`broken.yaml:6:30: this is not a whole number of 0 or more`,
		`broken.yaml:10:13: repeat is not positive`,
		`broken.yaml:11:17: this is not true or false`,
		`broken.yaml:12:5: the step has no kind`,
		`broken.yaml:13:5: a step is not a mapping`,
		`broken.yaml:16:5: threshold ... has no comparison`,
		`broken.yaml:17:1: this is not a key of the study`,
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("missing problem %q in:\n%s", w, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != len(want) {
		t.Errorf("%d problems, want %d:\n%s", n, len(want), msg)
	}
	// What could be read is returned, for the caller to check the steps.
	if s == nil || len(s.Steps) != 2 || s.Steps[0].Params[0] != (Param{Key: "users", Value: "8", Pos: Pos{"broken.yaml", 9, 5}}) {
		t.Errorf("partial study: %+v", s)
	}
}

// A file that is no study (a key, /etc/shadow, an environment) given as
// one is refused at its line and column, and no problem quotes it.
func TestParseQuotesNothingOfTheFile(t *testing.T) {
	for _, data := range []string{
		"root:$6$SECRET-hash:19000:0:99999:7:::\ndaemon:*:19000::\n  x: y\n",
		"x: *SECRET-anchor\n",
		"SECRET-key: 1\nversion: SECRET-version\nsteps: [{kind: oltp, repeat: SECRET-repeat, cold_start: SECRET-bool}]\nthresholds: [SECRET-threshold]\n",
		"\tSECRET: 1\n",
	} {
		_, err := Parse([]byte(data), "f.yaml")
		if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "f.yaml") {
			t.Errorf("Parse(%q) = %v, want problems naming f.yaml that quote nothing of it", data, err)
		}
	}
	_, err := Parse([]byte("a: b: c\n"), "f.yaml")
	if want := "f.yaml: line 1, column 5: mapping values are not allowed"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a YAML syntax error = %v, want %q", err, want)
	}
}

func TestParseRefusesBrokenYAMLAndEmptyFiles(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"version: 1\nsteps: [\n", "f.yaml: "},
		{"", "f.yaml is empty"},
		{"version: 1\n", "the study has no steps"},
		{"steps:\n  - kind: oltp\n", "the study has no version"},
	} {
		_, err := Parse([]byte(tc.data), "f.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.data, err, tc.want)
		}
	}
}

// A resolved study written out reads back the same.
func TestEncodeRoundTrips(t *testing.T) {
	cold := false
	s := &Study{Version: 1, Name: "x", Description: "two\nlines", ColdStart: true,
		Target: Target{Path: "/mnt/a", DSNFile: "/etc/calibra/dsn", DBCache: "1GB", OSCacheLimit: "2GiB", StorageLimit: StorageLimit{ReadIOPS: 5000, WriteMBPS: 100}, LimitsOptional: true,
			Options: map[string]string{"pg-bin": "/opt/pg18/bin"}, WALPath: "/mnt/wal", EngineSettings: map[string]string{"io_method": "worker", "io_workers": "6"}},
		Steps: []Step{{Kind: "oltp", Name: "timed", Repeat: 3, ColdStart: &cold, Params: []Param{{Key: "users", Value: "8"}, {Key: "keying_thinking", Value: "off"}, {Key: "specs", Value: "4k-randread,1m-seqread"}}}},
	}
	th, err := ParseThreshold("oltp.nopm >= 20000")
	if err != nil {
		t.Fatal(err)
	}
	s.Thresholds = []Threshold{th}
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data, "resolved")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	again, err := back.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("round trip differs:\n%s\n---\n%s", data, again)
	}
	if !reflect.DeepEqual(back.Target, s.Target) || back.Steps[0].Repeat != 3 || *back.Steps[0].ColdStart || back.Thresholds[0].Value != 20000 {
		t.Errorf("read back %+v", back)
	}
}

func TestThresholds(t *testing.T) {
	for _, tc := range []struct {
		expr         string
		kind, metric string
		v            float64
		holds        bool
		err          string
	}{
		{expr: "oltp.nopm > 20000", kind: "oltp", metric: "nopm", v: 20001, holds: true},
		{expr: "oltp.nopm > 20000", kind: "oltp", metric: "nopm", v: 20000, holds: false},
		{expr: "ramp.max_users_within_sla >= 100", kind: "ramp", metric: "max_users_within_sla", v: 100, holds: true},
		{expr: "oltp.art_ms<=2.5", kind: "oltp", metric: "art_ms", v: 2.6, holds: false},
		{expr: "device.4k-randread.iops_at_max_latency < 1e6", kind: "device", metric: "4k-randread.iops_at_max_latency", v: 5, holds: true},
		{expr: "nopm > 5", err: "does not name kind.metric"},
		{expr: "oltp.nopm > lots", err: "does not compare with a number"},
		{expr: "oltp.nopm is big", err: "has no comparison"},
		{expr: "oltp.nopm > NaN", err: "does not compare with a finite number"},
		{expr: "oltp.nopm != nan", err: "does not compare with a finite number"},
		{expr: "oltp.nopm > Inf", err: "does not compare with a finite number"},
		{expr: "oltp.art_ms < +Infinity", err: "does not compare with a finite number"},
		{expr: "oltp.art_ms >= -inf", err: "does not compare with a finite number"},
		{expr: "oltp.art_ms < 1e999", err: "does not compare with a finite number"},
		{expr: "oltp.art_ms < 1e-999", kind: "oltp", metric: "art_ms", v: 0, holds: false},
	} {
		th, err := ParseThreshold(tc.expr)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.expr, err, tc.err)
			}
			continue
		}
		if err != nil || th.Kind != tc.kind || th.Metric != tc.metric {
			t.Errorf("%q: %+v %v", tc.expr, th, err)
			continue
		}
		if th.Holds(tc.v) != tc.holds {
			t.Errorf("%q holds for %g: %v, want %v", tc.expr, tc.v, !tc.holds, tc.holds)
		}
	}
}

// Variants: each a name and target settings over the study's, written out
// as read; a name that cannot be a directory, a repeated name and a
// variant's own path are refused.
func TestVariants(t *testing.T) {
	src := `version: 1
target:
  db_cache: 256MB
  engine_settings: {work_mem: 8MB}
variants:
  - name: pg15
    target: {pg_bin: "15"}
  - name: pg18-worker
    target: {pg_bin: "18", engine_settings: {io_method: worker}}
steps:
  - kind: oltp
`
	s, err := Parse([]byte(src), "v.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Variants) != 2 {
		t.Fatalf("variants %+v", s.Variants)
	}
	got := s.Variants[1].Apply(s.Target)
	want := map[string]string{"work_mem": "8MB", "io_method": "worker"}
	if got.Options["pg-bin"] != "18" || got.DBCache != "256MB" || !reflect.DeepEqual(got.EngineSettings, want) || len(s.Target.EngineSettings) != 1 {
		t.Errorf("pg18-worker's target %+v; the study's settings after %v", got, s.Target.EngineSettings)
	}
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data, "resolved")
	if err != nil || !reflect.DeepEqual(back.Variants[1].Target, s.Variants[1].Target) {
		t.Errorf("round trip: %v %+v\n%s", err, back, data)
	}
	bad := `version: 1
variants:
  - name: "a/b"
  - name: x
    target: {path: /mnt/x}
  - name: x
steps:
  - kind: oltp
`
	_, err = Parse([]byte(bad), "bad.yaml")
	for _, want := range []string{`bad.yaml:3:5: a variant's name cannot name a directory`, "the variant x sets path or dsn", "bad.yaml:6:5: the variant x is named twice"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
