# Sourced by './release.sh image' (it defines build_binary, version and
# commit): builds calibra's image with buildah, from Debian's packages
# (mmdebstrap), no registry and no daemon. See docs/image.md.
#
# The base (Debian, image/spec's packages and account) is an image of its
# own, localhost/calibra-base:KEY, KEY a hash of image/spec and this file:
# built once (mmdebstrap, about 40 s here) and reused while they are
# unchanged; FRESH_BASE=1 builds it again (Debian's security updates). On
# it, one layer: the static binary; and the image's user, working directory
# and entrypoint. Files and the creation time are stamped with
# SOURCE_DATE_EPOCH (the commit's time by default).

build_image() {
	ensure_base
	tags=${IMAGE_TAGS:-localhost/calibra:$version localhost/calibra:latest}

	echo "building $tags" >&2
	build_binary linux "$(go env GOARCH)" "$tmp/calibra"
	c=$($buildah from --pull-never "$base")
	$buildah copy --chmod 0755 "$c" "$tmp/calibra" /usr/local/bin/calibra >/dev/null
	$buildah config --user "$ACCOUNT_ID:$ACCOUNT_ID" --workingdir "$ACCOUNT_HOME" --entrypoint "[\"$ENTRYPOINT\"]" --cmd '' \
		--label org.opencontainers.image.version="$version" --label org.opencontainers.image.revision="$commit" "$c"
	set -- $tags
	$buildah commit --rm --quiet --timestamp "$SOURCE_DATE_EPOCH" "$c" "$1" >/dev/null
	for t in "$@"; do
		$buildah tag "$1" "$t"
	done
	echo "$1 $($buildah inspect --type image --format '{{.FromImageDigest}}' "$1")" >&2
}

# ensure_base sets buildah, base and tmp, and builds the base when it is
# missing from the store (or FRESH_BASE asks).
ensure_base() {
	. ./image/spec
	# The store podman and buildah use by default (overlay where the
	# kernel mounts it), or IMAGE_STORE's: "--storage-driver vfs" where it
	# cannot (vfs copies every layer), "--root DIR" for another.
	buildah="buildah ${IMAGE_STORE:-}"
	SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
	export SOURCE_DATE_EPOCH
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	base=localhost/calibra-base:$(cat image/spec image/build.sh | sha256sum | cut -c1-16)
	if [ -n "${FRESH_BASE:-}" ] || ! $buildah inspect --type image "$base" >/dev/null 2>&1; then
		echo "building $base (mmdebstrap $SUITE: $PACKAGES)" >&2
		build_base "$base" "$tmp/rootfs.tar"
		# The bases of older specs, but those an image still stands on.
		$buildah images --format '{{.Name}}:{{.Tag}}' | grep '^localhost/calibra-base:' | grep -vxF "$base" |
			while read -r old; do $buildah rmi "$old" >/dev/null 2>&1 || true; done
	fi
}

# build_base IMAGE TARFILE: Debian's minimal base with the packages and
# the account, no apt lists, documentation or locales (as Docker's
# debian:*-slim).
build_base() {
	mmdebstrap --quiet --variant=minbase --include="$PACKAGES" \
		--aptopt='Acquire::Languages "none"' \
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		--customize-hook='copy-in image/spec /tmp' \
		--customize-hook='chroot "$1" sh -c ". /tmp/spec && make_account && rm /tmp/spec"' \
		"$SUITE" "$2"
	c=$($buildah from scratch)
	$buildah add "$c" "$2" / >/dev/null
	$buildah commit --rm --quiet --timestamp "$SOURCE_DATE_EPOCH" "$c" "$1" >/dev/null
}
