"""The schema's phase diagrams (seed 000), one row per arrow.

"From the source to a plan's verdict", "From a plan to the proof that it worked" and "What
leaves that path, and how it comes back", read as tables: the phase on the left is the world a
row starts from, the box on the right is what the pass must decide. A ConfigMap source shows
Observing wherever a move says Resolving (SRC-CM-06); the Git and OCI arrows are in
test_schema_sources.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from ptah_operator.api.common import Target
from ptah_operator.api.constants import (
    ApplyPolicy,
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
    OTHER_DB,
    ROLLED_OUT,
    TEN_MINUTES,
    about_to_publish,
    annotated,
    applied,
    applying,
    awaiting_approval,
    carry_out,
    created_kinds,
    edited,
    in_sync,
    job_manifest,
    job_of,
    later,
    lease_taken_by_another,
    new,
    observed,
    observing,
    plan_next,
    planned,
    planning,
    proof_planning,
    proving,
    published,
    read_failed,
    ready_to_apply,
    resumed,
    source_files,
    status,
    status_of,
    step,
    suspended,
    target_moved,
    verifying_convergence,
    with_approval,
    with_claimant,
    with_job,
    with_policy,
    with_runner,
    with_source,
    without_job,
)

E = JournalEntryType
L = LeaseVerb
Then = Callable[[SchemaWorld, Decision], None]


def both(*thens: Then) -> Then:
    def then(world: SchemaWorld, decision: Decision) -> None:
        for each in thens:
            each(world, decision)

    return then


# --- what rows assert beyond the table ---------------------------------------------------------


def snapshot_taken_and_mounted(world: SchemaWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert world.schema.status is None
    assert after.source is not None
    assert after.source.snapshot_name is not None
    assert "ConfigMap" in created_kinds(decision)
    volumes = job_manifest(decision)["spec"]["template"]["spec"]["volumes"]
    assert [v["configMap"]["name"] for v in volumes if "configMap" in v] == [
        after.source.snapshot_name
    ]
    resolved = after.condition(ConditionType.ARTIFACT_RESOLVED)
    assert resolved is not None
    assert resolved.reason == Reason.SNAPSHOT_TAKEN
    claim = after.active_operation
    assert claim is not None
    assert claim.type == OperationType.OBSERVE
    assert claim.job_name == job_manifest(decision)["metadata"]["name"]


def drift_recorded(world: SchemaWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.drift is not None
    assert after.drift.total == 1
    assert after.active_operation is None


def plan_created_not_yet_published(world: SchemaWorld, decision: Decision) -> None:
    assert created_kinds(decision) == ["PtahSchemaPlan"]
    after = status_of(world, decision)
    assert after.plan is not None
    assert after.plan.uid is None


def plan_retired(world: SchemaWorld, decision: Decision) -> None:
    assert status(world).plan is not None
    assert status_of(world, decision).plan is None


def plan_kept(world: SchemaWorld, decision: Decision) -> None:
    assert status_of(world, decision).plan == status(world).plan


def claim_kept(world: SchemaWorld, decision: Decision) -> None:
    before = status(world).active_operation
    after = status_of(world, decision).active_operation
    assert before is not None
    assert after is not None
    assert after.operation_id == before.operation_id


def claim_dropped(world: SchemaWorld, decision: Decision) -> None:
    assert status(world).active_operation is not None
    assert status_of(world, decision).active_operation is None


def apply_claimed_under_lease(world: SchemaWorld, decision: Decision) -> None:
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.type == OperationType.APPLY
    assert decision.lease
    assert decision.lease[0].holder == claim.operation_id


def proof_owed(world: SchemaWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.last_apply is not None
    assert after.last_apply.verification is None
    assert after.plan is None


def proof_claimed(world: SchemaWorld, decision: Decision) -> None:
    claim = status_of(world, decision).active_operation
    last = status(world).last_apply
    assert claim is not None
    assert claim.serves_proof is True
    assert last is not None
    assert claim.source == last.source
    assert claim.target_identity_digest == last.target_identity_digest


def verified(outcome: str) -> Then:
    def then(world: SchemaWorld, decision: Decision) -> None:
        last = status_of(world, decision).last_apply
        assert last is not None
        assert last.verification is not None
        assert last.verification.outcome == outcome

    return then


def in_sync_condition(reason: str) -> Then:
    def then(world: SchemaWorld, decision: Decision) -> None:
        condition = status_of(world, decision).condition(ConditionType.IN_SYNC)
        assert condition is not None
        assert condition.status.value == "True"
        assert condition.reason == reason

    return then


def approval_required(required: bool) -> Then:
    def then(world: SchemaWorld, decision: Decision) -> None:
        after = status_of(world, decision)
        assert after.plan is not None
        assert after.plan.uid is not None
        assert after.plan.approval_required is required
        assert after.journal is not None
        assert after.journal.entries[-1].approval_required is required

    return then


def nothing_published(world: SchemaWorld, decision: Decision) -> None:
    assert status_of(world, decision).plan is None
    assert "PtahSchemaPlan" not in created_kinds(decision)


def apply_claimed(world: SchemaWorld, decision: Decision) -> None:
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.type == OperationType.APPLY


def no_job_no_lease(world: SchemaWorld, decision: Decision) -> None:
    assert "Job" not in created_kinds(decision)
    assert not [a for a in decision.lease if a.verb == LeaseVerb.ACQUIRE]


# --- the worlds --------------------------------------------------------------------------------


def interval_ended(world: SchemaWorld) -> SchemaWorld:
    return later(world, TEN_MINUTES)


def source_edited(world: SchemaWorld) -> SchemaWorld:
    return with_source(world, source_files(EDITED_FILES))


def apply_job_failed() -> SchemaWorld:
    return applied(applying(), outcome="Unknown", reason="ApplyOutcomeUnknown", job=JobPhase.FAILED)


def apply_job_lost() -> SchemaWorld:
    world = step(without_job(applying()))  # the pass that first finds the Job gone
    return later(world, A_MINUTE)


def apply_job_ended_without_result() -> SchemaWorld:
    world = with_job(applying(), JobPhase.FAILED, finished_at=later(new(), -A_MINUTE).now)
    return later(world, 2 * A_MINUTE)


def observe_failed() -> SchemaWorld:
    return step(read_failed(observing(), OperationType.OBSERVE))


SOURCE_TO_VERDICT = [
    Row(
        "New, ConfigMap: straight to Observing, the manager takes the snapshot, no Resolve Job",
        new,
        ("SCH-05", "SCH-02", "SCH-01", "SRC-CM-01", "SRC-CM-06", "PATH-05", "PATH-06", "JOB-04"),
        phase=SchemaPhase.OBSERVING,
        ready=Reason.OPERATION_IN_PROGRESS,
        progressing=(True, Reason.OPERATION_IN_PROGRESS),
        job="Observe",
        entries=[],
        events=[EventReason.SNAPSHOT_TAKEN],
        lease=[],
        then=snapshot_taken_and_mounted,
    ),
    Row(
        "Observing -> Planning: drift read",
        lambda: observed(observing()),
        ("SCH-10",),
        phase=SchemaPhase.PLANNING,
        progressing=(True, Reason.OPERATION_IN_PROGRESS),
        job=None,
        lease=[],
        then=drift_recorded,
    ),
    Row(
        "Planning: the Plan is claimed holding the database-realm Lease",
        plan_next,
        ("SCH-55", "LCK-08"),
        phase=SchemaPhase.PLANNING,
        job="Plan",
        lease=[L.ACQUIRE],
    ),
    Row(
        "Planning -> InSync: no change",
        lambda: planned(planning(), changes=False),
        ("SCH-11", "PATH-13", "SCH-56"),
        phase=SchemaPhase.IN_SYNC,
        ready=Reason.SCOPED_CONVERGED,
        progressing=(False, Reason.SCOPED_CONVERGED),
        job=None,
        entries=[],
        lease=[L.RELEASE],
        then=in_sync_condition(Reason.SCOPED_CONVERGED),
    ),
    Row(
        "Planning: changed bytes are published (the plan first, its chunks once it exists)",
        lambda: planned(planning()),
        ("SCH-56", "PATH-07"),
        phase=SchemaPhase.PLANNING,
        ready=Reason.PLAN_PUBLISHED,
        progressing=(True, Reason.PLAN_PUBLISHED),
        lease=[L.RELEASE],
        then=plan_created_not_yet_published,
    ),
    Row(
        "Planning -> ReadyToApply: changes under Always, nothing destructive, no privilege change",
        lambda: about_to_publish(spec={"apply": ApplyPolicy.ALWAYS}),
        ("SCH-12", "JNL-03"),
        phase=SchemaPhase.READY_TO_APPLY,
        ready=Reason.READY_TO_APPLY,
        progressing=(True, Reason.READY_TO_APPLY),
        job=None,
        entries=[E.PLAN_PUBLISHED],
        events=[EventReason.PLAN_PUBLISHED],
        lease=[],
        then=approval_required(False),
    ),
    Row(
        "Planning -> AwaitingApproval: a privilege change under Always still needs approval",
        lambda: about_to_publish(spec={"apply": ApplyPolicy.ALWAYS}, privilege=True),
        ("SCH-12", "SCH-13"),
        phase=SchemaPhase.AWAITING_APPROVAL,
        ready=Reason.AWAITING_APPROVAL,
        progressing=(False, Reason.AWAITING_APPROVAL),
        job=None,
        entries=[E.PLAN_PUBLISHED],
        then=approval_required(True),
    ),
    Row(
        "Planning -> AwaitingApproval: a destructive plan the policy allows, under Always",
        lambda: about_to_publish(
            spec={"apply": ApplyPolicy.ALWAYS, "allow_destructive": True}, destructive=True
        ),
        ("SCH-12", "SCH-13"),
        phase=SchemaPhase.AWAITING_APPROVAL,
        ready=Reason.AWAITING_APPROVAL,
        job=None,
        then=approval_required(True),
    ),
    Row(
        "Planning -> AwaitingApproval: any change under OnApproval",
        about_to_publish,
        ("SCH-13", "APR-01", "PATH-08", "JNL-04"),
        phase=SchemaPhase.AWAITING_APPROVAL,
        ready=Reason.AWAITING_APPROVAL,
        progressing=(False, Reason.AWAITING_APPROVAL),
        job=None,
        entries=[E.PLAN_PUBLISHED],
        then=approval_required(True),
    ),
    Row(
        "AwaitingApproval, no approval: it waits and writes nothing",
        awaiting_approval,
        ("SCH-13", "PATH-08"),
        phase=SchemaPhase.AWAITING_APPROVAL,
        job=None,
        writes=False,
    ),
    Row(
        "Planning -> Blocked: a protected table",
        lambda: about_to_publish(
            spec={"apply": ApplyPolicy.ALWAYS, "protected": ["public.order_lines"]},
            protected=["public.order_lines"],
        ),
        ("SCH-14", "SCH-48"),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.PROTECTED_TABLE,
        progressing=(False, Reason.PROTECTED_TABLE),
        job=None,
        entries=[E.PLAN_PUBLISHED],
    ),
    Row(
        "Planning -> Blocked: a destructive plan the policy disallows",
        lambda: about_to_publish(destructive=True),
        ("SCH-14", "SCH-48"),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.DESTRUCTIVE_CHANGE_DISALLOWED,
        job=None,
    ),
    Row(
        "Planning -> Blocked: apply: Never (the plan is recorded)",
        lambda: about_to_publish(spec={"apply": ApplyPolicy.NEVER}),
        ("SCH-14", "SCH-48", "SCH-52"),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.APPLY_DISABLED,
        job=None,
        entries=[E.PLAN_PUBLISHED],
    ),
    Row(
        "Planning -> Observing: the target moved while it planned",
        lambda: planned(planning(), target=OTHER_DB),
        ("SCH-15",),
        phase=SchemaPhase.OBSERVING,
        progressing=(True, Reason.OPERATION_IN_PROGRESS),
        job=None,
        events=[EventReason.READ_RESTARTED],
        lease=[L.RELEASE],
        then=claim_dropped,
    ),
    Row(
        "Planning -> Observing: the lock was lost while it planned (the runner says so)",
        lambda: read_failed(planning(), OperationType.PLAN, reason="LockLost"),
        ("SCH-15", "LCK-09"),
        phase=SchemaPhase.OBSERVING,
        job=None,
        entries=[],
        lease=[L.RELEASE],
    ),
    Row(
        "Planning -> Observing: the Lease changed hands while it planned; its result is discarded",
        lambda: planned(step(lease_taken_by_another(step(planning())))),
        ("SCH-15", "LCK-09", "LCK-10", "LCK-11"),
        phase=SchemaPhase.OBSERVING,
        job=None,
        then=nothing_published,
    ),
]


PLAN_TO_PROOF = [
    Row(
        "ReadyToApply -> Applying: every gate holds",
        lambda: step(ready_to_apply()),
        ("SCH-16", "PATH-09", "JOB-05"),
        phase=SchemaPhase.APPLYING,
        job=None,
        then=apply_claimed,
    ),
    Row(
        "ReadyToApply -> Applying: the Lease is taken before the claim, the claim before the Job",
        ready_to_apply,
        ("SCH-16", "JOB-04"),
        phase=SchemaPhase.APPLYING,
        job="Apply",
        lease=[L.ACQUIRE],
        then=apply_claimed_under_lease,
    ),
    Row(
        "ReadyToApply -> Resolving (Observing): the interval ended first",
        lambda: interval_ended(lease_taken_by_another(ready_to_apply())),
        ("SCH-17", "RETRY-12"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
        then=plan_kept,
    ),
    Row(
        "ReadyToApply -> Observing: the plan went stale",
        lambda: source_edited(lease_taken_by_another(ready_to_apply())),
        ("SCH-18", "SCH-64"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
        then=plan_retired,
    ),
    Row(
        "AwaitingApproval -> Applying: the exact approval exists (never through ReadyToApply)",
        lambda: with_approval(awaiting_approval()),
        ("SCH-19", "PATH-09", "APR-02"),
        phase=SchemaPhase.APPLYING,
        job="Apply",
        lease=[L.ACQUIRE],
        then=apply_claimed_under_lease,
    ),
    Row(
        "AwaitingApproval -> Resolving (Observing): the interval ended first",
        lambda: interval_ended(awaiting_approval()),
        ("SCH-20", "SCH-65"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
        then=plan_kept,
    ),
    Row(
        "AwaitingApproval -> Observing: the plan went stale",
        lambda: source_edited(awaiting_approval()),
        ("SCH-21", "SCH-64", "SCH-66"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
        events=[EventReason.PLAN_STALE, EventReason.SNAPSHOT_TAKEN],
        then=plan_retired,
    ),
    Row(
        "Applying -> VerifyingConvergence: the Job ended",
        lambda: applied(applying()),
        ("SCH-22", "PATH-10", "JNL-06"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        ready=Reason.VERIFYING_CONVERGENCE,
        progressing=(True, Reason.VERIFYING_CONVERGENCE),
        job=None,
        entries=[E.APPLY_FINISHED],
        lease=[],
        then=proof_owed,
    ),
    Row(
        "Applying -> VerifyingConvergence: the Job failed, whatever it reported; never Failed",
        apply_job_failed,
        ("SCH-22", "SCH-25", "SCH-59", "PATH-10"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        job=None,
        entries=[E.APPLY_FINISHED],
        lease=[],
        then=proof_owed,
    ),
    Row(
        "Applying -> VerifyingConvergence: the Job was lost",
        apply_job_lost,
        ("SCH-22", "SCH-25"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        job=None,
        then=proof_owed,
    ),
    Row(
        "Applying -> VerifyingConvergence: the Job ended and left no result",
        apply_job_ended_without_result,
        ("SCH-22", "SCH-25"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        then=proof_owed,
    ),
    Row(
        "Applying -> Suspended: spec.suspend before any Job existed",
        lambda: suspended(applying(dispatched=False)),
        ("SCH-23", "SUS-05"),
        phase=SchemaPhase.SUSPENDED,
        job=None,
        entries=[],
        lease=[L.RELEASE],
        then=claim_dropped,
    ),
    Row(
        "Applying -> Observing: the source moved before any Job existed",
        lambda: source_edited(applying(dispatched=False)),
        ("SCH-23",),
        phase=SchemaPhase.OBSERVING,
        job=None,
        entries=[],
        lease=[L.RELEASE],
        then=plan_retired,
    ),
    Row(
        "Applying -> AwaitingApproval: its approval was deleted before any Job existed",
        lambda: dataclasses.replace(applying(dispatched=False), approvals=()),
        ("SCH-23", "APR-13"),
        phase=SchemaPhase.AWAITING_APPROVAL,
        job=None,
        entries=[],
        lease=[L.RELEASE],
        then=plan_kept,
    ),
    Row(
        "Applying -> Pending: the spec changed before any Job existed",
        lambda: with_policy(applying(dispatched=False), allow_destructive=True),
        ("SCH-23",),
        phase=SchemaPhase.PENDING,
        job=None,
        entries=[],
        lease=[L.RELEASE],
    ),
    Row(
        "VerifyingConvergence: the proof's Observe runs under the Apply's Lease",
        verifying_convergence,
        ("SCH-58", "LCK-08"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        job="Observe",
        lease=[],
        then=proof_claimed,
    ),
    Row(
        "VerifyingConvergence: the proof's Observe claims its Plan in the same pass, same Lease",
        lambda: observed(proving()),
        ("SCH-58", "LCK-08"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        job="Plan",
        lease=[],
        then=proof_claimed,
    ),
    Row(
        "VerifyingConvergence -> InSync: a fresh no-change plan (ScopedConverged)",
        lambda: planned(proof_planning(), changes=False),
        ("SCH-26", "PATH-17", "PATH-10", "JNL-07"),
        phase=SchemaPhase.IN_SYNC,
        ready=Reason.SCOPED_CONVERGED,
        progressing=(False, Reason.SCOPED_CONVERGED),
        entries=[E.VERIFIED],
        lease=[L.RELEASE],
        then=both(verified("InSync"), in_sync_condition(Reason.SCOPED_CONVERGED)),
    ),
    Row(
        "VerifyingConvergence -> AwaitingApproval: changes remain, a new plan",
        lambda: planned(proof_planning(), text="-- another plan --"),
        ("SCH-27", "PATH-16", "JNL-07"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        ready=Reason.PLAN_PUBLISHED,
        entries=[E.VERIFIED],
        lease=[L.RELEASE],
        then=both(verified("DriftRemains"), plan_created_not_yet_published),
    ),
    Row(
        "VerifyingConvergence -> Pending: a newer generation took over (Superseded)",
        lambda: with_policy(verifying_convergence(), allow_destructive=True),
        ("SCH-28", "JNL-07"),
        phase=SchemaPhase.PENDING,
        job=None,
        entries=[E.VERIFIED],
        lease=[L.RELEASE],
        then=verified("Superseded"),
    ),
    Row(
        "VerifyingConvergence -> Pending: another execution binding took over (Superseded)",
        lambda: with_runner(verifying_convergence(), ROLLED_OUT),
        ("SCH-28",),
        phase=SchemaPhase.PENDING,
        entries=[E.VERIFIED],
        then=verified("Superseded"),
    ),
    Row(
        "VerifyingConvergence -> Blocked: the proof read another target; claim and Lease stay",
        lambda: planned(proof_planning(), target=OTHER_DB),
        ("SCH-29", "SCH-61", "LCK-12", "SCH-48"),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.TARGET_IDENTITY_CHANGED,
        progressing=(False, Reason.TARGET_IDENTITY_CHANGED),
        entries=[],
        events=[EventReason.TARGET_IDENTITY_CHANGED],
        lease=[],
        then=claim_kept,
    ),
    Row(
        "InSync -> Resolving (Observing): the interval ended",
        lambda: interval_ended(in_sync()),
        ("SCH-30", "RRQ-01"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
    ),
    Row(
        "InSync -> Resolving (Observing): an input changed",
        lambda: source_edited(in_sync()),
        ("SCH-30", "SRC-CM-10", "SRC-CM-12"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
        events=[EventReason.SNAPSHOT_TAKEN],
    ),
    Row(
        "InSync: nothing due, nothing written",
        in_sync,
        ("SCH-30",),
        phase=SchemaPhase.IN_SYNC,
        writes=False,
        job=None,
    ),
]


def blocked_apply_disabled() -> SchemaWorld:
    return published(spec={"apply": ApplyPolicy.NEVER})


def failed_no_claim() -> SchemaWorld:
    return step(with_source(in_sync(), None))


def proof_suspended() -> SchemaWorld:
    world = step(suspended(verifying_convergence()))
    assert status(world).phase == SchemaPhase.SUSPENDED
    return world


def pending_with_proof_owed() -> SchemaWorld:
    # The Lease changed hands under the proof's Observe: its result is discarded.
    world = step(lease_taken_by_another(step(proving())))
    world = step(dataclasses.replace(observed(world), lease=None))
    assert status(world).phase == SchemaPhase.PENDING, status(world).phase
    return world


LEAVING_THE_PATH = [
    Row(
        "No claim -> Blocked: a realm conflict",
        lambda: _with_conflict(in_sync()),
        ("SCH-31", "SCH-48", "LCK-02", "LCK-04"),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.REALM_CONFLICT,
        progressing=(False, Reason.REALM_CONFLICT),
        then=no_job_no_lease,
    ),
    Row(
        "No claim -> Blocked: a PtahRealm that does not admit it",
        lambda: dataclasses.replace(
            edited(in_sync(), target=_target(realm="production")), realm_missing=True
        ),
        ("SCH-31", "SCH-48", "LCK-04"),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.REALM_NOT_AUTHORIZED,
        then=no_job_no_lease,
    ),
    Row(
        "No claim -> Blocked: an unsupported engine",
        lambda: dataclasses.replace(in_sync(), supported_engines=frozenset()),
        ("SCH-31", "SCH-48"),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.UNSUPPORTED_ENGINE,
        then=no_job_no_lease,
    ),
    Row(
        "No claim -> Suspended: spec.suspend",
        lambda: suspended(in_sync()),
        ("SCH-32", "SUS-01", "SUS-05"),
        phase=SchemaPhase.SUSPENDED,
        ready=Reason.SUSPENDED,
        progressing=(False, Reason.SUSPENDED),
        then=no_job_no_lease,
    ),
    Row(
        "No claim -> Failed: the source refused before any Job",
        lambda: with_source(in_sync(), source_files(refusal="file name 'a b' is not allowed")),
        ("SCH-33",),
        phase=SchemaPhase.FAILED,
        ready=Reason.SOURCE_REFUSED,
        then=no_job_no_lease,
    ),
    Row(
        "No claim -> Failed: a configuration error (the source ConfigMap is gone)",
        lambda: with_source(in_sync(), None),
        ("SCH-33", "SCH-53"),
        phase=SchemaPhase.FAILED,
        ready=Reason.CONFIGURATION_ERROR,
        progressing=(False, Reason.CONFIGURATION_ERROR),
        then=no_job_no_lease,
    ),
    Row(
        "No claim -> Pending: an execution component changed",
        lambda: with_runner(awaiting_approval(), ROLLED_OUT),
        ("SCH-35",),
        phase=SchemaPhase.PENDING,
        job=None,
        then=plan_retired,
    ),
    Row(
        "A read under way -> Failed: its Job failed; the claim stays",
        lambda: read_failed(observing(), OperationType.OBSERVE),
        ("SCH-36", "RETRY-01", "RETRY-15"),
        phase=SchemaPhase.FAILED,
        ready=Reason.OPERATION_FAILED,
        progressing=(True, Reason.OPERATION_FAILED),
        entries=[E.OPERATION_FAILED],
        events=[EventReason.OPERATION_FAILED],
        then=claim_kept,
    ),
    Row(
        "A read under way -> Suspended: spec.suspend drops the claim",
        lambda: suspended(observing()),
        ("SCH-37", "SUS-04", "SUS-05"),
        phase=SchemaPhase.SUSPENDED,
        job=None,
        then=claim_dropped,
    ),
    Row(
        "A Plan under way -> Suspended: the claim goes, its Lease is released",
        lambda: suspended(planning()),
        ("SCH-37", "SUS-04"),
        phase=SchemaPhase.SUSPENDED,
        lease=[L.RELEASE],
        then=claim_dropped,
    ),
    Row(
        "A proof's read under spec.suspend: its Job runs to its end first",
        lambda: suspended(proving()),
        ("SCH-37", "SUS-03"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        lease=[],
        then=claim_kept,
    ),
    Row(
        "A read under way -> Pending: inputs changed, its result discarded",
        lambda: source_edited(observing()),
        ("SCH-38",),
        phase=SchemaPhase.PENDING,
        job=None,
        events=[EventReason.READ_RESTARTED],
        then=claim_dropped,
    ),
    Row(
        "Blocked -> Resolving (Observing): the interval ended",
        lambda: interval_ended(blocked_apply_disabled()),
        ("SCH-39", "SCH-49", "PATH-14"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
    ),
    Row(
        "Blocked -> Resolving (Observing): an input changed",
        lambda: source_edited(blocked_apply_disabled()),
        ("SCH-39",),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
    ),
    Row(
        "Blocked (target moved) -> the proof's own read again after failureRetryInterval",
        lambda: later(target_moved(), A_MINUTE),
        ("SCH-40", "SCH-62"),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.TARGET_IDENTITY_CHANGED,
        then=claim_kept,
    ),
    Row(
        "Blocked (target moved) -> what the proof's result says: the target is back, InSync",
        lambda: planned(step(step(later(target_moved(), A_MINUTE))), changes=False),
        ("SCH-40", "SCH-62"),
        phase=SchemaPhase.IN_SYNC,
        ready=Reason.SCOPED_CONVERGED,
        entries=[E.VERIFIED],
        lease=[L.RELEASE],
    ),
    Row(
        "Failed (a claim) -> the same read after failureRetryInterval; the phase stays Failed",
        lambda: step(later(observe_failed(), A_MINUTE)),
        ("SCH-42", "RETRY-01"),
        phase=SchemaPhase.FAILED,
        ready=Reason.OPERATION_IN_PROGRESS,
        progressing=(True, Reason.OPERATION_IN_PROGRESS),
        job="Observe",
        then=claim_kept,
    ),
    Row(
        "Failed (a claim) -> what the read's result says: Planning",
        lambda: observed(step(step(later(observe_failed(), A_MINUTE)))),
        ("SCH-42",),
        phase=SchemaPhase.PLANNING,
    ),
    Row(
        "Failed -> Pending: the read gave way to a new Resolve",
        lambda: later(_requested(observe_failed()), A_MINUTE),
        ("SCH-43", "RETRY-03", "RETRY-05"),
        phase=SchemaPhase.PENDING,
        events=[EventReason.READ_RESTARTED],
        then=claim_dropped,
    ),
    Row(
        "Failed (no claim) -> Resolving (Observing): after failureRetryInterval",
        lambda: with_source(later(failed_no_claim(), A_MINUTE), source_files()),
        ("SCH-44", "RETRY-11"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
    ),
    Row(
        "Failed (no claim): before failureRetryInterval nothing starts",
        lambda: with_source(failed_no_claim(), source_files()),
        ("SCH-44", "SCH-53"),
        phase=SchemaPhase.FAILED,
        job=None,
    ),
    Row(
        "Failed (a claim) -> Suspended: spec.suspend",
        lambda: suspended(observe_failed()),
        ("SCH-45", "SUS-05"),
        phase=SchemaPhase.SUSPENDED,
        then=claim_dropped,
    ),
    Row(
        "Failed (no claim) -> Suspended: spec.suspend",
        lambda: suspended(failed_no_claim()),
        ("SCH-45",),
        phase=SchemaPhase.SUSPENDED,
    ),
    Row(
        "Pending -> Resolving (Observing): the next pass",
        lambda: step(source_edited(observing())),
        ("SCH-46",),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
    ),
    Row(
        "Pending -> VerifyingConvergence: the next pass, with a proof owed",
        pending_with_proof_owed,
        ("SCH-46",),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        job="Observe",
        lease=[L.ACQUIRE],
        then=proof_claimed,
    ),
    Row(
        "Suspended -> Resolving (Observing): resumed, the edit moved the generation",
        lambda: resumed(step(suspended(in_sync()))),
        ("SCH-47", "SUS-07"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
    ),
    Row(
        "Suspended -> VerifyingConvergence: resumed with a proof owed",
        lambda: resumed(proof_suspended()),
        ("SCH-47", "SUS-07"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        job="Observe",
        lease=[L.ACQUIRE],
        then=proof_claimed,
    ),
]


def _target(**changes: object) -> Target:
    return new().schema.spec.target.model_copy(update=changes)


def _with_conflict(world: SchemaWorld) -> SchemaWorld:
    return with_claimant(world, shared=True)


def _requested(world: SchemaWorld) -> SchemaWorld:
    return annotated(world, "operator.ptah.run/read-requested-at", "2026-09-01T12:00:30Z")


@pytest.mark.parametrize("row", params(SOURCE_TO_VERDICT))
def test_from_the_source_to_a_plans_verdict(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(PLAN_TO_PROOF))
def test_from_a_plan_to_the_proof(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(LEAVING_THE_PATH))
def test_leaving_the_path_and_coming_back(row: Row) -> None:
    check(row)


@pytest.mark.req("SCH-01")
def test_every_phase_is_a_seed_phase() -> None:
    assert {p.value for p in SchemaPhase} == {
        "Pending",
        "Resolving",
        "Verifying",
        "Observing",
        "Planning",
        "InSync",
        "ReadyToApply",
        "AwaitingApproval",
        "Applying",
        "VerifyingConvergence",
        "Blocked",
        "Failed",
        "Suspended",
    }


@pytest.mark.req("SCH-02")
def test_pending_is_never_where_a_schema_begins() -> None:
    world = new()
    assert world.schema.status is None
    after = step(world)
    assert status(after).phase == SchemaPhase.OBSERVING


@pytest.mark.req("SCH-03", "PATH-12", "APR-16")
def test_observe_plan_and_apply_run_as_jobs_and_approval_runs_nothing() -> None:
    identity: Callable[[SchemaWorld], SchemaWorld] = lambda w: w  # noqa: E731
    changes: list[Callable[[SchemaWorld], SchemaWorld]] = [
        identity,
        observed,
        identity,
        planned,
        identity,
        identity,
        identity,
        with_approval,
        identity,
        applied,
        identity,
        observed,
        lambda w: planned(w, changes=False),
    ]
    kinds: list[str] = []
    world = new()
    for change in changes:
        world = change(world)
        decision = reconcile_schema(world)
        job = job_of(decision)
        if job is not None:
            kinds.append(job)
        if status_of(world, decision).phase == SchemaPhase.AWAITING_APPROVAL:
            assert job is None
        world = carry_out(world, decision)
    assert kinds == ["Observe", "Plan", "Apply", "Observe", "Plan"]
    assert status(world).phase == SchemaPhase.IN_SYNC


def _approved_plan_planned_again() -> SchemaWorld:
    """An exactly approved Apply withdrawn before its Job existed (spec.suspend), resumed; the
    read that follows plans the same plan, its approval still unused (APR-13)."""
    world = applying(dispatched=False)
    world = step(suspended(world))
    assert status(world).phase == SchemaPhase.SUSPENDED, status(world).phase
    world = step(resumed(world))
    assert status(world).phase == SchemaPhase.OBSERVING, status(world).phase
    world = step(step(observed(world)))
    assert status(world).phase == SchemaPhase.PLANNING, status(world).phase
    return planned(world)


@pytest.mark.req("APR-13", "SCH-19", "PATH-09")
def test_progressing_is_true_while_an_approved_apply_is_one_pass_away() -> None:
    world = _approved_plan_planned_again()
    decision = reconcile_schema(world)
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.AWAITING_APPROVAL, after.phase
    progressing = after.condition(ConditionType.PROGRESSING)
    assert progressing is not None
    assert (progressing.status.value, progressing.reason) == ("True", Reason.READY_TO_APPLY)
    world = step(world)
    assert status(step(world)).phase == SchemaPhase.APPLYING, "and the next pass starts it"
