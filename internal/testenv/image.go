package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// NeedImage skips t where calibra's image cannot be built and run here
// (buildah, mmdebstrap, podman and runc, as root), or fails it when
// CALIBRA_TEST_REQUIRE names image.
func NeedImage(t testing.TB) {
	t.Helper()
	var absent []string
	for _, tool := range []string{"buildah", "mmdebstrap", "podman", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			absent = append(absent, tool)
		}
	}
	var missing error
	switch {
	case len(absent) > 0:
		missing = fmt.Errorf("%s not installed: the image cannot be built and run here", strings.Join(absent, ", "))
	case os.Geteuid() != 0:
		missing = errors.New("building and running the image takes root (podman's and buildah's stores)")
	}
	Need(t, "image", missing, "apt-get install buildah mmdebstrap podman runc, as .ci/setup does")
}

// ImageSpec is image/spec, the image's contents that the Dockerfile and
// './release.sh image' both read.
type ImageSpec struct {
	Suite, ID, Home, Entrypoint string
	Packages                    []string
}

// ReadImageSpec sources root/image/spec in sh, as both builds do.
func ReadImageSpec(t testing.TB, root string) ImageSpec {
	t.Helper()
	cmd := exec.Command("sh", "-c", `. ./image/spec && printf '%s\n' "$SUITE" "$ACCOUNT_ID" "$ACCOUNT_HOME" "$ENTRYPOINT" "$PACKAGES" && command -v make_account`)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("image/spec: %v", err)
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 6 || f[0] == "" || f[1] == "" || f[2] == "" || f[3] == "" {
		t.Fatalf("image/spec sets SUITE, ACCOUNT_ID, ACCOUNT_HOME, ENTRYPOINT, PACKAGES and make_account; got %q", f)
	}
	return ImageSpec{Suite: f[0], ID: f[1], Home: f[2], Entrypoint: f[3], Packages: strings.Fields(f[4])}
}
