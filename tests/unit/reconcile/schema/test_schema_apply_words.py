"""A schema's Apply, the details a person or the cluster reads (issue #11: written against the
survivors of `make mutate` on reconcile/schema/apply.py): where a withdrawn Apply leads and
which reason it shows, the PlanStale Event that names what retired the plan, the Lease a claim
names, the dispatch when status.plan has moved on, and an end whose plan or result is missing."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.common import ReceivedReport
from ptah_operator.api.constants import (
    ApplyOutcome,
    ConditionType,
    EventReason,
    JournalEntryType,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.api.names import job_name
from ptah_operator.reconcile.decision import LeaseVerb
from ptah_operator.reconcile.schedule import JOB_RECREATE_CHECK
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import JobPhase, MadeJob
from tests.unit.reconcile.schema import test_schema_sources as sources_tests
from tests.unit.reconcile.schema.worlds import (
    SCHEMA,
    applied,
    applying,
    awaiting_approval,
    entries_added,
    status,
    status_of,
    with_approval,
    with_claimant,
)
from tests.unit.reconcile.worlds import condition_reason, created


def _with_claim(world: SchemaWorld, **changes: object) -> SchemaWorld:
    claim = SCHEMA.claim_of(world)
    return SCHEMA.with_status(world, active_operation=claim.model_copy(update=changes))


def _plan_name(world: SchemaWorld) -> str:
    plan = status(world).plan
    assert plan is not None
    return plan.name


@pytest.mark.req("SCH-23", "LCK-08")
def test_an_undispatched_apply_the_realm_refuses_shows_the_realms_reason() -> None:
    world = with_claimant(applying(dispatched=False), shared=False)
    after = status_of(world, reconcile_schema(world))
    assert after.active_operation is None
    assert after.phase == SchemaPhase.PENDING
    assert condition_reason(after, ConditionType.READY) == Reason.REALM_CONFLICT


@pytest.mark.req("APR-13", "SCH-23")
def test_an_apply_whose_approval_was_deleted_waits_for_a_new_one_on_the_same_plan() -> None:
    world = applying(dispatched=False)
    approval = SCHEMA.claim_of(world).approval
    assert approval is not None
    gone = dataclasses.replace(world, approvals=())
    after = status_of(gone, reconcile_schema(gone))
    assert after.phase == SchemaPhase.AWAITING_APPROVAL
    assert after.message == (
        f"plan {_plan_name(world)} waits for a PtahSchemaApproval naming it and its fingerprint "
        f"(the Apply was withdrawn before its Job existed: approval {approval.name} was deleted)"
    )


@pytest.mark.req("SCH-18", "SCH-23")
def test_a_plan_retired_under_an_undispatched_apply_is_announced_with_what_retired_it() -> None:
    world = applying(dispatched=False)
    name = _plan_name(world)
    stale = dataclasses.replace(world, chunks={})
    decision = reconcile_schema(stale)
    assert [(e.reason, e.message) for e in decision.events] == [
        (
            EventReason.PLAN_STALE,
            f"plan {name} is retired before it ran: a chunk of plan {name} is gone; an approval "
            "must name the plan that replaces it",
        )
    ]
    assert status_of(stale, decision).plan is None


@pytest.mark.req("LCK-01", "JOB-04")
def test_an_apply_claims_the_realms_lease_by_name_before_its_job() -> None:
    approved = with_approval(awaiting_approval())
    decision = reconcile_schema(approved)
    claim = status_of(approved, decision).active_operation
    assert claim is not None
    acquired = [a for a in decision.lease if a.verb == LeaseVerb.ACQUIRE]
    assert [(a.name, a.holder) for a in acquired] == [(claim.lease_name, claim.operation_id)]
    assert claim.lease_name is not None


@pytest.mark.req("APR-14", "JNL-05")
def test_the_dispatch_stamps_only_the_plan_it_applied() -> None:
    template = next(iter(applying().jobs.values()))
    waiting = applying(dispatched=False)
    claim = SCHEMA.claim_of(waiting)
    assert claim.job_name is not None
    assert claim.approval is not None
    job = dataclasses.replace(
        template, name=claim.job_name, operation_id=claim.operation_id, uid="job-uid-1"
    )
    shown = dataclasses.replace(waiting, jobs={claim.job_name: job})
    current = status(shown).plan
    assert current is not None
    for plan in (current, None, current.model_copy(update={"uid": "another-uid"})):
        world = SCHEMA.with_status(shown, plan=plan)
        decision = reconcile_schema(world)
        after = status_of(world, decision)
        accepted = [
            e
            for e in entries_added(world, decision)
            if e.type == JournalEntryType.APPROVAL_ACCEPTED
        ]
        assert [e.approval_uid for e in accepted] == [claim.approval.uid]
        if plan is None:
            assert after.plan is None
        else:
            assert after.plan is not None
            stamped = plan.uid == current.uid
            assert (after.plan.approval is not None) == stamped, plan.uid


@pytest.mark.req("SCH-22", "SCH-25")
def test_an_apply_ending_after_its_plan_left_status_is_unknown() -> None:
    running = applying()
    claim = SCHEMA.claim_of(running)
    reported = applied(running)
    world = SCHEMA.with_status(reported, plan=None)
    after = status_of(world, reconcile_schema(world))
    record = after.last_apply
    assert record is not None
    assert record.outcome == ApplyOutcome.UNKNOWN
    assert record.plan_digest is None
    assert claim.plan is not None
    assert after.message == (
        f"the outcome of Apply {claim.operation_id} of plan {claim.plan.name} is unknown: "
        "the Apply ran bytes whose digest is not the plan's; nothing is replayed, a fresh "
        "observation comes first"
    )


@pytest.mark.req("SCH-22")
def test_an_apply_whose_claim_names_no_plan_records_the_plan_as_unknown() -> None:
    world = _with_claim(applied(applying()), plan=None)
    after = status_of(world, reconcile_schema(world))
    assert after.last_apply is not None
    assert after.last_apply.plan.name == "unknown"


@pytest.mark.req("SCH-25")
@pytest.mark.parametrize(
    ("apply", "error", "why"),
    [
        (None, None, "its result holds no outcome"),
        (
            {"outcome": "Applied"},
            {"reason": "NotAReason", "message": "x"},
            "its result cannot be read: the result does not fit its contract (error.reason)",
        ),
    ],
    ids=["no outcome", "unreadable"],
)
def test_an_apply_whose_result_says_nothing_usable_records_when_its_job_ended(
    apply: dict[str, str] | None, error: dict[str, str] | None, why: str
) -> None:
    running = applying()
    claim = SCHEMA.claim_of(running)
    assert claim.plan is not None
    result = SCHEMA.report(
        running, claim.type, target=claim.target_identity_digest, apply=apply, error=error
    )
    ended_at = running.now - dt.timedelta(seconds=2)
    world = SCHEMA.with_result(running, result)
    world = SCHEMA.with_job(world, JobPhase.SUCCEEDED, finished_at=ended_at, report_witnessed=True)
    after = status_of(world, reconcile_schema(world))
    record = after.last_apply
    assert record is not None
    assert record.outcome == ApplyOutcome.UNKNOWN
    assert after.message == (
        f"the outcome of Apply {claim.operation_id} of plan {claim.plan.name} is unknown: "
        f"{why}; nothing is replayed, a fresh observation comes first"
    )
    if apply is not None:
        assert record.finished_at == ended_at


@pytest.mark.req("RETRY-14", "LCK-10")
def test_a_refused_apply_gives_its_lease_epoch_back_and_its_retry_starts_afresh() -> None:
    world = _with_claim(applying(dispatched=False), lease_epoch=7)
    name = SCHEMA.claim_of(world).job_name or ""
    refused = dataclasses.replace(world, jobs={}, job_refusals={name: "denied"})
    decision = reconcile_schema(refused)
    after = status_of(refused, decision)
    kept = after.active_operation
    assert kept is not None
    assert kept.lease_epoch is None
    assert [a.verb for a in decision.lease] == [LeaseVerb.RELEASE]
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.observed_generation == SCHEMA.resource(world).metadata.generation
    entries = entries_added(refused, decision)
    assert [(e.type, e.reason) for e in entries] == [
        (JournalEntryType.OPERATION_FAILED, Reason.JOB_REFUSED)
    ]
    # At its retry a claim that still shows an epoch and a report from before starts afresh.
    assert kept.retry_at is not None
    stale = SCHEMA.with_status(
        dataclasses.replace(refused, job_refusals={}, now=kept.retry_at),
        active_operation=kept.model_copy(update={"lease_epoch": 7}),
    )
    retried = status_of(stale, reconcile_schema(stale)).active_operation
    assert retried is not None
    assert retried.lease_epoch is None


@pytest.mark.req("PATH-09", "JOB-04")
def test_the_pass_that_claims_the_apply_says_which_plan_it_applies() -> None:
    approved = with_approval(awaiting_approval())
    after = status_of(approved, reconcile_schema(approved))
    claim = after.active_operation
    assert claim is not None
    assert claim.plan is not None
    assert after.message == f"applying plan {claim.plan.name}"


@pytest.mark.req("SCH-24", "JOB-06")
def test_an_apply_whose_job_cannot_be_built_at_its_claim_names_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> dict[str, object]:
        raise ValueError("spec.execution.image is not allowed")

    monkeypatch.setattr("ptah_operator.reconcile.schema.jobs.apply_job", refuse)
    approved = with_approval(awaiting_approval())
    decision = reconcile_schema(approved)
    after = status_of(approved, decision)
    claim = after.active_operation
    assert claim is not None
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.message is not None
    assert failed.message.startswith(
        f"Apply {claim.operation_id} did not start: its Job could not be built: "
        "spec.execution.image is not allowed; it tries again at "
    )
    entries = entries_added(approved, decision)
    failures = [e for e in entries if e.type == JournalEntryType.OPERATION_FAILED]
    assert [(e.operation, e.reason) for e in failures] == [("Apply", Reason.JOB_NOT_BUILT)]


@pytest.mark.req("SCH-22", "RUN-10")
def test_an_apply_whose_claim_names_no_job_records_the_job_its_id_names() -> None:
    world = _with_claim(applied(applying()), job_name=None)
    claim = SCHEMA.claim_of(world)
    after = status_of(world, reconcile_schema(world))
    assert after.last_apply is not None
    assert after.last_apply.job is not None
    assert after.last_apply.job.name == job_name(OperationType.APPLY, claim.operation_id)


@pytest.mark.req("RETRY-14")
def test_a_retried_apply_carries_no_report_of_the_attempt_before() -> None:
    world = applying(dispatched=False)
    name = SCHEMA.claim_of(world).job_name or ""
    failed = SCHEMA.step(dataclasses.replace(world, jobs={}, job_refusals={name: "denied"}))
    kept = SCHEMA.claim_of(failed)
    assert kept.retry_at is not None
    reported = _with_claim(
        dataclasses.replace(failed, job_refusals={}, now=kept.retry_at),
        report=ReceivedReport(attempt=1, digest="sha256:" + "a" * 64),
    )
    retried = status_of(reported, reconcile_schema(reported)).active_operation
    assert retried is not None
    assert retried.attempt == kept.attempt + 1
    assert retried.report is None


@pytest.mark.req("SCH-23")
def test_a_made_job_not_seen_is_asked_for_again_only_while_its_plan_is_published() -> None:
    approved = with_approval(awaiting_approval())
    first = reconcile_schema(approved)
    made = created(first, "Job")
    claimed = dataclasses.replace(SCHEMA.carry_out(approved, first), jobs={})
    name = SCHEMA.claim_of(claimed).job_name or ""
    unseen = dataclasses.replace(claimed, jobs_made={name: MadeJob("job-made-1", claimed.now)})
    decision = reconcile_schema(unseen)
    again = created(decision, "Job")
    assert again == made
    assert decision.requeue_after == JOB_RECREATE_CHECK
    gone = SCHEMA.with_status(unseen, plan=None)
    decision = reconcile_schema(gone)
    assert not created(decision, "Job")
    assert decision.requeue_after != JOB_RECREATE_CHECK


@pytest.mark.req("SCH-23", "JOB-06")
def test_a_made_job_whose_manifest_cannot_be_built_again_is_not_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    approved = with_approval(awaiting_approval())
    claimed = dataclasses.replace(SCHEMA.carry_out(approved, reconcile_schema(approved)), jobs={})
    name = SCHEMA.claim_of(claimed).job_name or ""
    unseen = dataclasses.replace(claimed, jobs_made={name: MadeJob("job-made-1", claimed.now)})

    def refuse(*args: object, **kwargs: object) -> dict[str, object]:
        raise ValueError("spec.execution.image is not allowed")

    monkeypatch.setattr("ptah_operator.reconcile.schema.jobs.apply_job", refuse)
    decision = reconcile_schema(unseen)
    assert not created(decision, "Job")
    assert status_of(unseen, decision).active_operation is not None


@pytest.mark.req("RETRY-14", "JOB-04")
def test_the_retried_apply_job_runs_the_same_plan_as_the_first() -> None:
    approved = with_approval(awaiting_approval())
    first = reconcile_schema(approved)
    (made,) = created(first, "Job")
    claimed = dataclasses.replace(SCHEMA.carry_out(approved, first), jobs={})
    name = SCHEMA.claim_of(claimed).job_name or ""
    failed = SCHEMA.step(dataclasses.replace(claimed, job_refusals={name: "denied"}))
    retry_at = SCHEMA.claim_of(failed).retry_at
    assert retry_at is not None
    due = dataclasses.replace(failed, job_refusals={}, now=retry_at)
    decision = reconcile_schema(due)
    (again,) = created(decision, "Job")
    assert again == made


def _claimed_undispatched(world: SchemaWorld) -> SchemaWorld:
    return SCHEMA.without_job(SCHEMA.step(with_approval(world)))


@pytest.mark.req("SCH-34", "SCH-23")
def test_an_apply_of_an_artifact_whose_verification_policy_changed_goes_to_verify_again() -> None:
    world = _claimed_undispatched(sources_tests.oci_awaiting_approval())
    plan = _plan_name(world)
    moved = dataclasses.replace(world, verification_policy=sources_tests.NEW_POLICY)
    decision = reconcile_schema(moved)
    after = status_of(moved, decision)
    assert after.phase == SchemaPhase.VERIFYING
    assert after.message == (
        "the Apply was withdrawn before its Job existed: the verification policy changed"
    )
    assert [(e.reason, e.message) for e in decision.events] == [
        (
            EventReason.PLAN_STALE,
            f"plan {plan} is retired before it ran: the verification policy changed; an "
            "approval must name the plan that replaces it",
        )
    ]


@pytest.mark.req("SCH-23", "SCH-38")
def test_an_apply_of_a_git_source_that_moved_waits_pending_for_a_new_resolve() -> None:
    world = _claimed_undispatched(sources_tests.git_awaiting_approval())
    plan = _plan_name(world)
    record = status(world).source
    assert record is not None
    moved = SCHEMA.with_status(
        world,
        source=record.model_copy(
            update={"commit": "f" * 40, "content_digest": "sha256:" + "b" * 64}
        ),
    )
    decision = reconcile_schema(moved)
    after = status_of(moved, decision)
    assert after.phase == SchemaPhase.PENDING
    assert after.message == "the Apply was withdrawn before its Job existed: the source changed"
    assert [(e.reason, e.message) for e in decision.events] == [
        (
            EventReason.PLAN_STALE,
            f"plan {plan} is retired before it ran: the source changed; an approval must name "
            "the plan that replaces it",
        )
    ]
    assert after.plan is None
