# calibra's image: the calibra binary, fio (the device layer) and the
# PostgreSQL client tools, on Debian, to drive an existing server (--dsn or
# --dsn-file), as examples/k8s/oltp-partitions-job.yaml does. It runs no
# managed instance: that needs the database servers on the storage under
# test, which belong on the host.
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

# The image: Debian with fio and the PostgreSQL client tools, calibra on
# PATH, run as an unprivileged account.
FROM debian:bookworm-slim AS runtime
RUN apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fio postgresql-client ca-certificates \
	&& rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --create-home --home-dir /home/calibra calibra
COPY --from=build /out/calibra /usr/local/bin/calibra
USER calibra
WORKDIR /home/calibra
ENTRYPOINT ["calibra"]
CMD ["--help"]
