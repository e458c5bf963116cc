#!/bin/sh
# Builds calibra's release binaries into dist/ (or $OUT): static
# (CGO_ENABLED=0, so they run on any Linux of their architecture, in a
# scratch or distroless image too), -trimpath (no build machine's paths in
# them), for linux/amd64 and linux/arm64 (or $PLATFORMS), with
# SHA256SUMS-VERSION beside them. The version is $VERSION, else
# 'git describe'; the commit, whether the tree had uncommitted changes and
# the commit's time go in with -ldflags, which 'calibra version' prints (Go's
# own VCS stamping misses a git worktree, golang/go#58218).
#
#   ./release.sh                       # dist/calibra-VERSION-linux-{amd64,arm64}
#   VERSION=v0.2.0 ./release.sh
#   PLATFORMS=linux/arm64 OUT=/tmp/rel ./release.sh
#
# './release.sh image' builds the image instead, with buildah and no
# registry (docs/image.md): localhost/calibra:VERSION and :latest (or the
# names in $IMAGE_TAGS).
set -eu
cd "$(dirname "$0")"

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}
commit=$(git rev-parse HEAD 2>/dev/null || true)
committed=$(git log -1 --format=%cI 2>/dev/null || true)
modified=""
if [ -n "$commit" ]; then
	modified=false
	[ -z "$(git status --porcelain 2>/dev/null)" ] || modified=true
fi
pkg=github.com/calibra-bench/calibra/internal/cli

# build_binary OS ARCH FILE: the static, stamped binary.
build_binary() {
	CGO_ENABLED=0 GOOS=$1 GOARCH=$2 go build -trimpath -buildvcs=false \
		-ldflags "-s -w -X $pkg.Version=$version -X $pkg.Commit=$commit -X $pkg.CommitModified=$modified -X $pkg.CommitTime=$committed" \
		-o "$3" ./cmd/calibra
}

if [ "${1:-}" = image ]; then
	. ./image/build.sh
	build_image
	exit
fi
# The image's base alone (Debian and image/spec's packages), when missing:
# .ci/setup makes it once in the image test's store, as a machine
# dependency.
if [ "${1:-}" = image-base ]; then
	. ./image/build.sh
	ensure_base
	exit
fi
if [ $# -gt 0 ]; then
	echo "release.sh: unknown argument $1; run ./release.sh for the binaries, ./release.sh image for the image, or ./release.sh image-base for its base" >&2
	exit 2
fi

out=${OUT:-dist}
mkdir -p "$out"
for platform in ${PLATFORMS:-linux/amd64 linux/arm64}; do
	os=${platform%/*}
	arch=${platform#*/}
	bin=calibra-$version-$os-$arch
	echo "building $out/$bin" >&2
	build_binary "$os" "$arch" "$out/$bin"
done
(cd "$out" && sha256sum calibra-"$version"-* >SHA256SUMS-"$version")
echo "$out/SHA256SUMS-$version" >&2
