"""Who wrote a resource's spec since its last Apply, as admission records it (four eyes: a
resource's `spec.policy.requireDistinctApprover`).

The mutating webhook sees every CREATE and UPDATE of a PtahMigration or PtahSchema. A write that
changes the spec (a CREATE, or an UPDATE whose spec differs from the stored one) gives the
resource generation 1, or the stored generation + 1 (a custom resource's generation moves
exactly when its spec does), and rewrites the `spec-written-by` annotation as a `SpecWriters`
record: every person who wrote the spec at a generation after the last Apply's (the one
status.lastRun / lastApply records as ended, not a claim in flight), each with the generation of
their newest write, at most `MAX_WRITERS`. Any other write keeps the stored record, whatever
the client sent.

The record is sealed: an HMAC-SHA256, under a key only the manager holds (`WriterSeal`, derived
from its result key; records sealed under a previous result key the manager is given still
open), over the record, the resource's namespace and name and the digest of the
spec it was written with. The record's webhook fails open, so while the manager is down a
writer could put anything in the annotation; an unsealed, tampered or replayed record (another
resource, another spec, another generation) does not open, and counts as a write by nobody
known. A write whose stored record does not open, or names an older generation, continues with
no names and `unrecorded_through` the stored generation: whoever wrote that far is unknown.

The approvals' validating webhook (failurePolicy Fail) opens the record of the resource an
approval names: under requireDistinctApprover it refuses an approval by anyone recorded after
the last Apply's generation, and every approval while a write after it has no known writer.
Pure functions; the routes are in app.py.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from pydantic import ValidationError

from ptah_operator.api.common import UserInfo
from ptah_operator.api.constants import ANNOTATION_SPEC_WRITTEN_BY, Kind
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import LastRun, PtahMigration, PtahMigrationStatus
from ptah_operator.api.schema import ApplyRecord, PtahSchema

RECORDED_KINDS: Final = frozenset({Kind.PTAH_MIGRATION.value, Kind.PTAH_SCHEMA.value})
"""The kinds whose spec writers admission records."""

MAX_WRITERS: Final = 16
"""The most writers a record names; beyond them the oldest are known only as unrecorded."""

_PATH: Final = "/metadata/annotations/" + ANNOTATION_SPEC_WRITTEN_BY.replace("~", "~0").replace(
    "/", "~1"
)
_KEY_PURPOSE: Final = b"operator.ptah.run/spec-written-by v1"
_MODELS: Final[Mapping[str, type[PtahMigration] | type[PtahSchema]]] = {
    Kind.PTAH_MIGRATION.value: PtahMigration,
    Kind.PTAH_SCHEMA.value: PtahSchema,
}


@dataclass(frozen=True)
class Writer:
    """A person who wrote the spec, and the generation their newest write gave it."""

    username: str
    uid: str | None
    generation: int


@dataclass(frozen=True)
class SpecWriters:
    """Who wrote the spec since the last Apply, as of the write that gave `generation`."""

    generation: int
    writers: tuple[Writer, ...] = ()
    unrecorded_through: int = 0
    """The newest generation written by somebody the record cannot name (past admission, or
    beyond MAX_WRITERS); 0 when there is none."""

    def since(self, applied: int) -> SpecWriters:
        """The record with only what was written after generation `applied`."""
        return replace(
            self,
            writers=tuple(w for w in self.writers if w.generation > applied),
            unrecorded_through=self.unrecorded_through if self.unrecorded_through > applied else 0,
        )

    def written_by(self, user: UserInfo, generation: int) -> SpecWriters:
        """The record after `user`'s write gave `generation`, bounded to MAX_WRITERS."""
        others = [w for w in self.writers if w.username != user.username]
        everyone = sorted(
            [*others, Writer(user.username, user.uid, generation)], key=lambda w: w.generation
        )
        dropped, kept = everyone[:-MAX_WRITERS], everyone[-MAX_WRITERS:]
        unrecorded = max([self.unrecorded_through, *(w.generation for w in dropped)])
        return SpecWriters(generation, tuple(kept), unrecorded)

    def as_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "generation": self.generation,
            "writers": [
                {"username": w.username, "generation": w.generation}
                | ({"uid": w.uid} if w.uid is not None else {})
                for w in self.writers
            ],
        }
        if self.unrecorded_through:
            value["unrecordedThrough"] = self.unrecorded_through
        return value


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _parse(data: Mapping[str, Any]) -> SpecWriters | None:
    generation = _positive(data.get("generation"))
    listed = data.get("writers")
    unrecorded = data.get("unrecordedThrough", 0)
    if generation is None or not isinstance(listed, list) or len(listed) > MAX_WRITERS:
        return None
    if unrecorded != 0 and _positive(unrecorded) is None:
        return None
    writers: list[Writer] = []
    for item in listed:
        if not isinstance(item, Mapping):
            return None
        username, uid, at = item.get("username"), item.get("uid"), _positive(item.get("generation"))
        if not isinstance(username, str) or not username or at is None:
            return None
        writers.append(Writer(username, uid if isinstance(uid, str) and uid else None, at))
    return SpecWriters(generation, tuple(writers), int(unrecorded))


def spec_digest(resource: PtahMigration | PtahSchema) -> str:
    """SHA-256 of the spec as the models read it (defaults left out, so a field added with its
    default by a later version reads the same)."""
    spec = resource.spec.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _derived(result_key: bytes) -> bytes:
    return hmac.new(result_key, _KEY_PURPOSE, hashlib.sha256).digest()


@dataclass(frozen=True)
class WriterSeal:
    """Seals and opens records under the manager's key; every replica derives the same.
    Records sealed under a `previous` key still open (a result key replaced), and every record
    a write makes is sealed under `key`."""

    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    previous: tuple[bytes, ...] = field(default=(), repr=False)

    @classmethod
    def derived_from(cls, result_key: bytes, previous: Iterable[bytes] = ()) -> WriterSeal:
        """The seal whose key is derived from the manager's result key (its own Secret), for
        this purpose only: a result token never opens a record, nor a record a token.
        `previous` are result keys used before it (`--previous-result-key-file`)."""
        return cls(_derived(result_key), tuple(_derived(k) for k in previous))

    def _mac(
        self, record: SpecWriters, namespace: str, name: str, digest: str, key: bytes | None = None
    ) -> str:
        bound = {"namespace": namespace, "name": name, "spec": digest, **record.as_json()}
        message = json.dumps(bound, sort_keys=True, separators=(",", ":")).encode()
        return hmac.new(self.key if key is None else key, message, hashlib.sha256).hexdigest()

    def seal(self, record: SpecWriters, resource: PtahMigration | PtahSchema) -> str:
        """The annotation value: the record and its seal over where and what it was written."""
        value = record.as_json()
        value["seal"] = self._mac(record, *_place(resource), spec_digest(resource))
        return json.dumps(value, sort_keys=True, separators=(",", ":"))

    def open(self, value: str | None, resource: PtahMigration | PtahSchema) -> SpecWriters | None:
        """The record, when `value` is one this seal made for this resource and its spec as it
        is; None for anything else."""
        if not value:
            return None
        try:
            data = json.loads(value)
        except ValueError:
            return None
        if not isinstance(data, Mapping) or not isinstance(data.get("seal"), str):
            return None
        record = _parse(data)
        if record is None:
            return None
        place, digest = _place(resource), spec_digest(resource)
        for key in (self.key, *self.previous):
            if hmac.compare_digest(self._mac(record, *place, digest, key), data["seal"]):
                return record
        return None


def _place(resource: PtahMigration | PtahSchema) -> tuple[str, str]:
    return resource.metadata.namespace or "", resource.metadata.name or ""


def applied_generation(resource: PtahMigration | PtahSchema) -> int:
    """The generation of the last Apply status records as ended (lastRun, lastApply); 0 when
    none names one. Never the Apply in flight (status.activeOperation): a claim may be
    withdrawn with nothing run, and the writes it was claimed for are then still to apply."""
    status = resource.status
    if status is None:
        return 0
    last: LastRun | ApplyRecord | None = (
        status.last_run if isinstance(status, PtahMigrationStatus) else status.last_apply
    )
    return (last.generation or 0) if last is not None else 0


def recorded(resource: PtahMigration | PtahSchema) -> str | None:
    """The annotation's value as stored."""
    return (resource.metadata.annotations or {}).get(ANNOTATION_SPEC_WRITTEN_BY)


def writers_since_apply(
    resource: PtahMigration | PtahSchema, seal: WriterSeal
) -> SpecWriters | None:
    """Who wrote the spec after the last Apply's generation, as its record opens; None when the
    record does not open or names another generation than the resource's (a write past
    admission): whoever wrote the spec since its last Apply is then unknown, unless the
    resource's generation is no later than that Apply's."""
    generation = resource.metadata.generation or 0
    applied = applied_generation(resource)
    record = seal.open(recorded(resource), resource)
    if record is None or record.generation != generation:
        if generation <= applied:
            return SpecWriters(generation)
        return None
    return record.since(applied)


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


def _model(
    kind: str, obj: Mapping[str, Any] | None, namespace: str
) -> PtahMigration | PtahSchema | None:
    model = _MODELS.get(kind)
    if model is None or obj is None:
        return None
    try:
        found = from_manifest(model, dict(obj))
    except (ValidationError, ValueError):
        return None
    if not found.metadata.namespace:
        found.metadata.namespace = namespace
    return found


def next_record(
    operation: str,
    kind: str,
    namespace: str,
    obj: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    user: UserInfo,
    seal: WriterSeal,
) -> str | None:
    """The annotation's value after this write (the stored one when the spec is unchanged);
    None when there is nothing to record (the object does not read as its kind)."""
    if operation == "UPDATE" and old is not None and obj.get("spec") == old.get("spec"):
        return _annotation(old)
    written = _model(kind, obj, namespace)
    if written is None:
        return None
    if operation == "CREATE":
        return seal.seal(SpecWriters(0).written_by(user, 1), written)
    stored = _model(kind, old, namespace)
    stored_generation = _generation(old)
    applied = applied_generation(stored) if stored is not None else 0
    previous = seal.open(_annotation(old), stored) if stored is not None else None
    if previous is None or previous.generation != stored_generation:
        previous = SpecWriters(stored_generation, (), stored_generation)
    record = previous.since(applied).written_by(user, stored_generation + 1)
    return seal.seal(record, written)


def writer_patch(
    operation: str,
    kind: str,
    namespace: str,
    obj: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    user: UserInfo,
    seal: WriterSeal,
) -> list[dict[str, Any]]:
    """The JSONPatch that leaves the record right: this user added on a write that changes the
    spec, the stored record on any other write."""
    if operation not in ("CREATE", "UPDATE"):
        return []
    wanted = next_record(operation, kind, namespace, obj, old, user, seal)
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
