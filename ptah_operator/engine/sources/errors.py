"""Why a source could not be read: one exception class per reason the runner reports.

Each error carries `reason`, the short code a Resolve result's `error.reason` uses, and a
one-line message. Messages name hosts, refs, commits, digests, paths and file names, and the
rule that refused; never credentials, a URL's userinfo, a server's own error text or a file's
content (PRIV rules: a message can reach status through ReconciliationFailed).
"""

from __future__ import annotations

from typing import ClassVar


class SourceError(Exception):
    """A source could not be read; `reason` says which way, `str(error)` says why."""

    reason: ClassVar[str] = "SourceError"

    def __init__(self, message: str) -> None:
        # One line: a termination message and a condition message are one line each.
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        return str(self)


class SourceUnreachableError(SourceError):
    """The server cannot be reached, refuses the credentials, or has no such repository,
    artifact or blob. Trying again later may succeed."""

    reason = "SourceUnreachable"


class RefNotFoundError(SourceError):
    """The ref names no branch or tag the server advertises (or names both)."""

    reason = "RefNotFound"


class CommitNotAdvertisedError(SourceError):
    """A commit id the server's advertisement does not let us ask for (SRC-GIT-10)."""

    reason = "CommitNotAdvertised"


class CommitUnreachableError(SourceError):
    """The commit could not be reached: the ref moved away and the history within the fetch
    budget does not hold it, or the server does not give it (SRC-GIT-09)."""

    reason = "CommitUnreachable"


class SourceRefusedError(SourceError):
    """The content is there but may not be used: a submodule, an LFS pointer, a symlink, a
    name that is not a flat file name, a size over a limit, content that does not match its
    digest. The message names the rule."""

    reason = "SourceRefused"


REASONS = (
    SourceUnreachableError.reason,
    RefNotFoundError.reason,
    CommitNotAdvertisedError.reason,
    CommitUnreachableError.reason,
    SourceRefusedError.reason,
)
