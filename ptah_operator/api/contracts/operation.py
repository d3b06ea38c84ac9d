"""The operation document (contract `ptah.run/operation/v1`, env `PTAH_OPERATION`), typed once.

The manager builds it from these models (reconcile/jobs.py and reconcile/schema/jobs.py
`operation_document`: `Model.model_construct(...)` with exactly the keys it means to send, then
`as_json()`); the runner reads it with the same models (`MigrationDocument.parse`,
`SchemaDocument.parse`, `parse_source_operation`) and refuses anything they do not accept. The
documents: docs/design/migration-path.md, docs/design/schema-path.md, docs/engine-sources.md.

- A PtahMigration's History and Apply (`MigrationDocument`): the engine, the revision table,
  the transaction mode, the content digest the files must give; an Apply also the expected
  sequence (versions as the files spell them, checksums `sha256:<hex>`) and the database it
  was planned against (`plannedTargetDigest`).
- A PtahSchema's Observe, Plan and Apply (`SchemaDocument`): the scope, the policy (protected
  tables, destructive changes, lock and statement timeouts in seconds), the content digest
  (Observe, Plan) or the published plan and its database (Apply).
- A Resolve or a Verify of either kind (`SourceDocument`): the `source` block (Git: repository,
  ref, path, commit; Artifact: ociRef, ociDigest) and, Resolve of Git, `sourcePolicy.maxBytes`.
  The manager writes it in its family's document; the runner reads only these keys.

Other keys are ignored. A refusal (`OperationError`) names the field, never its value (the
document holds no secret, but a mistaken one might). Pure: no I/O, no environment, no engine
(the runner turns these values into the engine's own).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Self, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from ptah_operator.api.constants import MAX_PLAN_CHUNKS, Engine
from ptah_operator.api.contracts.codes import OPERATION_CONTRACT

MIGRATION_KIND = "PtahMigration"
SCHEMA_KIND = "PtahSchema"
MIGRATION_OPERATION_TYPES = ("History", "Apply")
SCHEMA_OPERATION_TYPES = ("Observe", "Plan", "Apply")
MAX_EXPECTED = 1000
MAX_SCOPE_ENTRIES = 256
MAX_PATTERN_CHARS = 256
MAX_SECONDS = 365 * 24 * 3600
"""MySQL's own upper bound for lock_wait_timeout."""
GIT = "Git"
ARTIFACT = "Artifact"

OPERATION_ID = re.compile(r"^op-[0-9a-f]{10}$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
VERSION = re.compile(r"^[0-9]{1,18}$")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")

Json = dict[str, Any]
_DocumentT = TypeVar("_DocumentT", bound="_Document")


class OperationError(ValueError):
    """The operation document cannot be used. The message names the field, never a value that
    could be a secret (the document holds none, but a mistaken one might)."""


# -- refusals ---------------------------------------------------------------------------------
#
# A validator refuses with `_field(...)`, whose words follow the field's path
# (`resource.namespace is not well formed`), or `_whole(...)`, said as it is.


def _field(words: str) -> PydanticCustomError:
    return PydanticCustomError("field", "{words}", {"words": words})


def _whole(words: str) -> PydanticCustomError:
    return PydanticCustomError("whole", "{words}", {"words": words})


_KEYS = {"operation_id": "operationID", "schema_": "schema"}
"""The keys whose spelling is not the camel case of the field's name."""


def _path(loc: Sequence[int | str]) -> str:
    """`("expected", 0, "version")` → `expected[0].version`; a key left out of the document is
    named by its field, so each is spelt as the document spells it."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            key = _KEYS.get(part, to_camel(part))
            path += f".{key}" if path else key
    return path


def refusal(exc: ValidationError) -> OperationError:
    """The first thing wrong with a document, in the words a person reads."""
    error = exc.errors(include_url=False)[0]
    where = _path(error["loc"])
    words = str((error.get("ctx") or {}).get("words", ""))
    if error["type"] == "whole":
        return OperationError(words)
    if error["type"] == "field":
        return OperationError(f"{where} {words}")
    if error["type"] == "missing":
        return OperationError(f"{where} is missing")
    if error["type"] in ("model_type", "model_attributes_type", "dict_type"):
        return OperationError(f"{where} must be a JSON object")
    return OperationError(f"{where} is not well formed")


def _text(value: Any, pattern: re.Pattern[str] | None = None) -> str:
    if not isinstance(value, str) or not value:
        raise _field("must be a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise _field("is not well formed")
    return value


def _count(value: Any, low: int, high: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise _field(f"must be an integer of at least {low}")
    if high is not None and value > high:
        raise _field(f"must be at most {high}")
    return value


def _patterns(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _field("must be a list")
    if len(value) > MAX_SCOPE_ENTRIES:
        raise _field(f"holds more than {MAX_SCOPE_ENTRIES} entries")
    if any(not isinstance(i, str) or not i or len(i) > MAX_PATTERN_CHARS for i in value):
        raise _field("must hold non-empty strings")
    return tuple(value)


def _seconds(value: Any) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 <= value <= MAX_SECONDS
    ):
        raise _field("must be a number of seconds (0: no limit), at most a year")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _field("must be true or false")
    return value


def _matching(pattern: re.Pattern[str] | None) -> BeforeValidator:
    return BeforeValidator(lambda value: _text(value, pattern))


# A field's type says what it must hold; a missing one (`= _REQUIRED`) is checked as a null.
_Text = Annotated[str, _matching(None)]
_Label = Annotated[str, _matching(DNS_LABEL)]
_Subdomain = Annotated[str, _matching(DNS_SUBDOMAIN)]
_DigestText = Annotated[str, _matching(DIGEST)]
_Flag = Annotated[bool, BeforeValidator(_flag)]
_Patterns = Annotated[tuple[str, ...], BeforeValidator(_patterns)]
_Seconds = Annotated[float | None, BeforeValidator(_seconds)]
_REQUIRED: Any = Field(default=None, validate_default=True)


class _Absent:
    """A key the document does not hold (where that differs from one holding null)."""


ABSENT: Any = _Absent()


class _Block(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="ignore",
        frozen=True,
    )

    def as_json(self) -> Json:
        """The block as the manager sends it: exactly the keys it was built with."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True, warnings=False)


def _read(model: type[_DocumentT], text: str, context: dict[str, str] | None = None) -> _DocumentT:
    try:
        raw = json.loads(text)
    except (ValueError, TypeError):
        raise OperationError("PTAH_OPERATION is not JSON") from None
    if not isinstance(raw, dict):
        raise OperationError("the operation document must be a JSON object")
    try:
        return model.model_validate(raw, context=context)
    except ValidationError as exc:
        raise refusal(exc) from None


# -- blocks -----------------------------------------------------------------------------------


class ResourceRef(_Block):
    """The resource an operation belongs to; `KINDS` are those a command accepts."""

    KINDS: ClassVar[tuple[str, ...]] = (MIGRATION_KIND, SCHEMA_KIND)

    kind: str = _REQUIRED
    uid: str = _REQUIRED
    namespace: _Label = _REQUIRED
    name: _Subdomain = _REQUIRED

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any) -> str:
        kind = _text(value)
        if kind not in cls.KINDS:
            raise _field(f"must be one of {', '.join(cls.KINDS)}")
        return kind

    @field_validator("uid", mode="before")
    @classmethod
    def _uid(cls, value: Any) -> str:
        uid = _text(value)
        if len(uid) > 128:
            raise _field("is too long")
        return uid

    def as_json(self) -> Json:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name, "uid": self.uid}

    @classmethod
    def of(cls, kind: str, namespace: str | None, name: str | None, uid: str | None) -> ResourceRef:
        """The manager's reference, sent as the resource's metadata reads."""
        named: Json = {"kind": kind, "namespace": namespace, "name": name, "uid": uid}
        return cls.model_construct(**named)


class MigrationResource(ResourceRef):
    KINDS: ClassVar[tuple[str, ...]] = (MIGRATION_KIND,)


class SchemaResource(ResourceRef):
    KINDS: ClassVar[tuple[str, ...]] = (SCHEMA_KIND,)

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any) -> str:
        if value != SCHEMA_KIND:
            raise _field(f"must be {SCHEMA_KIND}")
        return SCHEMA_KIND


class RevisionTableRef(_Block):
    name: Annotated[str, _matching(IDENTIFIER)] = _REQUIRED
    schema_: str | None = Field(default=None, alias="schema")

    @field_validator("schema_", mode="before")
    @classmethod
    def _schema(cls, value: Any) -> str | None:
        if value is not None and (not isinstance(value, str) or not IDENTIFIER.match(value)):
            raise _field("must be null or a plain identifier")
        return value


class ExpectedVersion(_Block):
    """One migration of the approved sequence, as the plan spells it."""

    version: Annotated[str, _matching(VERSION)] = _REQUIRED
    checksum: _DigestText = _REQUIRED


class MigrationPlanRef(_Block):
    """The plan an Apply carries out, for the record (the runner runs `expected`)."""

    name: str | None = None
    uid: str | None = None
    fingerprint: str | None = None


class OperationScope(_Block):
    """The engine's scope (`--schema`, `--table`, `--exclude`). No schema named means the
    engine's default (`public`; MySQL/MariaDB ignore it, their scope is the URL's database)."""

    schemas: _Patterns = ()
    include_tables: _Patterns = ()
    exclude_tables: _Patterns = ()


class OperationPolicy(_Block):
    """A Plan names the protected tables its plan would change (the manager judges); an Apply
    holds the plan to the policy once more before it runs; both hold every statement to the
    timeouts (lock 30 s when absent, statement none; 0 is no limit)."""

    allow_destructive: _Flag = False
    lock_timeout_seconds: _Seconds = None
    statement_timeout_seconds: _Seconds = None
    protected_tables: _Patterns = ()


class SchemaPlanRef(_Block):
    """The published plan an Apply runs, as its document names it."""

    name: _Subdomain = _REQUIRED
    uid: _Text = _REQUIRED
    fingerprint: _DigestText = _REQUIRED
    digest: _DigestText = _REQUIRED
    """SHA-256 of the plan file's bytes (the chunks joined): what the fetched bytes must give."""
    size: Annotated[int, BeforeValidator(lambda value: _count(value, 0))] = _REQUIRED
    observed_fingerprint: _DigestText = _REQUIRED
    chunks: Annotated[int, BeforeValidator(lambda v: _count(v, 1, MAX_PLAN_CHUNKS))] = _REQUIRED


class SourceLimits(_Block):
    """`sourcePolicy` (Resolve of a Git source): the selected files' size limit."""

    max_bytes: int | None = None

    @field_validator("max_bytes", mode="before")
    @classmethod
    def _max_bytes(cls, value: Any) -> int | None:
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 0
        ):
            raise _field("must be a non-negative integer")
        return value


@dataclass(frozen=True)
class GitSource:
    repository: str
    ref: str
    path: str | None
    commit: str | None = None


@dataclass(frozen=True)
class ArtifactSource:
    oci_ref: str
    oci_digest: str | None = None


Source = GitSource | ArtifactSource


def parse_source(value: Any, *, pinned: bool = False) -> Source:
    """A `source` block. `pinned`: the recorded commit / digest must be there (fetch, Verify).
    Raises the validators' refusals, whose path is `source`."""
    if not isinstance(value, dict):
        raise _whole("source must be a JSON object")
    kind = value.get("kind")
    if kind == GIT:
        path = value.get("path")
        if path is not None and not isinstance(path, str):
            raise _whole("source.path must be null or a string")
        commit = value.get("commit")
        if commit is not None and (not isinstance(commit, str) or not COMMIT.match(commit)):
            raise _whole("source.commit must be 40 lowercase hex digits")
        if pinned and commit is None:
            raise _whole("source.commit is required here")
        ref = _whole_text(value, "ref")
        if len(ref) > 255:
            raise _whole("source.ref is too long")
        repository = _whole_text(value, "repository")
        return GitSource(repository=repository, ref=ref, path=path or None, commit=commit)
    if kind == ARTIFACT:
        oci_ref = _whole_text(value, "ociRef")
        if not oci_ref.startswith("oci://"):
            raise _whole("source.ociRef must be an oci:// reference")
        digest = value.get("ociDigest")
        if digest is not None and (not isinstance(digest, str) or not DIGEST.match(digest)):
            raise _whole("source.ociDigest must be sha256:<64 hex>")
        if pinned and digest is None:
            raise _whole("source.ociDigest is required here")
        return ArtifactSource(oci_ref=oci_ref, oci_digest=digest)
    raise _whole(f'source.kind must be "{GIT}" or "{ARTIFACT}"')


def _whole_text(block: dict[str, Any], key: str) -> str:
    value = block.get(key)
    if not isinstance(value, str) or not value:
        raise _whole(f"source.{key} must be a non-empty string")
    return value


def parse_source_argument(text: str) -> Source:
    """`fetch --source=JSON`: a pinned source block."""
    try:
        raw = json.loads(text)
    except (ValueError, TypeError):
        raise OperationError("--source is not JSON") from None
    try:
        return parse_source(raw, pinned=True)
    except PydanticCustomError as exc:
        raise OperationError(str((exc.context or {}).get("words", exc.message()))) from None


# -- documents --------------------------------------------------------------------------------


class _Document(_Block):
    """The envelope every operation document shares, checked in this order."""

    TYPES: ClassVar[tuple[str, ...]] = ()

    contract: str = _REQUIRED
    operation_id: Annotated[str, _matching(OPERATION_ID)] = Field(
        default=None, validate_default=True, alias="operationID"
    )
    type: str = _REQUIRED

    @field_validator("contract", mode="before")
    @classmethod
    def _contract(cls, value: Any) -> str:
        if value != OPERATION_CONTRACT:
            raise _field(f"must be {OPERATION_CONTRACT}")
        return OPERATION_CONTRACT

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any, info: ValidationInfo) -> str:
        if value not in cls.TYPES:
            raise _field(f"must be one of {', '.join(cls.TYPES)}")
        return str(value)

    @property
    def is_apply(self) -> bool:
        return self.type == "Apply"

    def as_json(self) -> Json:
        return {"contract": OPERATION_CONTRACT, **super().as_json()}

    @classmethod
    def parse(cls, text: str) -> Self:
        """Read and check a document; raises OperationError saying what is wrong."""
        return _read(cls, text)


def _engine_name(value: Any) -> str:
    if value not in {e.value for e in Engine}:
        raise _field(f"must be one of {', '.join(e.value for e in Engine)}")
    return str(value)


def _apply_only(info: ValidationInfo) -> bool:
    return bool(info.data.get("type") == "Apply")


def _not_read(value: Any) -> None:
    """A block the runner does not read from this document: it is for the record, or for
    another command (the `source` of a Job's `fetch` container comes on its command line)."""
    return


class MigrationDocument(_Document):
    """A PtahMigration's operation. The runner's History and Apply read it; the manager also
    writes its Resolve and Verify in this shape (read by `SourceDocument`)."""

    TYPES: ClassVar[tuple[str, ...]] = MIGRATION_OPERATION_TYPES

    engine: Annotated[str, BeforeValidator(lambda value: _engine_name(value))] = _REQUIRED
    revision_table: RevisionTableRef
    expected: tuple[ExpectedVersion, ...] | None = None
    planned_target_digest: str | None = _REQUIRED
    resource: MigrationResource = _REQUIRED
    transaction_mode: str | None = None
    content_digest: _DigestText = _REQUIRED
    source: Json | None = None
    source_policy: SourceLimits | None = None
    plan: MigrationPlanRef | None = None

    @model_validator(mode="before")
    @classmethod
    def _absent(cls, data: Any) -> Any:
        return {"expected": ABSENT, **data} if isinstance(data, dict) else data

    @field_validator("expected", mode="before")
    @classmethod
    def _expected(cls, value: Any, info: ValidationInfo) -> Any:
        apply = _apply_only(info)
        if value is ABSENT:
            if apply:
                raise _whole("an Apply must carry the expected sequence")
            return None
        if not apply:
            raise _whole("only an Apply carries an expected sequence")
        if not isinstance(value, list):
            raise _field("must be a list")
        if len(value) > MAX_EXPECTED:
            raise _field(f"holds more than {MAX_EXPECTED} versions")
        seen: set[int] = set()
        for index, item in enumerate(value):
            try:
                entry = ExpectedVersion.model_validate(item)
            except ValidationError:
                return value  # its own refusal follows, with its path
            if int(entry.version) in seen:
                raise _whole(f"expected[{index}].version appears twice")
            seen.add(int(entry.version))
        return value

    @field_validator("planned_target_digest", mode="before")
    @classmethod
    def _planned(cls, value: Any, info: ValidationInfo) -> str | None:
        return _text(value, DIGEST) if _apply_only(info) else None

    @field_validator("transaction_mode", mode="before")
    @classmethod
    def _transaction_mode(cls, value: Any) -> str | None:
        if value is not None and value not in ("file", "none"):
            raise _field('must be null, "file" or "none"')
        return None if value is None else str(value)

    @field_validator("source", "source_policy", "plan", mode="before")
    @classmethod
    def _unread(cls, value: Any) -> None:
        return _not_read(value)


class SchemaDocument(_Document):
    """A PtahSchema's operation. The runner's Observe, Plan and Apply read it; the manager also
    writes its Resolve and Verify in this shape (read by `SourceDocument`)."""

    TYPES: ClassVar[tuple[str, ...]] = SCHEMA_OPERATION_TYPES

    engine: Annotated[str, BeforeValidator(lambda value: _engine_name(value))] = _REQUIRED
    artifact_type: str | None = None
    proof: _Flag = False
    policy: OperationPolicy = _REQUIRED
    resource: SchemaResource = _REQUIRED
    scope: OperationScope = _REQUIRED
    expected_target_digest: str | None = None
    content_digest: str | None = None
    plan: SchemaPlanRef | None = None
    planned_target_digest: str | None = _REQUIRED
    source: Json | None = None
    source_policy: SourceLimits | None = None

    @model_validator(mode="before")
    @classmethod
    def _absent(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return {"contentDigest": ABSENT, "plan": ABSENT, **data}

    @field_validator("policy", "scope", mode="before")
    @classmethod
    def _or_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("expected_target_digest", mode="before")
    @classmethod
    def _expected_target(cls, value: Any) -> str | None:
        return None if value is None else _text(value, DIGEST)

    @field_validator("content_digest", mode="before")
    @classmethod
    def _content_digest(cls, value: Any, info: ValidationInfo) -> str | None:
        if _apply_only(info):
            if value is not ABSENT:
                raise _whole("an Apply reads no files: it carries no contentDigest")
            return None
        return _text(None if value is ABSENT else value, DIGEST)

    @field_validator("plan", mode="before")
    @classmethod
    def _plan(cls, value: Any, info: ValidationInfo) -> Any:
        if _apply_only(info):
            if value is ABSENT:
                raise _whole("an Apply must name its plan")
            return value
        if value is not ABSENT:
            raise _whole("only an Apply names a plan")
        return None

    @field_validator("planned_target_digest", mode="before")
    @classmethod
    def _planned(cls, value: Any, info: ValidationInfo) -> str | None:
        return _text(value, DIGEST) if _apply_only(info) else None

    @field_validator("artifact_type", "source", "source_policy", mode="before")
    @classmethod
    def _unread(cls, value: Any) -> None:
        return _not_read(value)


class SourceDocument(_Document):
    """A Resolve or a Verify, read from either family's document (other keys ignored); the
    type the command expects comes as the validation context."""

    source: Source
    resource: ResourceRef = _REQUIRED
    source_policy: SourceLimits | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any, info: ValidationInfo) -> str:
        expected = (info.context or {}).get("type")
        if value != expected:
            raise _field(f"must be {expected}")
        return str(value)

    @field_validator("source", mode="before")
    @classmethod
    def _source(cls, value: Any, info: ValidationInfo) -> Source:
        verify = (info.context or {}).get("type") == "Verify"
        source = parse_source(value, pinned=verify)
        if verify and not isinstance(source, ArtifactSource):
            raise _whole('a Verify reads an "Artifact" source')
        return source

    @property
    def max_bytes(self) -> int | None:
        """`sourcePolicy.maxBytes` (Resolve of a Git source): the selected files' size limit."""
        return self.source_policy.max_bytes if self.source_policy is not None else None


def parse_source_operation(text: str, expected_type: str) -> SourceDocument:
    """Read and check a Resolve or Verify operation document."""
    return _read(SourceDocument, text, {"type": expected_type})


def is_schema_document(text: str) -> bool:
    """Whether a document names a PtahSchema (so the schema commands read it). Anything that is
    not even JSON is left to the migration reader, which says what is wrong with it."""
    try:
        raw = json.loads(text)
    except (ValueError, TypeError):
        return False
    if not isinstance(raw, dict):
        return False
    resource = raw.get("resource")
    return isinstance(resource, dict) and resource.get("kind") == SCHEMA_KIND
