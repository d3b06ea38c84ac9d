"""Git over SSH: the repository's location, the Secret's key and pinned host keys, and the
`ssh` command dulwich runs.

Repository forms (what `git` itself accepts): `ssh://[user@]host[:port]/path` and the scp-like
`user@host:path` (a path without a leading `/` is relative to the login's home directory).
No password in the URL, no query or fragment, a host of letters, digits, `.` and `-`.

Credentials are a directory (the mounted Secret) holding `ssh-privatekey` (the key of a
`kubernetes.io/ssh-auth` Secret) and `known_hosts` (OpenSSH's format: the host keys the
server may show). A host key is accepted only if that file pins it: there is no trust on
first use, no `~/.ssh`, no system-wide known hosts, no ssh config file and no agent. An SSH
repository with no Secret, or a Secret with no usable `known_hosts`, is refused before any
connection is made.

dulwich speaks the Git protocol (v0, as over HTTP: only its advertisement says whether the
server gives commits by id) through its `SubprocessSSHVendor` contract; the process is
OpenSSH's `ssh`, run with `-F /dev/null` and every option that decides trust given on the
command line (`PinnedSshVendor`). Why not paramiko: it is not a dependency of the image, and
OpenSSH's own host-key checking (`StrictHostKeyChecking=yes` against one file) is the
behaviour platform teams already know and audit.

Failures are reported by a code in the message, never with the text ssh or the server wrote:
`HostKeyNotPinned`, `KnownHostsMissing`, `SshKeyMissing`, `SshKeyRefused`.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from dulwich.client import SubprocessSSHVendor, SubprocessWrapper

from ptah_operator.engine.sources.errors import SourceRefusedError, SourceUnreachableError

KEY_FILE = "ssh-privatekey"
KNOWN_HOSTS_FILE = "known_hosts"
SSH_COMMAND = "ssh"
CONNECT_TIMEOUT = 30
ALIVE_INTERVAL = 15
ALIVE_COUNT = 4
"""A server that stops answering is given up after about a minute."""
MAX_STDERR_BYTES = 64 * 1024

HOST_KEY_NOT_PINNED = "HostKeyNotPinned"
KNOWN_HOSTS_MISSING = "KnownHostsMissing"
KEY_MISSING = "SshKeyMissing"
KEY_REFUSED = "SshKeyRefused"

_SCP_LIKE = re.compile(r"^(?P<user>[A-Za-z0-9._-]+)@(?P<host>[A-Za-z0-9.-]+):(?P<path>.+)$")
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})$")
_USER = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_BAD_PATH = re.compile(r"[\x00-\x1f\x7f]")


def is_ssh(repository: str) -> bool:
    """An `ssh://` URL or the scp-like `user@host:path` (not another `scheme://`)."""
    if repository.startswith("ssh://"):
        return True
    return "://" not in repository and bool(_SCP_LIKE.match(repository))


@dataclass(frozen=True)
class SshLocation:
    host: str
    port: int | None
    username: str | None
    path: str

    @property
    def shown(self) -> str:
        """`host[:port]`, as messages name the server."""
        return self.host if self.port is None else f"{self.host}:{self.port}"


def parse_ssh_repository(repository: str) -> SshLocation:
    """The location an SSH repository names; SourceRefusedError (never repeating the URL)."""
    if len(repository) > 2048:
        raise SourceRefusedError("the repository URL is too long")
    if _BAD_PATH.search(repository) or any(c.isspace() for c in repository):
        raise SourceRefusedError("the repository URL holds spaces or control characters")
    if repository.startswith("ssh://"):
        try:
            parts = urlsplit(repository)
            port = parts.port
        except ValueError:
            raise SourceRefusedError("the ssh:// repository URL cannot be read") from None
        if parts.password is not None:
            raise SourceRefusedError("the repository URL must not carry a password")
        if parts.query or parts.fragment:
            raise SourceRefusedError("the repository URL must have no query or fragment")
        host = parts.hostname or ""
        user = unquote(parts.username) if parts.username is not None else None
        path = unquote(parts.path)
    else:
        match = _SCP_LIKE.match(repository)
        if match is None:
            raise SourceRefusedError("the repository is not an ssh:// or user@host:path URL")
        host, user, path, port = match["host"], match["user"], match["path"], None
    if not _HOST.match(host) or ".." in host:
        raise SourceRefusedError("the SSH repository's host must be a host name or an address")
    if user is not None and not _USER.match(user):
        raise SourceRefusedError("the SSH repository's user name holds characters not allowed")
    if not path.strip("/") or _BAD_PATH.search(path):
        raise SourceRefusedError("the SSH repository's path is empty or holds control characters")
    return SshLocation(host=host.lower(), port=port, username=user, path=path)


@dataclass(frozen=True)
class SshCredentials:
    """The Secret's files: the private key and the pinned host keys. Paths only: the key is
    read by `ssh`, never by this process."""

    private_key: Path
    known_hosts: Path


def read_ssh_credentials(directory: Path | None) -> SshCredentials:
    """The key and the pins from a mounted Secret; refused (SourceUnreachable, naming the
    code) when there is no Secret, no `known_hosts` with a host key in it, or no key."""
    if directory is None:
        raise SourceUnreachableError(
            "an SSH repository needs a Secret with known_hosts and ssh-privatekey"
            f" (spec.git.secretRef) ({KNOWN_HOSTS_MISSING})"
        )
    known_hosts = directory / KNOWN_HOSTS_FILE
    try:
        pins = known_hosts.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise SourceUnreachableError(
            f"the Secret holds no readable known_hosts ({KNOWN_HOSTS_MISSING})"
        ) from None
    if not any(_is_pin(line) for line in pins.splitlines()):
        raise SourceUnreachableError(
            f"the Secret's known_hosts pins no host key ({KNOWN_HOSTS_MISSING})"
        )
    key = directory / KEY_FILE
    if not key.is_file():
        raise SourceUnreachableError(f"the Secret holds no {KEY_FILE} ({KEY_MISSING})")
    return SshCredentials(private_key=key, known_hosts=known_hosts)


def _is_pin(line: str) -> bool:
    fields = line.split()
    return len(fields) >= 3 and not fields[0].startswith("#")


def ssh_arguments(credentials: SshCredentials, location: SshLocation) -> list[str]:
    """The `ssh` command line up to (not including) the remote command. Every option that
    decides what is trusted is here, and no file but these two is read for it."""
    options = {
        "StrictHostKeyChecking": "yes",
        "UserKnownHostsFile": str(credentials.known_hosts),
        "GlobalKnownHostsFile": "/dev/null",
        "CheckHostIP": "no",
        "UpdateHostKeys": "no",
        "HashKnownHosts": "no",
        "IdentitiesOnly": "yes",
        "IdentityAgent": "none",
        "IdentityFile": str(credentials.private_key),
        "BatchMode": "yes",
        "PasswordAuthentication": "no",
        "KbdInteractiveAuthentication": "no",
        "ForwardAgent": "no",
        "ForwardX11": "no",
        "ClearAllForwardings": "yes",
        "ControlMaster": "no",
        "ControlPath": "none",
        "ProxyCommand": "none",
        "ConnectTimeout": str(CONNECT_TIMEOUT),
        "ServerAliveInterval": str(ALIVE_INTERVAL),
        "ServerAliveCountMax": str(ALIVE_COUNT),
    }
    args = [SSH_COMMAND, "-F", "/dev/null", "-T", "-x"]
    for name, value in options.items():
        args += ["-o", f"{name}={value}"]
    if location.port is not None:
        args += ["-p", str(location.port)]
    if location.username is not None:
        args += ["-l", location.username]
    return [*args, "--", location.host]


class PinnedSshVendor(SubprocessSSHVendor):
    """dulwich's subprocess vendor, with the command line of `ssh_arguments` in place of the
    caller's: what dulwich passes for host, port and user must match the location, and a key
    file, an ssh command or a password from elsewhere is never taken. The environment is
    reduced to PATH and a C locale (no agent socket, no GIT_SSH*)."""

    def __init__(self, credentials: SshCredentials, location: SshLocation) -> None:
        self.credentials = credentials
        self.location = location
        self.processes: list[_Ssh] = []

    def run_command(
        self,
        host: str,
        command: bytes,
        username: str | None = None,
        port: int | None = None,
        password: str | None = None,
        key_filename: str | None = None,
        ssh_command: str | None = None,
        protocol_version: int | None = None,
    ) -> SubprocessWrapper:
        if (host, port, username) != (
            self.location.host,
            self.location.port,
            self.location.username,
        ):
            raise SourceRefusedError("the SSH connection asked for is not the repository's")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
        proc = subprocess.Popen(
            [*ssh_arguments(self.credentials, self.location), command.decode("utf-8")],
            bufsize=0,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        ssh = _Ssh(proc)
        self.processes.append(ssh)
        return ssh

    def failure(self, shown: str, stderr_lines: Iterable[bytes] = ()) -> SourceUnreachableError:
        """Why the last `ssh` ended, by code: read from its exit status and its own words,
        never repeated."""
        lines = list(stderr_lines)
        exited: int | None = None
        if self.processes:
            ssh = self.processes[-1]
            try:
                exited = ssh.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                exited = None
            lines += ssh.stderr_tail()
        return ssh_failure(shown, exited, lines)


class _Ssh(SubprocessWrapper):
    """The `ssh` process as dulwich reads and writes it. Its stderr is drained by a thread
    into a bounded buffer (ssh blocks on a full pipe otherwise, and dulwich closes the pipe
    before a failure is classified); dulwich is given none of it to quote."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        super().__init__(proc)
        self._tail = bytearray()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    @property
    def stderr(self) -> io.BytesIO:
        return io.BytesIO()

    def _drain(self) -> None:
        pipe = self.proc.stderr
        if pipe is None:
            return
        try:
            for chunk in iter(lambda: pipe.read(4096), b""):
                if len(self._tail) < MAX_STDERR_BYTES:
                    self._tail += chunk[: MAX_STDERR_BYTES - len(self._tail)]
        except (OSError, ValueError):
            return

    def stderr_tail(self) -> list[bytes]:
        self._reader.join(timeout=5)
        return bytes(self._tail).splitlines()


def ssh_failure(shown: str, exited: int | None, lines: Iterable[bytes]) -> SourceUnreachableError:
    """The error for an `ssh` that ended with `exited` having written `lines`. Exit 255 is ssh's
    own failure; the phrases looked for are OpenSSH's (LC_ALL=C), never the server's text."""
    text = b"\n".join(lines)
    if exited == 255:
        if b"Host key verification failed" in text:
            return SourceUnreachableError(
                f"the SSH server {shown} showed a host key the Secret's known_hosts does not"
                f" pin ({HOST_KEY_NOT_PINNED})"
            )
        if b"Permission denied" in text:
            return SourceUnreachableError(
                f"the SSH server {shown} refused the Secret's key ({KEY_REFUSED})"
            )
        if b"Load key" in text or b"invalid format" in text:
            return SourceUnreachableError(
                f"the Secret's {KEY_FILE} is not a private key ssh can use ({KEY_REFUSED})"
            )
        return SourceUnreachableError(f"the SSH server {shown} cannot be reached")
    return SourceUnreachableError(
        f"the Git server {shown} ended the SSH session (no such repository, or access denied)"
    )
