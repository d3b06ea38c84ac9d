"""Git sources over SSH against a real `sshd` (Debian's openssh-server) serving the same bare
repositories as the HTTP Git server: branch, tag and commit; the Secret's pinned host key is
the only one accepted; no Secret, no known_hosts, or a refused key are refused by code."""

from __future__ import annotations

from pathlib import Path

import pytest
from localstack.gitserver import GitRepo, GitServer
from localstack.sshserver import SshGitServer

from ptah_operator.engine.sources import git
from ptah_operator.engine.sources.errors import SourceUnreachableError
from ptah_operator.engine.sources.git_ssh import SshCredentials, read_ssh_credentials
from tests.support.sources import MIGRATIONS, MORE_MIGRATIONS

pytestmark = pytest.mark.integration

# What ssh writes when it refuses a key; none of it may reach a message.
SSH_TEXT = ("IDENTIFICATION", "known_hosts:", "SHA256:", "Permission denied", "@@@", "ssh-keygen")


def in_db(files: dict[str, bytes]) -> dict[str, bytes | None]:
    return {f"db/{name}": data for name, data in files.items()}


@pytest.fixture
def repo(git_server: GitServer) -> GitRepo:
    repo = git_server.create_repo()
    repo.commit({**in_db(MIGRATIONS), "README": b"x"})
    repo.push()
    return repo


@pytest.fixture
def secret(ssh_git_server: SshGitServer, tmp_path: Path) -> SshCredentials:
    return read_ssh_credentials(ssh_git_server.client_files(tmp_path / "secret"))


def assert_no_ssh_text(message: str) -> None:
    for text in SSH_TEXT:
        assert text not in message


@pytest.mark.req("SRC-GIT-02", "SRC-GIT-03")
def test_a_branch_over_ssh_resolves_to_its_tip_with_the_pinned_host_key(
    repo: GitRepo, ssh_git_server: SshGitServer, secret: SshCredentials
) -> None:
    url = ssh_git_server.url_for(repo.name)
    found = git.resolve(url, "main", "db", credentials=secret)
    assert found.commit == repo.rev_parse("HEAD")
    assert found.files == MIGRATIONS
    assert found.ref_name == "refs/heads/main"


@pytest.mark.req("SRC-GIT-02", "SRC-GIT-13")
def test_a_tag_and_a_commit_over_ssh_name_their_commit(
    repo: GitRepo, ssh_git_server: SshGitServer, secret: SshCredentials
) -> None:
    url = ssh_git_server.url_for(repo.name)
    tagged = repo.rev_parse("HEAD")
    repo.tag("v1", annotated=True)
    repo.commit(in_db(MORE_MIGRATIONS))
    repo.push()
    found = git.resolve(url, "v1", "db", credentials=secret)
    assert (found.commit, found.files) == (tagged, MIGRATIONS)
    tip = repo.rev_parse("HEAD")
    by_id = git.resolve(url, tip, "db", credentials=secret)
    assert (by_id.commit, by_id.files, by_id.ref_name) == (tip, MORE_MIGRATIONS, None)


@pytest.mark.req("SRC-GIT-08", "SRC-GIT-09")
def test_a_recorded_commit_is_fetched_again_over_ssh_along_the_history(
    repo: GitRepo, ssh_git_server: SshGitServer, secret: SshCredentials
) -> None:
    url = ssh_git_server.url_for(repo.name)
    recorded = repo.rev_parse("HEAD")
    repo.commits(3)
    repo.push()
    found = git.fetch_commit(url, "main", recorded, "db", credentials=secret)
    assert (found.commit, found.files) == (recorded, MIGRATIONS)


def test_a_host_key_the_secret_does_not_pin_is_refused_by_code(
    repo: GitRepo, ssh_git_server: SshGitServer, tmp_path: Path
) -> None:
    wrong = ssh_git_server.client_files(
        tmp_path / "wrong", known_hosts=ssh_git_server.other_host_key_line()
    )
    with pytest.raises(SourceUnreachableError, match=r"\(HostKeyNotPinned\)") as refused:
        git.resolve(
            ssh_git_server.url_for(repo.name), "main", "db", credentials=read_ssh_credentials(wrong)
        )
    assert_no_ssh_text(refused.value.message)
    # A pin for another host only is no pin for this one: no trust on first use.
    other_host = ssh_git_server.client_files(
        tmp_path / "other",
        known_hosts=ssh_git_server.known_hosts_line().replace("127.0.0.1", "127.0.0.2"),
    )
    with pytest.raises(SourceUnreachableError, match=r"\(HostKeyNotPinned\)"):
        git.resolve(
            ssh_git_server.url_for(repo.name),
            "main",
            "db",
            credentials=read_ssh_credentials(other_host),
        )


def test_without_known_hosts_nothing_is_tried(
    repo: GitRepo, ssh_git_server: SshGitServer, tmp_path: Path
) -> None:
    empty = ssh_git_server.client_files(tmp_path / "empty", known_hosts="# nothing pinned\n")
    with pytest.raises(SourceUnreachableError, match=r"\(KnownHostsMissing\)"):
        read_ssh_credentials(empty)
    (empty / "known_hosts").unlink()
    with pytest.raises(SourceUnreachableError, match=r"\(KnownHostsMissing\)"):
        read_ssh_credentials(empty)
    with pytest.raises(SourceUnreachableError, match=r"\(KnownHostsMissing\)"):
        read_ssh_credentials(None)
    with pytest.raises(SourceUnreachableError, match=r"\(KnownHostsMissing\)"):
        git.resolve(ssh_git_server.url_for(repo.name), "main", "db")


def test_a_key_the_server_does_not_accept_is_refused_by_code(
    repo: GitRepo, ssh_git_server: SshGitServer, tmp_path: Path
) -> None:
    other = ssh_git_server.client_files(tmp_path / "other-key")
    stranger = SshGitServer(tmp_path, ssh_git_server.root)
    stranger.workdir.mkdir(parents=True)
    from localstack.sshserver import _keygen

    _keygen(stranger.client_key)
    (other / "ssh-privatekey").write_bytes(stranger.client_key.read_bytes())
    with pytest.raises(SourceUnreachableError, match=r"\(SshKeyRefused\)") as refused:
        git.resolve(
            ssh_git_server.url_for(repo.name), "main", "db", credentials=read_ssh_credentials(other)
        )
    assert_no_ssh_text(refused.value.message)


def test_a_missing_repository_over_ssh_is_unreachable_without_the_servers_words(
    ssh_git_server: SshGitServer, secret: SshCredentials
) -> None:
    with pytest.raises(SourceUnreachableError, match="ended the SSH session") as refused:
        git.resolve(ssh_git_server.url_for("no-such-repo"), "main", None, credentials=secret)
    assert "does not appear" not in refused.value.message
    assert "fatal" not in refused.value.message
