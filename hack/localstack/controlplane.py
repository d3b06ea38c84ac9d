"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager.

Started the envtest way (binaries from `hack/control-plane-binaries.sh`: KUBEBUILDER_ASSETS, a
cache outside the repository, or a build from the Go module proxy), with generated
certificates, RBAC on, and an admin kubeconfig in `system:masters`. The controller manager runs
only the controllers the operator relies on (Job, garbage collector, namespace, service
accounts), so Jobs get Pods and owner references cascade as in a cluster. Alone (the session's
`kube` fixture) it has no scheduler and no kubelet: `processpods.py` plays the kubelet for the
runner's integration tests. The local stack runs a real node beside it (`node.py`); then, and
only then, the control plane is set up the way a cluster with nodes has it: the Node authorizer and NodeRestriction admission, ServiceAccount admission
(Pods get their tokens), a client certificate for the node (`system:node:<name>`), the kubelet
client certificate and CA for `logs`/`exec`/`port-forward`, the kubelet reached by its InternalIP
(there is no DNS for node names here), and the controllers a node's Pods rely on.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import ssl
import subprocess
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import yaml

from localstack.certs import CertificateAuthority, KeyPair, service_account_keypair
from localstack.process import Process, StackError, free_port, port_open

REPO = Path(__file__).resolve().parents[2]
SERVICE_CIDR = "10.0.0.0/24"
"""kube-apiserver's --service-cluster-ip-range: the ClusterIPs kube-proxy makes answer on the
real node, and the reverse zone its cluster DNS serves."""
BINARIES_SCRIPT = REPO / "hack" / "control-plane-binaries.sh"
ADMIN_USER = "ptah-admin"


def control_plane_bindir() -> Path:
    """Where kube-apiserver, etcd, kubectl (and kube-controller-manager) are; builds them if needed."""
    explicit = os.environ.get("PTAH_CONTROL_PLANE_BIN")
    if explicit:
        return Path(explicit)
    result = subprocess.run(
        ["bash", str(BINARIES_SCRIPT)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise StackError(f"could not obtain the control plane binaries:\n{result.stderr.strip()}")
    return Path(result.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class NodeIdentity:
    """The real node the control plane is set up for: its name and the addresses the stack
    assigned (the node IP, and the Pod bridge's gateway Pods reach the host by)."""

    name: str
    node_ip: str
    gateway_ip: str


_NODE_CONTROLLERS = (
    "root-ca-cert-publisher,nodelifecycle,podgc,ttl-after-finished,endpointslice,"
    "deployment,replicaset"
)
"""Controllers a real node's Pods rely on besides the stack's own: kube-root-ca.crt for projected
tokens, the not-ready taint lifted when the Node turns Ready, Jobs' ttlSecondsAfterFinished,
the EndpointSlices kube-proxy and cluster DNS read Services' Pods from, and the Deployment the
operator is installed as."""


def _assigned(address: str) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((address, 0))
        except OSError:
            return False
    return True


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class ControlPlane:
    """`with ControlPlane(workdir) as cp:` gives a live API server; `cp.kubeconfig` is admin."""

    def __init__(
        self, workdir: Path, bindir: Path | None = None, node: NodeIdentity | None = None
    ) -> None:
        self.workdir = workdir / "control-plane"
        self.node = node
        self.bindir = bindir or control_plane_bindir()
        self.etcd_port = free_port()
        self.etcd_peer_port = free_port()
        self.port = free_port()
        self.address = node.node_ip if node else "127.0.0.1"
        """Where kube-apiserver listens. With a node, the node IP (which the node assigns before
        the control plane starts): the `kubernetes` Service's endpoint, which Pods reach
        through kube-proxy, cannot be a loopback address."""
        self.server = f"https://{self.address}:{self.port}"
        self.certs_dir = self.workdir / "pki"
        self.kubeconfig = self.workdir / "admin.kubeconfig"
        self._procs: list[Process] = []
        self.ca: CertificateAuthority | None = None
        self.sa: KeyPair | None = None
        self.node_kubeconfig = self.workdir / "node.kubeconfig"

    def _bin(self, name: str) -> str:
        path = self.bindir / name
        if not path.exists():
            raise StackError(f"{name} not found in {self.bindir}")
        return str(path)

    # -- lifecycle -------------------------------------------------------------------

    def start(self, controller_manager: bool = True) -> ControlPlane:
        if self.node is not None and not _assigned(self.node.node_ip):
            raise StackError(
                f"the node IP {self.node.node_ip} is not on this machine: claim the node first"
                " (RealNode.claim), the API server listens on it"
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.ca = CertificateAuthority(self.certs_dir)
        serving = self.ca.issue(
            "apiserver",
            "kube-apiserver",
            server=True,
            dns_names=["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
            ips=[
                "127.0.0.1",
                "10.0.0.1",
                *([self.node.node_ip, self.node.gateway_ip] if self.node else []),
            ],
        )
        admin = self.ca.issue("admin", ADMIN_USER, organizations=["system:masters"], client=True)
        sa = self.sa = service_account_keypair(self.certs_dir)
        self._write_kubeconfig(self.kubeconfig, ADMIN_USER, admin)
        if self.node is not None:
            node_pair = self.ca.issue(
                "node",
                f"system:node:{self.node.name}",
                organizations=["system:nodes"],
                client=True,
            )
            self._write_kubeconfig(self.node_kubeconfig, f"system:node:{self.node.name}", node_pair)
        self._start_etcd()
        self._start_apiserver(serving, sa)
        if controller_manager and (self.bindir / "kube-controller-manager").exists():
            self._start_controller_manager(sa)
        return self

    def _start_etcd(self) -> None:
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        proc = Process(
            "etcd",
            [
                self._bin("etcd"),
                "--name=default",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{self.etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{self.etcd_port}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=default={peer}",
                "--unsafe-no-fsync=true",
                "--quota-backend-bytes=4294967296",
                "--log-level=warn",
            ],
            self.workdir / "etcd.log",
        )
        proc.start()
        self._procs.append(proc)
        proc.wait_until(lambda: port_open(self.etcd_port), 30, "etcd listening")

    def _start_apiserver(self, serving: KeyPair, sa: KeyPair) -> None:
        assert self.ca is not None
        proc = Process(
            "kube-apiserver",
            [
                self._bin("kube-apiserver"),
                f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                f"--cert-dir={self.certs_dir}",
                f"--tls-cert-file={serving.cert_path}",
                f"--tls-private-key-file={serving.key_path}",
                f"--client-ca-file={self.ca.cert_path}",
                f"--secure-port={self.port}",
                f"--bind-address={self.address}",
                f"--advertise-address={self.address}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--allow-privileged=true",
                *self._admission_flags(),
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={sa.cert_path}",
                f"--service-account-signing-key-file={sa.key_path}",
                "--enable-priority-and-fairness=false",
                "--profiling=false",
                "--v=0",
            ],
            self.workdir / "kube-apiserver.log",
        )
        proc.start()
        self._procs.append(proc)
        proc.wait_until(self.ready, 60, "kube-apiserver /readyz ok")

    def _admission_flags(self) -> list[str]:
        """Without a node: envtest's flags (no ServiceAccount admission, RBAC only). With one:
        what a cluster with nodes runs, so a Pod's token and a node's rights are as real."""
        if self.node is None:
            return ["--disable-admission-plugins=ServiceAccount", "--authorization-mode=RBAC"]
        assert self.ca is not None
        kubelet_client = self.certs_dir / "admin"
        return [
            # DenyServiceExternalIPs: a Service's externalIPs would have kube-proxy take over
            # any address for the whole machine (its resolver's, say).
            "--enable-admission-plugins=NodeRestriction,DenyServiceExternalIPs",
            "--authorization-mode=Node,RBAC",
            f"--kubelet-client-certificate={kubelet_client}.crt",
            f"--kubelet-client-key={kubelet_client}.key",
            f"--kubelet-certificate-authority={self.ca.cert_path}",
            "--kubelet-preferred-address-types=InternalIP",
        ]

    def _start_controller_manager(self, sa: KeyPair) -> None:
        assert self.ca is not None
        proc = Process(
            "kube-controller-manager",
            [
                self._bin("kube-controller-manager"),
                f"--kubeconfig={self.kubeconfig}",
                "--controllers=job,garbagecollector,namespace,serviceaccount-token,serviceaccount"
                + (f",{_NODE_CONTROLLERS}" if self.node else ""),
                f"--service-account-private-key-file={sa.key_path}",
                f"--root-ca-file={self.ca.cert_path}",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                "--concurrent-job-syncs=10",
                "--v=0",
            ],
            self.workdir / "kube-controller-manager.log",
        )
        proc.start()
        self._procs.append(proc)

    def stop(self) -> None:
        for proc in reversed(self._procs):
            proc.stop()
        self._procs.clear()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cleanup()

    # -- access ----------------------------------------------------------------------

    def ssl_context(self) -> ssl.SSLContext:
        assert self.ca is not None
        ctx = ssl.create_default_context(cafile=str(self.ca.cert_path))
        ctx.load_cert_chain(self.certs_dir / "admin.crt", self.certs_dir / "admin.key")
        return ctx

    def ready(self) -> bool:
        with urllib.request.urlopen(
            f"{self.server}/readyz", context=self.ssl_context(), timeout=2
        ) as resp:
            return bool(resp.status == 200)

    def get_json(self, path: str) -> dict[str, object]:
        with urllib.request.urlopen(
            f"{self.server}{path}", context=self.ssl_context(), timeout=10
        ) as resp:
            data: dict[str, object] = json.load(resp)
            return data

    def _write_kubeconfig(self, path: Path, user: str, pair: KeyPair) -> None:
        assert self.ca is not None
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "ptah-local",
                    "cluster": {
                        "server": self.server,
                        "certificate-authority-data": _b64(self.ca.cert_pem),
                    },
                }
            ],
            "users": [
                {
                    "name": user,
                    "user": {
                        "client-certificate-data": _b64(pair.cert_pem),
                        "client-key-data": _b64(pair.key_path.read_bytes()),
                    },
                }
            ],
            "contexts": [
                {"name": "ptah-local", "context": {"cluster": "ptah-local", "user": user}}
            ],
            "current-context": "ptah-local",
        }
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        path.chmod(0o600)

    def user_kubeconfig(self, username: str, groups: Sequence[str] = ()) -> Path:
        """A kubeconfig that authenticates as `username` in `groups` (no RBAC grants are made)."""
        assert self.ca is not None
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in username)
        pair = self.ca.issue(f"user-{safe}", username, organizations=list(groups), client=True)
        path = self.workdir / f"user-{safe}.kubeconfig"
        self._write_kubeconfig(path, username, pair)
        return path

    def kubectl(
        self,
        *args: str,
        input: str | None = None,
        check: bool = True,
        kubeconfig: Path | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        argv = [self._bin("kubectl"), f"--kubeconfig={kubeconfig or self.kubeconfig}", *args]
        result = subprocess.run(
            argv,
            input=input,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            cwd=REPO,
        )
        if check and result.returncode != 0:
            raise StackError(
                f"kubectl {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}"
            )
        return result
