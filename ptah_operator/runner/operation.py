"""The operation document a runner is given (`PTAH_OPERATION`, contract `ptah.run/operation/v1`).

The controller writes it into the Job (reconcile/jobs.py `operation_document`); the runner
reads it here and refuses anything it cannot trust to mean one thing. See
docs/design/migration-path.md for the contract. Pure: no I/O, no environment.

Versions travel as the strings the files spell them (`0000000001`) and checksums as
`sha256:<hex>`; `expected_migrations()` turns them into what the engine compares under its
lock (an integer version and the bare hex checksum).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ptah_operator.engine.migrations.apply import ExpectedMigration, TransactionMode
from ptah_operator.engine.migrations.connection import Engine
from ptah_operator.engine.migrations.revision_table import RevisionTable

OPERATION_CONTRACT = "ptah.run/operation/v1"
OPERATION_TYPES = ("History", "Apply")
RESOURCE_KINDS = ("PtahMigration",)
MAX_EXPECTED = 1000

_OPERATION_ID = re.compile(r"^op-[0-9a-f]{10}$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_VERSION = re.compile(r"^[0-9]{1,18}$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class OperationError(ValueError):
    """The operation document cannot be used. The message names the field, never a value that
    could be a secret (the document holds none, but a mistaken one might)."""


@dataclass(frozen=True)
class ResourceRef:
    kind: str
    namespace: str
    name: str
    uid: str

    def as_json(self) -> dict[str, str]:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name, "uid": self.uid}


@dataclass(frozen=True)
class ExpectedVersion:
    """One migration of the approved sequence, as the plan spells it."""

    version: str
    checksum: str


@dataclass(frozen=True)
class Operation:
    operation_id: str
    type: str
    resource: ResourceRef
    engine: Engine
    revision_table: RevisionTable
    transaction_mode: TransactionMode | None
    content_digest: str
    expected: tuple[ExpectedVersion, ...] | None = None
    planned_target_digest: str | None = None

    @property
    def is_apply(self) -> bool:
        return self.type == "Apply"

    def expected_migrations(self) -> list[ExpectedMigration] | None:
        if self.expected is None:
            return None
        return [
            ExpectedMigration(int(e.version), e.checksum.removeprefix("sha256:"))
            for e in self.expected
        ]


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OperationError(f"{where} must be a JSON object")
    return value


def _string(doc: dict[str, Any], key: str, where: str, pattern: re.Pattern[str] | None) -> str:
    value = doc.get(key)
    if not isinstance(value, str) or not value:
        raise OperationError(f"{where}{key} must be a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise OperationError(f"{where}{key} is not well formed")
    return value


def _resource(value: Any) -> ResourceRef:
    doc = _object(value, "resource")
    kind = _string(doc, "kind", "resource.", None)
    if kind not in RESOURCE_KINDS:
        raise OperationError(f"resource.kind must be one of {', '.join(RESOURCE_KINDS)}")
    uid = _string(doc, "uid", "resource.", None)
    if len(uid) > 128:
        raise OperationError("resource.uid is too long")
    return ResourceRef(
        kind=kind,
        namespace=_string(doc, "namespace", "resource.", _DNS_LABEL),
        name=_string(doc, "name", "resource.", _DNS_SUBDOMAIN),
        uid=uid,
    )


def _revision_table(value: Any) -> RevisionTable:
    doc = _object(value, "revisionTable")
    name = _string(doc, "name", "revisionTable.", _IDENTIFIER)
    schema = doc.get("schema")
    if schema is not None and (not isinstance(schema, str) or not _IDENTIFIER.match(schema)):
        raise OperationError("revisionTable.schema must be null or a plain identifier")
    return RevisionTable(name=name, schema=schema)


def _transaction_mode(value: Any) -> TransactionMode | None:
    if value is None:
        return None
    if value not in ("file", "none"):
        raise OperationError('transactionMode must be null, "file" or "none"')
    return TransactionMode(value)


def _expected(value: Any) -> tuple[ExpectedVersion, ...]:
    if not isinstance(value, list):
        raise OperationError("expected must be a list")
    if len(value) > MAX_EXPECTED:
        raise OperationError(f"expected holds more than {MAX_EXPECTED} versions")
    out: list[ExpectedVersion] = []
    seen: set[int] = set()
    for index, item in enumerate(value):
        where = f"expected[{index}]."
        entry = _object(item, f"expected[{index}]")
        version = _string(entry, "version", where, _VERSION)
        checksum = _string(entry, "checksum", where, _DIGEST)
        if int(version) in seen:
            raise OperationError(f"{where}version appears twice")
        seen.add(int(version))
        out.append(ExpectedVersion(version, checksum))
    return tuple(out)


def parse_operation(text: str) -> Operation:
    """Read and check an operation document; raises OperationError saying what is wrong."""
    try:
        raw = json.loads(text)
    except (ValueError, TypeError):
        raise OperationError("PTAH_OPERATION is not JSON") from None
    doc = _object(raw, "the operation document")
    if doc.get("contract") != OPERATION_CONTRACT:
        raise OperationError(f"contract must be {OPERATION_CONTRACT}")
    operation_id = _string(doc, "operationID", "", _OPERATION_ID)
    kind = doc.get("type")
    if kind not in OPERATION_TYPES:
        raise OperationError(f"type must be one of {', '.join(OPERATION_TYPES)}")
    engine_name = doc.get("engine")
    if engine_name not in {e.value for e in Engine}:
        raise OperationError(f"engine must be one of {', '.join(e.value for e in Engine)}")
    if "revisionTable" not in doc:
        raise OperationError("revisionTable is missing")
    expected: tuple[ExpectedVersion, ...] | None = None
    planned: str | None = None
    if kind == "Apply":
        if "expected" not in doc:
            raise OperationError("an Apply must carry the expected sequence")
        expected = _expected(doc["expected"])
        planned = _string(doc, "plannedTargetDigest", "", _DIGEST)
    elif "expected" in doc:
        raise OperationError("only an Apply carries an expected sequence")
    return Operation(
        operation_id=operation_id,
        type=str(kind),
        resource=_resource(doc.get("resource")),
        engine=Engine(engine_name),
        revision_table=_revision_table(doc["revisionTable"]),
        transaction_mode=_transaction_mode(doc.get("transactionMode")),
        content_digest=_string(doc, "contentDigest", "", _DIGEST),
        expected=expected,
        planned_target_digest=planned,
    )


SCHEMA_KIND = "PtahSchema"


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
