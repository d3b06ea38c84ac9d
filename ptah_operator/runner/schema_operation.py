"""The operation document of a PtahSchema's Observe, Plan and Apply (`PTAH_OPERATION`, contract
`ptah.run/operation/v1`), read and checked. Pure: no I/O, no environment.

The controller writes it (reconcile/schema/jobs.py `operation_document`); the contract is in
docs/design/schema-path.md. What the runner takes from it:

- `scope` {schemas, includeTables, excludeTables}: the engine's scope (`--schema`, `--table`,
  `--exclude`). No schema named means the engine's default (`public`; MySQL/MariaDB ignore it,
  their scope is the URL's database).
- `policy` {allowDestructive, protectedTables, lockTimeoutSeconds, statementTimeoutSeconds}: a
  Plan names the protected tables its plan would change (the manager judges); an Apply holds
  the plan to it once more before it runs; both hold every statement of the dry run and of
  the Apply to the timeouts (lock 30 s when absent, statement none; 0 is no limit).
- `contentDigest` (Observe, Plan): the files must still give it.
- `plan` {name, uid, fingerprint, digest, size, observedFingerprint, chunks} and
  `plannedTargetDigest` (Apply): the bytes fetched must give `plan.digest`, and the database must
  be `plannedTargetDigest`, or nothing runs.

Anything else is refused with a message that names the field, never its value.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from ptah_operator.api.constants import MAX_PLAN_CHUNKS
from ptah_operator.engine.migrations.connection import Engine
from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.timeouts import Timeouts
from ptah_operator.runner.operation import (
    OPERATION_CONTRACT,
    SCHEMA_KIND,
    OperationError,
    ResourceRef,
)

SCHEMA_OPERATION_TYPES = ("Observe", "Plan", "Apply")
MAX_SCOPE_ENTRIES = 256
MAX_PATTERN_CHARS = 256

_OPERATION_ID = re.compile(r"^op-[0-9a-f]{10}$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


@dataclass(frozen=True)
class PlanBinding:
    """The published plan an Apply runs, as its document names it."""

    name: str
    uid: str
    fingerprint: str
    digest: str
    """SHA-256 of the plan file's bytes (the chunks joined): what the fetched bytes must give."""
    size: int
    observed_fingerprint: str
    chunks: int


@dataclass(frozen=True)
class SchemaOperation:
    operation_id: str
    type: str
    resource: ResourceRef
    engine: Engine
    scope: Scope
    protected_tables: tuple[str, ...]
    allow_destructive: bool
    timeouts: Timeouts = dataclasses.field(default_factory=Timeouts)
    content_digest: str | None = None
    expected_target_digest: str | None = None
    proof: bool = False
    plan: PlanBinding | None = None
    planned_target_digest: str | None = None

    @property
    def is_apply(self) -> bool:
        return self.type == "Apply"

    @property
    def policy(self) -> Policy:
        """The schema's policy, as the engine holds a plan to it."""
        return Policy(self.protected_tables, self.allow_destructive)


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


def _count(doc: dict[str, Any], key: str, where: str, low: int, high: int | None) -> int:
    value = doc.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise OperationError(f"{where}{key} must be an integer of at least {low}")
    if high is not None and value > high:
        raise OperationError(f"{where}{key} must be at most {high}")
    return value


def _resource(value: Any) -> ResourceRef:
    doc = _object(value, "resource")
    if doc.get("kind") != SCHEMA_KIND:
        raise OperationError(f"resource.kind must be {SCHEMA_KIND}")
    uid = _string(doc, "uid", "resource.", None)
    if len(uid) > 128:
        raise OperationError("resource.uid is too long")
    return ResourceRef(
        kind=SCHEMA_KIND,
        namespace=_string(doc, "namespace", "resource.", _DNS_LABEL),
        name=_string(doc, "name", "resource.", _DNS_SUBDOMAIN),
        uid=uid,
    )


def _patterns(doc: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = doc.get(key, [])
    if value is None:
        return ()
    if not isinstance(value, list):
        raise OperationError(f"{where}{key} must be a list")
    if len(value) > MAX_SCOPE_ENTRIES:
        raise OperationError(f"{where}{key} holds more than {MAX_SCOPE_ENTRIES} entries")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item or len(item) > MAX_PATTERN_CHARS:
            raise OperationError(f"{where}{key} must hold non-empty strings")
        out.append(item)
    return tuple(out)


def _scope(value: Any) -> Scope:
    doc = _object(value if value is not None else {}, "scope")
    schemas = _patterns(doc, "schemas", "scope.")
    return Scope(
        schemas=schemas or Scope().schemas,
        tables=_patterns(doc, "includeTables", "scope."),
        exclude=_patterns(doc, "excludeTables", "scope."),
    )


def _policy(value: Any) -> tuple[tuple[str, ...], bool, Timeouts]:
    doc = _object(value if value is not None else {}, "policy")
    allow = doc.get("allowDestructive", False)
    if not isinstance(allow, bool):
        raise OperationError("policy.allowDestructive must be true or false")
    lock = _seconds(doc, "lockTimeoutSeconds")
    timeouts = Timeouts(
        lock=Timeouts().lock if lock is None else lock or None,
        statement=_seconds(doc, "statementTimeoutSeconds") or None,
    )
    return _patterns(doc, "protectedTables", "policy."), allow, timeouts


# MySQL's own upper bound for lock_wait_timeout.
_MAX_SECONDS = 365 * 24 * 3600


def _seconds(doc: dict[str, Any], key: str) -> float | None:
    value = doc.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 <= value <= _MAX_SECONDS
    ):
        raise OperationError(
            f"policy.{key} must be a number of seconds (0: no limit), at most a year"
        )
    return float(value)


def _plan(value: Any) -> PlanBinding:
    doc = _object(value, "plan")
    return PlanBinding(
        name=_string(doc, "name", "plan.", _DNS_SUBDOMAIN),
        uid=_string(doc, "uid", "plan.", None),
        fingerprint=_string(doc, "fingerprint", "plan.", _DIGEST),
        digest=_string(doc, "digest", "plan.", _DIGEST),
        size=_count(doc, "size", "plan.", 0, None),
        observed_fingerprint=_string(doc, "observedFingerprint", "plan.", _DIGEST),
        chunks=_count(doc, "chunks", "plan.", 1, MAX_PLAN_CHUNKS),
    )


def _optional_digest(doc: dict[str, Any], key: str) -> str | None:
    if doc.get(key) is None:
        return None
    return _string(doc, key, "", _DIGEST)


def parse_schema_operation(text: str) -> SchemaOperation:
    """Read and check a PtahSchema's Observe, Plan or Apply document; raises OperationError
    saying what is wrong."""
    try:
        raw = json.loads(text)
    except (ValueError, TypeError):
        raise OperationError("PTAH_OPERATION is not JSON") from None
    doc = _object(raw, "the operation document")
    if doc.get("contract") != OPERATION_CONTRACT:
        raise OperationError(f"contract must be {OPERATION_CONTRACT}")
    operation_id = _string(doc, "operationID", "", _OPERATION_ID)
    kind = doc.get("type")
    if kind not in SCHEMA_OPERATION_TYPES:
        raise OperationError(f"type must be one of {', '.join(SCHEMA_OPERATION_TYPES)}")
    engine_name = doc.get("engine")
    if engine_name not in {e.value for e in Engine}:
        raise OperationError(f"engine must be one of {', '.join(e.value for e in Engine)}")
    proof = doc.get("proof", False)
    if not isinstance(proof, bool):
        raise OperationError("proof must be true or false")
    protected, allow_destructive, timeouts = _policy(doc.get("policy"))
    operation = SchemaOperation(
        operation_id=operation_id,
        type=str(kind),
        resource=_resource(doc.get("resource")),
        engine=Engine(engine_name),
        scope=_scope(doc.get("scope")),
        protected_tables=protected,
        allow_destructive=allow_destructive,
        timeouts=timeouts,
        expected_target_digest=_optional_digest(doc, "expectedTargetDigest"),
        proof=proof,
    )
    if kind == "Apply":
        if "contentDigest" in doc:
            raise OperationError("an Apply reads no files: it carries no contentDigest")
        if "plan" not in doc:
            raise OperationError("an Apply must name its plan")
        return dataclasses.replace(
            operation,
            plan=_plan(doc["plan"]),
            planned_target_digest=_string(doc, "plannedTargetDigest", "", _DIGEST),
        )
    if "plan" in doc:
        raise OperationError("only an Apply names a plan")
    return dataclasses.replace(operation, content_digest=_string(doc, "contentDigest", "", _DIGEST))
