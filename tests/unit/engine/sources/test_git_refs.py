"""What a Git advertisement says and what a ref means against it (no server needed)."""

from __future__ import annotations

import pytest

from ptah_operator.engine.sources.errors import (
    CommitNotAdvertisedError,
    RefNotFoundError,
    SourceRefusedError,
    SourceUnreachableError,
)
from ptah_operator.engine.sources.git_refs import (
    Advertisement,
    FetchBudget,
    normalize_path,
    parse_advertisement,
    pkt_lines,
    resolve_ref,
)

C1 = "1" * 40
C2 = "2" * 40
C3 = "3" * 40
TAG_OBJECT = "4" * 40


def _pkt(text: bytes) -> bytes:
    return b"%04x" % (len(text) + 4) + text


def advertisement_body(caps: bytes = b"multi_ack shallow symref=HEAD:refs/heads/main") -> bytes:
    return b"".join(
        [
            _pkt(b"# service=git-upload-pack\n"),
            b"0000",
            _pkt(C1.encode() + b" HEAD\x00" + caps + b"\n"),
            _pkt(C1.encode() + b" refs/heads/main\n"),
            _pkt(C2.encode() + b" refs/heads/release\n"),
            _pkt(TAG_OBJECT.encode() + b" refs/tags/v1\n"),
            _pkt(C3.encode() + b" refs/tags/v1^{}\n"),
            _pkt(C2.encode() + b" refs/tags/v2\n"),
            _pkt(C2.encode() + b" refs/tags/release\n"),
            b"0000",
        ]
    )


def test_pkt_lines() -> None:
    assert list(pkt_lines(b"0009hello0000")) == [b"hello", None]
    with pytest.raises(SourceUnreachableError):
        list(pkt_lines(b"00zz"))
    with pytest.raises(SourceUnreachableError):
        list(pkt_lines(b"0010short"))


def test_an_advertisement_parses() -> None:
    ad = parse_advertisement(advertisement_body())
    assert ad.refs["refs/heads/main"] == C1
    assert ad.refs["refs/tags/v1"] == TAG_OBJECT
    assert ad.peeled == {"refs/tags/v1": C3}
    assert "shallow" in ad.capabilities
    assert not ad.allows_any_commit_id


def test_an_empty_repository_advertises_no_refs() -> None:
    body = (
        _pkt(b"# service=git-upload-pack\n")
        + b"0000"
        + _pkt(b"0" * 40 + b" capabilities^{}\x00shallow\n")
        + b"0000"
    )
    ad = parse_advertisement(body)
    assert ad.refs == {}
    assert ad.capabilities == {"shallow"}


def test_a_dumb_answer_is_not_an_advertisement() -> None:
    with pytest.raises(SourceUnreachableError):
        parse_advertisement(C1.encode() + b"\trefs/heads/main\n")
    with pytest.raises(SourceUnreachableError, match="smart HTTP"):
        parse_advertisement(_pkt(b"hello\n") + b"0000")


@pytest.mark.req("SRC-GIT-02", "SRC-GIT-13")
@pytest.mark.parametrize(
    ("ref", "name", "want", "commit"),
    [
        ("main", "refs/heads/main", C1, C1),
        ("refs/heads/release", "refs/heads/release", C2, C2),
        ("HEAD", "HEAD", C1, C1),
        ("v1", "refs/tags/v1", TAG_OBJECT, C3),  # annotated: peeled
        ("v2", "refs/tags/v2", C2, C2),  # lightweight
        ("refs/tags/release", "refs/tags/release", C2, C2),
    ],
)
def test_refs_resolve(ref: str, name: str, want: str, commit: str) -> None:
    target = resolve_ref(parse_advertisement(advertisement_body()), ref)
    assert (target.name, target.want, target.commit) == (name, want, commit)


def test_a_name_that_is_both_a_branch_and_a_tag_is_ambiguous() -> None:
    with pytest.raises(RefNotFoundError, match="both a branch and a tag"):
        resolve_ref(parse_advertisement(advertisement_body()), "release")


@pytest.mark.parametrize("ref", ["nope", "refs/heads/nope", "refs/pull/1/head", "1234abc"])
def test_unknown_refs_are_not_found(ref: str) -> None:
    with pytest.raises(RefNotFoundError):
        resolve_ref(parse_advertisement(advertisement_body()), ref)


@pytest.mark.parametrize("ref", ["", "a b", "a..b", "-x", "a\nb", "x" * 300])
def test_malformed_refs_are_refused_without_repeating_them(ref: str) -> None:
    with pytest.raises(RefNotFoundError) as refused:
        resolve_ref(parse_advertisement(advertisement_body()), ref)
    if ref:
        assert ref not in str(refused.value)


@pytest.mark.req("SRC-GIT-10", "SRC-GIT-11")
def test_a_commit_id_needs_a_tip_or_the_servers_allowance() -> None:
    ad = parse_advertisement(advertisement_body())
    assert resolve_ref(ad, C2).commit == C2  # a branch tip
    assert resolve_ref(ad, C1.upper()).commit == C1
    # C3 is only the peeled commit of an annotated tag: not a lightweight tag, not a tip.
    with pytest.raises(CommitNotAdvertisedError, match="allowReachableSHA1InWant"):
        resolve_ref(ad, C3)
    for capability in (b"allow-reachable-sha1-in-want", b"allow-any-sha1-in-want"):
        allowing = parse_advertisement(advertisement_body(b"shallow " + capability))
        assert allowing.allows_any_commit_id
        assert resolve_ref(allowing, "5" * 40).commit == "5" * 40


def test_tip_names_are_branches_and_lightweight_tags() -> None:
    ad = Advertisement(
        refs={"HEAD": C1, "refs/heads/main": C1, "refs/tags/t": C1, "refs/notes/x": C2},
        peeled={},
        capabilities=frozenset(),
    )
    assert ad.tip_names(C1) == ["refs/heads/main", "refs/tags/t"]
    assert not ad.allows_commit_id(C2)


@pytest.mark.req("SRC-GIT-08")
def test_the_fetch_budget_doubles_from_50_to_1600() -> None:
    assert FetchBudget().depths() == [50, 100, 200, 400, 800, 1600]
    assert FetchBudget().max_bytes == 256 * 1024 * 1024
    assert FetchBudget(first_depth=10, max_depth=50).depths() == [10, 20, 40, 50]
    assert FetchBudget(first_depth=5, max_depth=5).depths() == [5]
    with pytest.raises(ValueError, match="fetch budget"):
        FetchBudget(first_depth=100, max_depth=50)


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        (None, ()),
        ("", ()),
        (".", ()),
        ("/", ()),
        ("db", ("db",)),
        ("db/migrations/", ("db", "migrations")),
        ("/db", ("db",)),
    ],
)
def test_paths_normalize(path: str | None, parts: tuple[str, ...]) -> None:
    assert normalize_path(path) == parts


@pytest.mark.parametrize("path", ["../x", "a/../b", "a//b", "a/./b", "a/\x01"])
def test_paths_that_leave_or_wander_are_refused(path: str) -> None:
    with pytest.raises(SourceRefusedError):
        normalize_path(path)
