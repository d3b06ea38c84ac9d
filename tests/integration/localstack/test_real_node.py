"""The local stack with a real node: containerd, kube-scheduler and a kubelet run the operator's
Jobs, and nothing of the node is left on the machine once the stack stops.

One stack for the module (`LocalStack`, the operator installed from deploy/). The
tests run in file order: the last stops the stack and checks the machine against what it was
before the stack started. A component that cannot start fails the tests (never a skip).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from localstack import node as real_node
from localstack.controlplane import REPO, ControlPlane
from localstack.node import RealNode
from localstack.process import StackError
from localstack.stack import OPERATOR_NAMESPACE, LocalStack

from ptah_operator.reconcile.jobs import ACTIVE_DEADLINE_SECONDS, RUNNER_UID

pytestmark = pytest.mark.timeout(900)
FIGURES: dict[str, float] = {}


def _machine() -> dict[str, Any]:
    """What a node could leave behind, as a comparable snapshot."""

    def out(*argv: str) -> str:
        lines = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
        return "\n".join(line for line in lines.splitlines() if not line.startswith("#"))

    cgroups = sorted(
        str(h / name)
        for h in real_node.CGROUP_ROOT.iterdir()
        for name in real_node.CGROUP_NAMES
        if (h / name).exists()
    )
    mounts = sorted(
        point
        for point in (
            line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
        )
        if "ptah-node-" in point
    )
    sysctls = real_node.read_sysctls()
    for name in (
        "net/netfilter/nf_conntrack_max",
        "net/netfilter/nf_conntrack_tcp_timeout_established",
        "net/netfilter/nf_conntrack_tcp_timeout_close_wait",
        "net/ipv4/conf/all/route_localnet",
        "net/ipv4/conf/all/rp_filter",
    ):
        with contextlib.suppress(OSError):
            sysctls[name] = (Path("/proc/sys") / name).read_text().strip()
    return {
        "sysctls": sysctls,
        # iptables-nft's own tables are compared as iptables-save shows them (below).
        "nft tables": [
            t
            for t in out("nft", "list", "tables").splitlines()
            if t.split()[-1] not in ("filter", "nat", "mangle", "raw", "security")
        ],
        "routes": [
            r for r in out("ip", "-o", "route", "show", "table", "all").splitlines() if "10." in r
        ],
        "forwarding": sorted(
            f"{conf.name}={(conf / 'forwarding').read_text().strip()}"
            for conf in Path("/proc/sys/net/ipv4/conf").iterdir()
        ),
        "iptables": _without_idle_tables(out("iptables-save")),
        "ip6tables": _without_idle_tables(out("ip6tables-save")),
        "addresses": [a for a in out("ip", "-o", "addr", "show").splitlines() if "10.244." in a],
        "links": sorted(
            name
            for name in (
                line.split(":")[1].strip() for line in out("ip", "-o", "link").splitlines()
            )
            if name.startswith(("ptah", "veth"))
        ),
        "ip_forward": Path("/proc/sys/net/ipv4/ip_forward").read_text().strip(),
        "cgroups": cgroups,
        "mounts": mounts,
        "host_paths": sorted(
            p for p in (*real_node.HOST_PATHS, *real_node.AVOIDED_PATHS) if os.path.lexists(p)
        ),
        "state": [str(p) for p in (real_node.STATE_FILE, real_node.LOCK_FILE) if p.exists()],
    }


BUILT_IN_CHAINS = frozenset({"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"})


def _without_idle_tables(saved: str) -> str:
    """`iptables-save` output without the tables that hold only built-in chains at ACCEPT and
    no rule: such a table filters and rewrites nothing, and on the nf_tables backend it stays
    once anything has used it (a rule, a chain of our own or another policy still shows)."""
    tables, kept = [], []
    for line in saved.splitlines():
        tables.append(line)
        if line == "COMMIT":
            idle = all(
                entry.startswith(":")
                and entry.split()[0][1:] in BUILT_IN_CHAINS
                and entry.split()[1] == "ACCEPT"
                for entry in tables[1:-1]
            )
            if not idle:
                kept.extend(tables)
            tables = []
    return "\n".join(kept + tables)


def _our_processes(workdir: Path) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if str(workdir).encode() in cmdline:
                found.append(cmdline.replace(b"\0", b" ").decode(errors="replace")[:200])
    return found


@pytest.fixture(scope="module")
def before() -> dict[str, Any]:
    return _machine()


@pytest.fixture(scope="module")
def node_stack(before: dict[str, Any]) -> Iterator[LocalStack]:
    workdir = Path(tempfile.mkdtemp(prefix="ptah-node-"))
    workdir.chmod(0o755)
    try:
        begin = time.monotonic()
        with LocalStack(workdir, mariadb=True, prometheus=False) as stack:
            FIGURES["stack start"] = time.monotonic() - begin
            yield stack
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _json(stack: LocalStack, *args: str) -> Any:
    return json.loads(stack.cp.kubectl(*args, "-o", "json").stdout)


def test_node_becomes_ready(node_stack: LocalStack) -> None:
    assert node_stack.node is not None
    node = _json(node_stack, "get", "node", real_node.NODE_NAME)
    ready = [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready == ["True"]
    addresses = {a["type"]: a["address"] for a in node["status"]["addresses"]}
    assert addresses["InternalIP"] == real_node.NODE_IP
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")
    assert not node["spec"].get("taints"), node["spec"]
    # No stand-in node (processpods.py's) is there: the kubelet is the only node.
    assert [n["metadata"]["name"] for n in _json(node_stack, "get", "nodes")["items"]] == [
        real_node.NODE_NAME
    ]
    assert Path("/proc/sys/net/ipv4/ip_forward").read_text().strip() == "0"
    print(f"stack start {FIGURES['stack start']:.1f}s; node {node_stack.node.timings}")


def test_what_the_stack_listens_on_is_loopback_or_its_own(node_stack: LocalStack) -> None:
    """Every socket a process of the stack listens on (the control plane, the node, CoreDNS,
    the databases) is bound to loopback or to an address the node assigned: nothing answers on
    the machine's other interfaces (a kube-proxy or kubelet port on 0.0.0.0 would)."""
    allowed = {"127.0.0.1", "[::1]", real_node.NODE_IP, real_node.GATEWAY_IP}
    ours = {
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _names(entry, str(node_stack.workdir))
    }
    listening = subprocess.run(
        ["ss", "-H", "-ltnup"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    seen = []
    for line in listening:
        fields = line.split()
        local = fields[4].rsplit(":", 1)[0]
        pids = {int(p.split("=")[1]) for p in line.split(",") if p.startswith("pid=")}
        if pids & ours:
            seen.append(local)
            assert local in allowed, line
    assert real_node.GATEWAY_IP in seen  # CoreDNS
    assert real_node.NODE_IP in seen  # the API server, the kubelet


def _names(proc: Path, text: str) -> bool:
    try:
        return text.encode() in (proc / "cmdline").read_bytes()
    except OSError:
        return False


def _container_spec(stack: LocalStack, status: dict[str, Any]) -> dict[str, Any]:
    """The OCI spec the kubelet had containerd give runc for a container of the Pod."""
    assert stack.node is not None
    assert stack.node.containerd is not None
    container_id = status["containerID"].removeprefix("containerd://")
    info = stack.node.containerd.ctr("containers", "info", container_id, what="ctr info")
    spec: dict[str, Any] = json.loads(info.stdout)["Spec"]
    return spec


def _migrate(
    stack: LocalStack, files: dict[str, str], engine: str = "PostgreSQL"
) -> tuple[str, str]:
    """A fresh namespace and database, and a PtahMigration `orders` of `files` with
    `apply: Always` whose Jobs reach the database from the Pod network."""
    server = stack.postgres if engine == "PostgreSQL" else stack.mariadb
    assert server is not None
    namespace = "n-" + secrets.token_hex(4)
    database = "d_" + secrets.token_hex(4)
    stack.cp.kubectl("create", "namespace", namespace)
    _sql(stack, engine, server.admin_url, f"CREATE DATABASE {database}")
    documents = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "migrations"},
            "data": files,
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "orders-database"},
            "stringData": {"url": stack.pod_url(server.url_for(database))},
        },
        {
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahMigration",
            "metadata": {"name": "orders"},
            "spec": {
                "target": {
                    "engine": engine,
                    "coordinationKey": f"{namespace}/{database}",
                    "urlFrom": {"name": "orders-database", "key": "url"},
                },
                "configMap": {"name": "migrations"},
                # MySQL's DDL commits itself: a person says the run is not one transaction.
                "policy": {"apply": "Always"}
                | ({} if engine == "PostgreSQL" else {"transactionMode": "none"}),
            },
        },
    ]
    stack.cp.kubectl(
        "apply", "-n", namespace, "-f", "-", input="\n---\n".join(json.dumps(d) for d in documents)
    )
    return namespace, database


def _sql(stack: LocalStack, engine: str, url: str, statement: str) -> list[str]:
    """One statement through the engine's own client, as a person at a prompt; its rows."""
    if engine == "PostgreSQL":
        argv = ["psql", url, "-At", "-c", statement]
    else:
        assert stack.mariadb is not None
        parts = urlsplit(url)
        argv = [
            "mariadb",
            "--no-defaults",
            "-h",
            "127.0.0.1",
            "-P",
            str(parts.port),
            "-u",
            "root",
            "-N",
            "-B",
            "-e",
            statement,
            parts.path.lstrip("/"),
        ]
    result = subprocess.run(argv, check=True, capture_output=True, text=True)
    return [line.replace("\t", "|") for line in result.stdout.split("\n") if line]


def _wait_for_verdict(
    stack: LocalStack, namespace: str, timeout: float = 300
) -> tuple[str | None, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    phase: str | None = None
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        status = _json(stack, "get", "ptahmigration", "orders", "-n", namespace).get("status") or {}
        phase = status.get("phase")
        if phase in ("InSync", "Failed"):
            break
        time.sleep(0.5)
    return phase, status


def _instant(value: str) -> float:
    """An RFC 3339 time of the API (seconds resolution) as seconds since the epoch."""
    return time.mktime(time.strptime(value, "%Y-%m-%dT%H:%M:%SZ"))


def _apply_jobs(stack: LocalStack, namespace: str) -> list[dict[str, Any]]:
    jobs = _json(stack, "get", "jobs", "-n", namespace)["items"]
    return [j for j in jobs if j["metadata"]["labels"]["operator.ptah.run/operation"] == "Apply"]


def _apply_pod_running(stack: LocalStack, namespace: str, timeout: float = 120) -> str:
    """Wait until the Apply's Pod runs its SQL container; its name."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for job in _apply_jobs(stack, namespace):
            selector = f"job-name={job['metadata']['name']}"
            for pod in _json(stack, "get", "pods", "-n", namespace, "-l", selector)["items"]:
                states = pod["status"].get("containerStatuses") or []
                if any(s["name"] == "run" and "running" in s["state"] for s in states):
                    return str(pod["metadata"]["name"])
        time.sleep(0.3)
    raise AssertionError(f"no Apply Pod ran in {namespace} within {timeout:.0f}s")


def _applied_once(
    stack: LocalStack, namespace: str, database: str, engine: str = "PostgreSQL"
) -> None:
    """One Apply Job, complete, and the file's revision row once, its table made."""
    server = stack.postgres if engine == "PostgreSQL" else stack.mariadb
    assert server is not None
    (job,) = _apply_jobs(stack, namespace)
    assert "Complete" in {c["type"] for c in job["status"]["conditions"] if c["status"] == "True"}
    assert job["status"].get("succeeded") == 1, job["status"]
    url = server.url_for(database)
    rows = _sql(
        stack,
        engine,
        url,
        "SELECT version, count(*) FROM schema_migrations GROUP BY version ORDER BY version",
    )
    assert rows == ["1|1"], rows
    assert _sql(stack, engine, url, "SELECT count(*) FROM orders") == ["0"]


@pytest.mark.req("JOB-01")
def test_operator_jobs_run_under_the_kubelet(node_stack: LocalStack) -> None:
    """A PtahMigration with `apply: Always` against the stack's PostgreSQL: the operator's own
    Jobs (History, then Apply) run as Pods of the kubelet and report to the result endpoint
    through the bridge, and the Apply Pod is as the Job contract says."""
    stack = node_stack
    assert stack.postgres is not None
    created = time.monotonic()
    namespace, database = _migrate(
        stack, {"0001_orders.up.sql": "CREATE TABLE orders (id int PRIMARY KEY);\n"}
    )
    phase, status = _wait_for_verdict(stack, namespace)
    in_sync = time.monotonic() - created
    assert phase == "InSync", json.dumps(status, indent=1)[:3000]
    tables = subprocess.run(
        ["psql", stack.postgres.url_for(database), "-At", "-c", "SELECT tablename FROM pg_tables"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert "orders" in tables

    apply_jobs = _apply_jobs(stack, namespace)
    assert len(apply_jobs) == 1, [j["metadata"]["name"] for j in apply_jobs]
    job = apply_jobs[0]
    complete = [c for c in job["status"]["conditions"] if c["type"] == "Complete"]
    assert complete
    assert complete[0]["status"] == "True"
    pods = _json(stack, "get", "pods", "-n", namespace, "-l", f"job-name={job['metadata']['name']}")
    assert len(pods["items"]) == 1
    pod = pods["items"][0]
    assert pod["spec"]["nodeName"] == real_node.NODE_NAME
    assert pod["status"]["phase"] == "Succeeded"
    assert pod["status"]["podIP"].startswith("10.244.77.")

    # The URL Secret reaches the container that runs SQL and no other (JOB-01).
    def holds_url(container: dict[str, Any]) -> bool:
        refs = [
            (e.get("valueFrom") or {}).get("secretKeyRef", {}).get("name")
            for e in container.get("env") or []
        ]
        return "orders-database" in refs

    containers = [*(pod["spec"].get("initContainers") or []), *pod["spec"]["containers"]]
    assert [c["name"] for c in containers if holds_url(c)] == ["run"]
    assert not [
        v
        for v in pod["spec"]["volumes"]
        if (v.get("secret") or {}).get("secretName") == "orders-database"
    ]

    # What the kubelet actually had runc do, container by container.
    statuses = [
        *(pod["status"].get("initContainerStatuses") or []),
        *pod["status"]["containerStatuses"],
    ]
    for status in statuses:
        terminated = status["state"]["terminated"]
        assert terminated["exitCode"] == 0, status
        spec = _container_spec(stack, status)
        assert spec["process"]["user"]["uid"] == RUNNER_UID, status["name"]
        assert spec["root"].get("readonly") is True, status["name"]
        destinations = [m["destination"] for m in spec["mounts"]]
        assert not [d for d in destinations if "serviceaccount" in d], destinations
        env_names = [e.split("=", 1)[0] for e in spec["process"]["env"]]
        assert ("PTAH_DATABASE_URL" in env_names) == (status["name"] == "run"), status["name"]
    # ServiceAccount admission is on with the node, and still no token in this Pod.
    assert not [v for v in pod["spec"]["volumes"] if "projected" in v]
    # The runner's termination message came back through the kubelet.
    run_status = next(s for s in pod["status"]["containerStatuses"] if s["name"] == "run")
    assert run_status["state"]["terminated"].get("message"), run_status
    # The kubelet ran the init containers one after the other, in the order written, and the
    # SQL container only after the last of them.
    written = [c["name"] for c in containers]
    assert [st["name"] for st in statuses] == written, (written, statuses)
    spans = [
        (
            _instant(st["state"]["terminated"]["startedAt"]),
            _instant(st["state"]["terminated"]["finishedAt"]),
        )
        for st in statuses
    ]
    for (_, finished), (started, _) in itertools.pairwise(spans):
        assert finished <= started, (written, spans)
    # The Job as the API server keeps it: what the builder wrote, nothing dropped or changed.
    kept = job["spec"]
    assert kept["backoffLimit"] == 0
    assert kept["activeDeadlineSeconds"] == ACTIVE_DEADLINE_SECONDS
    assert kept["ttlSecondsAfterFinished"] == 86400  # an Apply's (JOB-07)
    assert kept["template"]["spec"]["restartPolicy"] == "Never"
    assert kept["template"]["spec"]["automountServiceAccountToken"] is False

    job_seconds = time.mktime(
        time.strptime(complete[0]["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ")
    ) - time.mktime(time.strptime(job["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    print(f"apply -> InSync {in_sync:.1f}s; Apply Job create -> Complete ~{job_seconds:.0f}s")


@pytest.mark.req("JOB-01")
def test_the_operator_runs_in_the_cluster_as_deploy_describes(node_stack: LocalStack) -> None:
    """The manager is the Deployment of deploy/ (through the stack's overlay: the image by
    digest, nothing else of the Pod changed), two replicas under the ServiceAccount and RBAC of
    deploy/rbac.yaml, one of them leading; the webhooks are reached through their Service, and
    Jobs report to the Service's DNS name (the test above reached InSync that way)."""
    stack = node_stack
    assert stack.operator_from == "deploy"
    assert stack.operator is None
    deployment = _json(stack, "get", "deployment", "ptah-operator", "-n", OPERATOR_NAMESPACE)
    assert deployment["status"].get("readyReplicas") == 2, deployment["status"]
    # What was applied is deploy/ but for the image, in every object and field.
    applied = list(
        yaml.safe_load_all(stack.cp.kubectl("kustomize", str(stack.write_overlay())).stdout)
    )
    written = list(yaml.safe_load_all(stack.cp.kubectl("kustomize", str(REPO / "deploy")).stdout))
    images = [
        c.pop("image")
        for d in (*applied, *written)
        if d["kind"] == "Deployment"
        for c in d["spec"]["template"]["spec"]["containers"]
    ]
    runner = [
        e.pop("value")
        for d in (*applied, *written)
        if d["kind"] == "Deployment"
        for c in d["spec"]["template"]["spec"]["containers"]
        for e in c["env"]
        if e["name"] == "PTAH_RUNNER_IMAGE"
    ]
    assert applied == written
    assert images[0] == runner[0] == stack.image
    assert "@sha256:" in stack.image
    assert images[1] == "ghcr.io/ptah-operator/ptah-operator:0.1.0"
    (live,) = deployment["spec"]["template"]["spec"]["containers"]
    assert live["image"] == stack.image
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "ptah-operator"

    pods = _json(
        stack, "get", "pods", "-n", OPERATOR_NAMESPACE, "-l", "app.kubernetes.io/name=ptah-operator"
    )["items"]
    assert len(pods) == 2
    assert {p["spec"]["nodeName"] for p in pods} == {real_node.NODE_NAME}
    assert {p["status"]["phase"] for p in pods} == {"Running"}
    lease = _json(stack, "get", "lease", "ptah-operator-leader", "-n", OPERATOR_NAMESPACE)
    holder = lease["spec"]["holderIdentity"]
    assert holder.split("_")[0] in {p["metadata"]["name"] for p in pods}, holder

    for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
        configuration = _json(stack, "get", kind, "ptah-operator-approvals")
        for webhook in configuration["webhooks"]:
            client = webhook["clientConfig"]
            assert client["service"]["name"] == "ptah-operator-webhook", webhook["name"]
            assert client.get("caBundle"), webhook["name"]
            assert "url" not in client
    # install.md's check, through the Service: a dry-run approval the webhook refuses.
    assert stack.webhooks_answer()


@pytest.mark.req("JOB-01")
def test_a_mariadb_migration_runs_from_the_pod_network(node_stack: LocalStack) -> None:
    """MariaDB lets the Pod subnet in (a DNATed connection keeps the Pod's address): a
    PtahMigration against it reaches InSync through Jobs on the node."""
    namespace, database = _migrate(
        node_stack, {"0001_orders.up.sql": "CREATE TABLE orders (id int PRIMARY KEY);\n"}, "MariaDB"
    )
    phase, status = _wait_for_verdict(node_stack, namespace)
    assert phase == "InSync", json.dumps(status, indent=1)[:3000]
    _applied_once(node_stack, namespace, database, "MariaDB")


SLOW_APPLY = {
    "0001_orders.up.sql": "SELECT pg_sleep(30);\nCREATE TABLE orders (id int PRIMARY KEY);\n"
}
"""A file whose Apply runs long enough for a fault to land in the middle of it."""


def _manager_pods(stack: LocalStack) -> list[dict[str, Any]]:
    selector = "app.kubernetes.io/name=ptah-operator"
    pods = _json(stack, "get", "pods", "-n", OPERATOR_NAMESPACE, "-l", selector)["items"]
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def _leader(stack: LocalStack) -> str:
    lease = _json(stack, "get", "lease", "ptah-operator-leader", "-n", OPERATOR_NAMESPACE)
    return str(lease["spec"].get("holderIdentity") or "").split("_")[0]


@pytest.mark.req("JOB-01")
def test_a_manager_pod_killed_mid_apply_hands_over_with_no_second_apply(
    node_stack: LocalStack,
) -> None:
    """The leading manager Pod is force-deleted while the Apply's SQL runs: another replica
    takes the Lease while the Apply still runs (the standby, or the Pod that replaces the dead
    one, whichever asks first once the dead leader's Lease runs out: it may not have given it
    back), the migration is InSync, and the Apply ran once (one Job, one revision row); the
    Deployment is back to two replicas."""
    stack = node_stack
    namespace, database = _migrate(stack, SLOW_APPLY)
    _apply_pod_running(stack, namespace)
    leader = _leader(stack)
    (standby,) = [
        p["metadata"]["name"] for p in _manager_pods(stack) if p["metadata"]["name"] != leader
    ]
    killed = time.monotonic()
    stack.cp.kubectl(
        "delete", "pod", leader, "-n", OPERATOR_NAMESPACE, "--grace-period=0", "--force"
    )
    deadline = time.monotonic() + 120
    while _leader(stack) in ("", leader) and time.monotonic() < deadline:
        time.sleep(0.2)
    took_over = time.monotonic() - killed
    new_leader = _leader(stack)
    assert new_leader not in ("", leader)
    assert new_leader in {p["metadata"]["name"] for p in _manager_pods(stack)}
    # The hand-over happened during the Apply: its Job still runs under the new leader.
    (job,) = _apply_jobs(stack, namespace)
    assert job["status"].get("active") == 1, job["status"]
    assert not job["status"].get("completionTime"), job["status"]
    phase, status = _wait_for_verdict(stack, namespace)
    assert phase == "InSync", json.dumps(status, indent=1)[:3000]
    _applied_once(stack, namespace, database)
    stack.cp.kubectl(
        "rollout", "status", "deployment/ptah-operator", "-n", OPERATOR_NAMESPACE, "--timeout=120s"
    )
    assert len(_manager_pods(stack)) == 2
    which = "the standby" if new_leader == standby else "the replacement Pod"
    print(f"{which} leading {took_over:.1f}s after the leader's Pod was deleted")


@pytest.mark.req("JOB-01")
def test_the_kubelet_and_containerd_restarted_while_a_job_runs(node_stack: LocalStack) -> None:
    """containerd and the kubelet are stopped and started again while the Apply's SQL runs (a
    node upgrade, a crash of either): the container runs on under its shim, the kubelet finds it
    again, and the Apply ends once, InSync."""
    stack = node_stack
    assert stack.node is not None
    namespace, database = _migrate(stack, SLOW_APPLY)
    pod = _apply_pod_running(stack, namespace)
    run_id = next(
        s["containerID"].removeprefix("containerd://")
        for s in _json(stack, "get", "pod", pod, "-n", namespace)["status"]["containerStatuses"]
        if s["name"] == "run"
    )
    began = time.monotonic()
    stack.node.restart_runtime()
    restarted = time.monotonic() - began
    # The SQL still runs under its shim, now known to the new containerd.
    assert run_id in stack.node.running_tasks()
    phase, status = _wait_for_verdict(stack, namespace)
    assert phase == "InSync", json.dumps(status, indent=1)[:3000]
    _applied_once(stack, namespace, database)
    run = next(
        s
        for s in _json(stack, "get", "pod", pod, "-n", namespace)["status"]["containerStatuses"]
        if s["name"] == "run"
    )
    assert run["restartCount"] == 0, run
    assert run["state"]["terminated"]["exitCode"] == 0, run
    print(f"containerd and kubelet restarted in {restarted:.1f}s while the Apply ran")


def test_a_second_node_on_the_machine_refuses(node_stack: LocalStack, tmp_path: Path) -> None:
    with pytest.raises(StackError, match="another local stack runs a real node"):
        RealNode(tmp_path, node_stack.cp).start()
    assert node_stack.node is not None
    assert node_stack.node.kubelet is not None


def test_nothing_is_left_after_stop(node_stack: LocalStack, before: dict[str, Any]) -> None:
    workdir = node_stack.workdir
    began = time.monotonic()
    node_stack.stop()
    print(f"stack stop {time.monotonic() - began:.1f}s")
    assert _our_processes(workdir) == []
    assert _machine() == before
    assert not (workdir / "node").exists()


_CRASHING_RUN = """
import sys, time
from pathlib import Path
from localstack.controlplane import REPO, ControlPlane
from localstack.node import IDENTITY, RealNode
workdir = Path(sys.argv[1])
cp = ControlPlane(workdir, node=IDENTITY)
node = RealNode(workdir, cp)
node.claim()
cp.start()
node.start()
print("ready", flush=True)
time.sleep(600)
"""


def test_a_start_after_a_crash_cleans_up_first(before: dict[str, Any], tmp_path: Path) -> None:
    """A run killed with SIGKILL leaves its bridge, address, nat chain, cgroups and host paths;
    the next node's start removes them before it makes its own, and its stop leaves nothing."""
    crashed = Path(tempfile.mkdtemp(prefix="ptah-node-"))
    crashed.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(REPO / "hack")}
    child = subprocess.Popen(
        [sys.executable, "-c", _CRASHING_RUN, str(crashed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip() == "ready", line + child.stdout.read()[-3000:]
    finally:
        child.kill()
        child.wait()
    left = _machine()
    assert left != before
    assert real_node.BRIDGE in left["links"]
    assert real_node.STATE_FILE.exists()

    workdir = Path(tempfile.mkdtemp(prefix="ptah-node-"))
    workdir.chmod(0o755)
    try:
        cp = ControlPlane(workdir, node=real_node.IDENTITY)
        node = RealNode(workdir, cp)
        try:
            node.claim()
            assert not (crashed / "node").exists()
            with cp:
                node.start()
                assert node.kubelet is not None
                node.stop_processes()
        finally:
            node.stop()
        assert _our_processes(crashed / "node") == []
        assert _our_processes(workdir) == []
        assert _machine() == before
    finally:
        # The crashed run's control plane got SIGTERM with its parent's death; kube-apiserver
        # drains for a minute before it exits (REAL-NODE.md), so end it here, by its id.
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if str(crashed).encode() in (entry / "cmdline").read_bytes():
                        os.kill(int(entry.name), signal.SIGKILL)
        shutil.rmtree(crashed, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)
