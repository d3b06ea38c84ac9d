"""The end-to-end stack: everything `make demo` runs, once for the scenarios of this package.

A real single-node cluster (the control plane; containerd, kube-scheduler, a kubelet, kube-proxy
and CoreDNS), PostgreSQL and MariaDB, an OCI registry and a Git server over HTTP and SSH, the
operator installed in the cluster from deploy/ (two replicas, leader election, its webhooks
behind their Service), and a Prometheus scraping each manager Pod (its alert rules with a 2 s
`for:`). Scenarios act as people do (kubectl, kubectl ptah, a psql session) and read what a
person would read.

Package scope: the stack stops when the last scenario here ends, so the machine's one real node
is free again for tests/integration/localstack/test_real_node.py, which starts its own.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from localstack.stack import LocalStack


@pytest.fixture(scope="package")
def e2e_stack() -> Iterator[LocalStack]:
    workdir = Path(tempfile.mkdtemp(prefix="ptah-e2e-"))
    workdir.chmod(0o755)
    try:
        # alert_for: the local Prometheus fires an alert after 2 s of its condition, not minutes.
        with LocalStack(workdir, mariadb=True, sources=True, alert_for="2s") as stack:
            yield stack
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
