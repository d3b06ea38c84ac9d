"""Runner image references, pinned by digest (issue #18).

An operation Job runs with the database URL in its environment, so its image is trusted code:
the manager chooses it (`--runner-image`, pinned `name@sha256:<hex>`), and a resource's
`spec.execution.image` is taken only when its digest is on the manager's allowlist
(`--allowed-runner-images`). Both the admission webhook and the Job builder ask `refusal`; a
digest, not a name, is what is allowed, since a tag can be moved and a registry name names no
content. Messages name the rule, never the reference a client wrote.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from enum import StrEnum
from typing import Final

_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")
_PINNED: Final = re.compile(r"[^@\s]+@(?P<digest>sha256:[0-9a-f]{64})")


class ImageRefusal(StrEnum):
    """Why a runner image reference is not taken, as a stable code."""

    NOT_PINNED = "RunnerImageNotPinned"
    NOT_ALLOWED = "RunnerImageNotAllowed"


_WORDS: Final = {
    ImageRefusal.NOT_PINNED: "is not pinned by digest (name@sha256:<64 hex>)",
    ImageRefusal.NOT_ALLOWED: "names a digest not on the manager's allowlist of runner images",
}


def image_digest(reference: str) -> str | None:
    """The `sha256:<hex>` a reference is pinned to, or None for a tag or a malformed one."""
    found = _PINNED.fullmatch(reference.strip())
    return found["digest"] if found else None


def is_digest(text: str) -> bool:
    return _DIGEST.fullmatch(text) is not None


def pinned_image(reference: str) -> ImageRefusal | None:
    """None when `reference` is pinned by digest (the manager's own runner image)."""
    return None if image_digest(reference) is not None else ImageRefusal.NOT_PINNED


def refusal(reference: str, allowed: Collection[str]) -> ImageRefusal | None:
    """Why a resource's own `spec.execution.image` is not taken, or None when its digest is
    one of `allowed` (the manager's allowlist with its own runner's digest)."""
    digest = image_digest(reference)
    if digest is None:
        return ImageRefusal.NOT_PINNED
    return None if digest in allowed else ImageRefusal.NOT_ALLOWED


def refusal_words(code: ImageRefusal) -> str:
    """The refusal for status, an Event or kubectl: the field and the rule, not the value."""
    return f"spec.execution.image {_WORDS[code]} ({code.value})"
