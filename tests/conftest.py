"""Fixtures that give tests real servers: a kube-apiserver with etcd, PostgreSQL and MariaDB.

Each server starts once per test session, the first time a test asks for it, and stops at
the end. A server that cannot start fails the tests that need it (never a skip): the error
carries the reason and the tail of the server's log.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import aiomysql
import asyncpg
import pytest
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config
from localstack.controlplane import ControlPlane
from localstack.gitserver import GitServer
from localstack.mariadb import MariaDBServer
from localstack.postgres import PostgresServer
from localstack.process import Process
from localstack.processpods import NODE_NAME
from localstack.registry import OciRegistry
from localstack.sshserver import SshGitServer

REPO = Path(__file__).resolve().parents[1]
REQUIREMENTS = REPO.parent / "shared" / "design" / "REQUIREMENTS.md"
_REQ_ID = re.compile(r"^- \*\*([A-Z]+(?:-[A-Z]+)?-\d+)\*\*", re.MULTILINE)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A `req` marker must name requirement IDs that exist, so coverage listings stay honest."""
    if not REQUIREMENTS.exists():
        return
    known = set(_REQ_ID.findall(REQUIREMENTS.read_text()))
    unknown: list[str] = []
    for item in items:
        for marker in item.iter_markers("req"):
            unknown += [f"{item.nodeid}: {rid}" for rid in marker.args if rid not in known]
    if unknown:
        raise pytest.UsageError(
            "unknown requirement IDs in @pytest.mark.req:\n" + "\n".join(unknown)
        )


@pytest.fixture(scope="session")
def stack_workdir() -> Iterator[Path]:
    # Not under pytest's tmp dir: that is 0700, and PostgreSQL runs as another user.
    path = Path(tempfile.mkdtemp(prefix="ptah-stack-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server(stack_workdir: Path) -> Iterator[PostgresServer]:
    with PostgresServer(stack_workdir) as server:
        yield server


@pytest.fixture(scope="session")
def maria_server(stack_workdir: Path) -> Iterator[MariaDBServer]:
    with MariaDBServer(stack_workdir) as server:
        yield server


def _fresh_name() -> str:
    return "t_" + secrets.token_hex(6)


async def _create_database(server: PostgresServer | MariaDBServer, name: str) -> None:
    if isinstance(server, PostgresServer):
        conn = await asyncpg.connect(server.admin_url)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()
        return
    mconn = await _maria_admin(server)
    try:
        async with mconn.cursor() as cur:
            await cur.execute(f"CREATE DATABASE `{name}`")
    finally:
        mconn.close()


async def _drop_database(server: PostgresServer | MariaDBServer, name: str) -> None:
    if isinstance(server, PostgresServer):
        conn = await asyncpg.connect(server.admin_url)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()
        return
    mconn = await _maria_admin(server)
    try:
        async with mconn.cursor() as cur:
            await cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
    finally:
        mconn.close()


async def _maria_admin(server: MariaDBServer) -> aiomysql.Connection:
    parts = urlsplit(server.admin_url)
    return await aiomysql.connect(
        host=parts.hostname,
        port=parts.port,
        user=parts.username or "root",
        password="",
        autocommit=True,
    )


@pytest.fixture
async def pg_url(pg_server: PostgresServer) -> AsyncIterator[str]:
    """A fresh empty PostgreSQL database, dropped after the test."""
    name = _fresh_name()
    await _create_database(pg_server, name)
    yield pg_server.url_for(name)
    await _drop_database(pg_server, name)


@pytest.fixture
async def maria_url(maria_server: MariaDBServer) -> AsyncIterator[str]:
    """A fresh empty MariaDB database, dropped after the test."""
    name = _fresh_name()
    await _create_database(maria_server, name)
    yield maria_server.url_for(name)
    await _drop_database(maria_server, name)


class FreshDatabases:
    """Fresh empty databases on one server, as many as a test wants, each dropped when its
    block ends: `async with databases.fresh() as url:`. For tests that need new databases
    within one test function (a Hypothesis test, once per example). The block may run on
    any event loop (`asyncio.run` per example): every call opens its own connection."""

    def __init__(self, server: PostgresServer | MariaDBServer) -> None:
        self.server = server

    @contextlib.asynccontextmanager
    async def fresh(self) -> AsyncIterator[str]:
        name = _fresh_name()
        await _create_database(self.server, name)
        try:
            yield self.server.url_for(name)
        finally:
            await _drop_database(self.server, name)


@pytest.fixture(scope="session")
def pg_databases(pg_server: PostgresServer) -> FreshDatabases:
    """Fresh PostgreSQL databases on demand (see `FreshDatabases`)."""
    return FreshDatabases(pg_server)


@pytest.fixture(scope="session")
def maria_databases(maria_server: MariaDBServer) -> FreshDatabases:
    """Fresh MariaDB databases on demand (see `FreshDatabases`)."""
    return FreshDatabases(maria_server)


@pytest.fixture(scope="session")
def kube(stack_workdir: Path) -> Iterator[ControlPlane]:
    with ControlPlane(stack_workdir) as control_plane:
        yield control_plane


@pytest.fixture(scope="session")
def crds_installed(kube: ControlPlane) -> ControlPlane:
    kube.kubectl("apply", "-f", str(REPO / "crds"))
    kube.kubectl("wait", "--for=condition=established", "--timeout=60s", "-f", str(REPO / "crds"))
    return kube


@pytest.fixture(scope="session")
def process_pods(kube: ControlPlane, stack_workdir: Path) -> Iterator[Process]:
    """Pods as host processes (hack/localstack/processpods.py) for `kube`, which has no node:
    the runner's integration tests run the working tree's code in Job-shaped Pods."""
    proc = Process(
        "process-pods",
        [
            sys.executable,
            "-m",
            "localstack.processpods",
            f"--kubeconfig={kube.kubeconfig}",
            f"--workdir={stack_workdir / 'process-pods'}",
        ],
        stack_workdir / "process-pods.log",
        env={**os.environ, "PYTHONPATH": str(REPO / "hack")},
    )
    proc.start()
    proc.wait_until(
        lambda: "Ready" in kube.kubectl("get", "node", NODE_NAME, check=False).stdout,
        30,
        "the process-pods node Ready",
    )
    yield proc
    proc.stop()


@pytest.fixture
async def api_client(kube: ControlPlane) -> AsyncIterator[k8s_client.ApiClient]:
    configuration = k8s_client.Configuration()
    await k8s_config.load_kube_config(
        config_file=str(kube.kubeconfig), client_configuration=configuration
    )
    async with k8s_client.ApiClient(configuration) as api:
        yield api


@pytest.fixture(scope="session")
def oci_registry(stack_workdir: Path) -> Iterator[OciRegistry]:
    """A real OCI registry (Debian's docker-registry 2.8) over plain HTTP on 127.0.0.1:
    `.host` (`127.0.0.1:PORT`, list it as insecure), `.ref(repository, tag)`, `.root`."""
    with OciRegistry(stack_workdir) as registry:
        yield registry


@pytest.fixture(scope="session")
def git_server(stack_workdir: Path) -> Iterator[GitServer]:
    """A real Git server (git http-backend) on 127.0.0.1: `.create_repo(auth=..., config=...)`
    gives a `GitRepo` to commit, tag and push in; `.url` is what a source names."""
    with GitServer(stack_workdir) as server:
        yield server


@pytest.fixture(scope="session")
def ssh_git_server(stack_workdir: Path, git_server: GitServer) -> Iterator[SshGitServer]:
    """A real `sshd` (Debian's openssh-server) on 127.0.0.1 serving the `git_server`'s bare
    repositories through a forced git-shell: `.url_for(repo.name)`, `.client_files(dir)` (a
    Secret's ssh-privatekey and known_hosts), `.other_host_key_line()` (a wrong pin)."""
    with SshGitServer(stack_workdir, git_server.root) as server:
        yield server
