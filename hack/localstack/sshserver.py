"""A throwaway Git server over SSH: Debian's `sshd` on 127.0.0.1 serving bare repositories.

`SshGitServer(workdir, root)` starts `sshd -D -e` with its own host key, its own config and its
own authorized keys, on a free loopback port. Every key it accepts runs a forced `git-shell`
command, so a client can only run `git-upload-pack` (and the other git-shell verbs) on a
repository path; there is no shell, no forwarding, no agent. It serves the bare repositories
under `root` (a `GitServer`'s, so a `GitRepo` made there is reachable over HTTP and SSH):
`url_for(repo_name)` is `ssh://USER@127.0.0.1:PORT/<root>/<name>.git`, `scp_url_for` the
scp-like spelling (port 22 only, so used for parsing, not for connecting).

`client_files(directory)` writes what a Secret for this server holds: `ssh-privatekey` (a key
the server accepts) and `known_hosts` (the server's host key pinned for `[127.0.0.1]:PORT`).
`other_host_key_line()` is a known_hosts line for the same host with a key the server does not
have: a wrong pin.

sshd refuses to run unless it is started by its absolute path and, as root, finds its
privilege-separation directory (`/run/sshd`, made here when missing). As root the login user
is root with `PermitRootLogin forced-commands-only`; as another user, that user.
"""

from __future__ import annotations

import getpass
import os
import secrets
import shutil
from pathlib import Path

from localstack.process import OneProcessServer, Process, StackError, free_port, port_open, run

SSHD = "/usr/sbin/sshd"
GIT_SHELL = "/usr/bin/git-shell"


class SshGitServer(OneProcessServer):
    """`with SshGitServer(workdir, repos_root) as ssh:` ... `ssh.url_for(name)`."""

    def __init__(self, workdir: Path, root: Path, port: int | None = None) -> None:
        self.workdir = workdir / f"sshd-{secrets.token_hex(3)}"
        self.root = root
        self.port = port or free_port()
        self.user = getpass.getuser()
        self._proc: Process | None = None

    @property
    def host_key(self) -> Path:
        return self.workdir / "ssh_host_ed25519_key"

    @property
    def client_key(self) -> Path:
        return self.workdir / "client_ed25519"

    @property
    def log_path(self) -> Path:
        return self.workdir / "sshd.log"

    @property
    def known_host(self) -> str:
        """The host as known_hosts names it (a port other than 22 is bracketed)."""
        return f"[127.0.0.1]:{self.port}"

    def url_for(self, name: str) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{self.root}/{name}.git"

    def scp_url_for(self, name: str) -> str:
        return f"{self.user}@127.0.0.1:{self.root}/{name}.git"

    def known_hosts_line(self) -> str:
        public = Path(f"{self.host_key}.pub").read_text().split()
        return f"{self.known_host} {public[0]} {public[1]}\n"

    def other_host_key_line(self) -> str:
        """A pin for this host with a key the server does not hold."""
        other = self.workdir / f"other-{secrets.token_hex(3)}"
        _keygen(other)
        public = Path(f"{other}.pub").read_text().split()
        return f"{self.known_host} {public[0]} {public[1]}\n"

    def client_files(
        self, directory: Path, *, known_hosts: str | None = None, key: bool = True
    ) -> Path:
        """A Secret's files for this server in `directory`: the client key (unless `key` is
        False) and `known_hosts` (None: the server's true host key; else that text)."""
        directory.mkdir(parents=True, exist_ok=True)
        if key:
            target = directory / "ssh-privatekey"
            shutil.copyfile(self.client_key, target)
            target.chmod(0o600)
        (directory / "known_hosts").write_text(
            self.known_hosts_line() if known_hosts is None else known_hosts
        )
        return directory

    def start(self) -> SshGitServer:
        if not Path(SSHD).exists() or not Path(GIT_SHELL).exists():
            raise StackError(f"{SSHD} and {GIT_SHELL} are needed (Debian's openssh-server, git)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.workdir.chmod(0o700)
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        _keygen(self.host_key)
        _keygen(self.client_key)
        public = Path(f"{self.client_key}.pub").read_text().strip()
        authorized = self.workdir / "authorized_keys"
        # The forced command: git-shell runs only git's own server verbs on the path asked for.
        authorized.write_text(
            f'restrict,command="{GIT_SHELL} -c \\"$SSH_ORIGINAL_COMMAND\\"" {public}\n'
        )
        authorized.chmod(0o600)
        config = self.workdir / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    "ListenAddress 127.0.0.1",
                    f"Port {self.port}",
                    f"HostKey {self.host_key}",
                    f"AuthorizedKeysFile {authorized}",
                    "PidFile none",
                    "UsePAM no",
                    "StrictModes no",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PubkeyAuthentication yes",
                    "PermitRootLogin forced-commands-only",
                    f"AllowUsers {self.user}",
                    "AllowAgentForwarding no",
                    "AllowTcpForwarding no",
                    "X11Forwarding no",
                    "PermitTTY no",
                    "PrintMotd no",
                    "AcceptEnv GIT_PROTOCOL",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        run([SSHD, "-t", "-f", str(config)], "sshd -t")
        self._proc = Process(
            "sshd", [SSHD, "-D", "-e", "-f", str(config)], self.log_path, env=dict(os.environ)
        )
        self._proc.start()
        self._proc.wait_until(lambda: port_open(self.port), 30, "listening")
        return self


def _keygen(path: Path) -> None:
    run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ptah-test", "-f", str(path)],
        "ssh-keygen",
    )
