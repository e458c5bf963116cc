package examples_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/calibra-bench/calibra/internal/cli"
)

// loadJob decodes the Kubernetes example with the API's own types,
// refusing any field batch/v1 does not define (a misspelt or misplaced
// key, which kubectl would refuse at apply time).
func loadJob(t *testing.T) *batchv1.Job {
	t.Helper()
	data, err := os.ReadFile("k8s/oltp-partitions-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(data, &j); err != nil {
		t.Fatalf("not a Job as batch/v1 defines it: %v", err)
	}
	return &j
}

func TestKubernetesPartitionsJob(t *testing.T) {
	j := loadJob(t)
	s := j.Spec
	if j.APIVersion != "batch/v1" || j.Kind != "Job" || j.Name == "" || s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion ||
		s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
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
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("calibra runs with no capability and no privilege escalation, as the image test runs it: %+v", sc)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	var dsnDir, runsDir string
	for _, v := range pod.Volumes {
		switch {
		case v.Secret != nil && v.Secret.DefaultMode != nil && *v.Secret.DefaultMode&0o077 == 0:
			dsnDir = mounts[v.Name].MountPath
		case v.PersistentVolumeClaim != nil:
			runsDir = mounts[v.Name].MountPath
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
func podArgs(t *testing.T, c corev1.Container, index int, startAt string) []string {
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
