#!/usr/bin/env bash
# Install the Debian packages the tests and the demo run for real: PostgreSQL, MariaDB, Git,
# an OCI registry (docker-registry, distribution 2.8), Prometheus 2.42 (with promtool), OpenSSH
# (a throwaway sshd serves Git over SSH), containerd (the runtime of the local stack's real node,
# with runc and Debian's CNI plugins), nftables (kube-proxy's nftables mode drives `nft`).
# Idempotent and quiet when everything is there already (no apt-get update then).
set -euo pipefail

PACKAGES=(postgresql-15 postgresql-client-15 mariadb-server mariadb-client git openssh-client openssh-server docker-registry podman runc debootstrap prometheus containerd containernetworking-plugins iptables nftables)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing Debian packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The packages' own services are not wanted (the stack starts throwaway servers); a policy-rc.d
# that refuses keeps dpkg from starting them.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
