"""A throwaway PostgreSQL server from Debian's packages, on 127.0.0.1.

As root the server runs as the `postgres` user (PostgreSQL refuses to run as root); the data
directory lives under the stack's work directory and is removed when the server stops.
`fsync=off`: the data is disposable and tests run faster without it. With `trusted_network`
(the real node's Pod subnet) connections from there are trusted too: Pods reach the server
through the node's DNAT to 127.0.0.1 with their own source address.
"""

from __future__ import annotations

import glob
import os
import pwd
from pathlib import Path

from localstack.process import OneProcessServer, Process, StackError, free_port, port_open, run

ADMIN_USER = "postgres"


def find_bindir() -> Path:
    """The newest installed PostgreSQL server's bin directory."""
    override = os.environ.get("PTAH_PG_BINDIR")
    if override:
        return Path(override)
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/postgres"),
        key=lambda p: int(Path(p).parent.parent.name),
    )
    if not candidates:
        raise StackError(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin"
            " (install Debian's postgresql package, or set PTAH_PG_BINDIR)"
        )
    return Path(candidates[-1]).parent


class PostgresServer(OneProcessServer):
    """Start with `with PostgresServer(workdir) as pg:`; `pg.admin_url` reaches it as superuser."""

    engine = "postgresql"

    def __init__(
        self, workdir: Path, port: int | None = None, trusted_network: str | None = None
    ) -> None:
        self.workdir = workdir / "postgres"
        self.trusted_network = trusted_network
        self.port = port or free_port()
        self.bindir = find_bindir()
        self.datadir = self.workdir / "data"
        self._proc: Process | None = None

    @property
    def admin_url(self) -> str:
        return self.url_for("postgres")

    def url_for(self, database: str) -> str:
        return f"postgresql://{ADMIN_USER}@127.0.0.1:{self.port}/{database}"

    def _as_postgres(self, argv: list[str]) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", "postgres", "--", *argv]
        return argv

    def start(self) -> PostgresServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            entry = pwd.getpwnam("postgres")
            for path in (self.workdir.parent, self.workdir):
                path.chmod(0o755)
            os.chown(self.workdir, entry.pw_uid, entry.pw_gid)
        run(
            self._as_postgres(
                [
                    str(self.bindir / "initdb"),
                    "-D",
                    str(self.datadir),
                    "-U",
                    ADMIN_USER,
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "--no-sync",
                ]
            ),
            "initdb",
        )
        if self.trusted_network is not None:
            with (self.datadir / "pg_hba.conf").open("a") as hba:
                hba.write(f"host all all {self.trusted_network} trust\n")
        self._proc = Process(
            "postgres",
            self._as_postgres(
                [
                    str(self.bindir / "postgres"),
                    "-D",
                    str(self.datadir),
                    "-p",
                    str(self.port),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    f"unix_socket_directories={self.datadir}",
                    "-c",
                    "fsync=off",
                    "-c",
                    "synchronous_commit=off",
                    "-c",
                    "full_page_writes=off",
                    "-c",
                    "max_connections=200",
                ]
            ),
            self.workdir / "postgres.log",
        )
        self._proc.start()
        self._proc.wait_until(self._ready, 30, "accepting connections")
        return self

    def _ready(self) -> bool:
        if not port_open(self.port):
            return False
        result = run(
            [str(self.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
            "pg_isready",
        )
        return result.returncode == 0
