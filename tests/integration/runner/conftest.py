"""Fixtures of the runner's integration tests: a namespace with a PtahMigration or a PtahSchema on
the real API server, and the result endpoint over TLS storing into it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client as k8s_client
from localstack.controlplane import ControlPlane

from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.schema import PtahSchema
from tests.integration.runner.runner_support import (
    Endpoint,
    create_migration,
    create_namespace,
    start_endpoint,
)
from tests.integration.runner.schema_support import create_schema


@pytest.fixture
async def endpoint(api_client: k8s_client.ApiClient, tmp_path: Path) -> AsyncIterator[Endpoint]:
    served = await start_endpoint(api_client, tmp_path / "endpoint")
    yield served
    await served.runner.cleanup()


@pytest.fixture
async def namespace(
    api_client: k8s_client.ApiClient, crds_installed: ControlPlane
) -> AsyncIterator[str]:
    name = await create_namespace(api_client, "runner")
    yield name
    core = k8s_client.CoreV1Api(api_client)
    await core.delete_namespace(name)


@pytest.fixture
async def pg_migration(api_client: k8s_client.ApiClient, namespace: str) -> PtahMigration:
    return await create_migration(api_client, namespace)


@pytest.fixture
async def maria_migration(api_client: k8s_client.ApiClient, namespace: str) -> PtahMigration:
    return await create_migration(api_client, namespace, engine="MariaDB", transaction_mode="none")


@pytest.fixture
async def pg_schema(api_client: k8s_client.ApiClient, namespace: str) -> PtahSchema:
    return await create_schema(api_client, namespace, "shop-pg", "PostgreSQL")


@pytest.fixture
async def maria_schema(api_client: k8s_client.ApiClient, namespace: str) -> PtahSchema:
    return await create_schema(api_client, namespace, "shop-maria", "MariaDB")
