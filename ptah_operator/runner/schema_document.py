"""The result a PtahSchema's Observe, Plan or Apply reports (contract `ptah.run/result/v1`), built
from the engine's own findings, and the pieces a plan file is uploaded in. Pure: no I/O, no
clock (times come in as arguments).

The shapes are docs/design/schema-path.md's, read by the manager with api/contracts/result.py:

- `drift` (Observe): the digest of the raw drift report (which stays here), the dialect, the
  total, the highest severity and, per category of the engine's fixed list, the count and the
  highest severity (SCH-54, PRIV-03).
- `plan` (Plan): `changes`, the fingerprints, and with changes the plan file's digest (SHA-256
  of its bytes), size and statement count, its severity, the first findings (one per statement
  that is not safe, the most severe first), the protected tables it would change and the
  pieces it was uploaded in.
- `apply` (Apply): the outcome, the reason, the digest of the bytes hashed before running,
  how many statements ran, and where it stopped (position, SQLSTATE, errno).

Severities are the API's: the engine's safe, warning, privilege and destructive become Low,
Medium, High and Critical. Nothing here carries SQL, a server message or a row: findings name
a category, a severity, a table and a statement's position.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ptah_operator.api.constants import (
    MAX_CHUNK_CHARS,
    MAX_DRIFT_CATEGORIES,
    MAX_PLAN_CHUNKS,
    MAX_PLAN_FINDINGS,
)
from ptah_operator.engine.schema.diff import CATEGORIES, Statement
from ptah_operator.engine.schema.plan import Policy, policy_refusals
from ptah_operator.engine.schema.severity import Severity, highest
from ptah_operator.runner.document import Json
from ptah_operator.runner.envelope import present

MAX_REPORTED_TABLES = 100
MAX_PIECE_BYTES = MAX_CHUNK_CHARS
"""A piece holds at most as many UTF-8 bytes as a chunk holds characters (256 KiB)."""
MAX_OBJECT_CHARS = 256

SEVERITIES = {
    Severity.SAFE: "Low",
    Severity.WARNING: "Medium",
    Severity.PRIVILEGE: "High",
    Severity.DESTRUCTIVE: "Critical",
}
"""The engine's severities as the API spells them (api.constants.Severity)."""

FINDING_CODES = {
    Severity.WARNING: "RiskyChange",
    Severity.PRIVILEGE: "PrivilegeChange",
    Severity.DESTRUCTIVE: "DestructiveChange",
}
"""A finding per statement that is not safe; its code says which kind of care it needs."""


class ApplyReason:
    """`apply.reason` values the runner adds to the engine's own (PlanDigestMismatch,
    PolicyRefused, PlanUnparseable, DialectMismatch, LockNotAcquired, StalePlan,
    ApplyOutcomeUnknown)."""

    PLAN_DIGEST_MISMATCH = "PlanDigestMismatch"
    TARGET_IDENTITY_CHANGED = "TargetIdentityChanged"
    PLAN_UNAVAILABLE = "PlanUnavailable"
    APPLY_OUTCOME_UNKNOWN = "ApplyOutcomeUnknown"
    NOT_STARTED = "NotStarted"


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _highest(statements: Sequence[Statement]) -> str | None:
    top = highest([s.severity for s in statements])
    return SEVERITIES[top] if top is not None else None


def drift_block(dialect: str, statements: Sequence[Statement], digest: str) -> Json:
    """Observe's `drift`: aggregates only; `digest` is the engine's digest of the detail."""
    by_category: dict[str, list[Statement]] = {}
    for statement in statements:
        by_category.setdefault(statement.category, []).append(statement)
    order = [c for c in CATEGORIES if c in by_category]
    order += sorted(c for c in by_category if c not in CATEGORIES)
    return {
        "digest": digest,
        "dialect": dialect,
        "total": len(statements),
        "highestSeverity": _highest(statements),
        "categories": [
            {
                "category": category,
                "count": len(by_category[category]),
                "highestSeverity": _highest(by_category[category]),
            }
            for category in order[:MAX_DRIFT_CATEGORIES]
        ],
    }


@dataclass(frozen=True)
class Piece:
    """One piece of the plan file as it is uploaded (and becomes one chunk)."""

    index: int
    text: str
    digest: str
    """SHA-256 of the piece's UTF-8 bytes."""
    size: int
    """The piece's length in UTF-8 bytes."""

    def as_json(self) -> Json:
        return {"index": self.index, "digest": self.digest, "size": self.size}


class PlanTooLargeError(ValueError):
    """The plan file needs more pieces than a plan may have chunks."""


def _cut(text: str, max_chars: int, max_bytes: int) -> list[str]:
    parts: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + max_chars, len(text))
        data = text[start:end].encode("utf-8")
        if len(data) > max_bytes:
            # As many whole characters as the bytes allow (a cut character is left out).
            end = start + max(1, len(data[:max_bytes].decode("utf-8", "ignore")))
        parts.append(text[start:end])
        start = end
    return parts


def plan_pieces(
    plan_bytes: bytes, max_chars: int = MAX_CHUNK_CHARS, max_bytes: int = MAX_PIECE_BYTES
) -> list[Piece]:
    """The plan file cut into pieces of at most `max_chars` characters and `max_bytes` UTF-8
    bytes (never inside a character), in order: joined, their UTF-8 bytes are the file's bytes
    exactly. The byte bound keeps each piece's record and chunk far below what the API server
    stores in one object, whatever characters the plan holds."""
    text = plan_bytes.decode("utf-8")
    parts = _cut(text, max_chars, max_bytes)
    if len(parts) > MAX_PLAN_CHUNKS:
        raise PlanTooLargeError(
            f"the plan file of {len(plan_bytes)} bytes needs {len(parts)} pieces; "
            f"a plan holds at most {MAX_PLAN_CHUNKS}"
        )
    pieces = []
    for index, part in enumerate(parts):
        data = part.encode("utf-8")
        pieces.append(Piece(index, part, sha256_digest(data), len(data)))
    return pieces


def protected_tables(statements: Sequence[Statement], patterns: Sequence[str]) -> list[str]:
    """The tables the statements change that the policy's patterns protect (schema.table or
    table, globs), as the engine's own policy check names them."""
    if not patterns:
        return []
    refusals = policy_refusals(list(statements), Policy(tuple(patterns), allow_destructive=True))
    for refusal in refusals:
        if refusal["reason"] == "ProtectedTable":
            return [str(t)[:MAX_OBJECT_CHARS] for t in refusal["tables"]][:MAX_REPORTED_TABLES]
    return []


def findings(statements: Sequence[Statement]) -> tuple[list[Json], int]:
    """One finding per statement that is not safe, the most severe first (then in plan order),
    the first MAX_PLAN_FINDINGS of them, and how many there are."""
    noted = [(i, s, code) for i, s in enumerate(statements) for code in _codes(s)]
    noted.sort(key=lambda item: (-item[1].severity.rank, item[0]))
    listed: list[Json] = []
    for index, statement, code in noted[:MAX_PLAN_FINDINGS]:
        finding: Json = {
            "code": code,
            "severity": SEVERITIES[statement.severity],
            "category": statement.category,
            "statementIndex": index,
        }
        if statement.tables:
            finding["object"] = statement.tables[0][:MAX_OBJECT_CHARS]
        if code == LOOKS_LIKE_RENAME and statement.looks_like_rename_to is not None:
            finding["related"] = statement.looks_like_rename_to[:MAX_OBJECT_CHARS]
        listed.append(finding)
    return listed, len(noted)


LOOKS_LIKE_RENAME = "LooksLikeRename"
"""A drop of what has the shape of something the same plan adds: a rename, planned as a drop
and an add, loses the data."""


def _codes(statement: Statement) -> list[str]:
    codes = [] if statement.severity is Severity.SAFE else [FINDING_CODES[statement.severity]]
    if statement.looks_like_rename_to is not None:
        codes.append(LOOKS_LIKE_RENAME)
    return codes


def plan_block(
    *,
    dialect: str,
    observed_fingerprint: str,
    desired_fingerprint: str,
    statements: Sequence[Statement],
    plan_bytes: bytes,
    pieces: Sequence[Piece],
    protected: Sequence[str],
    trial: Json | None = None,
) -> Json:
    """Plan's `plan`. Without statements it says only that nothing changes, and between which
    fingerprints: no digest, no pieces (nothing is published)."""
    block: Json = {
        "changes": bool(statements),
        "dialect": dialect,
        "observedFingerprint": observed_fingerprint,
        "desiredFingerprint": desired_fingerprint,
    }
    if not statements:
        return block
    listed, total = findings(statements)
    counts = Counter(s.severity for s in statements)
    block.update(
        digest=sha256_digest(plan_bytes),
        size=len(plan_bytes),
        statementCount=len(statements),
        severity={
            "highest": _highest(statements),
            "destructive": counts[Severity.DESTRUCTIVE] > 0,
            "privilegeChange": counts[Severity.PRIVILEGE] > 0,
        },
        findings=listed,
        findingsTotal=total,
        protectedTables=list(protected),
        pieces=[p.as_json() for p in pieces],
    )
    if trial is not None:
        # What the Apply path tried of these bytes before they were published: counts and
        # the names of the checks, never a statement or a row.
        block["trial"] = trial
    return block


def apply_block(
    outcome: str,
    *,
    reason: str | None = None,
    plan_digest: str | None = None,
    executed: int = 0,
    failure: Json | None = None,
) -> Json:
    """Apply's `apply`: Applied, Refused (nothing ran) or Unknown."""
    return {
        "outcome": outcome,
        "statementsExecuted": executed,
        **present({"reason": reason, "planDigest": plan_digest, "failure": failure}),
    }


def failure_block(detail: dict[str, Any]) -> Json:
    """Where an Apply stopped, from the engine's detail: the statement's position and the
    database's error class (SQLSTATE or errno), never the error's text."""
    statement = detail.get("statement")
    sqlstate = detail.get("sqlstate")
    errno = detail.get("errno")
    return {
        "statementIndex": statement if isinstance(statement, int) and statement >= 0 else None,
        "sqlstate": sqlstate if isinstance(sqlstate, str) and len(sqlstate) == 5 else None,
        "mysqlErrno": errno if isinstance(errno, int) and errno >= 0 else None,
    }


def describe_schema(document: dict[str, Any]) -> str:
    """A one-line summary for the termination message: counts and outcomes, no text from the
    database or the files."""
    kind = str(document["type"])
    drift = document.get("drift")
    if isinstance(drift, dict):
        return f"{kind}: {drift['total']} difference(s)"
    plan = document.get("plan")
    if isinstance(plan, dict):
        if not plan["changes"]:
            return f"{kind}: no change"
        return f"{kind}: {plan['statementCount']} statement(s) in {len(plan['pieces'])} piece(s)"
    applied = document.get("apply")
    if isinstance(applied, dict):
        reason = applied.get("reason")
        text = f"{kind} {applied['outcome']}"
        if reason:
            text += f" ({reason})"
        return f"{text}, {applied['statementsExecuted']} statement(s) executed"
    return kind
