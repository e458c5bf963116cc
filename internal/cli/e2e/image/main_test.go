//go:build integration

// Package image builds calibra's image with './release.sh image' (buildah,
// no registry) and runs it with podman, as a user of the Dockerfile or
// the Kubernetes example would: docs/image.md.
package image

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
)

// TestMain lets the test binary stand in for calibra on the host (the
// schema's build), as the other end-to-end packages do.
func TestMain(m *testing.M) { clitest.Main(m, cli.Main) }
