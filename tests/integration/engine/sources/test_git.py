"""Git sources against a real Git server (git http-backend): resolving refs, the advertisement
rules for commit ids, fetching a recorded commit again, and what a selection refuses."""

from __future__ import annotations

import pytest
from localstack.gitserver import GitRepo, GitServer

from ptah_operator.engine.sources import git
from ptah_operator.engine.sources.errors import (
    CommitNotAdvertisedError,
    CommitUnreachableError,
    RefNotFoundError,
    SourceRefusedError,
    SourceUnreachableError,
)
from ptah_operator.engine.sources.files import Credentials
from ptah_operator.engine.sources.git_refs import FetchBudget
from tests.support.sources import MIGRATIONS, MORE_MIGRATIONS

pytestmark = pytest.mark.integration

ALLOW_REACHABLE = "uploadpack.allowReachableSHA1InWant"
ALLOW_ANY = "uploadpack.allowAnySHA1InWant"


def in_db(files: dict[str, bytes]) -> dict[str, bytes | None]:
    return {f"db/{name}": data for name, data in files.items()}


@pytest.fixture
def repo(git_server: GitServer) -> GitRepo:
    """A repository whose main holds db/ with the migrations (plus a README at the root and a
    subdirectory in db/ that is not selected)."""
    repo = git_server.create_repo()
    repo.commit(
        {**in_db(MIGRATIONS), "db/old/0000000000_x.up.sql": b"-- not selected\n", "README": b"x"}
    )
    repo.push()
    return repo


def uploads(git_server: GitServer, repo: GitRepo) -> int:
    """How many fetches (POST git-upload-pack) the server has answered for `repo`."""
    return sum(1 for line in git_server.requests(repo.name) if line.startswith("POST "))


@pytest.mark.req("SRC-GIT-02", "SRC-GIT-03")
def test_a_branch_resolves_to_its_tip_and_selects_the_directorys_own_files(
    repo: GitRepo,
) -> None:
    found = git.resolve(repo.url, "main", "db")
    assert found.commit == repo.rev_parse("HEAD")
    assert found.files == MIGRATIONS  # db/old/ is a subdirectory: not selected
    assert found.ref_name == "refs/heads/main"
    assert git.resolve(repo.url, "refs/heads/main", None).files == {"README": b"x"}


@pytest.mark.req("SRC-GIT-02", "SRC-GIT-13")
def test_tags_resolve_to_the_commit_they_name(repo: GitRepo) -> None:
    tagged = repo.rev_parse("HEAD")
    tag_object = repo.tag("v1", annotated=True)
    repo.tag("v1-light")
    repo.commit(in_db(MORE_MIGRATIONS))
    repo.push()
    assert tag_object != tagged
    for ref in ("v1", "refs/tags/v1", "v1-light"):
        found = git.resolve(repo.url, ref, "db")
        assert found.commit == tagged
        assert found.files == MIGRATIONS
    assert git.resolve(repo.url, "main", "db").files == MORE_MIGRATIONS


def test_an_unknown_ref_is_not_found(repo: GitRepo) -> None:
    with pytest.raises(RefNotFoundError, match="no branch or tag nope"):
        git.resolve(repo.url, "nope", "db")


@pytest.mark.req("SRC-GIT-10", "SRC-GIT-11", "SRC-GIT-02")
def test_a_commit_id_at_a_branch_tip_resolves_and_an_ordinary_push_refuses_the_next(
    git_server: GitServer, repo: GitRepo
) -> None:
    pinned = repo.rev_parse("HEAD")
    assert git.resolve(repo.url, pinned, "db").commit == pinned
    repo.commit(in_db(MORE_MIGRATIONS))
    repo.push()
    before = uploads(git_server, repo)
    with pytest.raises(CommitNotAdvertisedError, match=pinned):
        git.resolve(repo.url, pinned, "db")
    assert uploads(git_server, repo) == before  # refused before anything was fetched


@pytest.mark.req("SRC-GIT-11")
def test_a_commit_not_at_a_tip_is_refused_at_the_first_resolve(
    git_server: GitServer, repo: GitRepo
) -> None:
    older = repo.rev_parse("HEAD")
    repo.commit({"README": b"y"})
    repo.push()
    before = uploads(git_server, repo)
    with pytest.raises(CommitNotAdvertisedError):
        git.resolve(repo.url, older, "db")
    assert uploads(git_server, repo) == before


@pytest.mark.req("SRC-GIT-10")
@pytest.mark.parametrize("allowance", [ALLOW_REACHABLE, ALLOW_ANY])
def test_a_server_that_gives_commits_by_id_resolves_any_of_them(
    repo: GitRepo, allowance: str
) -> None:
    older = repo.rev_parse("HEAD")
    repo.commit(in_db(MORE_MIGRATIONS))
    repo.push()
    repo.set_config(allowance, "true")
    found = git.resolve(repo.url, older, "db")
    assert (found.commit, found.files) == (older, MIGRATIONS)


@pytest.mark.req("SRC-GIT-10")
def test_a_lightweight_tag_on_a_commit_lets_it_be_named_by_id(repo: GitRepo) -> None:
    older = repo.rev_parse("HEAD")
    repo.tag("keep")
    repo.commit(in_db(MORE_MIGRATIONS))
    repo.push()
    assert git.resolve(repo.url, older, "db").commit == older


@pytest.mark.req("SRC-GIT-13")
def test_an_annotated_tag_holds_its_commit_on_a_server_without_fetch_by_id(
    repo: GitRepo,
) -> None:
    tagged = repo.rev_parse("HEAD")
    repo.tag("release-1", annotated=True)
    repo.commits(3)
    repo.push()
    with pytest.raises(CommitNotAdvertisedError):
        git.resolve(repo.url, tagged, "db")  # the id alone is refused here ...
    assert git.resolve(repo.url, "release-1", "db").commit == tagged  # ... the tag is not


@pytest.mark.req("SRC-GIT-06", "SRC-GIT-08")
def test_a_recorded_commit_is_fetched_through_the_ref_while_it_names_it(repo: GitRepo) -> None:
    commit = repo.rev_parse("HEAD")
    found = git.fetch_commit(repo.url, "main", commit, "db")
    assert (found.commit, found.files, found.ref_name) == (commit, MIGRATIONS, "refs/heads/main")


@pytest.mark.req("SRC-GIT-08")
def test_a_recorded_commit_is_fetched_by_id_where_the_server_allows_it(repo: GitRepo) -> None:
    commit = repo.rev_parse("HEAD")
    repo.commits(3)
    repo.push()
    repo.set_config(ALLOW_REACHABLE, "true")
    found = git.fetch_commit(repo.url, "main", commit, "db", FetchBudget(1, 1))
    assert (found.commit, found.files, found.ref_name) == (commit, MIGRATIONS, None)


@pytest.mark.req("SRC-GIT-08")
def test_deepening_along_the_ref_finds_an_older_commit(
    git_server: GitServer, repo: GitRepo
) -> None:
    commit = repo.rev_parse("HEAD")
    repo.commits(120)  # beyond the first two depths (50, 100)
    repo.push()
    before = uploads(git_server, repo)
    found = git.fetch_commit(repo.url, "main", commit, "db")
    assert (found.commit, found.files) == (commit, MIGRATIONS)
    assert uploads(git_server, repo) - before == 3  # depth 50, 100, then 200 holds it


@pytest.mark.req("SRC-GIT-08", "SRC-GIT-09")
def test_a_commit_beyond_the_fetch_budget_is_unreachable(repo: GitRepo) -> None:
    commit = repo.rev_parse("HEAD")
    repo.commits(30)
    repo.push()
    with pytest.raises(CommitUnreachableError, match="within the last 20 commits"):
        git.fetch_commit(repo.url, "main", commit, "db", FetchBudget(5, 20))
    with pytest.raises(CommitUnreachableError, match="2000 bytes"):
        git.fetch_commit(repo.url, "main", commit, "db", FetchBudget(max_bytes=2000))
    assert git.fetch_commit(repo.url, "main", commit, "db", FetchBudget(5, 40)).commit == commit


@pytest.mark.req("SRC-GIT-09")
def test_a_force_pushed_commit_is_unreachable(repo: GitRepo) -> None:
    base = repo.rev_parse("HEAD")
    recorded = repo.commit(in_db(MORE_MIGRATIONS))
    repo.push()
    repo.reset_hard(base)
    repo.commit({"README": b"rewritten"})
    repo.push(force=True)
    with pytest.raises(CommitUnreachableError, match="not in the history of main"):
        git.fetch_commit(repo.url, "main", recorded, "db")


@pytest.mark.req("SRC-GIT-09")
def test_a_commit_whose_ref_was_deleted_is_unreachable(repo: GitRepo) -> None:
    repo.checkout("feature", repo.rev_parse("HEAD"))
    recorded = repo.commit(in_db(MORE_MIGRATIONS))
    repo.push("feature")
    assert git.fetch_commit(repo.url, "feature", recorded, "db").files == MORE_MIGRATIONS
    repo.delete_remote_ref("refs/heads/feature")
    with pytest.raises(CommitUnreachableError, match="feature no longer names it"):
        git.fetch_commit(repo.url, "feature", recorded, "db")
    # A server that gives reachable commits by id does not give this one: nothing reaches it.
    repo.set_config(ALLOW_REACHABLE, "true")
    with pytest.raises(CommitUnreachableError, match=f"does not give commit {recorded}"):
        git.fetch_commit(repo.url, "feature", recorded, "db")


@pytest.mark.req("SRC-GIT-14")
def test_a_submodule_is_refused(repo: GitRepo) -> None:
    target = repo.rev_parse("HEAD")
    repo.gitlink("vendored", target)
    repo.gitlink("db/vendored", target)
    repo.commit()
    repo.push()
    with pytest.raises(SourceRefusedError, match="path vendored is a submodule"):
        git.resolve(repo.url, "main", "vendored")
    with pytest.raises(SourceRefusedError, match="path vendored is a submodule"):
        git.resolve(repo.url, "main", "vendored/db")
    with pytest.raises(SourceRefusedError, match="db holds a submodule 'vendored'"):
        git.resolve(repo.url, "main", "db")


@pytest.mark.req("SRC-GIT-14")
def test_an_lfs_pointer_is_refused(repo: GitRepo) -> None:
    pointer = (
        b"version https://git-lfs.github.com/spec/v1\n"
        b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        b"size 12345\n"
    )
    repo.commit({"db/0000000003_big.up.sql": pointer})
    repo.push()
    with pytest.raises(SourceRefusedError, match=r"0000000003_big\.up\.sql is a Git LFS pointer"):
        git.resolve(repo.url, "main", "db")


@pytest.mark.req("SRC-GIT-14")
def test_a_symlink_and_a_bad_name_are_refused(repo: GitRepo) -> None:
    repo.symlink("links/0001.sql", "../db/0000000001_users.up.sql")
    repo.commit({"odd/with space.sql": b"x"})
    repo.push()
    with pytest.raises(SourceRefusedError, match=r"symbolic link '0001\.sql'"):
        git.resolve(repo.url, "main", "links")
    with pytest.raises(SourceRefusedError, match="not a flat file name"):
        git.resolve(repo.url, "main", "odd")


def test_a_path_that_is_missing_or_a_file_is_refused(repo: GitRepo) -> None:
    with pytest.raises(SourceRefusedError, match="path nope does not exist"):
        git.resolve(repo.url, "main", "nope")
    with pytest.raises(SourceRefusedError, match="path README is not a directory"):
        git.resolve(repo.url, "main", "README")


@pytest.mark.req("SRC-POL-04")
def test_selected_files_over_max_bytes_are_refused_naming_the_rule(repo: GitRepo) -> None:
    size = sum(len(data) for data in MIGRATIONS.values())
    assert git.resolve(repo.url, "main", "db", max_bytes=size).files == MIGRATIONS
    with pytest.raises(SourceRefusedError, match="over the source policy's maxBytes"):
        git.resolve(repo.url, "main", "db", max_bytes=size - 1)


def test_basic_credentials(git_server: GitServer) -> None:
    repo = git_server.create_repo(auth=("bob", "h1dden-pw"))
    repo.commit(in_db(MIGRATIONS))
    repo.push()
    good = Credentials("bob", "h1dden-pw")
    assert git.resolve(repo.url, "main", "db", credentials=good).files == MIGRATIONS
    commit = repo.rev_parse("HEAD")
    assert git.fetch_commit(repo.url, "main", commit, "db", credentials=good).commit == commit
    with pytest.raises(SourceUnreachableError, match="asks for credentials"):
        git.resolve(repo.url, "main", "db")
    with pytest.raises(SourceUnreachableError, match="refused the credentials") as wrong:
        git.resolve(repo.url, "main", "db", credentials=Credentials("bob", "nope"))
    assert "h1dden" not in str(wrong.value)


def test_unreachable_servers_and_urls_with_credentials(git_server: GitServer) -> None:
    with pytest.raises(SourceUnreachableError, match="has no such repository"):
        git.resolve(git_server.url_for("absent"), "main", None)
    with pytest.raises(SourceUnreachableError, match="cannot be reached"):
        git.resolve("http://127.0.0.1:9/x.git", "main", None)
    with pytest.raises(SourceRefusedError, match="must not carry credentials") as refused:
        git.resolve("https://bob:secret@example.invalid/x.git", "main", None)
    assert "secret" not in str(refused.value)
    with pytest.raises(SourceRefusedError, match="must be an http://, https:// or ssh://"):
        git.resolve("git://example.invalid/x.git", "main", None)
    with pytest.raises(SourceUnreachableError, match=r"\(KnownHostsMissing\)"):
        git.resolve("ssh://git@example.invalid/x.git", "main", None)
