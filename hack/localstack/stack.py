"""The whole local stack in one place: what `make demo` and the end-to-end tests run.

`LocalStack` starts, in order: the node's host side (`node.py`: its addresses, bridge and
guards), the control plane (etcd, kube-apiserver, kube-controller-manager), the CRDs, the node
(containerd, kube-scheduler, a kubelet, kube-proxy, CoreDNS), PostgreSQL (and MariaDB when
asked), an OCI registry and a Git server over HTTP and over SSH (when asked: the sources
Resolve, Verify and fetch read from), the operator image imported into containerd, and the
operator: installed from deploy/ as docs/install.md says (the default), or as a host process
against that API server (`operator_from="process"`: the benchmarks, and the node's own tests,
which watch or kill it from the host). Then a Prometheus scraping the operator's metrics and
evaluating its alert rules. Everything is real; stopping the stack stops every process and
removes what it made.

Pods reach the host's servers at the bridge's gateway (`pod_host`): each server's port is
exposed there, PostgreSQL and MariaDB trust the Pod subnet, and a host-process operator's result
endpoint certificate names the gateway, where it tells Jobs to report.
"""

from __future__ import annotations

import base64
import json
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
from localstack.podwatch import PodWatch, ScrapedPods
from localstack.postgres import PostgresServer
from localstack.process import Process, StackError, free_port
from localstack.prometheus import PrometheusServer
from localstack.registry import OciRegistry
from localstack.sshserver import SshGitServer

OPERATOR_NAMESPACE = "ptah-system"
OPERATOR_KINDS = ("process", "deploy")
"""How the operator runs: a host process, or installed in the cluster from deploy/ as users
install it."""
RELEASE_IMAGE = "ghcr.io/ptah-operator/ptah-operator"
"""The image deploy/manager.yaml names, which the local overlay points at the imported one."""
WEBHOOK_TLS_SECRET = "ptah-operator-webhook-tls"
MANAGER_LABELS = {"app.kubernetes.io/name": "ptah-operator"}
"""The labels of the manager's Pods (deploy/manager.yaml's selector)."""


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


class LocalStack:
    def __init__(
        self,
        workdir: Path,
        *,
        mariadb: bool = False,
        sources: bool = False,
        operator: bool = True,
        operator_args: tuple[str, ...] = (),
        prometheus: bool = True,
        alert_for: str | None = None,
        operator_from: str | None = None,
    ) -> None:
        self.workdir = workdir
        self.operator_from = operator_from or os.environ.get("PTAH_OPERATOR") or "deploy"
        """`process`: the operator as a host process; `deploy`: `kubectl apply -k` of deploy/
        through an overlay for this stack."""
        if self.operator_from not in OPERATOR_KINDS:
            raise StackError(
                f"unknown operator {self.operator_from!r} (PTAH_OPERATOR): one of {OPERATOR_KINDS}"
            )
        self.want_mariadb = mariadb
        self.want_sources = sources
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
        self.node: RealNode | None = None
        self.operator: Process | None = None
        self.prometheus: PrometheusServer | None = None
        self.pods: PodWatch | None = None
        """Every Pod the API server has shown: `pods_ever_run`."""
        self.image = "localhost/ptah-operator:dev"
        self._deployed_replicas = 2
        self.webhook_port = free_port()
        self.metrics_port = free_port()
        self._exit = ExitStack()

    @property
    def pod_host(self) -> str:
        """The address a Job's Pod reaches the host's servers by (databases, result endpoint)."""
        assert self.node is not None
        return self.node.gateway_ip

    def pod_url(self, url: str) -> str:
        """`url` of a host server (on 127.0.0.1) as a Job's Pod reaches it."""
        return url.replace("@127.0.0.1:", f"@{self.pod_host}:").replace(
            "//127.0.0.1:", f"//{self.pod_host}:"
        )

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
        control_plane = ControlPlane(self.workdir, node=IDENTITY)
        # The API server listens on the node IP, which the node's host side assigns; the host
        # side goes last, after the control plane has stopped.
        node = RealNode(self.workdir, control_plane)
        self._exit.callback(node.stop)
        node.claim()
        self.control_plane = self._exit.enter_context(control_plane)
        self.cp.kubectl("apply", "-f", str(REPO / "crds"))
        self.cp.kubectl(
            "wait", "--for=condition=established", "--timeout=60s", "-f", str(REPO / "crds")
        )
        self.cp.kubectl("create", "namespace", OPERATOR_NAMESPACE)
        # The roles people are given (ptah-approver, ptah-viewer) as an installation has them.
        self.cp.kubectl("apply", "-n", OPERATOR_NAMESPACE, "-f", str(REPO / "deploy" / "rbac.yaml"))
        scraped = (
            ScrapedPods(self.workdir / "operator-targets.json", OPERATOR_NAMESPACE, MANAGER_LABELS)
            if self.operator_from == "deploy"
            else None
        )
        self.pods = PodWatch(self.cp, scraped).start()
        self._exit.callback(self.pods.stop)
        self.node = node.start()
        self._exit.callback(node.stop_processes)
        self.postgres = self._exit.enter_context(
            PostgresServer(self.workdir, trusted_network=node.pod_subnet)
        )
        node.expose(self.postgres.port)
        if self.want_mariadb:
            self.mariadb = self._exit.enter_context(
                MariaDBServer(self.workdir, trusted_network=node.pod_subnet)
            )
            node.expose(self.mariadb.port)
        if self.want_sources:
            self.registry = self._exit.enter_context(OciRegistry(self.workdir))
            self.git = self._exit.enter_context(GitServer(self.workdir))
            self.ssh_git = self._exit.enter_context(SshGitServer(self.workdir, self.git.root))
            for port in (self.registry.port, self.git.port, self.ssh_git.port):
                node.expose(port)
        # containerd knows the image by the digest of its own import, not podman's.
        self.image = node.import_image(build_image())
        if self.operator_from == "process":
            node.expose(self.webhook_port)
        if self.want_operator:
            if self.operator_from == "deploy":
                self.install_operator()
            else:
                self.operator = self.start_operator()
        if self.want_prometheus:
            self.prometheus = self._exit.enter_context(
                PrometheusServer(self.workdir, self.metrics_target(), alert_for=self.alert_for)
            )

    def metrics_target(self) -> list[str] | Path:
        """What Prometheus scrapes: the host process's port, or each manager Pod at its
        `metrics` port, from the file_sd file the Pod watch keeps (Debian's Prometheus is built
        without Kubernetes service discovery)."""
        if self.operator_from == "process":
            return [f"127.0.0.1:{self.metrics_port}"]
        assert self.pods is not None
        assert self.pods.scraped is not None
        return self.pods.scraped.path

    # -- what the tests do to the running stack ------------------------------------------

    def pods_ever_run(self, namespace: str, prefix: str) -> list[str]:
        """Every Pod ever made in `namespace` whose name starts with `prefix`, deleted ones
        included, from the Pod watch."""
        assert self.pods is not None
        return self.pods.ever(namespace, prefix)

    def kill_container(self, namespace: str, pod: str, container: str) -> None:
        """SIGKILL one running container of a Pod, behind the kubelet's back (a crash, the OOM
        killer), through containerd."""
        document = json.loads(
            self.cp.kubectl("get", "pod", pod, "-n", namespace, "-o", "json").stdout
        )
        assert self.node is not None
        assert self.node.containerd is not None
        (status,) = [s for s in document["status"]["containerStatuses"] if s["name"] == container]
        task = status["containerID"].removeprefix("containerd://")
        self.node.containerd.ctr("tasks", "kill", "-s", "SIGKILL", task, what="killing a container")

    def stop_operator(self) -> None:
        """No manager at all: the host process killed, or every replica gone (scaled to 0 and
        its Pods force-deleted, as a node loss leaves them)."""
        if self.operator_from == "process":
            assert self.operator is not None
            assert self.operator.pid is not None
            os.killpg(self.operator.pid, 9)
            self.operator.stop()
            return
        self.cp.kubectl(
            "scale", "deployment/ptah-operator", "-n", OPERATOR_NAMESPACE, "--replicas=0"
        )
        self.cp.kubectl(
            "delete",
            "pods",
            "-n",
            OPERATOR_NAMESPACE,
            "-l",
            "app.kubernetes.io/name=ptah-operator",
            "--grace-period=0",
            "--force",
            "--wait=true",
        )

    def start_operator_again(self) -> None:
        """A manager that knows nothing but what the API server holds."""
        if self.operator_from == "process":
            self.operator = self.start_operator("operator-2")
            return
        replicas = self._deployed_replicas
        self.cp.kubectl(
            "scale", "deployment/ptah-operator", "-n", OPERATOR_NAMESPACE, f"--replicas={replicas}"
        )
        self._rolled_out(180)

    # -- the operator installed from deploy/ ---------------------------------------------

    def install_operator(self, timeout: float = 300) -> None:
        """Install the operator as docs/install.md says, with the stack's CA in cert-manager's
        place: the serving certificate's Secret, `kubectl apply -k` of an overlay of deploy/
        (the imported image by digest, this stack's registry and source hosts), the Deployment
        rolled out, then deploy/webhooks.yaml with the CA as every webhook's caBundle, and the
        install's own check (a dry-run approval the webhook refuses)."""
        assert self.cp.ca is not None
        service = f"ptah-operator-webhook.{OPERATOR_NAMESPACE}.svc"
        serving = self.cp.ca.issue(
            "operator-webhook",
            service,
            server=True,
            dns_names=[service, f"{service}.cluster.local"],
        )
        self.cp.kubectl(
            "create",
            "secret",
            "generic",
            WEBHOOK_TLS_SECRET,
            "-n",
            OPERATOR_NAMESPACE,
            f"--from-file=tls.crt={serving.cert_path}",
            f"--from-file=tls.key={serving.key_path}",
            f"--from-file=ca.crt={self.cp.ca.cert_path}",
        )
        overlay = self.write_overlay()
        self.cp.kubectl("apply", "-k", str(overlay))
        self._exit.callback(self._keep_operator_logs)
        self._deployed_replicas = json.loads(
            self.cp.kubectl(
                "get", "deployment/ptah-operator", "-n", OPERATOR_NAMESPACE, "-o", "json"
            ).stdout
        )["spec"]["replicas"]
        self._rolled_out(timeout)
        self.cp.kubectl("apply", "-f", str(REPO / "deploy" / "webhooks.yaml"))
        bundle = base64.b64encode(self.cp.ca.cert_pem).decode()
        for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
            webhooks = json.loads(
                self.cp.kubectl("get", kind, "ptah-operator-approvals", "-o", "json").stdout
            )["webhooks"]
            patch = [
                {"op": "add", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": bundle}
                for i in range(len(webhooks))
            ]
            self.cp.kubectl(
                "patch", kind, "ptah-operator-approvals", "--type=json", "-p", json.dumps(patch)
            )
        wait_for(
            self.webhooks_answer, 60, "the operator's webhooks answering through their Service"
        )

    def _rolled_out(self, timeout: float) -> None:
        """Wait until every replica of the manager's Deployment runs its current template."""
        self.cp.kubectl(
            "rollout",
            "status",
            "deployment/ptah-operator",
            "-n",
            OPERATOR_NAMESPACE,
            f"--timeout={timeout:.0f}s",
            timeout=timeout + 30,
        )

    def _keep_operator_logs(self) -> None:
        """The manager Pods' logs, kept in the work directory before the node goes."""
        result = self.cp.kubectl(
            "logs",
            "-n",
            OPERATOR_NAMESPACE,
            "-l",
            "app.kubernetes.io/name=ptah-operator",
            "--prefix",
            "--tail=-1",
            "--max-log-requests=4",
            check=False,
        )
        (self.workdir / "operator-pods.log").write_text(result.stdout + result.stderr)

    def write_overlay(self) -> Path:
        """A kustomize overlay of deploy/ for this stack: what an installer changes, nothing else."""
        overlay = self.workdir / "deploy-overlay"
        overlay.mkdir(parents=True, exist_ok=True)
        repository, _, digest = self.image.partition("@")
        env = [{"name": "PTAH_RUNNER_IMAGE", "value": self.image}]
        hosts = self._source_hosts(self.pod_host)
        if hosts:
            env.append({"name": "PTAH_ALLOWED_SOURCE_HOSTS", "value": ",".join(hosts)})
        container_patch = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "ptah-operator"},
            "spec": {"template": {"spec": {"containers": [{"name": "manager", "env": env}]}}},
        }
        args = (
            [f"--insecure-registry={self.pod_host}:{self.registry.port}"] if self.registry else []
        )
        kustomization: dict[str, object] = {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": [os.path.relpath(REPO / "deploy", overlay)],
            "images": [{"name": RELEASE_IMAGE, "newName": repository, "digest": digest}],
            "patches": [
                {"path": "manager-env.yaml"},
                *(
                    [
                        {
                            "target": {"kind": "Deployment", "name": "ptah-operator"},
                            "patch": json.dumps(
                                [
                                    {
                                        "op": "add",
                                        "path": "/spec/template/spec/containers/0/args/-",
                                        "value": arg,
                                    }
                                    for arg in args
                                ]
                            ),
                        }
                    ]
                    if args
                    else []
                ),
            ],
        }
        (overlay / "manager-env.yaml").write_text(json.dumps(container_patch, indent=2))
        (overlay / "kustomization.yaml").write_text(json.dumps(kustomization, indent=2))
        return overlay

    def webhooks_answer(self) -> bool:
        probe = {
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahMigrationApproval",
            "metadata": {"generateName": "probe-", "namespace": "default"},
            "spec": {
                "migrationRef": {"name": "absent", "uid": "none"},
                "planRef": {"name": "absent", "uid": "none"},
                "planFingerprint": "sha256:" + "0" * 64,
            },
        }
        result = self.cp.kubectl(
            "create", "--dry-run=server", "-f", "-", input=json.dumps(probe), check=False
        )
        return 'admission webhook "check.approvals.operator.ptah.run" denied' in result.stderr

    def operator_argv(self) -> list[str]:
        assert self.cp.ca is not None
        pki = self.workdir / "operator-pki"
        pki.mkdir(parents=True, exist_ok=True)
        serving = self.cp.ca.issue(
            "operator-serving",
            "ptah-operator",
            server=True,
            ips=["127.0.0.1", self.pod_host],
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
            f"--operator-namespace={OPERATOR_NAMESPACE}",
            # The local registry speaks plain HTTP on loopback.
            *([f"--insecure-registry={self.registry.host}"] if self.registry else []),
            # A source's secretRef goes only to these hosts (docs/security.md).
            *self._source_hosts_flag(),
            *self.operator_args,
        ]

    def _source_hosts_flag(self) -> list[str]:
        hosts = self._source_hosts("127.0.0.1")
        return [f"--allowed-source-hosts={','.join(hosts)}"] if hosts else []

    def _source_hosts(self, host: str) -> list[str]:
        """The Git and registry hosts a source's secretRef may go to, as Pods name them."""
        from urllib.parse import urlsplit

        hosts = [urlsplit(self.git.base_url).netloc.replace("127.0.0.1", host)] if self.git else []
        hosts += [f"{host}:{self.ssh_git.port}"] if self.ssh_git else []
        hosts += [f"{host}:{self.registry.port}"] if self.registry else []
        return hosts

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
