"""A schema Apply whose Job was refused or could not be built (SCH-24, RETRY-14), pass by
pass: Failed with the claim kept and the Lease given back, what status and the Event say, when
it tries again, what it waits for meanwhile, and the Job of the next attempt (its attempt
number, a fresh Lease epoch, no report carried over). Written against the survivors of
`make mutate` on reconcile/schema/apply.py (issue #11)."""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.api.names import job_name
from ptah_operator.reconcile.decision import LeaseVerb
from ptah_operator.reconcile.schedule import LEASE_WAIT
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.reconcile.schema import jobs as schema_jobs
from tests.unit.reconcile.schema.worlds import (
    A_MINUTE,
    SCHEMA,
    applying,
    later,
    lease_taken_by_another,
    status,
    status_of,
    step,
)
from tests.unit.reconcile.worlds import created

REFUSAL = "admission webhook denied the request"


def _refused(world: SchemaWorld) -> SchemaWorld:
    name = SCHEMA.claim_of(world).job_name or ""
    return dataclasses.replace(world, jobs={}, job_refusals={name: REFUSAL})


@pytest.mark.req("SCH-24", "RETRY-14", "JOB-06")
def test_a_refused_apply_job_fails_keeps_its_claim_and_says_when_it_tries_again() -> None:
    world = _refused(applying(dispatched=False))
    claim = SCHEMA.claim_of(world)
    decision = reconcile_schema(world)
    after = status_of(world, decision)
    retry_at = world.now + A_MINUTE
    kept = after.active_operation
    assert kept is not None
    assert kept.operation_id == claim.operation_id
    assert kept.retry_at == retry_at
    assert kept.last_failure_reason == Reason.JOB_REFUSED
    assert after.phase == SchemaPhase.FAILED
    assert after.message == (
        f"Apply {claim.operation_id} has no Job ({Reason.JOB_REFUSED}); "
        f"it tries again at {retry_at.isoformat()}"
    )
    said = (
        f"Apply {claim.operation_id} did not start: the API server refused Job "
        f"{claim.job_name}: {REFUSAL}; it tries again at {retry_at.isoformat()}"
    )
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert (failed.reason, failed.message) == (Reason.JOB_REFUSED, said)
    assert [(e.reason, e.message) for e in decision.events] == [
        (EventReason.OPERATION_FAILED, said)
    ]
    assert decision.requeue_after == A_MINUTE
    assert [a.verb for a in decision.lease] == [LeaseVerb.RELEASE]


@pytest.mark.req("RETRY-14")
def test_until_its_retry_the_apply_waits_failed_and_wakes_then() -> None:
    failed = step(_refused(applying(dispatched=False)))
    retry_at = status(failed).active_operation.retry_at  # type: ignore[union-attr]
    assert retry_at is not None
    early = later(failed, A_MINUTE / 2)
    decision = reconcile_schema(early)
    after = status_of(early, decision)
    assert after.phase == SchemaPhase.FAILED
    assert after.message is not None
    assert after.message.endswith(f"it tries again at {retry_at.isoformat()}")
    assert not decision.create
    assert decision.requeue_after == retry_at - early.now


@pytest.mark.req("RETRY-14", "LCK-01")
def test_at_its_retry_the_apply_waits_for_the_lease_another_holds() -> None:
    failed = step(_refused(applying(dispatched=False)))
    due = lease_taken_by_another(dataclasses.replace(later(failed, A_MINUTE), job_refusals={}))
    decision = reconcile_schema(due)
    after = status_of(due, decision)
    assert after.phase == SchemaPhase.FAILED
    assert not decision.create
    assert decision.requeue_after == LEASE_WAIT


@pytest.mark.req("RETRY-14")
def test_the_next_attempt_is_a_new_job_with_a_fresh_lease_and_no_report_carried_over() -> None:
    world = applying(dispatched=False)
    claim = SCHEMA.claim_of(world)
    stale = claim.model_copy(update={"lease_epoch": 7, "report": None})
    failed = step(_refused(SCHEMA.with_status(world, active_operation=stale)))
    due = dataclasses.replace(later(failed, A_MINUTE), job_refusals={})
    decision = reconcile_schema(due)
    after = status_of(due, decision)
    retried = after.active_operation
    assert retried is not None
    assert retried.operation_id == claim.operation_id
    assert retried.attempt == claim.attempt + 1
    assert retried.retry_at is None
    assert retried.lease_epoch is None
    assert retried.report is None
    assert [(a.verb, a.holder) for a in decision.lease] == [(LeaseVerb.ACQUIRE, claim.operation_id)]
    plan = status(due).plan
    assert plan is not None
    assert after.message == f"applying plan {plan.name}"
    made = created(decision, "Job")
    assert [m["metadata"]["name"] for m in made] == [claim.job_name]


@pytest.mark.req("RETRY-14", "JOB-06")
def test_a_next_attempt_whose_job_cannot_be_built_fails_again_naming_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failed = step(_refused(applying(dispatched=False)))
    claim = SCHEMA.claim_of(failed)
    due = dataclasses.replace(later(failed, A_MINUTE), job_refusals={})

    def refuse(*args: object, **kwargs: object) -> dict[str, object]:
        raise ValueError("spec.execution.image is not allowed")

    monkeypatch.setattr(schema_jobs, "apply_job", refuse)
    decision = reconcile_schema(due)
    after = status_of(due, decision)
    kept = after.active_operation
    assert kept is not None
    assert kept.last_failure_reason == Reason.JOB_NOT_BUILT
    assert kept.retry_at == due.now + A_MINUTE
    failed_condition = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed_condition is not None
    assert failed_condition.reason == Reason.JOB_NOT_BUILT
    assert failed_condition.message == (
        f"Apply {claim.operation_id} did not start: its Job could not be built: "
        f"spec.execution.image is not allowed; it tries again at {kept.retry_at.isoformat()}"
    )


@pytest.mark.req("SCH-24")
def test_a_claim_without_a_job_name_is_refused_by_the_name_its_id_gives() -> None:
    world = applying(dispatched=False)
    claim = SCHEMA.claim_of(world)
    unnamed = SCHEMA.with_status(
        world, active_operation=claim.model_copy(update={"job_name": None})
    )
    name = job_name(OperationType.APPLY, claim.operation_id)
    refused = dataclasses.replace(unnamed, jobs={}, job_refusals={name: REFUSAL})
    after = status_of(refused, reconcile_schema(refused))
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert f"the API server refused Job {name}: {REFUSAL}" in (failed.message or "")
