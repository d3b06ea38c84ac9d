"""Shared helpers for the migration engine's integration tests (imported, not collected)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.catalog import inspect
from ptah_operator.engine.migrations.connection import Database, connect
from ptah_operator.engine.migrations.directory import MigrationDirectory, read_directory
from ptah_operator.engine.migrations.revision_table import RevisionTable

TABLE = RevisionTable()
REPO = Path(__file__).resolve().parents[4]
# A table name no test creates: inspecting with it excluded keeps the revision table in view.
_NOTHING = RevisionTable(name="no_such_table_excluded")


def write_dir(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text)
    return path


def load(path: Path) -> MigrationDirectory:
    return read_directory(path)


async def open_db(url: str) -> Database:
    return await connect(url)


async def snapshot(url: str) -> dict[str, Any]:
    """The catalog, the revision table's rows and every user table's rows, to compare later."""
    db = await connect(url)
    try:
        catalog = (await inspect(db, _NOTHING)).entries
        data: dict[str, Any] = {}
        for key in sorted(catalog):
            kind, _, name = key.partition(" ")
            if (
                db.dialect is Dialect.POSTGRESQL
                and kind == "relation"
                and catalog[key] in {"r", "p"}
            ):
                schema, _, rel = name.partition(".")
                _, rows = await db.fetch(f'SELECT * FROM "{schema}"."{rel}" ORDER BY 1')
                data[name] = [tuple(map(str, r)) for r in rows]
            elif (
                db.dialect is Dialect.MYSQL and kind == "table" and catalog[key].startswith("BASE")
            ):
                _, rows = await db.fetch(f"SELECT * FROM `{name}` ORDER BY 1")
                data[name] = [tuple(map(str, r)) for r in rows]
        return {"catalog": catalog, "data": data}
    finally:
        await db.close()


async def sql(url: str, *statements: str) -> list[tuple[Any, ...]]:
    """Run statements on a fresh session; the rows of the last one."""
    db = await connect(url)
    try:
        rows: list[tuple[Any, ...]] = []
        for statement in statements:
            _, rows = await db.fetch(statement)
        return rows
    finally:
        await db.close()


def ptah(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> tuple[int, Any]:
    """Run the `ptah` command line in a child process; its exit code and parsed JSON."""
    proc = subprocess.run(
        [sys.executable, "-m", "ptah_operator.engine.cli", "migrations", *args, "--output", "json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        check=False,
    )
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(
            f"not JSON (exit {proc.returncode}): {proc.stdout!r} {proc.stderr!r}"
        ) from exc
    return proc.returncode, doc


def spawn_ptah(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ptah_operator.engine.cli", "migrations", *args, "--output", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
