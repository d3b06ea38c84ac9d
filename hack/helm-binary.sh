#!/usr/bin/env bash
# Obtain helm (v3) the way hack/control-plane-binaries.sh obtains the control plane, and print
# the path of the binary.
#
# Order of preference:
#   1. HELM (a path to a helm binary), when set;
#   2. a cache outside the repository: ${PTAH_CACHE:-$HOME/.cache/ptah}/helm/helm-<version>/helm;
#   3. a build from the Go module proxy (helm.sh/helm/v3/cmd/helm at HELM_VERSION).
#
# A cold build (empty Go module and build caches; it fills 413 MB of modules and 716 MB of build
# cache) took 22 min 11 s on two cores shared with a load average near 10; afterwards the cache
# answers at once.
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
CACHE_ROOT="${PTAH_CACHE:-$HOME/.cache/ptah}"
OUT="$CACHE_ROOT/helm/helm-$HELM_VERSION"

log() { echo "helm: $*" >&2; }

if [[ -n "${HELM:-}" ]]; then
  [[ -x "$HELM" ]] || { log "HELM=$HELM is not an executable"; exit 1; }
  echo "$HELM"
  exit 0
fi

if [[ -x "$OUT/helm" ]]; then
  echo "$OUT/helm"
  exit 0
fi

command -v go >/dev/null || { log "Go is needed to build helm (no HELM, no cache at $OUT)"; exit 1; }
log "building helm $HELM_VERSION from the Go module proxy (cold: up to ~20 min on two cores)"
mkdir -p "$OUT"
export CGO_ENABLED=0 GOFLAGS=
mod_dir="$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
# Helm's own Makefile reports the Kubernetes version of its client-go (v0.X.Y is 1.X) as the
# default capabilities; do the same.
k8s_minor="$(awk '$1 == "k8s.io/client-go" {split($2, v, "."); print v[2]}' "$mod_dir/go.mod")"
[[ -n "$k8s_minor" ]] || { log "cannot read the client-go version from $mod_dir/go.mod"; exit 1; }
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
ldflags+=" -X helm.sh/helm/v3/internal/version.metadata= -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done
GOBIN="$OUT" go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"

[[ -x "$OUT/helm" ]] || { log "build finished but $OUT/helm is missing"; exit 1; }
echo "$OUT/helm"
