"""A Job the API server refuses to create, schema side, for every operation the schema runs.

Seed 000: a read under way → Failed when its Job "could not be built", the claim kept for the
next attempt (SCH-36); Applying → Failed, "None exists, and the claim tries again" (SCH-24).
A plain Plan gives its Lease back between attempts; the proof's reads keep the Apply's.
"""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    JournalEntryType,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.schema import SchemaWorld
from tests.unit.reconcile.schema.table import Row, check, params
from tests.unit.reconcile.schema.worlds import (
    SCHEMA,
    applying,
    observing,
    planning,
    proving,
    status_of,
)

REFUSAL = "admission webhook denied the request: no Job is admitted in this namespace"


def refused(world: SchemaWorld, operation: OperationType) -> SchemaWorld:
    claim = SCHEMA.claim_of(world)
    assert claim.type == operation, claim.type
    assert claim.job_name is not None
    jobs = {k: v for k, v in world.jobs.items() if k != claim.job_name}
    return dataclasses.replace(world, jobs=jobs, job_refusals={claim.job_name: REFUSAL})


def _claim_kept(world: SchemaWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.active_operation is not None
    assert after.active_operation.last_failure_reason == Reason.JOB_REFUSED
    assert after.active_operation.retry_at is not None
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == Reason.JOB_REFUSED


ROWS = [
    Row(
        "Observing -> Failed: the Observe Job was refused; the claim is kept",
        lambda: refused(observing(), OperationType.OBSERVE),
        ("SCH-36", "JOB-06"),
        phase=SchemaPhase.FAILED,
        job=None,
        lease=[],
        entries=[JournalEntryType.OPERATION_FAILED],
        events=[EventReason.OPERATION_FAILED],
        then=_claim_kept,
    ),
    Row(
        "Planning -> Failed: the Plan Job was refused; the Lease is given back meanwhile",
        lambda: refused(planning(), OperationType.PLAN),
        ("SCH-36", "JOB-06", "LCK-08"),
        phase=SchemaPhase.FAILED,
        job=None,
        lease=[LeaseVerb.RELEASE],
        entries=[JournalEntryType.OPERATION_FAILED],
        then=_claim_kept,
    ),
    Row(
        "VerifyingConvergence -> Failed: the proof's Observe Job was refused; the Lease stays",
        lambda: refused(proving(), OperationType.OBSERVE),
        ("SCH-36", "JOB-06", "SUS-03"),
        phase=SchemaPhase.FAILED,
        job=None,
        lease=[],
        entries=[JournalEntryType.OPERATION_FAILED],
        then=_claim_kept,
    ),
    Row(
        "Applying -> Failed: the Apply Job was refused; none exists, the claim tries again",
        lambda: refused(applying(dispatched=False), OperationType.APPLY),
        ("SCH-24", "JOB-06"),
        phase=SchemaPhase.FAILED,
        ready=Reason.JOB_REFUSED,
        job=None,
        lease=[LeaseVerb.RELEASE],
        entries=[JournalEntryType.OPERATION_FAILED],
        then=_claim_kept,
    ),
]


@pytest.mark.parametrize("row", params(ROWS))
def test_a_refused_job_is_a_failed_attempt(row: Row) -> None:
    check(row)


@pytest.mark.req("SCH-36", "JOB-06")
@pytest.mark.parametrize("operation", [OperationType.OBSERVE, OperationType.PLAN])
def test_a_refusal_left_from_an_earlier_create_does_not_fail_a_read_whose_job_exists(
    operation: OperationType,
) -> None:
    """A refusal is the answer to one create; a Job under the name is the later fact. While
    one exists the read follows it, as a migration's read does (reads.observe)."""
    world = observing() if operation == OperationType.OBSERVE else planning()
    claim = SCHEMA.claim_of(world)
    assert claim.type == operation
    assert claim.job_name is not None
    assert claim.job_name in world.jobs
    stale = dataclasses.replace(world, job_refusals={claim.job_name: REFUSAL})
    decision = SCHEMA.reconcile(stale)
    after = status_of(stale, decision)
    assert after.phase == status_of(world, SCHEMA.reconcile(world)).phase
    assert after.active_operation is not None
    assert after.active_operation.retry_at is None
    assert after.condition(ConditionType.RECONCILIATION_FAILED) is None
