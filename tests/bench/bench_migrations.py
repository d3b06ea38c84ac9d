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
        Targets: < 200 ms for the read, and < 200 ms end to end (issue #16).

Peers, when built (`make bench` builds them from the Go module proxy into
~/.cache/ptah/bench-peers/bin; PTAH_BENCH_PEERS names another directory): goose `up` over the
same files as goose writes them (`-- +goose Up`; each in its own transaction with its version
row, as `ptah up` runs them) and goose `status` over the same M revisions (it too reads the
directory and every history row); golang-migrate `version` (it reads one row, no file: a floor
for a status, not a peer). Target: `ptah up` end to end no slower than goose `up`. Each figure is
printed beside the peer's from the same run. Exits 1 (OUTSIDE TARGETS) when a target does not
hold, and names it.
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
PEERS = Path(os.environ.get("PTAH_BENCH_PEERS", Path.home() / ".cache/ptah/bench-peers")) / "bin"
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


def _peer(name: str) -> Path | None:
    path = PEERS / name
    return path if path.is_file() else None


def _goose_dsn(url: str, pg: bool) -> tuple[str, str]:
    """goose's driver name and connection string for a bench database URL."""
    parts = urlsplit(url)
    if pg:
        return "postgres", f"{url}?sslmode=disable"
    host = f"{parts.hostname or '127.0.0.1'}:{parts.port}"
    return "mysql", f"{parts.username or 'root'}@tcp({host}){parts.path}"


def _goose(url: str, pg: bool, directory: Path, *command: str) -> list[str]:
    goose = _peer("goose")
    assert goose is not None
    driver, dsn = _goose_dsn(url, pg)
    return [str(goose), "-dir", str(directory), driver, dsn, *command]


def _goose_files(source: Path, into: Path) -> Path:
    """The same migrations as goose writes them: `-- +goose Up` before the same statements."""
    into.mkdir(parents=True, exist_ok=True)
    for f in read_directory(source).files:
        (into / f"{f.version:010d}_m{f.version}.sql").write_text(f"-- +goose Up\n{f.sql}")
    return into


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
    goose_dir = _goose_files(path, work / f"goose-{name}") if _peer("goose") else None

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

    async def goose(round_: int) -> None:
        if goose_dir is None:
            return
        url = await _fresh(admin, f"bench_goose_{round_}", pg)
        await _sql(url, *setup)
        times.setdefault("goose", []).append(_timed(_goose(url, pg, goose_dir, "up")))

    # Rounds in rotating order, best of each: a server's warm-up (its catalogs growing, its
    # caches filling) must not favour whichever side runs later.
    orders = [
        (floor, cli, library, goose),
        (library, goose, floor, cli),
        (goose, cli, library, floor),
    ]
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
    figures = {
        "read": statistics.median(read_times),
        "directory": statistics.median(dir_times),
        "interpreter": min(_timed([sys.executable, "-c", "pass"]) for _ in range(5)),
    }
    command = _ptah("status", "--db-url", url, "--migrations-dir", str(path), "--output", "json")
    peers: dict[str, list[str]] = {}
    if _peer("goose"):
        goose_dir = _goose_files(path, work / f"goose-status-{name}")
        await _goose_history(url, pg, goose_dir)
        peers["goose"] = _goose(url, pg, goose_dir, "status")
    migrate = _peer("migrate")
    if migrate:
        await _migrate_history(url, pg, revisions)
        peers["migrate"] = [
            str(migrate),
            "-path",
            str(path),
            "-database",
            _migrate_url(url, pg),
            "version",
        ]
    runs: dict[str, list[float]] = {"cli": [], **{k: [] for k in peers}}
    for _ in range(5):  # alternating, best of each
        runs["cli"].append(_timed(command))
        for key, argv in peers.items():
            runs[key].append(_timed(argv))
    figures.update({key: min(values) for key, values in runs.items()})
    return figures


async def _goose_history(url: str, pg: bool, directory: Path) -> None:
    """goose's own table holding every file of `directory` applied, as `goose up` leaves it."""
    _timed(_goose(url, pg, directory, "version"))  # creates goose_db_version
    versions = [int(name.split("_", 1)[0]) for name in os.listdir(directory)]
    db = await connect(url)
    try:
        truth = "true" if pg else "1"
        for start in range(0, len(versions), 1000):
            rows = ", ".join(f"({v}, {truth})" for v in versions[start : start + 1000])
            await db.execute(f"INSERT INTO goose_db_version (version_id, is_applied) VALUES {rows}")
    finally:
        await db.close()


def _migrate_url(url: str, pg: bool) -> str:
    parts = urlsplit(url)
    if pg:
        return f"{url}?sslmode=disable&x-migrations-table=gm_migrations"
    host = f"{parts.hostname or '127.0.0.1'}:{parts.port}"
    return f"mysql://{parts.username or 'root'}@tcp({host}){parts.path}?x-migrations-table=gm_migrations"


async def _migrate_history(url: str, pg: bool, version: int) -> None:
    """golang-migrate's table at `version`, clean: it holds one row, whatever the history."""
    await _sql(
        url,
        "CREATE TABLE gm_migrations (version BIGINT NOT NULL PRIMARY KEY, dirty BOOLEAN NOT NULL)",
        f"INSERT INTO gm_migrations VALUES ({version}, false)",
    )


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
    missed: list[str] = []
    try:
        with PostgresServer(work) as pg, MariaDBServer(work) as maria:
            for label, admin, is_pg in (
                ("PostgreSQL", pg.admin_url, True),
                ("MariaDB", maria.admin_url, False),
            ):
                a = await bench_apply(admin, is_pg, args.files, work)
                ratio_cli = a["cli"] / a["floor"]
                ratio_lib = a["library"] / a["floor"]
                goose = (
                    f", goose up {a['goose']:.3f}s (ptah up x{a['cli'] / a['goose']:.2f} of it,"
                    " target <= x1.00)"
                    if "goose" in a
                    else ", goose not built"
                )
                print(
                    f"{label:<10} apply {args.files} files: floor {a['floor']:.3f}s,"
                    f" ptah up {a['cli']:.3f}s (x{ratio_cli:.2f}),"
                    f" library {a['library']:.3f}s (x{ratio_lib:.2f}, target <= x1.50){goose}"
                )
                s = await bench_status(admin, is_pg, args.revisions, work)
                peers = "".join(
                    f", {label_} {s[key] * 1000:.0f} ms"
                    for key, label_ in (
                        ("goose", "goose status"),
                        ("migrate", "golang-migrate version (one row, no file)"),
                    )
                    if key in s
                )
                print(
                    f"{label:<10} status over {args.revisions} revisions: read+verdict"
                    f" {s['read'] * 1000:.1f} ms (target < 200 ms), directory read"
                    f" {s['directory'] * 1000:.1f} ms, ptah status end to end"
                    f" {s['cli'] * 1000:.0f} ms (target < 200 ms; the interpreter alone"
                    f" {s['interpreter'] * 1000:.0f} ms){peers}"
                )
                checks = {
                    f"{label} library apply <= x1.50 of the floor": ratio_lib <= 1.5,
                    f"{label} status read < 200 ms": s["read"] < 0.2,
                    f"{label} status end to end < 200 ms": s["cli"] < 0.2,
                }
                if "goose" in a:
                    checks[f"{label} ptah up <= goose up"] = a["cli"] <= a["goose"]
                missed += [name for name, held in checks.items() if not held]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not (_peer("goose") and _peer("migrate")):
        print(f"peers not built in {PEERS}: `make bench` builds them")
    print("within targets" if not missed else "OUTSIDE TARGETS: " + "; ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(asyncio.run(main()))
