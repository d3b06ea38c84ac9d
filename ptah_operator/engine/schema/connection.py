"""Database URLs and connections for the schema engine.

A URL names the dialect family by its scheme (`postgresql://`, `postgres://`, `mysql://`,
`mariadb://`); whether a MySQL-family server is MariaDB is asked of the server itself.
Errors never carry the URL: it may hold a password.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import aiomysql
import asyncpg
from pymysql.constants import CLIENT

from ptah_operator.engine.schema.model import Dialect
from ptah_operator.engine.schema.timeouts import Timeouts


class TargetError(ValueError):
    """A URL the engine cannot use, or a server it cannot reach."""


@dataclass(frozen=True)
class Target:
    family: str
    host: str
    port: int
    user: str
    password: str | None
    database: str

    def __repr__(self) -> str:
        return f"Target(family={self.family!r}, database={self.database!r})"


def parse_url(url: str) -> Target:
    parts = urlsplit(url)
    scheme = parts.scheme.split("+", 1)[0]
    if scheme in {"postgresql", "postgres"}:
        family, default_port = "postgresql", 5432
    elif scheme in {"mysql", "mariadb"}:
        family, default_port = "mysql", 3306
    else:
        raise TargetError("unsupported database URL scheme")
    database = unquote(parts.path.lstrip("/"))
    if not database:
        raise TargetError("the database URL names no database")
    try:
        port = parts.port or default_port
    except ValueError as error:
        raise TargetError("the database URL has an invalid port") from error
    return Target(
        family=family,
        host=parts.hostname or "127.0.0.1",
        port=port,
        user=unquote(parts.username or ("postgres" if family == "postgresql" else "root")),
        password=unquote(parts.password) if parts.password is not None else None,
        database=database,
    )


async def connect_postgresql(target: Target) -> Any:
    # The engine spells string literals as standard SQL does ('' for a quote, a backslash as
    # itself): a database or role set to standard_conforming_strings = off would read a
    # backslash before a quote as an escape, and the literal would end elsewhere.
    return await asyncpg.connect(
        host=target.host,
        port=target.port,
        user=target.user,
        password=target.password,
        database=target.database,
        server_settings={"standard_conforming_strings": "on"},
    )


async def connect_mysql(target: Target) -> Any:
    raw = aiomysql.Connection(
        host=target.host,
        port=target.port,
        user=target.user,
        password=target.password or "",
        db=target.database,
        autocommit=True,
        charset="utf8mb4",
    )
    # aiomysql always asks for CLIENT_MULTI_STATEMENTS. The engine sends one statement per
    # call, and a server that refuses a second one in the same string is the last guard
    # that nothing rides along with a plan entry (it answers 1064).
    raw.client_flag &= ~CLIENT.MULTI_STATEMENTS
    await raw._connect()
    # The engine spells string literals with backslashes escaped (`string_literal`): under
    # NO_BACKSLASH_ESCAPES they would be read as two, and never converge. Inspection reads
    # its largest catalog tables as one aggregated value each, which the server would cut at
    # group_concat_max_len (1 MiB by default; a thousand tables need more).
    await raw.query(
        "SET SESSION sql_mode = TRIM(BOTH ',' FROM "
        "REPLACE(CONCAT(',', @@sql_mode, ','), ',NO_BACKSLASH_ESCAPES,', ',')), "
        "SESSION group_concat_max_len = @@max_allowed_packet"
    )
    return raw


async def mysql_dialect(conn: Any) -> Dialect:
    async with conn.cursor() as cur:
        await cur.execute("SELECT VERSION()")
        row = await cur.fetchone()
    return Dialect.MARIADB if "mariadb" in str(row[0]).lower() else Dialect.MYSQL


class Connection:
    """One open connection with its dialect; `async with Connection.open(url) as c`."""

    def __init__(self, target: Target, dialect: Dialect, raw: Any) -> None:
        self.target = target
        self.dialect = dialect
        self.raw = raw

    @classmethod
    async def open(cls, url: str) -> Connection:
        target = parse_url(url)
        if target.family == "postgresql":
            return cls(target, Dialect.POSTGRESQL, await connect_postgresql(target))
        raw = await connect_mysql(target)
        return cls(target, await mysql_dialect(raw), raw)

    async def set_timeouts(self, timeouts: Timeouts) -> None:
        """Hold every later statement on this session to `timeouts`."""
        if self.dialect is Dialect.POSTGRESQL:
            for setting in timeouts.postgresql():
                await self.raw.execute(setting)
            return
        for setting in timeouts.mysql(self.dialect):
            await self.raw.query(setting)

    async def run_statement(self, sql: str) -> None:
        """Run exactly one statement. PostgreSQL: through the extended query protocol, whose
        Parse takes one statement only (42601 for more); MySQL/MariaDB: on a connection made
        without CLIENT_MULTI_STATEMENTS (1064 for more). The connection's own call, not a
        cursor's: a cursor turns each server note into a Python warning, which would print
        server text on stderr (PRIV-05)."""
        if self.dialect is Dialect.POSTGRESQL:
            await self.raw.fetch(sql)
        else:
            await self.raw.query(sql)

    async def mysql_rows(self, sql: str) -> tuple[tuple[Any, ...], ...]:
        """MySQL/MariaDB: the rows of one query, read off the connection's own result (a
        cursor would print the server's warnings, see `run_statement`)."""
        await self.raw.query(sql)
        result = self.raw._result
        return tuple(result.rows or ()) if result is not None else ()

    async def close(self) -> None:
        if self.dialect is Dialect.POSTGRESQL:
            await self.raw.close()
        else:
            self.raw.close()

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
