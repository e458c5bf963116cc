//go:build integration

package image

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// checkout is the source tree the test runs from, and the image built
// from it.
type checkout struct {
	root, commit string
	dirty        bool
	image        string // localhost/calibra:COMMIT[-HASH of the changes]
}

func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// build returns this checkout's image, which './release.sh image' builds
// the first time: the store keeps it by commit (and a hash of the
// uncommitted changes), so another test binary of the same tree reuses it;
// the image of the tree tested before is removed then.
func build(t *testing.T) checkout {
	t.Helper()
	c := checkout{root: git(t, "rev-parse", "--show-toplevel"), commit: git(t, "rev-parse", "HEAD")}
	c.image = "localhost/calibra:" + c.commit
	if status := git(t, "-C", c.root, "status", "--porcelain"); status != "" {
		c.dirty = true
		sum := sha256.Sum256([]byte(status + git(t, "-C", c.root, "diff", "HEAD")))
		c.image += "-" + hex.EncodeToString(sum[:6])
	}
	pickStore(t, c.root)
	if podman(t, "image", "exists", c.image).Run() == nil {
		return c
	}
	cmd := exec.Command("./release.sh", "image")
	cmd.Dir = c.root
	cmd.Env = append(os.Environ(), "IMAGE_TAGS="+c.image, "IMAGE_STORE="+strings.Join(store, " "))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("./release.sh image: %v\n%s", err, out)
	}
	out, _ := podman(t, "images", "--format", "{{.Repository}}:{{.Tag}}").Output()
	for _, name := range strings.Fields(string(out)) {
		if testImage.MatchString(name) && name != c.image {
			_ = podman(t, "rmi", name).Run() // in use by another test binary: kept
		}
	}
	return c
}

// testImage is the name of an image build gave.
var testImage = regexp.MustCompile(`^localhost/calibra:[0-9a-f]{40}(-[0-9a-f]{12})?$`)

// store is the test's own image store (podman's and buildah's flags), as
// image/test-store.sh chooses it, where .ci/setup built the image's base.
var (
	store     []string
	storeOnce sync.Once
)

func pickStore(t *testing.T, root string) {
	storeOnce.Do(func() {
		cmd := exec.Command("sh", "image/test-store.sh")
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("image/test-store.sh: %v", err)
		}
		store = strings.Fields(string(out))
		t.Logf("image store: %s", strings.Join(store, " "))
	})
}

// podman is podman on the test's store, with runc: crun refuses this
// kernel's hybrid cgroups.
func podman(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return exec.Command("podman", append(append(slices.Clone(store), "--runtime", "runc"), args...)...)
}

// containers runs the test's containers: no network, no capabilities and
// no privilege escalation (the Kubernetes example's security context),
// limits within the sandbox's hard ones (podman's defaults exceed them),
// each removed when it exits, and any left by a failed test removed at its
// end.
type containers struct {
	image string
	mu    sync.Mutex
	names []string
}

func newContainers(t *testing.T, image string) *containers {
	c := &containers{image: image}
	t.Cleanup(func() {
		if len(c.names) > 0 {
			_ = podman(t, append([]string{"rm", "--force", "--ignore"}, c.names...)...).Run()
		}
	})
	return c
}

// run runs the image with opts (podman's) and args (calibra's, or the
// entrypoint's), and returns its stdout, failing with its stderr unless it
// exits 0.
func (c *containers) run(t *testing.T, name string, opts []string, args ...string) string {
	t.Helper()
	name = fmt.Sprintf("calibra-test-%d-%s", os.Getpid(), name)
	c.mu.Lock()
	c.names = append(c.names, name)
	c.mu.Unlock()
	argv := []string{"run", "--rm", "--name", name, "--network", "none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
		"--cap-drop", "all", "--security-opt", "no-new-privileges"}
	argv = append(append(append(argv, opts...), c.image), args...)
	cmd := podman(t, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("podman %s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	return stdout.String()
}

// volume makes a host directory owned by uid (the image's account), to
// mount into a container.
func volume(t *testing.T, uid int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "v")
	if err := os.Mkdir(dir, 0o700); err != nil { // safefs: in the test's own t.TempDir
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}
