"""Retry and give-way for a schema's reads (seed 000, "A read-only operation that fails runs
again under the same claim after spec.execution.failureRetryInterval ..." and its table)."""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.api.constants import (
    ANNOTATION_READ_REQUESTED_AT,
    ConditionType,
    EventReason,
    JournalEntryType,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.schema.table import Row, check, params
from tests.unit.reconcile.schema.worlds import (
    A_MINUTE,
    EDITED_FILES,
    annotated,
    applying,
    awaiting_approval,
    claim_of,
    condition_reason,
    created_kinds,
    later,
    observing,
    planning,
    proving,
    read_failed,
    source_files,
    status,
    status_of,
    step,
    with_job,
    with_source,
    with_status,
)

E = JournalEntryType
L = LeaseVerb
REQUEST = "2026-09-01T12:00:30Z"


def failed(world: SchemaWorld, operation: OperationType = OperationType.OBSERVE) -> SchemaWorld:
    return step(read_failed(world, operation))


def requested(world: SchemaWorld) -> SchemaWorld:
    return annotated(world, ANNOTATION_READ_REQUESTED_AT, REQUEST)


def edited_source(world: SchemaWorld) -> SchemaWorld:
    return with_source(world, source_files(EDITED_FILES))


def same_claim_same_files(world: SchemaWorld, decision: Decision) -> None:
    before = claim_of(world)
    after = status_of(world, decision).active_operation
    assert after is not None
    assert after.operation_id == before.operation_id
    assert after.source == before.source
    assert after.attempt == before.attempt + 1


def failure_stays(world: SchemaWorld, decision: Decision) -> None:
    failure = status_of(world, decision).condition(ConditionType.RECONCILIATION_FAILED)
    assert failure is not None
    assert failure.reason == "ConnectionFailed"


def claim_kept(world: SchemaWorld, decision: Decision) -> None:
    after = status_of(world, decision).active_operation
    assert after is not None
    assert after.operation_id == claim_of(world).operation_id


ROWS = [
    Row(
        "A failed read runs again under the same claim, on the same snapshot",
        lambda: step(later(failed(observing()), A_MINUTE)),
        ("RETRY-01", "RETRY-15"),
        phase=SchemaPhase.FAILED,
        job="Observe",
        then=same_claim_same_files,
    ),
    Row(
        "A failed Plan gives its Lease back between attempts",
        lambda: read_failed(planning(), OperationType.PLAN),
        ("RETRY-15", "LCK-08"),
        phase=SchemaPhase.FAILED,
        entries=[E.OPERATION_FAILED],
        lease=[L.RELEASE],
    ),
    Row(
        "... and takes it again for the next attempt",
        lambda: step(later(failed(planning(), OperationType.PLAN), A_MINUTE)),
        ("RETRY-01", "LCK-08"),
        phase=SchemaPhase.FAILED,
        job="Plan",
        lease=[L.ACQUIRE],
    ),
    Row(
        "Between attempts: the source ConfigMap changed, it gives way at once",
        lambda: edited_source(failed(observing())),
        ("RETRY-02", "RETRY-05"),
        phase=SchemaPhase.PENDING,
        events=[EventReason.READ_RESTARTED],
        then=failure_stays,
    ),
    Row(
        "Between attempts: a person asked for a read, it waits for the retry delay",
        lambda: requested(failed(observing())),
        ("RETRY-03",),
        phase=SchemaPhase.FAILED,
        writes=False,
        job=None,
    ),
    Row(
        "Between attempts: the delay ended, it gives way to the request",
        lambda: later(requested(failed(observing())), A_MINUTE),
        ("RETRY-03", "RETRY-05", "RETRY-06"),
        phase=SchemaPhase.PENDING,
        events=[EventReason.READ_RESTARTED],
        then=failure_stays,
    ),
    Row(
        "A Job under the claim's reserved name is an attempt under way: it is left to finish",
        lambda: requested(step(step(later(failed(observing()), A_MINUTE)))),
        ("RETRY-10", "RRQ-12"),
        phase=SchemaPhase.FAILED,
        job=None,
        then=claim_kept,
    ),
    Row(
        "A dispatched Apply never gives way, not to a changed source",
        lambda: edited_source(applying()),
        ("RETRY-08",),
        phase=SchemaPhase.APPLYING,
        then=claim_kept,
    ),
    Row(
        "The read that proves an Apply never gives way, not to a changed source",
        lambda: edited_source(proving()),
        ("RETRY-09",),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        then=claim_kept,
    ),
    Row(
        "A failed proof read keeps its claim and the Apply's Lease, and never gives way",
        lambda: later(edited_source(failed(proving())), A_MINUTE),
        ("RETRY-09", "SUS-03"),
        lease=[],
        then=claim_kept,
    ),
]


@pytest.mark.parametrize("row", params(ROWS))
def test_retry_and_give_way(row: Row) -> None:
    check(row)


@pytest.mark.req("RETRY-06", "SCH-65")
def test_giving_way_keeps_a_plan_that_waits_for_approval() -> None:
    world = step(later(awaiting_approval(), 10 * A_MINUTE))
    assert claim_of(world).type == OperationType.OBSERVE
    world = failed(world)
    plan = status(world).plan
    assert plan is not None
    decision = reconcile_schema(later(requested(world), A_MINUTE))
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.PENDING
    assert after.plan == plan


@pytest.mark.req("RETRY-01", "SCH-36")
def test_a_read_job_that_ended_without_a_result_is_a_failed_attempt_after_a_grace() -> None:
    world = with_job(
        observing(), JobPhase.FAILED, finished_at=observing().now, reason="DeadlineExceeded"
    )
    waiting = reconcile_schema(world)
    assert status_of(world, waiting).phase == SchemaPhase.OBSERVING
    assert waiting.requeue_after == A_MINUTE
    decision = reconcile_schema(later(world, A_MINUTE))
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.FAILED
    assert after.active_operation is not None
    assert condition_reason(after, ConditionType.RECONCILIATION_FAILED) == "DeadlineExceeded"


@pytest.mark.req("SCH-36", "JOB-06")
def test_a_read_job_the_api_server_refused_is_failed_and_its_claim_kept() -> None:
    world = observing()
    name = claim_of(world).job_name
    world = dataclasses.replace(world, jobs={}, job_refusals={name: "pods are forbidden"})
    decision = reconcile_schema(world)
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.FAILED
    assert condition_reason(after, ConditionType.READY) == Reason.OPERATION_FAILED
    assert condition_reason(after, ConditionType.RECONCILIATION_FAILED) == Reason.JOB_REFUSED
    assert after.active_operation is not None
    assert "Job" not in created_kinds(decision)


@pytest.mark.req("RETRY-01")
def test_the_next_attempt_does_not_carry_the_report_digest_of_the_failed_one() -> None:
    """The endpoint's digest of an attempt's first report (status.activeOperation.report,
    issue #18) stays with that attempt: the next one starts without it."""
    from ptah_operator.api.common import ReceivedReport

    world = failed(observing())
    report = ReceivedReport(attempt=1, digest="sha256:" + "e" * 64)
    world = with_status(
        world, active_operation=claim_of(world).model_copy(update={"report": report})
    )
    after = status_of(world, reconcile_schema(step(later(world, A_MINUTE))))
    assert after.active_operation is not None
    assert after.active_operation.attempt == 2
    assert after.active_operation.report is None
