"""SSH repositories: which URLs are SSH, where they lead, the `ssh` command line that pins the
Secret's host keys, and how an ssh failure is named (by code, never by ssh's text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptah_operator.engine.sources.errors import SourceRefusedError
from ptah_operator.engine.sources.git_ssh import (
    SshCredentials,
    SshLocation,
    is_ssh,
    parse_ssh_repository,
    ssh_arguments,
    ssh_failure,
)


def test_which_repositories_are_ssh() -> None:
    assert is_ssh("ssh://git@git.example/acme/r.git")
    assert is_ssh("git@git.example:acme/r.git")
    assert not is_ssh("https://git.example/acme/r.git")
    assert not is_ssh("https://git@git.example:443/acme/r.git")
    assert not is_ssh("/srv/git/r.git")


def test_where_an_ssh_repository_leads() -> None:
    assert parse_ssh_repository("ssh://git@Git.Example:2222/acme/r.git") == SshLocation(
        "git.example", 2222, "git", "/acme/r.git"
    )
    assert parse_ssh_repository("ssh://git.example/r.git") == SshLocation(
        "git.example", None, None, "/r.git"
    )
    assert parse_ssh_repository("git@git.example:acme/r.git") == SshLocation(
        "git.example", None, "git", "acme/r.git"
    )


@pytest.mark.parametrize(
    "repository",
    [
        "ssh://git:pw@git.example/r.git",
        "ssh://git@git.example/",
        "ssh://git@-oProxyCommand=x/r.git",
        "ssh://git@git.example/r.git?x=1",
        "ssh://git@git.example:99999/r.git",
        "ssh://git@git.example/r\n.git",
    ],
)
def test_ssh_repositories_refused_without_repeating_them(repository: str) -> None:
    with pytest.raises(SourceRefusedError) as refused:
        parse_ssh_repository(repository)
    assert "pw" not in str(refused.value)
    assert "git.example" not in str(refused.value)


def test_the_ssh_command_trusts_only_the_secrets_files() -> None:
    creds = SshCredentials(Path("/creds/ssh-privatekey"), Path("/creds/known_hosts"))
    args = ssh_arguments(creds, SshLocation("git.example", 2222, "git", "/r.git"))
    assert args[:3] == ["ssh", "-F", "/dev/null"]
    assert args[-2:] == ["--", "git.example"]
    options = {args[i + 1] for i, arg in enumerate(args) if arg == "-o"}
    assert {
        "StrictHostKeyChecking=yes",
        "UserKnownHostsFile=/creds/known_hosts",
        "GlobalKnownHostsFile=/dev/null",
        "IdentitiesOnly=yes",
        "IdentityAgent=none",
        "IdentityFile=/creds/ssh-privatekey",
        "BatchMode=yes",
    } <= options
    assert args[args.index("-p") : args.index("-p") + 2] == ["-p", "2222"]
    assert args[args.index("-l") : args.index("-l") + 2] == ["-l", "git"]


def test_ssh_failures_are_named_by_code() -> None:
    changed = [
        b"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
        b"@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @",
        b"Offending ED25519 key in /creds/known_hosts:1",
        b"Host key verification failed.",
    ]
    refused = ssh_failure("git.example", 255, changed)
    assert "(HostKeyNotPinned)" in refused.message
    assert "Offending" not in refused.message
    assert (
        "(SshKeyRefused)"
        in ssh_failure("h", 255, [b"git@h: Permission denied (publickey)."]).message
    )
    assert (
        "cannot be reached" in ssh_failure("h", 255, [b"ssh: connect to host h: refused"]).message
    )
    # The server's own exit: its words are not taken, whatever they say.
    server = ssh_failure("h", 128, [b"Host key verification failed.", b"fatal: nope"])
    assert "HostKeyNotPinned" not in server.message
    assert "nope" not in server.message
