# syntax=docker/dockerfile:1
# calibra's image: the calibra binary, fio (the device layer) and the
# PostgreSQL client tools, on Debian, to drive an existing server (--dsn or
# --dsn-file), as examples/k8s/oltp-partitions-job.yaml does. It runs no
# managed instance: that needs the database servers on the storage under
# test, which belong on the host. Its packages, account and entrypoint are
# image/spec's, which './release.sh image' (buildah, no registry) builds
# from too: docs/image.md.
#
# Build it from the repository's root (the image the k8s example names):
#   docker build -t calibra:latest --build-arg VERSION="$(git describe --tags --always --dirty)" --build-arg COMMIT="$(git rev-parse HEAD)" .
# VERSION and COMMIT are optional; 'calibra version' prints them.

# The build: a static binary (no C library needed at run time), with no
# build machine's paths in it. The image has no .git, so the commit comes
# in as a build argument, not from Go's VCS stamping.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
	-ldflags "-s -w -X github.com/calibra-bench/calibra/internal/cli.Version=${VERSION} -X github.com/calibra-bench/calibra/internal/cli.Commit=${COMMIT}" \
	-o /out/calibra ./cmd/calibra

# The image: Debian with image/spec's packages and account, calibra on
# PATH, run as that unprivileged account (numeric, so that Kubernetes'
# runAsNonRoot can verify it).
FROM debian:bookworm-slim AS runtime
RUN --mount=type=bind,source=image/spec,target=/tmp/spec \
	. /tmp/spec \
	&& apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $PACKAGES \
	&& rm -rf /var/lib/apt/lists/* \
	&& make_account
COPY --from=build /out/calibra /usr/local/bin/calibra
USER 10001:10001
WORKDIR /home/calibra
ENTRYPOINT ["calibra"]
