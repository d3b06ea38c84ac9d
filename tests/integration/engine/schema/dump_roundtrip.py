"""Helpers for the properties a desired schema and a database must keep, on real servers:

1. a database's own dump (`pg_dump --schema-only`, `mariadb-dump --no-data`), read as the
   desired schema, plans nothing against it;
2. planning the desired schema from an empty database and applying it gives the catalog that
   loading the desired file directly gives (compared as the servers' own dumps);
3. a second plan after the apply is empty.

Loading goes through the servers' own clients (`psql`, `mariadb`), as a person loads a dump.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from ptah_operator.engine.schema.apply import apply_plan
from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.scope import Scope

from .schema_roundtrip import plan_for, write_desired

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def _maria_args(url: str) -> list[str]:
    parts = urlsplit(url)
    return [
        "--protocol=tcp",
        f"--host={parts.hostname}",
        f"--port={parts.port}",
        f"--user={parts.username or 'root'}",
    ]


def _database(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def load(url: str, text: str) -> None:
    """Run `text` as its server's client runs a file; any error fails."""
    if url.startswith("postgres"):
        subprocess.run(
            [str(PG_BIN / "psql"), "-q", "-X", "-v", "ON_ERROR_STOP=1", "-d", url],
            input=text,
            text=True,
            check=True,
            capture_output=True,
        )
        return
    subprocess.run(
        ["mariadb", *_maria_args(url), _database(url)],
        input=text,
        text=True,
        check=True,
        capture_output=True,
    )


def dump(url: str) -> str:
    """The server's own schema dump of the database."""
    if url.startswith("postgres"):
        return subprocess.run(
            [str(PG_BIN / "pg_dump"), "--schema-only", "-d", url],
            text=True,
            check=True,
            capture_output=True,
        ).stdout
    return subprocess.run(
        ["mariadb-dump", *_maria_args(url), "--no-data", _database(url)],
        text=True,
        check=True,
        capture_output=True,
    ).stdout


_VOLATILE = re.compile(
    r"^(\\restrict |\\unrestrict |-- Dump completed|-- Server version|-- Host: |-- MariaDB dump)"
    # MariaDB keeps, with each view, the character set of the session that made it (the
    # mysql client's utf8mb3, the engine's utf8mb4): the client's, not the schema's.
    r"|/\*!50001 SET (character_set_client|character_set_results|collation_connection) += [a-z]"
)


def catalog(url: str) -> str:
    """The dump less what differs between two equal databases: psql's restrict keys, dates,
    hosts, the database name and the next AUTO_INCREMENT value."""
    database = _database(url)
    kept = []
    for line in dump(url).splitlines():
        if _VOLATILE.match(line):
            continue
        line = re.sub(r" AUTO_INCREMENT=\d+", "", line)
        kept.append(line.replace(database, "DB"))
    return "\n".join(kept)


async def assert_dump_plans_nothing(url: str, directory: Path, scope: Scope | None = None) -> None:
    """Property 1: the database's own dump, as the desired schema, plans nothing."""
    text = dump(url)
    planned = await plan_for(url, write_desired(directory, text), scope)
    assert [s.sql for s in planned.statements] == [], "its own dump plans changes"


async def assert_properties(
    empty_url: str,
    twin_url: str,
    directory: Path,
    text: str,
    *,
    own_dump: bool = True,
    scope: Scope | None = None,
) -> None:
    """The three properties for the desired schema `text`: loaded directly into `twin_url`
    (an empty database), and planned and applied from the empty database `empty_url`. The
    file itself, planned against what loading it made, plans nothing too."""
    load(twin_url, text)
    desired = write_desired(directory, text)
    loaded = await plan_for(twin_url, desired, scope)
    assert [s.sql for s in loaded.statements] == [], "the file plans changes against itself"
    if own_dump:
        await assert_dump_plans_nothing(twin_url, directory, scope)
    first = await plan_for(empty_url, desired, scope)
    result = await apply_plan(empty_url, first.plan_bytes, policy=Policy(allow_destructive=True))
    assert result.outcome == "applied", (result, [s.sql for s in first.statements])
    again = await plan_for(empty_url, desired, scope)
    assert [s.sql for s in again.statements] == [], "a second plan is not empty"
    assert catalog(empty_url) == catalog(twin_url), "applying differs from loading directly"
    if own_dump:
        await assert_dump_plans_nothing(empty_url, directory, scope)
