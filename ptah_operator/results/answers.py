"""What the result endpoint answers, and the little every route checks the same way."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
OPERATION_ID = re.compile(r"^op-[0-9a-f]{10}$")
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True)
class Answer:
    """A JSON answer (`body`), or, with `data`, the bytes of a text answer."""

    status: int
    body: dict[str, Any]
    data: bytes | None = field(default=None, repr=False)


def error(status: int, message: str) -> Answer:
    """A refusal: a short message that never echoes what was sent."""
    return Answer(status, {"error": message})


def canonical_json(document: Any) -> str:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def malformed_path(namespace: str, operation_id: str) -> Answer | None:
    """The refusal of a namespace or an operation id that is not well formed, or None."""
    if not NAMESPACE.match(namespace) or len(namespace) > 63:
        return error(400, "the namespace is not well formed")
    if not OPERATION_ID.match(operation_id):
        return error(400, "the operation id is not well formed")
    return None
