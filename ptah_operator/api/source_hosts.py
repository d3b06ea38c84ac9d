"""Source credentials go only to the hosts the manager allows (issue #18).

A resource's `spec.git.secretRef` or `spec.artifact.secretRef` names a Secret whose username
and password the Resolve, Verify and fetch containers send to the source's host, before any
plan or approval. The author chooses both the Secret (any in the namespace) and the host, so
the rule is on the host: a credential is used only when the repository's or registry's
`host[:port]` is on the manager's `--allowed-source-hosts`. A source without a secretRef is
read anonymously from any host. Both the admission webhook and the Job builder ask `refusal`;
messages name the field and the rule, never the host or the Secret.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from enum import StrEnum
from typing import Any, Final
from urllib.parse import urlsplit

_OCI: Final = "oci://"
_SCP_LIKE: Final = re.compile(r"^[A-Za-z0-9._-]+@(?P<host>[A-Za-z0-9.-]+):\S+$")


class SourceCredentialRefusal(StrEnum):
    """Why a source's secretRef is not used, as a stable code."""

    HOST_NOT_ALLOWED = "SourceHostNotAllowed"


def git_host(repository: str) -> str | None:
    """`host[:port]` of a repository, lowercased: an http(s) URL (no userinfo), an `ssh://`
    URL (a user name but no password: `ssh://git@host:2222/...` is `host:2222`) or the
    scp-like `user@host:path` (`host`). None for any other form (the runner refuses those, so
    no credential is ever sent for them)."""
    text = repository.strip()
    scp = _SCP_LIKE.match(text) if "://" not in text else None
    if scp is not None:
        return scp["host"].lower()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        return None
    if not parts.hostname:
        return None
    if parts.scheme in ("http", "https") and "@" not in parts.netloc:
        return parts.netloc.lower()
    if parts.scheme == "ssh" and parts.password is None:
        return parts.netloc.rsplit("@", 1)[-1].lower()
    return None


def registry_host(oci_ref: str) -> str | None:
    """`host[:port]` of an `oci://host[:port]/repository...` reference, lowercased."""
    text = oci_ref.strip()
    if not text.startswith(_OCI):
        return None
    host, slash, _ = text[len(_OCI) :].partition("/")
    if not slash or not host or "@" in host:
        return None
    return host.lower()


def credential_host(spec: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """For a raw spec whose source names a secretRef: the field and the host it would go to
    (None when the host cannot be read). None when no source credential is named."""
    for field, key, host_of in (
        ("git", "repository", git_host),
        ("artifact", "ociRef", registry_host),
    ):
        source = spec.get(field)
        if not isinstance(source, Mapping) or source.get("secretRef") is None:
            continue
        where = source.get(key)
        return f"spec.{field}.secretRef", host_of(where) if isinstance(where, str) else None
    return None


def refusal(host: str | None, allowed: Collection[str]) -> SourceCredentialRefusal | None:
    """None when a credential may go to `host` (on the manager's allowlist)."""
    if host is not None and host.lower() in allowed:
        return None
    return SourceCredentialRefusal.HOST_NOT_ALLOWED


def refusal_words(field: str, code: SourceCredentialRefusal) -> str:
    """The refusal for status, an Event or kubectl: the field and the rule, not the values."""
    return (
        f"{field} is used only for a repository or registry host on the manager's "
        f"--allowed-source-hosts ({code.value})"
    )


def normalized_hosts(items: Collection[str]) -> frozenset[str]:
    """The allowlist as given on the command line: `host[:port]`, lowercased."""
    return frozenset(item.strip().lower() for item in items if item.strip())
