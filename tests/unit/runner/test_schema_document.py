"""What a schema operation reports, built from the engine's statements: severities in the API's
words, drift aggregates, findings without SQL, the pieces a plan file is cut into, and
documents that the manager's reader (reconcile/schema/results.py) takes as they are."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from ptah_operator.api.constants import OperationType
from ptah_operator.api.contracts.result import SchemaOperationReport
from ptah_operator.engine.schema.diff import Statement
from ptah_operator.engine.schema.severity import Severity
from ptah_operator.reconcile.reports import Unreadable, read_report
from ptah_operator.reconcile.world import OperationResult
from ptah_operator.runner.document import ErrorBlock, result_document
from ptah_operator.runner.schema import SchemaOperation, parse_schema_operation
from ptah_operator.runner.schema_document import (
    PlanTooLargeError,
    apply_block,
    describe_schema,
    drift_block,
    failure_block,
    findings,
    plan_block,
    plan_pieces,
    protected_tables,
    sha256_digest,
)

T0 = dt.datetime(2026, 8, 30, 12, 0, tzinfo=dt.UTC)
UID = "u-1"


def _statement(
    severity: Severity, category: str, tables: tuple[str, ...] = ("public.t",)
) -> Statement:
    return Statement(
        sql=f"SQL-TEXT {category}",
        severity=severity,
        category=category,
        reason=f"reason {category}",
        tables=tables,
    )


STATEMENTS = [
    _statement(Severity.SAFE, "tables_added", ("public.a",)),
    _statement(Severity.WARNING, "indexes_removed", ("public.b",)),
    _statement(Severity.DESTRUCTIVE, "columns_removed", ("public.accounts",)),
    _statement(Severity.PRIVILEGE, "grants_added", ("public.a",)),
    _statement(Severity.SAFE, "tables_added", ("public.c",)),
]


def _operation(kind: str) -> SchemaOperation:
    document: dict[str, object] = {
        "contract": "ptah.run/operation/v1",
        "operationID": "op-0123456789",
        "type": kind,
        "resource": {"kind": "PtahSchema", "namespace": "app", "name": "shop", "uid": UID},
        "engine": "PostgreSQL",
        "scope": {},
        "policy": {},
    }
    if kind == "Apply":
        document["plan"] = {
            "name": "shop-1",
            "uid": "p",
            "fingerprint": "sha256:" + "1" * 64,
            "digest": "sha256:" + "2" * 64,
            "size": 10,
            "observedFingerprint": "sha256:" + "3" * 64,
            "chunks": 1,
        }
        document["plannedTargetDigest"] = "sha256:" + "4" * 64
    else:
        document["contentDigest"] = "sha256:" + "5" * 64
    return parse_schema_operation(json.dumps(document))


def _read(document: dict[str, Any], kind: OperationType) -> SchemaOperationReport:
    result = OperationResult("op-0123456789", kind.value, T0, document)
    read = read_report(result, SchemaOperationReport, "op-0123456789", kind, UID)
    assert not isinstance(read, Unreadable), read
    return read


def test_drift_is_aggregates_in_the_apis_severities() -> None:
    block = drift_block("postgresql", STATEMENTS, "sha256:" + "f" * 64)
    assert block["total"] == 5
    assert block["highestSeverity"] == "Critical"
    assert block["categories"] == [
        {"category": "tables_added", "count": 2, "highestSeverity": "Low"},
        {"category": "columns_removed", "count": 1, "highestSeverity": "Critical"},
        {"category": "indexes_removed", "count": 1, "highestSeverity": "Medium"},
        {"category": "grants_added", "count": 1, "highestSeverity": "High"},
    ]
    assert "SQL-TEXT" not in json.dumps(block)
    assert "public" not in json.dumps(block)
    empty = drift_block("mariadb", [], "sha256:" + "f" * 64)
    assert (empty["total"], empty["highestSeverity"], empty["categories"]) == (0, None, [])


def test_findings_name_the_riskiest_statements_first_without_sql() -> None:
    listed, total = findings(STATEMENTS)
    assert total == 3
    assert listed == [
        {
            "code": "DestructiveChange",
            "severity": "Critical",
            "category": "columns_removed",
            "statementIndex": 2,
            "object": "public.accounts",
        },
        {
            "code": "PrivilegeChange",
            "severity": "High",
            "category": "grants_added",
            "statementIndex": 3,
            "object": "public.a",
        },
        {
            "code": "RiskyChange",
            "severity": "Medium",
            "category": "indexes_removed",
            "statementIndex": 1,
            "object": "public.b",
        },
    ]
    many, counted = findings([_statement(Severity.WARNING, "views_changed")] * 100)
    assert (len(many), counted) == (64, 100)


def test_protected_tables_are_those_the_policy_patterns_match() -> None:
    assert protected_tables(STATEMENTS, ["public.accounts"]) == ["public.accounts"]
    assert protected_tables(STATEMENTS, ["accounts", "b"]) == ["public.accounts", "public.b"]
    assert protected_tables(STATEMENTS, ["public.*"]) == [
        "public.a",
        "public.accounts",
        "public.b",
        "public.c",
    ]
    assert protected_tables(STATEMENTS, []) == []


def test_pieces_join_to_the_plan_file_and_stay_within_the_bounds() -> None:
    data = ("a" * 300_000 + "\u20ac" * 100_000 + "\U0001f600" * 70_000).encode()
    pieces = plan_pieces(data)
    assert b"".join(p.text.encode() for p in pieces) == data
    assert [p.index for p in pieces] == list(range(len(pieces)))
    for piece in pieces:
        assert len(piece.text) <= 262_144
        assert piece.size == len(piece.text.encode()) <= 262_144
        assert piece.digest == sha256_digest(piece.text.encode())
    assert [len(p.text) for p in plan_pieces(b"abcdefg", max_chars=3)] == [3, 3, 1]
    with pytest.raises(PlanTooLargeError, match="at most 64"):
        plan_pieces(b"x" * 65, max_chars=1)


def test_a_plan_report_fits_the_managers_reader() -> None:
    plan_bytes = json.dumps({"statements": ["\u00e9" * 10]}).encode()
    pieces = plan_pieces(plan_bytes, max_chars=7)
    block = plan_block(
        dialect="postgresql",
        observed_fingerprint="sha256:" + "1" * 64,
        desired_fingerprint="sha256:" + "2" * 64,
        statements=STATEMENTS,
        plan_bytes=plan_bytes,
        pieces=pieces,
        protected=["public.accounts"],
    )
    document = result_document(
        _operation("Plan"),
        started_at=T0,
        finished_at=T0,
        target_identity_digest="sha256:" + "9" * 64,
        plan=block,
    )
    report = _read(document, OperationType.PLAN)
    plan = report.plan
    assert plan is not None
    assert plan.changes is True
    assert plan.digest == sha256_digest(plan_bytes)
    assert plan.size == len(plan_bytes) == sum(p.size for p in plan.pieces)
    assert plan.statement_count == 5
    assert (plan.severity.highest, plan.severity.destructive, plan.severity.privilege_change) == (
        "Critical",
        True,
        True,
    )
    assert plan.protected_tables == ["public.accounts"]
    assert plan.findings_total == 3
    assert "SQL-TEXT" not in json.dumps(document)
    assert describe_schema(document) == f"Plan: 5 statement(s) in {len(pieces)} piece(s)"


def test_a_plan_that_changes_nothing_names_no_file() -> None:
    block = plan_block(
        dialect="mariadb",
        observed_fingerprint="sha256:" + "1" * 64,
        desired_fingerprint="sha256:" + "2" * 64,
        statements=[],
        plan_bytes=b"{}",
        pieces=[],
        protected=[],
    )
    assert block == {
        "changes": False,
        "dialect": "mariadb",
        "observedFingerprint": "sha256:" + "1" * 64,
        "desiredFingerprint": "sha256:" + "2" * 64,
    }
    document = result_document(
        _operation("Plan"),
        started_at=T0,
        finished_at=T0,
        target_identity_digest="sha256:" + "9" * 64,
        plan=block,
    )
    _read(document, OperationType.PLAN)
    assert describe_schema(document) == "Plan: no change"


def test_apply_reports_fit_the_managers_reader() -> None:
    unknown = apply_block(
        "Unknown",
        reason="ApplyOutcomeUnknown",
        plan_digest="sha256:" + "2" * 64,
        executed=2,
        failure=failure_block(
            {"statement": 2, "error": "UniqueViolationError", "sqlstate": "23505"}
        ),
    )
    document = result_document(
        _operation("Apply"),
        started_at=T0,
        finished_at=T0,
        target_identity_digest="sha256:" + "4" * 64,
        apply=unknown,
    )
    report = _read(document, OperationType.APPLY)
    applied = report.apply
    assert applied is not None
    assert applied.failure is not None
    assert applied.outcome == "Unknown"
    assert applied.failure.statement_index == 2
    assert applied.failure.sqlstate == "23505"
    assert applied.failure.mysql_errno is None
    assert describe_schema(document) == (
        "Apply Unknown (ApplyOutcomeUnknown), 2 statement(s) executed"
    )
    assert failure_block({"statement": None, "errno": 1062}) == {
        "statementIndex": None,
        "sqlstate": None,
        "mysqlErrno": 1062,
    }
    refused = result_document(
        _operation("Apply"),
        started_at=T0,
        finished_at=T0,
        target_identity_digest=None,
        apply=apply_block("Refused", reason="NotStarted"),
        error=ErrorBlock("PlanUnavailable", "the published plan could not be fetched: HTTP 409"),
    )
    _read(refused, OperationType.APPLY)
