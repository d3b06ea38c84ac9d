"""Benchmark: the migration engine against the floor of the engines' own command-line clients.

    .venv/bin/python tests/bench/bench_migrations.py [--files 1000] [--revisions 10000]

Starts its own PostgreSQL and MariaDB (hack/localstack, as the test fixtures do) and measures:

apply   N small migration files, each in its own transaction with its revision row, by
        `ptah migrations up` (a child process, end to end: ~0.15 s of it is the Python
        interpreter starting and importing) and by the library call alone (the target),
        against the floor: `psql` / `mariadb` running the same statements plus the same
        revision-row INSERT, one transaction per file, in one session. Target: <= 1.5x.
        On MariaDB the files hold DML only, because file mode refuses DDL there.
status  one history read over M applied revisions (and M files): the library call (read +
        verdict), the directory read, and `ptah migrations status` end to end.
        Target: < 200 ms for the read.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "hack"), str(REPO)]

from localstack.mariadb import MariaDBServer  # noqa: E402
from localstack.postgres import PostgresServer  # noqa: E402

from ptah_operator.engine.migrations.apply import Outcome, apply  # noqa: E402
from ptah_operator.engine.migrations.connection import Database, connect  # noqa: E402
from ptah_operator.engine.migrations.directory import read_directory  # noqa: E402
from ptah_operator.engine.migrations.revision_table import (  # noqa: E402
    RevisionRead,
    RevisionTable,
    ensure_table,
)
from ptah_operator.engine.migrations.status import Verdict, read_status  # noqa: E402

TABLE = RevisionTable()


def _pg_file(i: int) -> str:
    return f"CREATE TABLE t_{i} (id INT PRIMARY KEY, v TEXT);\nINSERT INTO t_{i} VALUES (1, 'x');\n"


def _maria_file(i: int) -> str:
    return f"INSERT INTO items VALUES ({i}, 'x');\nUPDATE items SET v = 'y' WHERE id = {i};\n"


def _write_files(path: Path, count: int, body: Callable[[int], str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for i in range(1, count + 1):
        (path / f"{i:010d}_m{i}.up.sql").write_text(body(i))
    return path


async def _sql(url: str, *statements: str) -> None:
    db = await connect(url)
    try:
        for statement in statements:
            await db.execute(statement)
    finally:
        await db.close()


async def _prepare_revision_table(url: str) -> None:
    db = await connect(url)
    try:
        await ensure_table(db, TABLE, RevisionRead(exists=False, columns=frozenset(), rows=()))
    finally:
        await db.close()


def _floor_script(path: Path, pg: bool) -> str:
    directory = read_directory(path)
    now = "clock_timestamp()" if pg else "UTC_TIMESTAMP(6)"
    begin = "BEGIN;" if pg else "START TRANSACTION;"
    parts: list[str] = []
    for f in directory.files:
        statements = [s.strip() for s in f.sql.strip().split(";\n") if s.strip()]
        parts.append(begin)
        parts += [s if s.endswith(";") else s + ";" for s in statements]
        parts.append(
            "INSERT INTO schema_migrations (version, description, kind, state, statements_applied,"
            " statements_total, checksum, execution_millis, error_class, recorded_by, applied_at)"
            f" VALUES ({f.version}, '{f.description}', 'migration', 'applied', {len(statements)},"
            f" {len(statements)}, '{f.checksum}', 1, NULL, 'up', {now});"
        )
        parts.append("COMMIT;")
    return "\n".join(parts) + "\n"


def _client(url: str, pg: bool, script: Path) -> list[str]:
    if pg:
        return ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", str(script)]
    parts = urlsplit(url)
    return [
        shutil.which("mariadb") or "mysql",
        "--no-defaults",
        "-h",
        parts.hostname or "127.0.0.1",
        "-P",
        str(parts.port),
        "-u",
        parts.username or "root",
        parts.path.lstrip("/"),
        "-e",
        f"source {script}",
    ]


def _timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=REPO)
    return time.perf_counter() - started


def _ptah(*args: str) -> list[str]:
    return [sys.executable, "-m", "ptah_operator.engine.cli", "migrations", *args]


async def _fresh(admin: str, name: str, pg: bool) -> str:
    q = '"' if pg else "`"
    await _sql(admin, f"DROP DATABASE IF EXISTS {q}{name}{q}", f"CREATE DATABASE {q}{name}{q}")
    parts = urlsplit(admin)
    return parts._replace(path=f"/{name}").geturl()


async def bench_apply(admin: str, pg: bool, files: int, work: Path) -> dict[str, float]:
    name = "postgresql" if pg else "mariadb"
    path = _write_files(work / f"apply-{name}", files, _pg_file if pg else _maria_file)
    setup = [] if pg else ["CREATE TABLE items (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB"]

    script = work / f"floor-{name}.sql"
    script.write_text(_floor_script(path, pg))
    times: dict[str, list[float]] = {"floor": [], "cli": [], "library": []}

    async def fresh(kind: str, round_: int) -> str:
        url = await _fresh(admin, f"bench_{kind}_{round_}", pg)
        await _sql(url, *setup)
        await _prepare_revision_table(url)
        return url

    async def floor(round_: int) -> None:
        times["floor"].append(_timed(_client(await fresh("floor", round_), pg, script)))

    async def cli(round_: int) -> None:
        url = await fresh("cli", round_)
        times["cli"].append(_timed(_ptah("up", "--db-url", url, "--migrations-dir", str(path))))

    async def library(round_: int) -> None:
        url = await fresh("lib", round_)
        started = time.perf_counter()
        directory = read_directory(path)
        db = await connect(url)
        try:
            result = await apply(db, directory, table=TABLE)
        finally:
            await db.close()
        times["library"].append(time.perf_counter() - started)
        assert result.outcome is Outcome.APPLIED, (result.reason, result.message)
        assert len(result.applied_versions) == files

    # Rounds in rotating order, best of each: a server's warm-up (its catalogs growing, its
    # caches filling) must not favour whichever side runs later.
    orders = [(floor, cli, library), (library, floor, cli), (cli, library, floor)]
    for round_, order in enumerate(orders):
        for step in order:
            await step(round_)
    return {key: min(values) for key, values in times.items()}


async def _fill_history(db: Database, path: Path) -> None:
    directory = read_directory(path)
    pg = db.dialect.value == "postgresql"
    now = "clock_timestamp()" if pg else "UTC_TIMESTAMP(6)"
    batch: list[str] = []
    for f in directory.files:
        batch.append(
            f"({f.version}, '{f.description}', 'migration', 'applied', 1, 1, '{f.checksum}', 1,"
            f" NULL, 'up', {now})"
        )
    for start in range(0, len(batch), 1000):
        await db.execute(
            "INSERT INTO schema_migrations (version, description, kind, state, statements_applied,"
            " statements_total, checksum, execution_millis, error_class, recorded_by, applied_at)"
            " VALUES " + ", ".join(batch[start : start + 1000])
        )


async def bench_status(admin: str, pg: bool, revisions: int, work: Path) -> dict[str, float]:
    name = "postgresql" if pg else "mariadb"
    path = _write_files(work / f"status-{name}", revisions, lambda i: f"SELECT {i};\n")
    url = await _fresh(admin, "bench_status", pg)
    await _prepare_revision_table(url)
    db = await connect(url)
    try:
        await _fill_history(db, path)
        read_times, dir_times = [], []
        for _ in range(7):
            started = time.perf_counter()
            directory = read_directory(path)
            dir_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            status, _ = await read_status(db, directory, TABLE)
            read_times.append(time.perf_counter() - started)
            assert status.verdict is Verdict.NOTHING_PENDING
            assert status.applied_count == revisions
    finally:
        await db.close()
    cli = min(
        _timed(_ptah("status", "--db-url", url, "--migrations-dir", str(path), "--output", "json"))
        for _ in range(3)
    )
    return {
        "read": statistics.median(read_times),
        "directory": statistics.median(dir_times),
        "cli": cli,
    }


def _workdir() -> Path:
    # Not 0700: PostgreSQL runs as another user and must reach its data directory.
    work = Path(tempfile.mkdtemp(prefix="ptah-bench-"))
    work.chmod(0o755)
    return work


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--revisions", type=int, default=10_000)
    args = parser.parse_args()
    work = _workdir()
    failed = False
    try:
        with PostgresServer(work) as pg, MariaDBServer(work) as maria:
            for label, admin, is_pg in (
                ("PostgreSQL", pg.admin_url, True),
                ("MariaDB", maria.admin_url, False),
            ):
                a = await bench_apply(admin, is_pg, args.files, work)
                ratio_cli = a["cli"] / a["floor"]
                ratio_lib = a["library"] / a["floor"]
                print(
                    f"{label:<10} apply {args.files} files: floor {a['floor']:.3f}s,"
                    f" ptah up {a['cli']:.3f}s (x{ratio_cli:.2f}),"
                    f" library {a['library']:.3f}s (x{ratio_lib:.2f})  target <= x1.50"
                    " (the library call; `ptah up` adds the interpreter's start-up and imports)"
                )
                s = await bench_status(admin, is_pg, args.revisions, work)
                print(
                    f"{label:<10} status over {args.revisions} revisions: read+verdict"
                    f" {s['read'] * 1000:.1f} ms (target < 200 ms), directory read"
                    f" {s['directory'] * 1000:.1f} ms, ptah status end to end {s['cli'] * 1000:.0f} ms"
                )
                failed |= ratio_lib > 1.5 or s["read"] > 0.2
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("within targets" if not failed else "OUTSIDE TARGETS")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(asyncio.run(main()))
