#!/usr/bin/env bash
# Build the operator image (Containerfile) with podman, on a machine that cannot pull images:
# the base is a Debian bookworm made here with debootstrap (localhost/ptah-base:bookworm-ssh) the
# first time, then reused. Prints the image name.
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF="$PWD/hack/containers.conf"
# The tag names what the base holds: a base made before openssh-client was included is not reused.
BASE=localhost/ptah-base:bookworm-ssh
IMAGE="${PTAH_IMAGE:-localhost/ptah-operator:dev}"

command -v podman >/dev/null || { echo "container-image: podman is not installed (apt-get install podman runc debootstrap)" >&2; exit 1; }

if ! podman image exists "$BASE"; then
  mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  root="$(mktemp -d)"
  trap 'rm -rf "$root"' EXIT
  echo "container-image: making $BASE with debootstrap from $mirror (~1 min)" >&2
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,openssh-client bookworm "$root" "$mirror" >/dev/null
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | podman import - "$BASE" >/dev/null
fi

# Every wheel is built on the host, where the package index is reachable; the image build
# installs from them with no network. setuptools builds under build/ and keeps what an
# earlier build left in build/lib (a module since renamed or deleted would ship): start clean.
rm -rf build/wheels build/lib build/bdist.*
"${PYTHON:-.venv/bin/python}" -m pip wheel -q --wheel-dir build/wheels . >/dev/null
podman build -q --network=none --build-arg "BASE=$BASE" -t "$IMAGE" -f Containerfile . >/dev/null
echo "$IMAGE"
