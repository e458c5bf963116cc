package examples

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// The fields of a batch/v1 Job (Kubernetes API reference) that the example
// uses: decoding with unknown fields refused catches a misspelt or
// misplaced key, which kubectl would refuse at apply time.
type job struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   meta   `yaml:"metadata"`
	Spec       struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Parallelism    *int   `yaml:"parallelism"`
		BackoffLimit   *int   `yaml:"backoffLimit"`
		Template       struct {
			Metadata meta `yaml:"metadata"`
			Spec     struct {
				RestartPolicy   string `yaml:"restartPolicy"`
				SecurityContext *struct {
					RunAsNonRoot *bool `yaml:"runAsNonRoot"`
					RunAsUser    *int  `yaml:"runAsUser"`
					FSGroup      *int  `yaml:"fsGroup"`
				} `yaml:"securityContext"`
				Containers []container `yaml:"containers"`
				Volumes    []struct {
					Name   string `yaml:"name"`
					Secret *struct {
						SecretName  string `yaml:"secretName"`
						DefaultMode *int   `yaml:"defaultMode"`
					} `yaml:"secret"`
					PersistentVolumeClaim *struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type meta struct {
	Name   string            `yaml:"name"`
	Labels map[string]string `yaml:"labels"`
}

type container struct {
	Name            string   `yaml:"name"`
	Image           string   `yaml:"image"`
	ImagePullPolicy string   `yaml:"imagePullPolicy"`
	Command         []string `yaml:"command"`
	Args            []string `yaml:"args"`
	Env             []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
	} `yaml:"resources"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

func TestKubernetesPartitionsJob(t *testing.T) {
	f, err := os.Open("k8s/oltp-partitions-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	var j job
	if err := dec.Decode(&j); err != nil {
		t.Fatalf("not a Job as batch/v1 defines it: %v", err)
	}
	s := j.Spec
	if j.APIVersion != "batch/v1" || j.Kind != "Job" || j.Metadata.Name == "" || s.CompletionMode != "Indexed" ||
		s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || s.Template.Spec.RestartPolicy != "Never" {
		t.Fatalf("want an Indexed batch/v1 Job whose pods all run at once and are not restarted: %+v", j)
	}
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want calibra alone", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	cmd := strings.Join(append(c.Command, c.Args...), " ")
	for _, want := range []string{"calibra oltp run", "--dsn-file /etc/calibra/dsn", "$((JOB_COMPLETION_INDEX + 1))/3", "--start-at \"$START_AT\""} {
		if !strings.Contains(cmd, want) {
			t.Errorf("the command lacks %q: %s", want, cmd)
		}
	}
	if strings.Contains(cmd, "--dsn ") || strings.Contains(cmd, "PGPASSWORD") {
		t.Errorf("the DSN must come from the Secret's file, not the command line: %s", cmd)
	}
	secret := false
	for _, v := range s.Template.Spec.Volumes {
		secret = secret || v.Secret != nil && v.Secret.SecretName != "" && v.Secret.DefaultMode != nil && *v.Secret.DefaultMode&0o077 == 0
	}
	if !secret {
		t.Error("no Secret volume readable by its owner only holds the DSN")
	}
}
