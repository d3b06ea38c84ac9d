"""What a schema Apply's end records (SCH-22, SCH-25, JNL-06, RUN-10): status.lastApply and the
ApplyFinished entry carry everything the claim carried, field by field, whatever still exists;
an end with no outcome says why in the words a person reads. Written against the survivors of
`make mutate` on reconcile/schema/apply.py (issue #11)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ptah_operator.api.constants import (
    ApplyOutcome,
    Authorization,
    ConditionType,
    EventReason,
    JournalEntryType,
    Reason,
    SchemaPhase,
)
from ptah_operator.reconcile.schema import reconcile_schema
from tests.unit.reconcile.schema.worlds import (
    SCHEMA,
    applied,
    applying,
    entries_added,
    status,
    status_of,
)


@pytest.mark.req("SCH-22", "JNL-06", "RUN-10")
def test_a_succeeded_apply_records_everything_its_claim_carried() -> None:
    running = applying()
    claim = SCHEMA.claim_of(running)
    plan = status(running).plan
    assert plan is not None
    world = applied(running)
    report = world.results[claim.operation_id]
    decision = reconcile_schema(world)
    after = status_of(world, decision)
    record = after.last_apply
    assert record is not None
    assert record.operation_id == claim.operation_id
    assert record.outcome == ApplyOutcome.SUCCEEDED
    assert record.reason is None
    assert record.plan == claim.plan
    assert record.plan_digest == plan.digest
    assert record.approval == claim.approval
    assert record.approver == claim.approver
    assert record.approver is not None
    assert record.job is not None
    assert (record.job.name, record.job.uid) == (claim.job_name, claim.job_uid)
    assert record.job.uid is not None
    assert record.started_at == dt.datetime.fromisoformat(report.payload["startedAt"])
    assert record.started_at != claim.started_at
    assert record.finished_at == world.now
    assert record.target_identity_digest == claim.target_identity_digest
    assert record.authorization == Authorization.APPROVAL
    assert record.source == claim.source
    assert record.execution_binding == claim.execution_binding
    assert record.generation == claim.generation
    assert record.generation is not None
    assert record.spec_digest == claim.spec_digest
    (entry,) = [
        e for e in entries_added(world, decision) if e.type == JournalEntryType.APPLY_FINISHED
    ]
    assert claim.plan is not None
    assert claim.approval is not None
    assert (entry.operation_id, entry.time) == (claim.operation_id, world.now)
    assert (entry.plan_name, entry.plan_uid, entry.plan_fingerprint) == (
        claim.plan.name,
        claim.plan.uid,
        claim.plan.fingerprint,
    )
    assert (entry.approval_name, entry.approval_uid) == (claim.approval.name, claim.approval.uid)
    assert entry.approver == claim.approver
    assert (entry.job_name, entry.job_uid) == (claim.job_name, claim.job_uid)
    assert entry.authorization == Authorization.APPROVAL
    assert entry.outcome == ApplyOutcome.SUCCEEDED.value
    assert entry.reason is None
    said = [(e.reason, e.message) for e in decision.events]
    assert (
        EventReason.APPLY_FINISHED,
        f"Apply {claim.operation_id} of plan {claim.plan.name} ran; the proof is next",
    ) in said
    assert after.message == (
        f"Apply {claim.operation_id} of plan {claim.plan.name} ran; a fresh observation and "
        "plan prove it"
    )


@pytest.mark.parametrize(
    ("report", "why"),
    [
        (
            {"outcome": "Refused", "reason": "StalePlan"},
            "the Apply ended Refused (StalePlan)",
        ),
        ({"outcome": "Refused"}, "the Apply ended Refused (no reason given)"),
        (
            {"plan_digest": "sha256:" + "e" * 64},
            "the Apply ran bytes whose digest is not the plan's",
        ),
        ({"target": "sha256:" + "d" * 64}, "the Apply names another database than the plan's"),
    ],
    ids=["refused", "refused without a reason", "other bytes", "other database"],
)
@pytest.mark.req("SCH-25", "SCH-59")
def test_an_apply_with_no_outcome_records_unknown_and_says_why(
    report: dict[str, Any], why: str
) -> None:
    running = applying()
    claim = SCHEMA.claim_of(running)
    assert claim.plan is not None
    world = applied(running, **report)
    decision = reconcile_schema(world)
    after = status_of(world, decision)
    record = after.last_apply
    assert record is not None
    assert (record.outcome, record.reason) == (ApplyOutcome.UNKNOWN, Reason.APPLY_OUTCOME_UNKNOWN)
    message = (
        f"the outcome of Apply {claim.operation_id} of plan {claim.plan.name} is unknown: "
        f"{why}; nothing is replayed, a fresh observation comes first"
    )
    assert after.message == message
    assert after.phase == SchemaPhase.VERIFYING_CONVERGENCE
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert (failed.reason, failed.message) == (Reason.APPLY_OUTCOME_UNKNOWN, message)
    assert failed.observed_generation == claim.generation
    progressing = after.condition(ConditionType.PROGRESSING)
    assert progressing is not None
    assert progressing.status == "True", "the proof comes on its own"
    (entry,) = [
        e for e in entries_added(world, decision) if e.type == JournalEntryType.APPLY_FINISHED
    ]
    assert (entry.outcome, entry.reason) == (
        ApplyOutcome.UNKNOWN.value,
        Reason.APPLY_OUTCOME_UNKNOWN,
    )
