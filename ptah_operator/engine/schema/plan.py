"""The plan file: deterministic bytes, their digest, and the policy they are held to.

    {
      "contractVersion": "ptah.schema.plan/v1",
      "dialect": "postgresql",
      "scope": {"schemas": [...], "tables": [...], "exclude": [...]},
      "observedFingerprint": "sha256:...",   # the schema it was planned from
      "desiredFingerprint": "sha256:...",
      "transactional": true,                 # PostgreSQL: apply in one transaction
      "summary": {"total": 3, "highestSeverity": "warning", "categories": {...}},
      "statements": [{"index": 0, "sql": "...", "severity": "safe", "category": "...",
                      "reason": "...", "tables": [...], "transactional": true,
                      "requires": [...]}, ...],     # MySQL: what the rows must satisfy
      "digest": "sha256:..."                 # of the same document without "digest"
    }

The encoding is fixed (sorted keys, two-space indent, UTF-8, one final newline) and carries no
time, host or random value, so the same inputs give byte-identical files in any process.
`read_plan` accepts only bytes that re-encode to themselves and whose digest holds.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ptah_operator.engine.schema.diff import CATEGORIES, Requirement, Statement
from ptah_operator.engine.schema.model import Dialect, Schema
from ptah_operator.engine.schema.normalize import parse_expression
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.severity import Severity, highest

PLAN_CONTRACT_VERSION = "ptah.schema.plan/v1"


class PlanFileError(ValueError):
    """Bytes that are not an intact plan file."""


def encode(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def digest_of(document: dict[str, Any]) -> str:
    body = {k: v for k, v in document.items() if k != "digest"}
    return "sha256:" + hashlib.sha256(encode(body)).hexdigest()


def summarize(statements: list[Statement]) -> dict[str, Any]:
    """Counts per category of `CATEGORIES`: bounded whatever the size of the plan."""
    counts = Counter(s.category for s in statements)
    top = highest([s.severity for s in statements])
    return {
        "total": len(statements),
        "highestSeverity": top.value if top else None,
        "categories": {c: counts[c] for c in CATEGORIES if counts[c]},
    }


def build_plan(
    observed: Schema, desired: Schema, scope: Scope, statements: list[Statement]
) -> bytes:
    document: dict[str, Any] = {
        "contractVersion": PLAN_CONTRACT_VERSION,
        "dialect": observed.dialect.value,
        "scope": scope.to_json(),
        "observedFingerprint": observed.fingerprint(),
        "desiredFingerprint": desired.fingerprint(),
        "transactional": observed.dialect is Dialect.POSTGRESQL
        and all(s.transactional for s in statements),
        "summary": summarize(statements),
        "statements": [{"index": i, **s.to_json()} for i, s in enumerate(statements)],
    }
    document["digest"] = digest_of(document)
    return encode(document)


@dataclass(frozen=True)
class Plan:
    raw: bytes
    document: dict[str, Any]

    @property
    def digest(self) -> str:
        value: str = self.document["digest"]
        return value

    @property
    def dialect(self) -> Dialect:
        return Dialect(self.document["dialect"])

    @property
    def scope(self) -> Scope:
        return Scope.from_json(self.document["scope"])

    @property
    def observed_fingerprint(self) -> str:
        value: str = self.document["observedFingerprint"]
        return value

    @property
    def transactional(self) -> bool:
        return bool(self.document["transactional"])

    @property
    def statements(self) -> list[Statement]:
        return [
            Statement(
                sql=s["sql"],
                severity=Severity(s["severity"]),
                category=s["category"],
                reason=s["reason"],
                tables=tuple(s["tables"]),
                transactional=s["transactional"],
                requires=tuple(Requirement.from_json(r) for r in s.get("requires", ())),
                looks_like_rename_to=s.get("looksLikeRenameTo"),
            )
            for s in self.document["statements"]
        ]


def read_plan(raw: bytes) -> Plan:
    """The plan in `raw`, after hashing exactly these bytes; refuses anything altered."""
    try:
        document = json.loads(raw.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PlanFileError("the plan file is not JSON") from error
    if not isinstance(document, dict) or document.get("contractVersion") != PLAN_CONTRACT_VERSION:
        raise PlanFileError("the plan file has another contract version")
    if encode(document) != raw:
        raise PlanFileError("the plan file is not in its canonical encoding")
    if document.get("digest") != digest_of(document):
        raise PlanFileError("the plan file's digest does not match its content")
    plan = Plan(raw=raw, document=document)
    try:
        for statement in plan.statements:
            for requirement in statement.requires:
                _check_requirement(plan.dialect, requirement)
    except (KeyError, TypeError, ValueError) as error:
        raise PlanFileError("the plan file's statements are malformed") from error
    return plan


_REQUIREMENT_KINDS = frozenset({"unique", "notNull", "check", "references"})


def _check_requirement(dialect: Dialect, requirement: Requirement) -> None:
    """A requirement is data the checks spell into a SELECT: names (quoted there), prefix
    lengths, and for a check one expression."""
    names = [requirement.table, *requirement.columns, *requirement.ref_columns]
    if requirement.ref_table is not None:
        names.append(requirement.ref_table)
    if requirement.kind not in _REQUIREMENT_KINDS or not all(
        isinstance(n, str) and n for n in names
    ):
        raise ValueError("a requirement of an unknown kind or without names")
    if not all(p is None or (isinstance(p, int) and p > 0) for p in requirement.prefixes):
        raise ValueError("a prefix length that is not a positive number")
    if requirement.prefixes and len(requirement.prefixes) != len(requirement.columns):
        raise ValueError("prefix lengths that do not match the columns")
    if len(requirement.ref_columns) not in {0, len(requirement.columns)}:
        raise ValueError("referenced columns that do not match the columns")
    if requirement.kind == "check":
        parse_expression(dialect, requirement.expression or "", "a requirement's expression")


@dataclass(frozen=True)
class Policy:
    # Glob patterns matched against `schema.table` and `table`.
    protected_tables: tuple[str, ...] = ()
    allow_destructive: bool = False


def policy_refusals(statements: list[Statement], policy: Policy) -> list[dict[str, Any]]:
    """Why `policy` refuses these statements (empty: it accepts them). Names tables, no SQL."""
    refusals: list[dict[str, Any]] = []
    touched = sorted(
        {
            table
            for s in statements
            for table in s.tables
            if any(
                fnmatch.fnmatchcase(name, pattern)
                for name in {table, table.rsplit(".", 1)[-1]}
                for pattern in policy.protected_tables
            )
        }
    )
    if touched:
        refusals.append({"reason": "ProtectedTable", "tables": touched})
    destructive = sum(1 for s in statements if s.severity is Severity.DESTRUCTIVE)
    if destructive and not policy.allow_destructive:
        refusals.append({"reason": "DestructiveChangeNotAllowed", "statements": destructive})
    return refusals
