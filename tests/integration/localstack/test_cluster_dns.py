"""Cluster DNS: the stack's CoreDNS gives a Service's name its ClusterIP, as in a cluster, and
answers nothing outside `cluster.local`.

One CoreDNS for the module, on 127.0.0.1 and a free port, against the session's control plane;
the questions are raw DNS messages over udp and tcp (`localstack.dns.query`).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from localstack.controlplane import ControlPlane
from localstack.dns import (
    NXDOMAIN,
    REFUSED,
    TYPE_PTR,
    ClusterDNS,
    free_dns_port,
)
from localstack.process import StackError

SERVICE = "webhook"


@pytest.fixture(scope="module")
def namespace(kube: ControlPlane) -> Iterator[str]:
    name = f"dns-{secrets.token_hex(4)}"
    kube.kubectl("create", "namespace", name)
    yield name
    kube.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture(scope="module")
def cluster_ip(kube: ControlPlane, namespace: str) -> str:
    """A ClusterIP Service with no Pods behind it: its name resolves all the same."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE, "namespace": namespace},
        "spec": {
            "type": "ClusterIP",
            "selector": {"app": SERVICE},
            "ports": [{"name": "https", "port": 443, "targetPort": 9443}],
        },
    }
    kube.kubectl("apply", "-f", "-", input=yaml.safe_dump(service))
    return kube.kubectl(
        "get", "service", SERVICE, "-n", namespace, "-o", "jsonpath={.spec.clusterIP}"
    ).stdout.strip()


@pytest.fixture(scope="module")
def dns(kube: ControlPlane, stack_workdir: Path, cluster_ip: str) -> Iterator[ClusterDNS]:
    with ClusterDNS(stack_workdir, kube, "127.0.0.1", free_dns_port()) as server:
        yield server


def _listening(pid: int) -> set[tuple[str, str, int]]:
    """(protocol, address, port) of every listening tcp and bound udp socket of `pid`."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd)
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    found = set()
    for proto in ("tcp", "udp", "tcp6", "udp6"):
        for line in Path(f"/proc/net/{proto}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if inode not in inodes or (proto.startswith("tcp") and state != "0A"):
                continue
            address, port = local.split(":")
            if len(address) == 8:
                address = ".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0))
            found.add((proto, address, int(port, 16)))
    return found


def test_a_service_name_resolves_to_its_cluster_ip(
    dns: ClusterDNS, namespace: str, cluster_ip: str
) -> None:
    name = f"{SERVICE}.{namespace}.svc.cluster.local"
    assert dns.query(name).addresses == [cluster_ip]
    assert dns.query(name, tcp=True).addresses == [cluster_ip]
    reverse = ".".join(reversed(cluster_ip.split("."))) + ".in-addr.arpa"
    ptr = dns.query(reverse, TYPE_PTR)
    assert [r.value for r in ptr.answers] == [f"{name}."]


def test_an_unknown_name_in_the_cluster_domain_is_nxdomain(dns: ClusterDNS, namespace: str) -> None:
    reply = dns.query(f"missing.{namespace}.svc.cluster.local")
    assert reply.rcode == NXDOMAIN
    assert reply.addresses == []


def test_a_name_outside_the_cluster_is_refused_not_forwarded(dns: ClusterDNS) -> None:
    for name in ("example.com", "localhost"):
        reply = dns.query(name)
        assert (reply.rcode, reply.addresses) == (REFUSED, []), name


def test_it_listens_on_its_address_alone(dns: ClusterDNS) -> None:
    assert dns.pid is not None
    assert _listening(dns.pid) == {("tcp", "127.0.0.1", dns.port), ("udp", "127.0.0.1", dns.port)}


def test_stopping_leaves_no_process(kube: ControlPlane, stack_workdir: Path) -> None:
    server = ClusterDNS(stack_workdir, kube).start()
    pid = server.pid
    assert pid is not None
    assert server.startup_seconds is not None
    assert server.startup_seconds < 30
    server.stop()
    assert not Path(f"/proc/{pid}").exists()
    assert not server.workdir.exists()
    with pytest.raises(OSError):
        server.query("kubernetes.default.svc.cluster.local", tcp=True)


def test_a_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    control_plane = ControlPlane(tmp_path, bindir=tmp_path / "empty")
    with pytest.raises(StackError, match=r"coredns not found in .*control-plane-binaries\.sh"):
        ClusterDNS(tmp_path, control_plane).start()
