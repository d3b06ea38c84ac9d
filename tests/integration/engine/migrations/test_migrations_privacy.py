"""No server text on any stream: every `ptah migrations` command, on failing input against real
PostgreSQL and MariaDB, prints codes and positions only.

Each input carries a marker that the server repeats in its message (a missing table named
after it, a warning quoting it, a password made of it). Neither stdout nor stderr of any
command, in text or JSON, may hold the marker, the SQL, or the server's prose.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.integration.engine.migrations.mig_support import REPO, sql, write_dir

# Phrases of the servers' own messages (errors, warnings, notices, authentication).
SERVER_PROSE = (
    "doesn't exist",
    "does not exist",
    "access denied",
    "authentication failed",
    "syntax",
    "truncated",
    "unknown table",
    "skipping",
    "warning:",
    "select ",
    "drop table",
    "raise ",
)


@pytest.fixture(params=["postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest) -> str:
    name = "pg_url" if request.param == "postgresql" else "maria_url"
    url: str = request.getfixturevalue(name)
    return url


@pytest.fixture
async def shadow_url(db_url: str) -> AsyncIterator[str]:
    name = "s_" + secrets.token_hex(6)
    pg = db_url.startswith("postgres")
    admin = urlunsplit(urlsplit(db_url)._replace(path="/postgres" if pg else "/mysql"))
    await sql(admin, f'CREATE DATABASE "{name}"' if pg else f"CREATE DATABASE `{name}`")
    yield urlunsplit(urlsplit(db_url)._replace(path=f"/{name}"))
    await sql(
        admin,
        f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
        if pg
        else f"DROP DATABASE IF EXISTS `{name}`",
    )


def _run(*args: str) -> tuple[int, str]:
    """`ptah migrations ARGS` in a child process, Python warnings shown: exit code and both
    streams together."""
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    proc = subprocess.run(
        [sys.executable, "-m", "ptah_operator.engine.cli", "migrations", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=env,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def _files(marker: str, pg: bool) -> dict[str, str]:
    """Version 1 draws warnings quoting the marker; version 2 fails with a message naming it."""
    if pg:
        warn = (
            f"DO $$ BEGIN RAISE WARNING '{marker} warning'; RAISE NOTICE '{marker} notice'; END $$;\n"
            f"DROP TABLE IF EXISTS {marker}_gone;\n"
        )
    else:
        warn = f"DROP TABLE IF EXISTS {marker}_gone;\nSELECT CAST('{marker}' AS SIGNED);\n"
    return {
        "0000000001_warns.up.sql": warn,
        "0000000002_fails.up.sql": f"CREATE TABLE ok_table (id INT);\nSELECT * FROM {marker}_missing;\n",
    }


def _assert_clean(label: str, output: str, marker: str) -> None:
    lowered = output.lower()
    assert marker.lower() not in lowered, f"{label}: the marker reached the output:\n{output}"
    leaked = [p for p in SERVER_PROSE if p in lowered]
    assert not leaked, f"{label}: server or SQL text {leaked} in the output:\n{output}"


def _with_credentials(url: str, user: str, password: str) -> str:
    parts = urlsplit(url)
    netloc = f"{user}:{password}@{parts.hostname}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


@pytest.mark.req("PRIV-05", "RUN-17")
async def test_no_command_prints_server_text(db_url: str, shadow_url: str, tmp_path: Path) -> None:
    marker = "zqmark" + secrets.token_hex(4)
    pg = db_url.startswith("postgres")
    path = write_dir(tmp_path / "m", _files(marker, pg))
    only_warnings = write_dir(tmp_path / "w", dict(list(_files(marker, pg).items())[:1]))
    unsplittable = write_dir(tmp_path / "u", {"0000000001_open.up.sql": f"SELECT '{marker};\n"})
    bad_sum = write_dir(tmp_path / "s", {"0000000001_a.up.sql": f"SELECT '{marker}';\n"})
    (bad_sum / "ptah.sum").write_text("h1:" + "0" * 43 + "=\n0000000001_a.up.sql h1:x\n")
    bad_login = _with_credentials(db_url, marker + "user", marker + "pw")
    mode = ["--transaction-mode", "none"]
    runs: list[tuple[str, list[str]]] = [
        # The shadow replay warns and then fails: baseline refuses.
        ("baseline replay fails", ["baseline", "--db-url", db_url, "--shadow-db", shadow_url, "-d", str(path)]),
        ("up with warnings only", ["up", "--db-url", shadow_url, "-d", str(only_warnings), *mode]),
        ("up fails", ["up", "--db-url", db_url, "-d", str(path), *mode]),
        ("up again, dirty", ["up", "--db-url", db_url, "-d", str(path), *mode]),
        ("up in file mode", ["up", "--db-url", db_url, "-d", str(path)]),
        ("status, dirty", ["status", "--db-url", db_url, "-d", str(path)]),
        ("set refused", ["set", "--db-url", db_url, "-d", str(path), "--version", "1"]),
        ("repair refused", ["repair", "--db-url", db_url, "-d", str(path), "--version", "1", "--mark", "applied"]),
        ("repair", ["repair", "--db-url", db_url, "-d", str(path), "--version", "2", "--mark", "pending"]),
        ("baseline with history", ["baseline", "--db-url", db_url, "--shadow-db", shadow_url, "-d", str(path)]),
        ("up unsplittable", ["up", "--db-url", db_url, "-d", str(unsplittable), *mode]),
        ("hash refused", ["hash", "-d", str(bad_sum)]),
        ("hash unsplittable dir", ["hash", "-d", str(unsplittable)]),
        ("status bad login", ["status", "--db-url", bad_login, "-d", str(path)]),
        ("up bad login", ["up", "--db-url", bad_login, "-d", str(path), *mode]),
        ("set bad login", ["set", "--db-url", bad_login, "-d", str(path), "--version", "1"]),
        ("repair bad login", ["repair", "--db-url", bad_login, "-d", str(path), "--version", "2", "--mark", "pending"]),
        ("baseline bad login", ["baseline", "--db-url", db_url, "--shadow-db", bad_login, "-d", str(path)]),
        ("bad URL", ["status", "--db-url", marker + "://" + marker + "@x/y", "-d", str(path)]),
    ]  # fmt: skip
    codes: dict[str, int] = {}
    docs: dict[str, dict[str, object]] = {}
    for label, args in runs:
        args = [a if a != "-d" else "--migrations-dir" for a in args]
        for output in ("json", "text"):
            code, out = _run(*args, "--output", output)
            _assert_clean(f"{label} ({output})", out, marker)
            if output == "json":
                docs[label] = json.loads(out)
            codes.setdefault(label, code)
    # The inputs did fail where they were meant to (so the check above saw real answers).
    assert codes["baseline replay fails"] != 0
    assert codes["up with warnings only"] == 0
    assert codes["up fails"] == 4
    assert codes["status, dirty"] == 3
    assert codes["up bad login"] == 6
    assert codes["hash refused"] == 3
    # Warnings are reported by code and position: PostgreSQL's RAISE WARNING (01000) in
    # statement 1, MariaDB's truncation warning (1292) in statement 2; notes are not kept.
    expected = {"version": 1, "statementIndex": 1, "line": 1, "code": "01000"}
    if not pg:
        expected = {"version": 1, "statementIndex": 2, "line": 2, "code": "1292"}
    assert docs["up with warnings only"]["warnings"] == [expected]
