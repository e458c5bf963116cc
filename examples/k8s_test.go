package examples_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/calibra-bench/calibra/internal/cli"
)

// job is what the tests read of the Kubernetes example: the fields its
// checks need, each named as batch/v1 names it. Every key of the file is
// checked against batch/v1's own fields first (jobFieldErrors).
type job struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode *string `yaml:"completionMode"`
		Completions    *int32  `yaml:"completions"`
		Parallelism    *int32  `yaml:"parallelism"`
		Template       struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy   string `yaml:"restartPolicy"`
	SecurityContext *struct {
		RunAsNonRoot *bool  `yaml:"runAsNonRoot"`
		RunAsUser    *int64 `yaml:"runAsUser"`
	} `yaml:"securityContext"`
	Containers []container `yaml:"containers"`
	Volumes    []struct {
		Name   string `yaml:"name"`
		Secret *struct {
			DefaultMode *int32 `yaml:"defaultMode"`
		} `yaml:"secret"`
		PersistentVolumeClaim *struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
	} `yaml:"volumes"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	SecurityContext *struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		Capabilities             *struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

const jobYAML = "k8s/oltp-partitions-job.yaml"

// loadJob reads the Kubernetes example, refusing any key batch/v1 does not
// define or a value of another type (a misspelt or misplaced key, which
// kubectl would refuse at apply time).
func loadJob(t *testing.T) *job {
	t.Helper()
	data, err := os.ReadFile(jobYAML)
	if err != nil {
		t.Fatal(err)
	}
	if errs := jobFieldErrors(t, data); len(errs) > 0 {
		t.Fatalf("not a Job as batch/v1 defines it: %s", strings.Join(errs, "; "))
	}
	var j job
	if err := yaml.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	return &j
}

// jobFields are batch/v1 Job's fields and every object they reach, as
// k8s.io/api defines them: written by examples/k8s/jobschema from the
// types themselves, so that this test does not compile k8s.io/api.
type jobFields struct {
	Root    string                       `json:"root"`
	Objects map[string]map[string]string `json:"objects"`
}

// jobFieldErrors checks every key and value of a Job's YAML against
// batch/v1's fields.
func jobFieldErrors(t *testing.T, data []byte) []string {
	t.Helper()
	raw, err := os.ReadFile("testdata/k8s-job-fields.json")
	if err != nil {
		t.Fatal(err)
	}
	var f jobFields
	if err := json.Unmarshal(raw, &f); err != nil || f.Objects[f.Root] == nil {
		t.Fatalf("testdata/k8s-job-fields.json: %v (run examples/k8s/jobschema)", err)
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return []string{err.Error()}
	}
	return f.errors(f.Root, v, "")
}

// errors says where v, at path, is not of type typ (a jobFields type).
func (f *jobFields) errors(typ string, v any, path string) []string {
	if v == nil {
		return nil // an empty field, as omitted
	}
	wrong := []string{fmt.Sprintf("%s: %v is not of type %s", path, v, typ)}
	if elem, ok := strings.CutPrefix(typ, "[]"); ok {
		list, ok := v.([]any)
		if !ok {
			return wrong
		}
		var errs []string
		for i, e := range list {
			errs = append(errs, f.errors(elem, e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return errs
	}
	object, isObject := v.(map[string]any)
	if elem, ok := strings.CutPrefix(typ, "map[]"); ok {
		if !isObject {
			return wrong
		}
		var errs []string
		for k, e := range object {
			errs = append(errs, f.errors(elem, e, path+"."+k)...)
		}
		return errs
	}
	if fields, ok := f.Objects[typ]; ok {
		if !isObject {
			return wrong
		}
		var errs []string
		for k, e := range object {
			at := strings.TrimPrefix(path+"."+k, ".")
			if ft, ok := fields[k]; ok {
				errs = append(errs, f.errors(ft, e, at)...)
			} else {
				errs = append(errs, fmt.Sprintf("%s: %s has no field %q", at, typ, k))
			}
		}
		return errs
	}
	ok := false
	switch v.(type) {
	case string:
		ok = typ == "string" || typ == "scalar"
	case bool:
		ok = typ == "boolean"
	case int, int64, uint64:
		ok = typ == "integer" || typ == "number" || typ == "scalar"
	case float64:
		ok = typ == "number" || typ == "scalar"
	}
	if !ok {
		return wrong
	}
	return nil
}

// The field check refuses what kubectl would: a misspelt key, a key in
// the wrong object, a value of another type.
func TestJobFieldsRefuseWhatKubernetesWould(t *testing.T) {
	data, err := os.ReadFile(jobYAML)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"restartPolicy: Never", "restartPolcy: Never", `spec.template.spec.restartPolcy: api/core/v1.PodSpec has no field "restartPolcy"`},
		{"completions: 3", "completions: three", "spec.completions: three is not of type integer"},
		{"kind: Job", "knd: Job", `knd: api/batch/v1.Job has no field "knd"`},
		{"imagePullPolicy: IfNotPresent", "imagePullPolicy: [IfNotPresent]", "spec.template.spec.containers[0].imagePullPolicy"},
		{"      restartPolicy: Never", "      restartPolicy: Never\n      fsGroup: 10001", `spec.template.spec.fsGroup: api/core/v1.PodSpec has no field "fsGroup"`},
	} {
		changed := strings.Replace(string(data), c.from, c.to, 1)
		if changed == string(data) {
			t.Fatalf("%q is not in %s", c.from, jobYAML)
		}
		errs := jobFieldErrors(t, []byte(changed))
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, c.want) }) {
			t.Errorf("%q as %q: %q, want an error starting %q", c.from, c.to, errs, c.want)
		}
	}
	if errs := jobFieldErrors(t, data); len(errs) > 0 {
		t.Errorf("the example itself: %q", errs)
	}
}

func TestKubernetesPartitionsJob(t *testing.T) {
	j := loadJob(t)
	s := j.Spec
	if j.APIVersion != "batch/v1" || j.Kind != "Job" || j.Metadata.Name == "" || s.CompletionMode == nil || *s.CompletionMode != "Indexed" ||
		s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || s.Template.Spec.RestartPolicy != "Never" {
		t.Fatalf("want an Indexed batch/v1 Job whose pods all run at once and are not restarted: %+v", j)
	}
	pod := s.Template.Spec
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 10001 {
		t.Errorf("the pod must run as the image's account 10001, not root: %+v", sc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want calibra alone", len(pod.Containers))
	}
	c := pod.Containers[0]
	if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("calibra runs with no capability and no privilege escalation, as the image test runs it: %+v", sc)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	var dsnDir, runsDir string
	for _, v := range pod.Volumes {
		switch {
		case v.Secret != nil && v.Secret.DefaultMode != nil && *v.Secret.DefaultMode&0o077 == 0:
			dsnDir = mounts[v.Name]
		case v.PersistentVolumeClaim != nil:
			runsDir = mounts[v.Name]
		}
	}
	if dsnDir == "" || runsDir == "" {
		t.Fatalf("want a Secret readable by its owner only and a claim for the runs, each mounted: volumes %+v, mounts %+v", pod.Volumes, c.VolumeMounts)
	}

	// Each pod's command line, as its shell expands it, parsed by
	// calibra's own parser: a flag renamed or dropped fails here.
	startAt := time.Now().Add(3 * time.Minute).UTC().Format(time.RFC3339)
	outs := map[string]bool{}
	for i := range int(*s.Completions) {
		args := podArgs(t, c, i, startAt)
		if slices.Contains(args, "--dsn") || strings.Contains(strings.Join(args, " "), "PGPASSWORD") {
			t.Errorf("the DSN must come from the Secret's file, not the command line: %q", args)
		}
		path, flags, err := cli.Parse(args)
		if err != nil {
			t.Fatalf("pod %d: calibra %s: %v", i, strings.Join(args, " "), err)
		}
		value := func(name string) string {
			if f := flags.Lookup(name); f != nil && f.Changed {
				return f.Value.String()
			}
			return ""
		}
		out := value("out")
		want := map[string]string{"partition": fmt.Sprintf("%d/%d", i+1, *s.Completions), "start-at": startAt}
		for name, v := range want {
			if value(name) != v {
				t.Errorf("pod %d: --%s is %q, want %q", i, name, value(name), v)
			}
		}
		if path != "calibra oltp run" || filepath.Dir(value("dsn-file")) != dsnDir || filepath.Dir(out) != runsDir || outs[out] {
			t.Errorf("pod %d runs %s with --dsn-file %q and --out %q: want oltp run, the DSN from %s, a run directory of its own in %s",
				i, path, value("dsn-file"), out, dsnDir, runsDir)
		}
		if store := value("store-file"); filepath.Dir(store) != dsnDir || slices.Contains(args, "--store") {
			t.Errorf("pod %d records its run in the store named by --store-file %q: want the Secret's file in %s, never --store", i, store, dsnDir)
		}
		outs[out] = true
	}
}

// podArgs is what calibra receives in pod index of the Job: the
// container's command and args run by sh, with the Job's index and the
// start in its environment, and a calibra on PATH that prints its
// arguments.
func podArgs(t *testing.T, c container, index int, startAt string) []string {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "calibra"), []byte("#!/bin/sh\nprintf '%s\\0' \"$@\"\n"), 0o755); err != nil { // safefs: in t.TempDir
		t.Fatal(err)
	}
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) == 0 || argv[0] != "sh" {
		t.Fatalf("the container runs %q; the test expands a sh command line", argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", fmt.Sprintf("JOB_COMPLETION_INDEX=%d", index)}
	for _, e := range c.Env {
		if e.Name == "START_AT" {
			e.Value = startAt
		}
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pod %d's command line: %v", index, err)
	}
	args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(args) == 0 || bytes.Count(out, []byte{0}) == 0 {
		t.Fatalf("pod %d's command line does not run calibra: %q", index, argv)
	}
	return args
}
