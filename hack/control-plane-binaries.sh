#!/usr/bin/env bash
# Obtain kube-apiserver, kube-controller-manager, kubectl and etcd the envtest way, plus the
# kubelet, kube-scheduler and kube-proxy for the local stack's real node and CoreDNS for its cluster DNS,
# and print the directory that holds them.
#
# Order of preference:
#   1. KUBEBUILDER_ASSETS (a directory with kube-apiserver, etcd, kubectl), as envtest uses it;
#   2. a cache outside the repository: ${PTAH_CACHE:-$HOME/.cache/ptah}/control-plane/<versions>;
#   3. a build from the Go module proxy (k8s.io/kubernetes at K8S_VERSION with every staging
#      module replaced by its v0.X.Y twin; etcd from go.etcd.io/etcd/server/v3's etcdmain;
#      coredns from github.com/coredns/coredns's coremain with five plugins, none that forwards).
#
# A cold build takes about ten minutes on two cores; afterwards the cache answers at once. A cache
# made before the node existed gains kubelet, kube-scheduler and kube-proxy in ~2 min (warm Go build cache),
# one made before the cluster DNS gains coredns in ~4 min. The cache directory is named after the
# Kubernetes and etcd versions only, so that adding coredns did not orphan existing caches: after
# changing COREDNS_VERSION, delete $OUT/coredns.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
CACHE_ROOT="${PTAH_CACHE:-$HOME/.cache/ptah}"
OUT="$CACHE_ROOT/control-plane/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
KUBE_BINARIES=(kube-apiserver kube-controller-manager kubectl kubelet kube-scheduler kube-proxy)
NEEDED=("${KUBE_BINARIES[@]}" etcd coredns)

log() { echo "control-plane: $*" >&2; }

have_all() {
  local dir="$1" bin
  for bin in "${NEEDED[@]}"; do [[ -x "$dir/$bin" ]] || return 1; done
}

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  for bin in kube-apiserver etcd kubectl; do
    [[ -x "$KUBEBUILDER_ASSETS/$bin" ]] || { log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS lacks $bin"; exit 1; }
  done
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

if have_all "$OUT"; then
  echo "$OUT"
  exit 0
fi

command -v go >/dev/null || { log "Go is needed to build the control plane (no KUBEBUILDER_ASSETS, no cache at $OUT)"; exit 1; }
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export GOFLAGS="-mod=mod" CGO_ENABLED=0

minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
staging_version="v0.${K8S_VERSION#v1.}"

missing=()
for bin in "${KUBE_BINARIES[@]}"; do [[ -x "$OUT/$bin" ]] || missing+=("$bin"); done
if ((${#missing[@]} > 0)); then
  log "building ${missing[*]} $K8S_VERSION from the Go module proxy (cold: ~10 min)"
  mkdir -p "$WORK/k8s" && cd "$WORK/k8s"
  go mod init ptah.local/controlplane >/dev/null 2>&1
  kmod_dir="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
  {
    echo "module ptah.local/controlplane"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/' "$kmod_dir/go.mod" \
      | awk -v v="$staging_version" '{print "\t" $1 " => " $1 " " v}'
    echo ")"
  } > go.mod
  cat > tools.go <<'GO'
//go:build tools

package tools

GO
  {
    echo "import ("
    for bin in "${missing[@]}"; do echo "	_ \"k8s.io/kubernetes/cmd/$bin\""; done
    echo ")"
  } >> tools.go
  go mod tidy -e >/dev/null 2>&1 || true
  go get "k8s.io/kubernetes@$K8S_VERSION" >/dev/null
  go mod tidy
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  go build -tags tools -trimpath -ldflags "$ldflags" -o "$OUT/" \
    "${missing[@]/#/k8s.io/kubernetes/cmd/}"
fi

if ! [[ -x "$OUT/etcd" ]]; then
  log "building etcd $ETCD_VERSION from the Go module proxy (~1 min)"
  mkdir -p "$WORK/etcd" && cd "$WORK/etcd"
  go mod init ptah.local/etcd >/dev/null 2>&1
  cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null
  go mod tidy
  go build -trimpath -ldflags "-s -w" -o "$OUT/etcd" .
fi

if ! [[ -x "$OUT/coredns" ]]; then
  log "building coredns $COREDNS_VERSION from the Go module proxy (cold: ~4 min)"
  mkdir -p "$WORK/coredns" && cd "$WORK/coredns"
  go mod init ptah.local/coredns >/dev/null 2>&1
  # CoreDNS's external-build way: its coremain with our own plugin list, in execution order.
  # Without health, ready or prometheus it opens no port but the DNS one; without forward it
  # sends no question on (hack/localstack/dns.py).
  cat > main.go <<'GO'
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
)

func main() {
	if err := dnsserver.SetDirectives([]string{"bind", "errors", "log", "cache", "kubernetes"}); err != nil {
		panic(err)
	}
	coremain.Run()
}
GO
  go get "github.com/coredns/coredns@$COREDNS_VERSION" >/dev/null
  # No `go mod tidy`: it would fetch the test-only modules of CoreDNS's whole graph; -mod=mod
  # lets the build record the few sums it needs.
  go build -trimpath -ldflags "-s -w" -o "$OUT/coredns" .
fi

have_all "$OUT" || { log "build finished but binaries are missing in $OUT"; exit 1; }
echo "$OUT"
