"""The source policy's format and rules (SRC-POL)."""

from __future__ import annotations

import pytest

from ptah_operator.api.source_policy import (
    SourcePolicyError,
    git_host,
    parse_source_policy,
)

POLICY = b"""
version: 1
configMaps:
  names: ["billing-*"]
git:
  hosts: ["git.example.com", "*.corp.example"]
maxBytes: 1000
"""


@pytest.mark.req("SRC-POL-02")
def test_a_configmap_is_checked_by_name_and_by_size() -> None:
    policy = parse_source_policy(POLICY)
    assert policy.refuse_config_map("billing-migrations", 10) is None
    refusal = policy.refuse_config_map("orders-migrations", 10)
    assert refusal is not None
    assert "configMaps.names" in refusal
    too_big = policy.refuse_config_map("billing-migrations", 1001)
    assert too_big is not None
    assert "maxBytes" in too_big


@pytest.mark.req("SRC-POL-03")
@pytest.mark.parametrize(
    ("repository", "allowed"),
    [
        ("https://git.example.com/acme/billing.git", True),
        ("https://user@git.example.com:8443/acme/billing.git", True),
        ("ssh://git@build.corp.example/acme/billing.git", True),
        ("git@git.example.com:acme/billing.git", True),
        ("https://github.com/acme/billing.git", False),
        ("https://git.example.com.evil.test/acme/billing.git", False),
    ],
)
def test_a_git_repository_is_checked_by_host(repository: str, allowed: bool) -> None:
    refusal = parse_source_policy(POLICY).refuse_git_host(repository)
    assert (refusal is None) == allowed, refusal
    if not allowed:
        assert refusal is not None
        assert "git.hosts" in refusal


def test_absent_rules_allow_everything() -> None:
    policy = parse_source_policy(b"version: 1\n")
    assert policy.refuse_config_map("anything", 10**9) is None
    assert policy.refuse_git_host("https://anywhere.test/x.git") is None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"version: 2\n", "version must be 1"),
        (b"- a\n", "must be a mapping"),
        (b"version: 1\nmaxBytes: -1\n", "maxBytes"),
        (b"version: 1\ngit: {hosts: []}\n", "git.hosts"),
        (b"version: 1\nextra: true\n", "unknown field extra"),
        (b"version: 1\nconfigMaps: {names: [1]}\n", "configMaps.names"),
        (b"{{{", "not valid YAML"),
    ],
)
def test_an_unreadable_policy_says_which_field(raw: bytes, message: str) -> None:
    with pytest.raises(SourcePolicyError, match=message):
        parse_source_policy(raw)


def test_the_host_of_each_url_form() -> None:
    assert git_host("https://h.test/x") == "h.test"
    assert git_host("https://u:p@h.test:99/x") == "h.test:99"
    assert git_host("git@h.test:x/y.git") == "h.test"
    assert git_host("/local/path") is None
