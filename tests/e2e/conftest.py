"""The end-to-end stack: everything `make demo` runs, once per test session.

A real control plane, PostgreSQL and MariaDB, an OCI registry and a Git server, a Prometheus
scraping the operator (its alert rules with a 2 s `for:`), the Job executor running real containers from
the image the Containerfile builds (podman), and the operator as its own process with its
webhooks registered in the API server. Scenarios act as people do (kubectl, kubectl ptah, a
psql session) and read what a person would read.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from localstack.stack import LocalStack


@pytest.fixture(scope="session")
def e2e_stack() -> Iterator[LocalStack]:
    workdir = Path(tempfile.mkdtemp(prefix="ptah-e2e-"))
    workdir.chmod(0o755)
    try:
        # alert_for: the local Prometheus fires an alert after 2 s of its condition, not minutes.
        with LocalStack(workdir, mariadb=True, sources=True, alert_for="2s") as stack:
            yield stack
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
