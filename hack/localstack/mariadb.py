"""A throwaway MariaDB server from Debian's packages, on 127.0.0.1.

MariaDB is the MySQL-protocol engine packaged here (MySQL 8 is not). The server's root user
has no password and is reachable over TCP from 127.0.0.1 only; the data directory lives under
the stack's work directory and is removed when the server stops.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from localstack.process import OneProcessServer, Process, StackError, free_port, port_open, run


def _need(binary: str) -> str:
    path = shutil.which(binary) or (
        f"/usr/sbin/{binary}" if Path(f"/usr/sbin/{binary}").exists() else None
    )
    if path is None:
        raise StackError(f"{binary} not found (install Debian's mariadb-server package)")
    return path


class MariaDBServer(OneProcessServer):
    """Start with `with MariaDBServer(workdir) as db:`; `db.admin_url` reaches it as root."""

    engine = "mariadb"

    def __init__(
        self, workdir: Path, port: int | None = None, trusted_network: str | None = None
    ) -> None:
        self.workdir = workdir / "mariadb"
        self.port = port or free_port()
        self.trusted_network = trusted_network
        """A network (the real node's Pod subnet) whose clients log in as root too: a Pod's
        connection, DNATed to loopback, keeps its own source address."""
        self.datadir = self.workdir / "data"
        self.socket = self.workdir / "mariadb.sock"
        self._proc: Process | None = None

    @property
    def admin_url(self) -> str:
        return self.url_for("mysql")

    def url_for(self, database: str) -> str:
        return f"mysql://root@127.0.0.1:{self.port}/{database}"

    def start(self) -> MariaDBServer:
        install = _need("mariadb-install-db")
        server = _need("mariadbd")
        self.workdir.mkdir(parents=True, exist_ok=True)
        user = ["--user=root"] if os.geteuid() == 0 else []
        run(
            [
                install,
                "--no-defaults",
                f"--datadir={self.datadir}",
                *user,
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            "mariadb-install-db",
        )
        self._proc = Process(
            "mariadbd",
            [
                server,
                "--no-defaults",
                f"--datadir={self.datadir}",
                *user,
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                f"--socket={self.socket}",
                f"--pid-file={self.workdir / 'mariadb.pid'}",
                "--skip-name-resolve",
                "--innodb-flush-log-at-trx-commit=0",
                "--innodb-doublewrite=0",
                "--sync-binlog=0",
                "--max-connections=300",
                "--character-set-server=utf8mb4",
                "--collation-server=utf8mb4_general_ci",
            ],
            self.workdir / "mariadb.log",
        )
        self._proc.start()
        self._proc.wait_until(self._ready, 60, "accepting connections")
        if self.trusted_network is not None:
            self._trust(self.trusted_network)
        return self

    def _trust(self, network: str) -> None:
        """root from `network` (a /24: MariaDB's host patterns match by text), as root from
        127.0.0.1 is: no password, every right."""
        address, _, prefix = network.partition("/")
        if prefix != "24":
            raise StackError(f"{network}: only a /24 is written as a MariaDB host pattern here")
        pattern = address.rsplit(".", 1)[0] + ".%"
        client = _need("mariadb")
        run(
            [
                client,
                "--no-defaults",
                f"--socket={self.socket}",
                "-u",
                "root",
                "-e",
                f"CREATE USER IF NOT EXISTS 'root'@'{pattern}';"
                f" GRANT ALL PRIVILEGES ON *.* TO 'root'@'{pattern}' WITH GRANT OPTION;",
            ],
            "letting the Pod subnet log in to MariaDB",
        )

    def _ready(self) -> bool:
        if not port_open(self.port):
            return False
        client = shutil.which("mariadb") or shutil.which("mysql")
        if client is None:
            return True
        run(
            [
                client,
                "--no-defaults",
                "-h",
                "127.0.0.1",
                "-P",
                str(self.port),
                "-u",
                "root",
                "-e",
                "SELECT 1",
            ],
            "mariadb ping",
        )
        return True
