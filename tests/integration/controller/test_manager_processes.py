"""Two `ptah-operator` processes against the real API server: one leads, the other stands by.

Scenarios:
- both start; exactly one holds the Lease and runs the controllers, both answer /readyz;
  the leader is killed with SIGKILL; the standby takes over once the lease has run out
  (never sooner), within one lease duration plus two of its retry intervals;
- the leader gets SIGTERM: it stops, releases the Lease and exits 0; the standby takes over
  at its next retry, well under the lease duration.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from localstack.controlplane import ControlPlane
from localstack.process import free_port

PTAH_OPERATOR = Path(sys.executable).parent / "ptah-operator"
LEASE = "ptah-operator-leader"


class ManagerProcess:
    def __init__(self, identity: str, kube: ControlPlane, namespace: str, log_dir: Path) -> None:
        self.identity = identity
        self.kube = kube
        self.namespace = namespace
        self.port = free_port()
        self.log_path = log_dir / f"{identity}.log"
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self, lease: float, renew: float, retry: float) -> None:
        argv = [
            str(PTAH_OPERATOR),
            f"--kubeconfig={self.kube.kubeconfig}",
            "--leader-elect",
            f"--leader-election-namespace={self.namespace}",
            f"--leader-election-identity={self.identity}",
            f"--leader-election-lease-duration={lease}s",
            f"--leader-election-renew-deadline={renew}s",
            f"--leader-election-retry-period={retry}s",
            f"--metrics-bind-address=127.0.0.1:{self.port}",
            "--webhook-bind-address=0",
        ]
        with self.log_path.open("wb") as log:
            self.popen = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ},
            )

    def signal(self, signum: int) -> None:
        assert self.popen is not None
        self.popen.send_signal(signum)

    def wait(self, timeout: float) -> int:
        assert self.popen is not None
        return self.popen.wait(timeout)

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(10)

    def http(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=2) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError as error:
            return 0, str(error)

    def logs(self) -> list[dict[str, Any]]:
        lines = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                lines.append(json.loads(line))
            except ValueError:
                lines.append({"event": line, "unparsed": True})
        return lines

    def logged(self, event: str) -> bool:
        return any(line.get("event") == event for line in self.logs())

    def is_leader_metric(self) -> float | None:
        status, text = self.http("/metrics")
        if status != 200:
            return None
        for line in text.splitlines():
            if line.startswith("ptah_leader_election_is_leader{"):
                return float(line.rsplit(" ", 1)[1])
        return None

    def describe(self) -> str:
        tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-30:])
        return f"--- {self.identity} (port {self.port}) ---\n{tail}"


@pytest.fixture
async def namespace(api_client: client.ApiClient) -> AsyncIterator[str]:
    name = "le-" + secrets.token_hex(4)
    core = client.CoreV1Api(api_client)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    await core.delete_namespace(name)


@pytest.fixture
def managers(
    crds_installed: ControlPlane, namespace: str, tmp_path: Path
) -> Iterator[tuple[ManagerProcess, ManagerProcess]]:
    pair = (
        ManagerProcess("replica-a", crds_installed, namespace, tmp_path),
        ManagerProcess("replica-b", crds_installed, namespace, tmp_path),
    )
    yield pair
    for manager in pair:
        manager.stop()


async def holder(api_client: client.ApiClient, namespace: str) -> str | None:
    try:
        lease = await client.CoordinationV1Api(api_client).read_namespaced_lease(LEASE, namespace)
    except client.ApiException as error:
        if error.status == 404:
            return None
        raise
    return lease.spec.holder_identity if lease.spec else None


async def until(condition: Any, what: str, within: float, *diag: ManagerProcess) -> None:
    deadline = time.monotonic() + within
    while True:
        result = condition()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"not within {within}s: {what}\n" + "\n".join(m.describe() for m in diag)
            )
        await asyncio.sleep(0.05)


async def one_leader_and_a_ready_standby(
    api_client: client.ApiClient, namespace: str, a: ManagerProcess, b: ManagerProcess
) -> tuple[ManagerProcess, ManagerProcess]:
    async def held() -> bool:
        return await holder(api_client, namespace) in (a.identity, b.identity)

    await until(held, "a replica holds the Lease", 30, a, b)
    await until(
        lambda: a.http("/readyz")[0] == 200 and b.http("/readyz")[0] == 200,
        "both replicas ready",
        30,
        a,
        b,
    )
    leader_id = await holder(api_client, namespace)
    leader, standby = (a, b) if leader_id == a.identity else (b, a)
    assert leader.is_leader_metric() == 1
    assert standby.is_leader_metric() == 0
    assert leader.logged("controllers started")
    assert not standby.logged("controllers started"), "a standby runs no controllers"
    assert leader.http("/healthz") == (200, "ok")
    assert standby.http("/healthz") == (200, "ok")
    return leader, standby


async def test_the_standby_takes_over_a_killed_leader_once_the_lease_runs_out(
    api_client: client.ApiClient,
    namespace: str,
    managers: tuple[ManagerProcess, ManagerProcess],
) -> None:
    lease, renew, retry = 4.0, 3.0, 0.5
    a, b = managers
    a.start(lease, renew, retry)
    b.start(lease, renew, retry)
    leader, standby = await one_leader_and_a_ready_standby(api_client, namespace, a, b)
    # It stays that way while the leader renews.
    await asyncio.sleep(2 * lease)
    assert await holder(api_client, namespace) == leader.identity

    leader.signal(signal.SIGKILL)
    killed = time.monotonic()
    await asyncio.sleep(0.2)  # a renewal already on the wire lands, no other can follow
    coordination = client.CoordinationV1Api(api_client)
    last_renewal = (await coordination.read_namespaced_lease(LEASE, namespace)).spec.renew_time

    async def taken() -> bool:
        return await holder(api_client, namespace) == standby.identity

    await until(taken, "the standby holds the Lease", 30, standby)
    took = time.monotonic() - killed
    print(f"standby took over {took:.2f}s after SIGKILL (lease {lease}s, retry {retry}s)")
    # The standby trusts the Lease for a lease duration after it last saw it renewed (at most
    # one renew interval before the kill): it never takes over sooner than that ...
    assert took >= lease - retry, f"took over after {took:.2f}s"
    # ... and takes over within the lease duration plus two of its retry intervals (one to see
    # the last renewal, one to find the lease expired; each retry * (1 + 1.2 jitter)).
    assert took <= lease + 2 * retry * 2.2 + 2.0, f"took over after {took:.2f}s"
    # Measured on the Lease itself: the new holder acquired it only after the old holder's
    # last renewal had run out, and within two standby retries after that.
    acquired = (await coordination.read_namespaced_lease(LEASE, namespace)).spec.acquire_time
    after_expiry = (acquired - last_renewal).total_seconds() - lease
    print(f"acquired {after_expiry:.2f}s after the killed leader's lease ran out")
    assert 0 <= after_expiry <= 2 * retry * 2.2 + 1.0
    await until(lambda: standby.logged("controllers started"), "controllers on the new leader", 10)
    assert standby.is_leader_metric() == 1
    assert standby.http("/readyz")[0] == 200


async def test_a_terminated_leader_releases_the_lease_and_the_standby_takes_over_at_once(
    api_client: client.ApiClient,
    namespace: str,
    managers: tuple[ManagerProcess, ManagerProcess],
) -> None:
    lease, renew, retry = 15.0, 10.0, 2.0  # the defaults
    a, b = managers
    a.start(lease, renew, retry)
    b.start(lease, renew, retry)
    leader, standby = await one_leader_and_a_ready_standby(api_client, namespace, a, b)

    leader.signal(signal.SIGTERM)
    terminated = time.monotonic()
    assert leader.wait(20) == 0
    assert leader.logged("released leader lease")

    async def taken() -> bool:
        return await holder(api_client, namespace) == standby.identity

    await until(taken, "the standby holds the Lease", 30, standby)
    took = time.monotonic() - terminated
    print(f"standby took over {took:.2f}s after SIGTERM (lease {lease}s, retry {retry}s)")
    # One standby retry (2 s * (1 + 1.2)) and the leader's shutdown, not a lease duration.
    assert took <= retry * 2.2 + 3.0, f"took over after {took:.2f}s"
    assert took < lease / 2
    lease_obj = await client.CoordinationV1Api(api_client).read_namespaced_lease(LEASE, namespace)
    assert lease_obj.spec.lease_transitions == 1
    await until(lambda: standby.logged("controllers started"), "controllers on the new leader", 10)
