"""The whole local stack in one place: what `make demo` and the end-to-end tests run.

`LocalStack` starts, in order: the control plane (etcd, kube-apiserver, kube-controller-manager),
the CRDs, PostgreSQL (and MariaDB when asked), an OCI registry and a Git server over HTTP and
over SSH (when asked: the sources Resolve, Verify and fetch read from), the Job executor (podman mode when the image can
be built, else process mode), and the operator itself as a normal process against that API
server, serving its admission webhooks and result endpoint over TLS on 127.0.0.1 with a
certificate from the control plane's CA, and registering the webhooks with that CA as their
caBundle; then a Prometheus scraping the operator's metrics and evaluating its alert rules. Everything is real; stopping the stack stops every process and removes its data.

With `node="kubelet"` (or `PTAH_NODE=kubelet`) a real node (`node.py`: containerd, kube-scheduler,
a kubelet, a CNI bridge) runs the Jobs' Pods instead of the executor, from the operator image
imported into containerd. Pods reach the host's servers at the bridge's gateway (`pod_host`):
each server's port is exposed there, PostgreSQL trusts the Pod subnet, the result endpoint's
certificate names the gateway and the operator tells Jobs to report there.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType

from localstack.controlplane import REPO, ControlPlane
from localstack.gitserver import GitServer
from localstack.mariadb import MariaDBServer
from localstack.node import IDENTITY, RealNode
from localstack.postgres import PostgresServer
from localstack.process import Process, StackError, free_port
from localstack.prometheus import PrometheusServer
from localstack.registry import OciRegistry
from localstack.sshserver import SshGitServer

OPERATOR_NAMESPACE = "ptah-system"
NODE_KINDS = ("executor", "kubelet")


def build_image() -> str:
    result = subprocess.run(
        ["bash", str(REPO / "hack" / "container-image.sh")],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHON": sys.executable},
    )
    if result.returncode != 0:
        raise StackError(f"building the operator image failed:\n{result.stderr[-3000:]}")
    return result.stdout.strip().splitlines()[-1]


def pinned(image: str) -> str | None:
    """`image` by the digest podman recorded for it (`localhost/ptah-operator@sha256:...`), which
    podman runs from its own storage; None when podman cannot say."""
    result = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{index .RepoDigests 0}}", image],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "CONTAINERS_CONF": str(REPO / "hack" / "containers.conf")},
    )
    reference = result.stdout.strip()
    return reference if result.returncode == 0 and "@sha256:" in reference else None


class LocalStack:
    def __init__(
        self,
        workdir: Path,
        *,
        mariadb: bool = False,
        sources: bool = False,
        executor_mode: str = "podman",
        operator: bool = True,
        operator_args: tuple[str, ...] = (),
        prometheus: bool = True,
        alert_for: str | None = None,
        node: str | None = None,
    ) -> None:
        self.workdir = workdir
        self.node_kind = node or os.environ.get("PTAH_NODE") or "executor"
        """What runs the Jobs' Pods: the local executor, or a real kubelet (node.py)."""
        if self.node_kind not in NODE_KINDS:
            raise StackError(f"unknown node {self.node_kind!r} (PTAH_NODE): one of {NODE_KINDS}")
        self.want_mariadb = mariadb
        self.want_sources = sources
        self.executor_mode = executor_mode
        self.want_operator = operator
        self.operator_args = operator_args
        self.want_prometheus = prometheus
        self.alert_for = alert_for
        """Every alert rule's `for:` in the local Prometheus's copy of the rules (None: as written)."""
        self.control_plane: ControlPlane | None = None
        self.postgres: PostgresServer | None = None
        self.mariadb: MariaDBServer | None = None
        self.registry: OciRegistry | None = None
        self.git: GitServer | None = None
        self.ssh_git: SshGitServer | None = None
        self.executor: Process | None = None
        self.node: RealNode | None = None
        self.operator: Process | None = None
        self.prometheus: PrometheusServer | None = None
        self.image = "localhost/ptah-operator:dev"
        self.webhook_port = free_port()
        self.metrics_port = free_port()
        self._exit = ExitStack()

    @property
    def pod_host(self) -> str:
        """The address a Job's Pod reaches the host's servers by (databases, result endpoint)."""
        return self.node.gateway_ip if self.node is not None else "127.0.0.1"

    @property
    def cp(self) -> ControlPlane:
        assert self.control_plane is not None
        return self.control_plane

    def start(self) -> LocalStack:
        try:
            self._start()
        except BaseException:
            self._exit.close()
            raise
        return self

    def _start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.workdir.chmod(0o755)
        kubelet = self.node_kind == "kubelet"
        self.control_plane = self._exit.enter_context(
            ControlPlane(self.workdir, node=IDENTITY if kubelet else None)
        )
        self.cp.kubectl("apply", "-f", str(REPO / "crds"))
        self.cp.kubectl(
            "wait", "--for=condition=established", "--timeout=60s", "-f", str(REPO / "crds")
        )
        self.cp.kubectl("create", "namespace", OPERATOR_NAMESPACE)
        # The roles people are given (ptah-approver, ptah-viewer) as an installation has them.
        self.cp.kubectl("apply", "-n", OPERATOR_NAMESPACE, "-f", str(REPO / "deploy" / "rbac.yaml"))
        if kubelet:
            self.node = self._exit.enter_context(RealNode(self.workdir, self.cp))
        self.postgres = self._exit.enter_context(
            PostgresServer(
                self.workdir, trusted_network=self.node.pod_subnet if self.node else None
            )
        )
        self._expose(self.postgres.port)
        if self.want_mariadb:
            self.mariadb = self._exit.enter_context(MariaDBServer(self.workdir))
            self._expose(self.mariadb.port)
        if self.want_sources:
            self.registry = self._exit.enter_context(OciRegistry(self.workdir))
            self.git = self._exit.enter_context(GitServer(self.workdir))
            self.ssh_git = self._exit.enter_context(SshGitServer(self.workdir, self.git.root))
            for port in (self.registry.port, self.git.port, self.ssh_git.port):
                self._expose(port)
        if self.node is not None:
            # containerd knows the image by the digest of its own import, not podman's.
            self.image = self.node.import_image(build_image())
        else:
            if self.executor_mode == "podman":
                self.image = build_image()
                self.image = pinned(self.image) or self.image
            self.executor = self._start_executor()
        self._expose(self.webhook_port)
        if self.want_operator:
            self.operator = self.start_operator()
        if self.want_prometheus:
            self.prometheus = self._exit.enter_context(
                PrometheusServer(
                    self.workdir, [f"127.0.0.1:{self.metrics_port}"], alert_for=self.alert_for
                )
            )

    def _expose(self, port: int) -> None:
        if self.node is not None:
            self.node.expose(port)

    def _start_executor(self) -> Process:
        proc = Process(
            "job-executor",
            [
                sys.executable,
                "-m",
                "localstack.executor",
                f"--kubeconfig={self.cp.kubeconfig}",
                f"--workdir={self.workdir / 'executor'}",
                f"--mode={self.executor_mode}",
            ],
            self.workdir / "executor.log",
            env={**os.environ, "PYTHONPATH": str(REPO / "hack")},
        )
        proc.start()
        self._exit.callback(proc.stop)
        proc.wait_until(
            lambda: "Ready" in self.cp.kubectl("get", "node", "ptah-local", check=False).stdout,
            30,
            "the local node Ready",
        )
        return proc

    def operator_argv(self) -> list[str]:
        assert self.cp.ca is not None
        pki = self.workdir / "operator-pki"
        pki.mkdir(parents=True, exist_ok=True)
        serving = self.cp.ca.issue(
            "operator-serving",
            "ptah-operator",
            server=True,
            ips=["127.0.0.1", *([self.pod_host] if self.node else [])],
            dns_names=["localhost"],
        )
        key_file = pki / "result.key"
        if not key_file.exists():
            key_file.write_text(secrets.token_hex(32))
            key_file.chmod(0o600)
        bindir = Path(sys.executable).parent
        return [
            str(bindir / "ptah-operator"),
            f"--kubeconfig={self.cp.kubeconfig}",
            f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
            f"--webhook-bind-address=127.0.0.1:{self.webhook_port}",
            f"--tls-cert-file={serving.cert_path}",
            f"--tls-key-file={serving.key_path}",
            f"--tls-ca-file={self.cp.ca.cert_path}",
            f"--result-key-file={key_file}",
            f"--result-url=https://{self.pod_host}:{self.webhook_port}/v1/results",
            f"--register-webhooks-url=https://127.0.0.1:{self.webhook_port}",
            f"--runner-image={self.image}",
            # Process mode runs no image at all; a podman build podman gave no digest is a tag.
            *([] if "@sha256:" in self.image else ["--allow-unpinned-runner-image"]),
            f"--operator-namespace={OPERATOR_NAMESPACE}",
            # The local registry speaks plain HTTP on loopback.
            *([f"--insecure-registry={self.registry.host}"] if self.registry else []),
            # A source's secretRef goes only to these hosts (docs/security.md).
            *self._source_hosts_flag(),
            *self.operator_args,
        ]

    def _source_hosts_flag(self) -> list[str]:
        from urllib.parse import urlsplit

        hosts = [urlsplit(self.git.base_url).netloc] if self.git else []
        hosts += [f"127.0.0.1:{self.ssh_git.port}"] if self.ssh_git else []
        hosts += [self.registry.host] if self.registry else []
        return [f"--allowed-source-hosts={','.join(hosts)}"] if hosts else []

    def start_operator(self, name: str = "operator") -> Process:
        proc = Process(name, self.operator_argv(), self.workdir / f"{name}.log")
        proc.start()
        self._exit.callback(proc.stop)
        proc.wait_until(self._operator_ready, 60, "the operator ready")
        return proc

    def _operator_ready(self) -> bool:
        import urllib.request

        with urllib.request.urlopen(
            f"http://127.0.0.1:{self.metrics_port}/readyz", timeout=2
        ) as resp:
            return bool(resp.status == 200)

    def stop(self) -> None:
        self._exit.close()

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def wait_for(predicate: object, timeout: float, what: str, interval: float = 0.5) -> None:
    """Poll a zero-argument callable until it returns true."""
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise StackError(f"timed out after {timeout:.0f}s waiting for {what}")
