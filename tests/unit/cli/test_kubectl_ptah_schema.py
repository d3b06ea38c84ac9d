"""What `kubectl ptah schema`, `plan schema/...` and `approve schema/...` print, when their
waits end, and how their arguments are read: pure functions of API models."""

from __future__ import annotations

import json

import pytest

from ptah_operator.api.common import ObjectReference, PlanReference, UserInfo
from ptah_operator.api.constants import ApplyOutcome, Kind, SchemaPhase, VerifiedOutcome
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk, PtahSchemaPlanChunkSpec
from ptah_operator.api.schema import AppliedPlan, ApplyRecord, PtahSchemaStatus, SchemaVerification
from ptah_operator.cli.kubectl.main import Command, parse_command
from ptah_operator.cli.kubectl.schema_view import (
    plan_text,
    render_applied,
    render_schema,
    render_schema_approval_summary,
    render_schema_plan,
)
from ptah_operator.cli.kubectl.waits import RunProgress, apply_progress
from tests.support.migration_objects import T0
from tests.support.schema_objects import (
    PLAN_SQL,
    awaiting_approval,
    catalog_schema,
    plan_pieces,
    schema_plan,
    schema_plan_spec,
)

S_REF = ObjectReference(name="catalog", uid="s-uid-1")
ALICE = UserInfo(username="alice@example.com", groups=["dba"])


def _plan(chunks: int = 2) -> PtahSchemaPlan:
    return schema_plan(schema_plan_spec(S_REF, chunks=chunks))


def _chunks(plan: PtahSchemaPlan, pieces: list[str] | None = None) -> list[PtahSchemaPlanChunk]:
    texts = pieces or plan_pieces(plan.spec)
    return [
        PtahSchemaPlanChunk(
            metadata=ObjectMeta(name=ref.name, namespace="application", uid=f"c-{ref.index}"),
            spec=PtahSchemaPlanChunkSpec(
                plan_ref=ObjectReference(
                    name=plan.metadata.name or "", uid=plan.metadata.uid or ""
                ),
                index=ref.index,
                data=text,
                digest=ref.digest,
            ),
        )
        for ref, text in zip(plan.spec.chunks, texts, strict=True)
    ]


def _applied_status(plan: PtahSchemaPlan) -> PtahSchemaStatus:
    return awaiting_approval(plan).model_copy(
        update={
            "phase": SchemaPhase.IN_SYNC,
            "plan": None,
            "last_apply": ApplyRecord(
                operation_id="op-00000000b2",
                outcome=ApplyOutcome.SUCCEEDED,
                plan=PlanReference(
                    name=plan.metadata.name or "",
                    uid=plan.metadata.uid,
                    fingerprint=plan.spec.fingerprint,
                ),
                plan_digest=plan.spec.digest,
                approval=ObjectReference(name="catalog-plan-x1", uid="a-uid-1"),
                approver=ALICE,
                started_at=T0,
                finished_at=T0,
                verification=SchemaVerification(
                    outcome=VerifiedOutcome.IN_SYNC, read_at=T0, operation_id="op-00000000b3"
                ),
            ),
            "applied": AppliedPlan(
                plan=PlanReference(
                    name=plan.metadata.name or "",
                    uid=plan.metadata.uid,
                    fingerprint=plan.spec.fingerprint,
                ),
                digest=plan.spec.digest,
                operation_id="op-00000000b2",
                approval=ObjectReference(name="catalog-plan-x1", uid="a-uid-1"),
                approver=ALICE,
                applied_at=T0,
                verified_at=T0,
            ),
            "journal": Journal(
                covered_since=T0,
                entries=[
                    JournalEntry(
                        type="PlanPublished",
                        time=T0,
                        plan_name=plan.metadata.name,
                        approval_required=True,
                    ),
                    JournalEntry(
                        type="ApplyFinished",
                        time=T0,
                        operation_id="op-00000000b2",
                        outcome="Succeeded",
                        plan_name=plan.metadata.name,
                    ),
                ],
            ),
        }
    )


@pytest.mark.req("PLUGIN-04")
def test_a_schema_awaiting_approval_reads_without_sql() -> None:
    plan = _plan()
    out = render_schema(catalog_schema(status=awaiting_approval(plan)), plan)
    assert "Phase:            AwaitingApproval" in out
    assert "Policy:           apply OnApproval, allowDestructive false" in out
    assert "Drift (observed 2026-08-30T09:00:00Z):" in out
    assert "tables_added  1      Low" in out
    assert "Plan catalog-plan (UID sp-uid-1):" in out
    assert "Severity:         Low" in out
    assert "Low       TableAdded  public.order_lines" in out
    assert "Approval:         required" in out
    assert "Last apply: none" in out
    assert "Applied: nothing confirmed yet" in out
    assert "CREATE TABLE" not in out
    assert "order_lines (id" not in out


@pytest.mark.req("PLUGIN-04")
def test_a_schema_after_an_apply_shows_the_apply_and_what_was_applied() -> None:
    plan = _plan()
    out = render_schema(catalog_schema(status=_applied_status(plan)))
    assert "Last apply op-00000000b2: Succeeded" in out
    assert "Authorized by:    approval catalog-plan-x1, alice@example.com (dba)" in out
    assert "Verified:         InSync at 2026-08-30T09:00:00Z" in out
    assert "Applied (confirmed 2026-08-30T09:00:00Z):" in out
    assert "ApplyFinished" in out
    assert "plan catalog-plan, approval required" in out
    assert "CREATE TABLE" not in out


@pytest.mark.req("PLUGIN-02")
def test_plan_shows_bindings_findings_and_the_sql_checked_against_its_digests() -> None:
    plan = _plan()
    status = awaiting_approval(plan)
    assert status.plan is not None
    schema = catalog_schema(status=status)
    out = render_schema_plan(schema, status.plan, plan, plan_text(plan, _chunks(plan)))
    assert "Bound to (a change to any of these retires the plan):" in out
    assert "Source:           ConfigMap, content sha256:" in out
    assert "Decision: the plan waits for a PtahSchemaApproval naming this plan" in out
    assert PLAN_SQL.rstrip("\n") in out
    assert out.index("--- SQL (generated") < out.index("CREATE TABLE")
    # Without --sql's text (--no-sql) nothing of the SQL is printed.
    assert "CREATE TABLE" not in render_schema_plan(schema, status.plan, plan, None)
    # A chunk that does not hold what the plan records is never printed.
    tampered = _chunks(plan, ["DROP TABLE x; --", plan_pieces(plan.spec)[1]])
    out = render_schema_plan(schema, status.plan, plan, plan_text(plan, tampered))
    assert "SQL: not shown (chunk catalog-plan-c00 does not hold what the plan records)" in out
    assert "DROP TABLE" not in out
    missing = plan_text(plan, _chunks(plan)[:1])
    assert missing.why_not == "chunk catalog-plan-c01 does not exist"


@pytest.mark.req("PLUGIN-03")
def test_plan_applied_prints_the_plan_status_applied_records() -> None:
    plan = _plan()
    status = _applied_status(plan)
    assert status.applied is not None
    schema = catalog_schema(status=status)
    out = render_applied(schema, status.applied, plan, plan_text(plan, _chunks(plan)))
    assert out.startswith("Applied plan of schema application/catalog: catalog-plan (UID sp-uid-1)")
    assert f"Digest:           {plan.spec.digest}" in out
    assert "Approved by:      approval catalog-plan-x1, alice@example.com (dba)" in out
    assert PLAN_SQL.rstrip("\n") in out
    gone = render_applied(schema, status.applied, None)
    assert "The plan object no longer exists: its digest above is what ran." in gone


@pytest.mark.req("PLUGIN-05")
def test_the_approval_summary_names_the_exact_plan_without_sql() -> None:
    plan = _plan()
    out = render_schema_approval_summary(catalog_schema(status=awaiting_approval(plan)), plan)
    assert out.startswith("Approving plan catalog-plan of schema application/catalog:\n")
    assert plan.spec.fingerprint in out
    assert "kubectl ptah plan schema/catalog shows its SQL" in out
    assert "CREATE TABLE" not in out


REF = PlanReference(name="catalog-plan", uid="sp-uid-1")


@pytest.mark.req("PLUGIN-06", "APR-11")
def test_approve_wait_ends_once_the_apply_of_the_plan_was_proved() -> None:
    plan = _plan()
    waiting = awaiting_approval(plan)
    assert apply_progress(waiting, REF.name, REF.uid) is RunProgress.WAITING
    applying = waiting.model_copy(update={"phase": SchemaPhase.APPLYING})
    assert apply_progress(applying, REF.name, REF.uid) is RunProgress.WAITING
    done = _applied_status(plan)
    assert done.last_apply is not None
    proving = done.model_copy(
        update={
            "phase": SchemaPhase.VERIFYING_CONVERGENCE,
            "last_apply": done.last_apply.model_copy(update={"verification": None}),
        }
    )
    assert apply_progress(proving, REF.name, REF.uid) is RunProgress.WAITING
    assert apply_progress(done, REF.name, REF.uid) is RunProgress.FINISHED
    assert waiting.plan is not None
    replaced = waiting.model_copy(
        update={"plan": waiting.plan.model_copy(update={"name": "catalog-other", "uid": "x"})}
    )
    assert apply_progress(replaced, REF.name, REF.uid) is RunProgress.RETIRED
    retired = waiting.model_copy(update={"plan": None, "phase": SchemaPhase.BLOCKED})
    assert apply_progress(retired, REF.name, REF.uid) is RunProgress.RETIRED


@pytest.mark.req("PLUGIN-03", "PLUGIN-06")
def test_schema_commands_and_their_flags() -> None:
    command, _ = parse_command(["schema", "catalog"])
    assert command == Command("schema", Kind.PTAH_SCHEMA, "catalog")
    command, _ = parse_command(["plan", "schema/catalog", "--applied"])
    assert (command.verb, command.kind, command.applied, command.sql) == (
        "plan",
        Kind.PTAH_SCHEMA,
        True,
        True,
    )
    command, _ = parse_command(["plan", "psch/catalog", "--no-sql"])
    assert command.sql is False
    command, _ = parse_command(["approve", "schema/catalog", "--wait", "--timeout=5m"])
    assert command == Command("approve", Kind.PTAH_SCHEMA, "catalog", True, 300.0)
    command, _ = parse_command(["wait", "schema/catalog", "--for=VerifyingConvergence"])
    assert command.phase == "VerifyingConvergence"
    assert command.kind == Kind.PTAH_SCHEMA


def test_the_plan_file_is_shown_as_statements_a_person_reads() -> None:
    from ptah_operator.cli.kubectl.schema_view import readable_statements

    plan_file = json.dumps(
        {
            "statements": [
                {
                    "sql": 'CREATE TABLE "t" (id int)',
                    "reason": "create table t",
                    "severity": "safe",
                },
                {
                    "sql": "ALTER TYPE mood ADD VALUE 'ok';",
                    "reason": "add enum value",
                    "severity": "safe",
                    "transactional": False,
                },
            ]
        }
    )
    shown = readable_statements(plan_file)
    assert shown == (
        '-- 1/2: create table t (safe)\nCREATE TABLE "t" (id int);\n\n'
        "-- 2/2: add enum value (safe), outside the transaction\n"
        "ALTER TYPE mood ADD VALUE 'ok';\n"
    )
    assert readable_statements("not json") == "not json"
