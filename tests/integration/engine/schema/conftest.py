"""Fixtures of the schema scenarios: a second empty database on each server, to load a
desired file into directly (see `dump_roundtrip`)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import aiomysql
import asyncpg
import pytest
from localstack.mariadb import MariaDBServer
from localstack.postgres import PostgresServer


async def _pg_database(pg_server: PostgresServer) -> AsyncIterator[str]:
    name = "twin_" + secrets.token_hex(6)
    conn = await asyncpg.connect(pg_server.admin_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    yield pg_server.url_for(name)
    conn = await asyncpg.connect(pg_server.admin_url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@pytest.fixture
async def pg_twin(pg_server: PostgresServer) -> AsyncIterator[str]:
    """A second fresh PostgreSQL database, to load a desired file into directly."""
    async for url in _pg_database(pg_server):
        yield url


@pytest.fixture
async def pg_third(pg_server: PostgresServer) -> AsyncIterator[str]:
    """A third fresh PostgreSQL database."""
    async for url in _pg_database(pg_server):
        yield url


@pytest.fixture
async def maria_twin(maria_server: MariaDBServer) -> AsyncIterator[str]:
    """A second fresh MariaDB database."""
    name = "twin_" + secrets.token_hex(6)
    parts = urlsplit(maria_server.admin_url)

    async def run(sql: str) -> None:
        conn = await aiomysql.connect(
            host=parts.hostname, port=parts.port, user="root", password="", autocommit=True
        )
        try:
            async with conn.cursor() as cur:
                await cur.execute(sql)
        finally:
            conn.close()

    await run(f"CREATE DATABASE `{name}`")
    yield maria_server.url_for(name)
    await run(f"DROP DATABASE IF EXISTS `{name}`")
