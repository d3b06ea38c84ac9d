"""Who last wrote a resource's spec, as admission records it (four eyes: a resource's
`spec.policy.requireDistinctApprover`).

The mutating webhook sees every CREATE and UPDATE of a PtahMigration or PtahSchema. A write that
changes the spec (a CREATE, or an UPDATE whose spec differs from the stored one) records the
authenticated user and the generation that write gives the resource (1, or the stored
generation + 1: a custom resource's generation moves exactly when its spec does) in the
`spec-written-by` annotation. Any other write keeps the stored record, whatever the client sent,
so nobody writes it but admission. The approvals' validating webhook reads it back: under
requireDistinctApprover it refuses an approval by that user, and one when the record does not
name the resource's current generation (a spec written before admission recorded writers).
Pure functions; the routes are in app.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ptah_operator.api.common import UserInfo
from ptah_operator.api.constants import ANNOTATION_SPEC_WRITTEN_BY, Kind

RECORDED_KINDS: Final = frozenset({Kind.PTAH_MIGRATION.value, Kind.PTAH_SCHEMA.value})
"""The kinds whose spec writer admission records."""

_PATH: Final = "/metadata/annotations/" + ANNOTATION_SPEC_WRITTEN_BY.replace("~", "~0").replace(
    "/", "~1"
)


@dataclass(frozen=True)
class SpecWriter:
    """The person who last wrote a spec, and the generation their write gave the resource."""

    username: str
    uid: str | None
    generation: int


def encode(writer: SpecWriter) -> str:
    value: dict[str, Any] = {"username": writer.username, "generation": writer.generation}
    if writer.uid is not None:
        value["uid"] = writer.uid
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def decode(value: str | None) -> SpecWriter | None:
    """The record, or None when there is none or it does not read as one."""
    if not value:
        return None
    try:
        data = json.loads(value)
    except ValueError:
        return None
    if not isinstance(data, Mapping):
        return None
    username, uid, generation = data.get("username"), data.get("uid"), data.get("generation")
    if not isinstance(username, str) or not username:
        return None
    if not isinstance(generation, int) or isinstance(generation, bool) or generation < 1:
        return None
    return SpecWriter(username, uid if isinstance(uid, str) and uid else None, generation)


def _annotation(obj: Mapping[str, Any] | None) -> str | None:
    metadata = (obj or {}).get("metadata") or {}
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    value = (
        annotations.get(ANNOTATION_SPEC_WRITTEN_BY) if isinstance(annotations, Mapping) else None
    )
    return value if isinstance(value, str) else None


def _generation(obj: Mapping[str, Any] | None) -> int:
    metadata = (obj or {}).get("metadata") or {}
    generation = metadata.get("generation") if isinstance(metadata, Mapping) else None
    return generation if isinstance(generation, int) and generation > 0 else 0


def writer_patch(
    operation: str,
    obj: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    user: UserInfo,
) -> list[dict[str, Any]]:
    """The JSONPatch that leaves the record right: this user on a write that changes the spec,
    the stored record on any other write."""
    if operation == "CREATE":
        wanted: str | None = encode(SpecWriter(user.username, user.uid, 1))
    elif operation == "UPDATE":
        if old is not None and obj.get("spec") == old.get("spec"):
            wanted = _annotation(old)
        else:
            wanted = encode(SpecWriter(user.username, user.uid, _generation(old) + 1))
    else:
        return []
    current = _annotation(obj)
    if wanted == current:
        return []
    if wanted is None:
        return [{"op": "remove", "path": _PATH}]
    metadata = obj.get("metadata")
    ops: list[dict[str, Any]] = []
    if not isinstance(metadata, Mapping):
        ops.append({"op": "add", "path": "/metadata", "value": {}})
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("annotations"), Mapping):
        ops.append({"op": "add", "path": "/metadata/annotations", "value": {}})
    ops.append({"op": "add", "path": _PATH, "value": wanted})
    return ops
