package examples_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/testenv"
)

// dockerfile is the Dockerfile's instructions, continuation lines joined,
// comments apart.
type dockerfile struct {
	comments     []string
	instructions [][2]string // keyword (upper case), arguments
}

func parseDockerfile(t *testing.T, path string) dockerfile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d dockerfile
	var cur string
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			d.comments = append(d.comments, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
			continue
		}
		if cont, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur += cont + " "
			continue
		}
		cur += trimmed
		if cur = strings.TrimSpace(cur); cur != "" {
			kw, args, _ := strings.Cut(cur, " ")
			d.instructions = append(d.instructions, [2]string{strings.ToUpper(kw), strings.Join(strings.Fields(args), " ")})
		}
		cur = ""
	}
	return d
}

// The Dockerfile does what the k8s example relies on: a Go stage builds a
// static calibra from ./cmd/calibra, a Debian stage with fio and the
// PostgreSQL client tools gets it on PATH; and the example names the image
// its documented build command tags.
func TestDockerfileBuildsTheExamplesImage(t *testing.T) {
	d := parseDockerfile(t, "../Dockerfile")
	stages := map[string]string{} // name: base image
	var order []string
	stage := ""
	runs := map[string][]string{}
	var copies []string
	for _, in := range d.instructions {
		switch in[0] {
		case "FROM":
			f := strings.Fields(in[1])
			if len(f) != 3 || !strings.EqualFold(f[1], "AS") {
				t.Fatalf("FROM %s: want FROM IMAGE AS NAME", in[1])
			}
			stage = f[2]
			stages[stage] = f[0]
			order = append(order, stage)
		case "RUN":
			runs[stage] = append(runs[stage], in[1])
		case "COPY":
			if stage == "runtime" {
				copies = append(copies, in[1])
			}
		}
	}
	if !slices.Equal(order, []string{"build", "runtime"}) {
		t.Fatalf("stages %v, want build then runtime", order)
	}
	if !strings.HasPrefix(stages["build"], "golang:") {
		t.Errorf("the build stage is %s, not a Go image", stages["build"])
	}
	if !strings.HasPrefix(stages["runtime"], "debian:") {
		t.Errorf("the runtime stage is %s, not Debian", stages["runtime"])
	}
	build := regexp.MustCompile(`(^|&& )CGO_ENABLED=0 go build -trimpath .*-o (\S+) \./cmd/calibra$`)
	var binary string
	for _, r := range runs["build"] {
		if m := build.FindStringSubmatch(r); m != nil {
			binary = m[2]
		}
	}
	if binary == "" {
		t.Fatalf("the build stage does not build ./cmd/calibra static (CGO_ENABLED=0) with -trimpath: %q", runs["build"])
	}
	if !slices.Contains(copies, "--from=build "+binary+" /usr/local/bin/calibra") {
		t.Errorf("the runtime stage does not copy %s onto PATH: %q", binary, copies)
	}
	// The runtime stage installs image/spec's packages and account, and
	// runs as it, as './release.sh image' does.
	spec := testenv.ReadImageSpec(t, "..")
	if want := "debian:" + spec.Suite + "-slim"; stages["runtime"] != want {
		t.Errorf("the runtime stage is %s, image/spec's base is %s", stages["runtime"], want)
	}
	install := regexp.MustCompile(`^--mount=type=bind,source=image/spec,target=(\S+) \. (\S+) && .*apt-get install -y --no-install-recommends \$PACKAGES && .*&& make_account$`)
	if m := install.FindStringSubmatch(strings.Join(runs["runtime"], " ")); m == nil || m[1] != m[2] {
		t.Errorf("the runtime stage does not install image/spec's $PACKAGES and make_account with the spec mounted: %q", runs["runtime"])
	}
	for _, pkg := range []string{"fio", "postgresql-client"} {
		if !slices.Contains(spec.Packages, pkg) {
			t.Errorf("image/spec's packages %q lack %s", spec.Packages, pkg)
		}
	}
	last := map[string]string{}
	for _, in := range d.instructions {
		last[in[0]] = in[1]
	}
	want := map[string]string{"USER": spec.ID + ":" + spec.ID, "WORKDIR": spec.Home, "ENTRYPOINT": `["` + spec.Entrypoint + `"]`}
	for kw, v := range want {
		if last[kw] != v {
			t.Errorf("the Dockerfile's %s is %q, image/spec says %q", kw, last[kw], v)
		}
	}

	// The documented build command, the same in the Dockerfile and the
	// example, tags the image the example runs.
	tag := regexp.MustCompile(`^docker build -t (\S+) .* \.$`)
	var documented string
	for _, c := range d.comments {
		if m := tag.FindStringSubmatch(c); m != nil {
			documented = c
		}
	}
	if documented == "" {
		t.Fatal("the Dockerfile documents no 'docker build -t IMAGE ... .' command")
	}
	image := tag.FindStringSubmatch(documented)[1]
	example, err := os.ReadFile(jobYAML)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(example), "#   "+documented+"\n") {
		t.Errorf("the k8s example does not give the Dockerfile's build command %q", documented)
	}
	for _, c := range loadJob(t).Spec.Template.Spec.Containers {
		if c.Image != image {
			t.Errorf("container %s runs image %s, but the documented build tags %s", c.Name, c.Image, image)
		}
	}
}
