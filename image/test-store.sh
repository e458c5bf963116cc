#!/bin/sh
# Prints the podman/buildah flags of the image test's own store (root's,
# kept from run to run with the images built in it, never the default
# store a user's podman may keep with another driver): overlay where the
# kernel mounts it, in which a container shares the image's files; else
# vfs, which copies the image's 276 MB for every container. The image test
# (internal/cli/e2e/image) and .ci/setup, which builds the image's base
# there once as a machine dependency, both ask it.
set -eu
at() {
	echo "--storage-driver $1 --root /var/cache/calibra-image/test-$1 --runroot /run/calibra-image-test-$1"
}
# shellcheck disable=SC2046 # the flags are words
if c=$(buildah $(at overlay) from scratch 2>/dev/null); then
	if buildah $(at overlay) mount "$c" >/dev/null 2>&1; then
		buildah $(at overlay) rm "$c" >/dev/null 2>&1 || true
		at overlay
		exit 0
	fi
	buildah $(at overlay) rm "$c" >/dev/null 2>&1 || true
fi
at vfs
