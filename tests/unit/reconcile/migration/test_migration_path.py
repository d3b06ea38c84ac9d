"""The migration's phase diagrams (seed 000), one row per arrow.

"From the source to a plan", "From a plan to the verdict on its run" and "What leaves that
path, and how it comes back", read as tables: the phase on the left is the world a row
starts from, the box on the right is what the pass must decide.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from ptah_operator.api.constants import (
    ApplyPolicy,
    ConditionType,
    EventReason,
    JournalEntryType,
    MigrationPhase,
    OperationType,
    Reason,
    RunOutcome,
)
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.worlds import (
    BINDING,
    CONFIG_MAP,
    EDITED_FILES,
    ROLLED_OUT,
    applying,
    awaiting_approval,
    edited,
    history,
    history_reported,
    in_sync,
    later,
    new,
    nothing_pending,
    planning,
    read,
    reading,
    ready_to_plan,
    resumed,
    run_block,
    run_reported,
    source_files,
    status,
    status_of,
    step,
    suspended,
    verifying_history,
    with_approval,
    with_job,
    with_runner,
    with_source,
)

TEN_MINUTES = dt.timedelta(minutes=10)
A_MINUTE = dt.timedelta(minutes=1)

created = JournalEntryType


def created_kinds(decision: Decision) -> list[str]:
    return [str(o["kind"]) for o in decision.create if isinstance(o, dict)]


def job_manifest(decision: Decision) -> dict[str, Any]:
    return next(o for o in decision.create if isinstance(o, dict) and o["kind"] == "Job")


def operation_document(decision: Decision) -> dict[str, Any]:
    container = job_manifest(decision)["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    return dict(json.loads(env["PTAH_OPERATION"]["value"]))


# --- what the rows assert beyond the table -----------------------------------------------------


def snapshot_taken_and_mounted(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.source is not None
    assert after.source.snapshot_name is not None
    snapshot = next(o for o in decision.create if isinstance(o, dict) and o["kind"] == "ConfigMap")
    assert snapshot["metadata"]["name"] == after.source.snapshot_name
    assert snapshot["immutable"] is True
    assert snapshot["metadata"]["ownerReferences"][0]["uid"] == world.migration.metadata.uid
    volumes = job_manifest(decision)["spec"]["template"]["spec"]["volumes"]
    mounted = [v["configMap"]["name"] for v in volumes if "configMap" in v]
    assert mounted == [after.source.snapshot_name]
    assert CONFIG_MAP not in mounted
    resolved = after.condition(ConditionType.ARTIFACT_RESOLVED)
    assert resolved is not None
    assert resolved.reason == Reason.SNAPSHOT_TAKEN
    assert after.condition(ConditionType.ARTIFACT_VERIFIED) is None
    claim = after.active_operation
    assert claim is not None
    assert claim.type == OperationType.HISTORY
    assert claim.job_name == job_manifest(decision)["metadata"]["name"]
    assert not decision.lease


def no_phase_before_first_read(world: MigrationWorld, decision: Decision) -> None:
    assert world.migration.status is None
    assert status_of(world, decision).phase == MigrationPhase.READING


def history_recorded(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.history is not None
    assert after.history.current_version == "0002"
    assert after.history.applied_count == 2
    assert after.history.pending_count == 0
    assert after.active_operation is None


def plan_created_no_pod(world: MigrationWorld, decision: Decision) -> None:
    assert created_kinds(decision) == ["PtahMigrationPlan"]
    plan = next(o for o in decision.create if isinstance(o, dict))
    spec = plan["spec"]
    assert [v["version"] for v in spec["versions"]] == ["0002"]
    assert set(spec["versions"][0]) == {"version", "description", "checksum"}
    assert status_of(world, decision).plan is not None


def apply_carries_the_sequence(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    claim = after.active_operation
    assert claim is not None
    assert claim.type == OperationType.APPLY
    assert after.plan is not None
    plan = world.plans[after.plan.name]
    document = operation_document(decision)
    assert document["expected"] == [
        {"version": v.version, "checksum": v.checksum} for v in plan.spec.versions
    ]
    assert claim.plan is not None
    assert claim.plan.uid == plan.metadata.uid
    assert claim.target_identity_digest == plan.spec.target_identity_digest


def run_recorded(outcome: RunOutcome) -> Any:
    def then(world: MigrationWorld, decision: Decision) -> None:
        after = status_of(world, decision)
        assert after.last_run is not None
        assert after.last_run.outcome == outcome
        assert after.active_operation is None
        assert after.plan is None

    return then


def held(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.unresolved_run is not None
    assert decision.annotations.get("operator.ptah.run/unresolved-run")


def nothing_named_by_the_lost_job(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.last_run is not None
    assert after.last_run.outcome == RunOutcome.UNKNOWN
    assert after.last_run.target_identity_digest is None
    assert after.unresolved_run is not None
    assert after.unresolved_run.planned_target_digest is not None


def proof_claimed(world: MigrationWorld, decision: Decision) -> None:
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.serves_proof is True
    last_run = status(world).last_run
    assert last_run is not None
    assert claim.source == last_run.source


def verified_in_sync(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.last_run is not None
    assert after.last_run.verification is not None
    assert after.last_run.verification.outcome == "InSync"


def plan_kept(world: MigrationWorld, decision: Decision) -> None:
    assert status_of(world, decision).plan == status(world).plan


def plan_retired(world: MigrationWorld, decision: Decision) -> None:
    assert status(world).plan is not None
    assert status_of(world, decision).plan is None


def stays(world: MigrationWorld, decision: Decision) -> None:
    assert decision.status is None
    assert not decision.create


# --- the worlds of the rows --------------------------------------------------------------------


def proof_reading() -> MigrationWorld:
    return step(verifying_history())


def blocked_dirty() -> MigrationWorld:
    return read(reading(), history("Dirty", current="0001", dirty="0002"))


def failed_before_selection() -> MigrationWorld:
    return step(run_reported(applying(), run_block(RunOutcome.FAILED, selected=False)))


def pending_after_stale_plan() -> MigrationWorld:
    return step(with_source(awaiting_approval(), source_files(EDITED_FILES)))


SOURCE_TO_PLAN = [
    Row(
        "New, ConfigMap: straight to Reading, the manager takes the snapshot, no Resolve Job",
        new,
        (
            "MIG-05",
            "MIG-02",
            "MIG-04",
            "SRC-CM-01",
            "SRC-CM-02",
            "SRC-CM-05",
            "SRC-CM-06",
            "SRC-CM-07",
            "JOB-04",
            "LCK-07",
            "MIG-01",
        ),
        phase=MigrationPhase.READING,
        ready=Reason.OPERATION_IN_PROGRESS,
        progressing=(True, Reason.OPERATION_IN_PROGRESS),
        job="History",
        entries=[],
        events=[EventReason.SNAPSHOT_TAKEN],
        lease=[],
        then=snapshot_taken_and_mounted,
    ),
    Row(
        "A new resource has no phase until its first read starts",
        new,
        ("MIG-05", "MIG-01"),
        then=no_phase_before_first_read,
    ),
    Row(
        "Reading -> InSync: nothing pending",
        lambda: history_reported(reading(), nothing_pending()),
        ("MIG-08", "PATH-13", "PATH-18", "MIG-35", "MIG-53", "JNL-13", "RUN-22"),
        phase=MigrationPhase.IN_SYNC,
        ready=Reason.HISTORY_MATCHED,
        progressing=(False, Reason.HISTORY_MATCHED),
        job=None,
        entries=[],
        then=history_recorded,
    ),
    Row(
        "Reading -> Planning: pending versions the history can continue (arithmetic, no Pod)",
        lambda: history_reported(reading(), ready_to_plan()),
        ("MIG-09", "MIG-03", "MIG-52", "PATH-07", "PRIV-02", "APR-16"),
        phase=MigrationPhase.PLANNING,
        ready=Reason.PLAN_PUBLISHED,
        progressing=(True, Reason.PLAN_PUBLISHED),
        job=None,
        then=plan_created_no_pod,
    ),
    Row(
        "Reading -> Blocked: dirty",
        lambda: history_reported(reading(), history("Dirty", current="0001", dirty="0002")),
        ("MIG-10", "MIG-36", "PATH-14"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.HISTORY_DIRTY,
        progressing=(False, Reason.HISTORY_DIRTY),
        job=None,
    ),
    Row(
        "Planning -> AwaitingApproval: plan published, OnApproval",
        planning,
        ("MIG-11", "APR-01", "JNL-03", "MIG-53", "PATH-08"),
        phase=MigrationPhase.AWAITING_APPROVAL,
        ready=Reason.AWAITING_APPROVAL,
        progressing=(False, Reason.AWAITING_APPROVAL),
        job=None,
        entries=[created.PLAN_PUBLISHED],
        events=[EventReason.PLAN_PUBLISHED],
    ),
    Row(
        "Planning -> Applying: plan published, Always",
        lambda: planning(apply=ApplyPolicy.ALWAYS),
        ("MIG-12", "APR-01", "PATH-09", "JOB-05", "MIG-49", "JOB-09"),
        phase=MigrationPhase.APPLYING,
        progressing=(True, Reason.OPERATION_IN_PROGRESS),
        job="Apply",
        entries=[created.PLAN_PUBLISHED],
        lease=[LeaseVerb.ACQUIRE],
        then=apply_carries_the_sequence,
    ),
    Row(
        "Planning, and it stays: plan published, apply: Never (Ready=False ApplyDisabled)",
        lambda: planning(apply=ApplyPolicy.NEVER),
        ("MIG-13", "APR-01", "MIG-53"),
        phase=MigrationPhase.PLANNING,
        ready=Reason.APPLY_DISABLED,
        progressing=(False, Reason.APPLY_DISABLED),
        job=None,
    ),
    Row(
        "apply: Never rests in Planning: the next pass changes nothing",
        lambda: step(planning(apply=ApplyPolicy.NEVER)),
        ("MIG-13",),
        writes=False,
        job=None,
        then=stays,
    ),
]

PLAN_TO_VERDICT = [
    Row(
        "AwaitingApproval -> Applying: the exact approval exists",
        lambda: with_approval(awaiting_approval()),
        ("MIG-14", "APR-02", "PATH-09", "JOB-04", "JOB-05", "MIG-49", "JOB-09"),
        phase=MigrationPhase.APPLYING,
        ready=Reason.OPERATION_IN_PROGRESS,
        progressing=(True, Reason.OPERATION_IN_PROGRESS),
        job="Apply",
        entries=[],
        lease=[LeaseVerb.ACQUIRE],
        then=apply_carries_the_sequence,
    ),
    Row(
        "AwaitingApproval waits: no approval, nothing runs",
        awaiting_approval,
        ("APR-01", "APR-16", "PATH-08"),
        writes=False,
        job=None,
        lease=[],
        then=stays,
    ),
    Row(
        "Applying: the Job shows, the approval is consumed (ApprovalAccepted)",
        lambda: step(with_approval(awaiting_approval())),
        ("JNL-05", "APR-04", "APR-14", "APR-11"),
        phase=MigrationPhase.APPLYING,
        job=None,
        entries=[created.APPROVAL_ACCEPTED],
        events=[EventReason.APPROVAL_ACCEPTED],
    ),
    Row(
        "Applying -> VerifyingHistory: the run applied",
        lambda: run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"])),
        ("MIG-17", "MIG-48", "RUN-04", "RUN-01", "JNL-09", "PATH-10", "MIG-52"),
        phase=MigrationPhase.VERIFYING_HISTORY,
        ready=Reason.VERIFYING_HISTORY,
        progressing=(True, Reason.VERIFYING_HISTORY),
        job=None,
        entries=[created.RUN_FINISHED],
        events=[EventReason.RUN_FINISHED],
        lease=[LeaseVerb.RELEASE],
        then=run_recorded(RunOutcome.APPLIED),
    ),
    Row(
        "Applying -> VerifyingHistory: the run found nothing to do",
        lambda: run_reported(applying(), run_block(RunOutcome.UP_TO_DATE)),
        ("MIG-17", "RUN-01", "RUN-04"),
        phase=MigrationPhase.VERIFYING_HISTORY,
        entries=[created.RUN_FINISHED],
        lease=[LeaseVerb.RELEASE],
        then=run_recorded(RunOutcome.UP_TO_DATE),
    ),
    Row(
        "Applying -> VerifyingHistory: the run failed past its selection",
        lambda: run_reported(
            applying(),
            run_block(
                RunOutcome.FAILED,
                failure={"version": "0002", "statementIndex": 0, "sqlstate": "42P07"},
            ),
        ),
        ("MIG-17", "MIG-48", "RUN-01", "RUN-04"),
        phase=MigrationPhase.VERIFYING_HISTORY,
        entries=[created.RUN_FINISHED],
        lease=[LeaseVerb.RELEASE],
        then=run_recorded(RunOutcome.FAILED),
    ),
    Row(
        "Applying -> Failed: the run stopped before it selected a migration, and ran none",
        lambda: run_reported(applying(), run_block(RunOutcome.FAILED, selected=False)),
        ("MIG-18", "MIG-42", "MIG-44", "RUN-20", "MIG-50", "MIG-51"),
        phase=MigrationPhase.FAILED,
        ready=Reason.RUN_FAILED,
        progressing=(False, Reason.RUN_FAILED),
        job=None,
        entries=[created.RUN_FINISHED],
        lease=[LeaseVerb.RELEASE],
        then=run_recorded(RunOutcome.FAILED),
    ),
    Row(
        "Applying -> Blocked: Partial",
        lambda: run_reported(applying(), run_block(RunOutcome.PARTIAL, applied=["0002"])),
        ("MIG-19", "MIG-46", "RUN-03", "RUN-05", "PATH-19", "JNL-09"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        progressing=(False, Reason.APPLY_OUTCOME_UNKNOWN),
        job=None,
        entries=[created.RUN_FINISHED],
        lease=[LeaseVerb.RELEASE],
        then=held,
    ),
    Row(
        "Applying -> Blocked: Unknown",
        lambda: run_reported(applying(), run_block(RunOutcome.UNKNOWN)),
        ("MIG-19", "RUN-03", "RUN-05", "MIG-53"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        entries=[created.RUN_FINISHED],
        then=held,
    ),
    Row(
        "Applying -> Blocked: a dispatched Job nobody can read",
        lambda: with_job(
            later(applying(), dt.timedelta(minutes=5)),
            JobPhase.FAILED,
            finished_at=applying().now,
            reason="DeadlineExceeded",
        ),
        ("MIG-19", "RUN-15", "PATH-19", "JOB-08"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        entries=[created.RUN_FINISHED],
        lease=[LeaseVerb.RELEASE],
        then=nothing_named_by_the_lost_job,
    ),
    Row(
        "Applying: a Job that ended waits a moment for its result",
        lambda: with_job(applying(), JobPhase.SUCCEEDED, finished_at=applying().now),
        ("JOB-08", "PATH-10"),
        phase=MigrationPhase.APPLYING,
        writes=False,
        lease=[],
    ),
    Row(
        "Applying -> Pending: what the claim rests on moved before any Job existed",
        lambda: with_source(applying(dispatched=False), source_files(EDITED_FILES)),
        ("MIG-20", "APR-13", "SUS-04"),
        phase=MigrationPhase.PENDING,
        job=None,
        entries=[],
        events=[EventReason.PLAN_STALE],
        lease=[LeaseVerb.RELEASE],
    ),
    Row(
        "Applying -> Failed: the Job could not be held to its admission snapshot",
        lambda: with_job(
            applying(), JobPhase.FAILED, snapshot_refused=True, finished_at=applying().now
        ),
        ("MIG-21", "JOB-06", "SRC-CM-16"),
        phase=MigrationPhase.FAILED,
        ready=Reason.SNAPSHOT_MISSING,
        job=None,
        lease=[LeaseVerb.RELEASE],
    ),
    Row(
        "VerifyingHistory -> Reading: the next pass claims the read",
        verifying_history,
        ("MIG-22", "RETRY-09", "LCK-07"),
        phase=MigrationPhase.READING,
        job="History",
        lease=[],
        then=proof_claimed,
    ),
    Row(
        "Reading (the proof): its result is the verdict, and verifies the run",
        lambda: history_reported(proof_reading(), nothing_pending()),
        ("MIG-22", "RUN-09", "JNL-08", "JNL-13", "PATH-18"),
        phase=MigrationPhase.IN_SYNC,
        ready=Reason.HISTORY_MATCHED,
        entries=[created.VERIFIED],
        events=[EventReason.VERIFIED],
        then=verified_in_sync,
    ),
    Row(
        "InSync -> Resolving (Reading): the interval ended",
        lambda: later(in_sync(), TEN_MINUTES),
        ("MIG-23", "RRQ-01", "RETRY-12"),
        phase=MigrationPhase.READING,
        job="History",
        entries=[],
    ),
    Row(
        "InSync rests before its interval ends",
        lambda: later(in_sync(), dt.timedelta(minutes=9)),
        ("RRQ-01",),
        writes=False,
        job=None,
    ),
    Row(
        "InSync -> Resolving (Reading): an input changed",
        lambda: with_source(in_sync(), source_files(EDITED_FILES)),
        ("MIG-23", "SRC-CM-10", "SRC-CM-12"),
        phase=MigrationPhase.READING,
        job="History",
        events=[EventReason.SNAPSHOT_TAKEN],
    ),
    Row(
        "Planning or AwaitingApproval -> Resolving (Reading): the interval ended first",
        lambda: later(awaiting_approval(), TEN_MINUTES),
        ("MIG-15", "RETRY-12", "RRQ-06"),
        phase=MigrationPhase.READING,
        job="History",
        events=[],
        then=plan_kept,
    ),
    Row(
        "Planning (apply: Never) -> Resolving (Reading): the interval ended",
        lambda: later(step(planning(apply=ApplyPolicy.NEVER)), TEN_MINUTES),
        ("MIG-15", "RETRY-12"),
        phase=MigrationPhase.READING,
        then=plan_kept,
    ),
    Row(
        "Planning or AwaitingApproval -> Pending: the plan no longer fits the source",
        lambda: with_source(awaiting_approval(), source_files(EDITED_FILES)),
        ("MIG-16", "SRC-CM-12", "APR-12"),
        phase=MigrationPhase.PENDING,
        ready=Reason.PLAN_STALE,
        progressing=(True, Reason.PLAN_STALE),
        job=None,
        events=[EventReason.PLAN_STALE],
        then=plan_retired,
    ),
    Row(
        "Planning or AwaitingApproval -> Pending: the plan no longer fits (execution binding)",
        lambda: with_runner(awaiting_approval(), ROLLED_OUT),
        ("MIG-16", "APR-09"),
        phase=MigrationPhase.PENDING,
        events=[EventReason.PLAN_STALE],
        then=plan_retired,
    ),
]

LEAVING_THE_PATH = [
    Row(
        "Any phase, no claim -> Failed: source refused before any Job",
        lambda: with_source(new(), source_files(refusal="maxBytes: the files hold 2 MiB")),
        ("MIG-26", "SRC-POL-05"),
        phase=MigrationPhase.FAILED,
        ready=Reason.SOURCE_REFUSED,
        job=None,
        then=lambda w, d: None if not d.create else pytest.fail("created something"),
    ),
    Row(
        "Any phase, no claim -> Failed: the source ConfigMap does not exist",
        lambda: with_source(in_sync(), None),
        ("MIG-26",),
        phase=MigrationPhase.FAILED,
        ready=Reason.CONFIGURATION_ERROR,
        job=None,
    ),
    Row(
        "Any phase, no claim -> Failed: a plan that could not be published",
        lambda: history_reported(
            reading(),
            history("ReadyToPlan", current="0001", pending_versions=["0002"], pending_count=5),
        ),
        ("MIG-26", "MIG-34"),
        phase=MigrationPhase.FAILED,
        ready=Reason.CONFIGURATION_ERROR,
        job=None,
        then=lambda w, d: (
            None if not [o for o in d.create if isinstance(o, dict)] else pytest.fail("published")
        ),
    ),
    Row(
        "A read under way -> Pending: inputs changed (result discarded)",
        lambda: with_source(reading(), source_files(EDITED_FILES)),
        ("MIG-28",),
        phase=MigrationPhase.PENDING,
        job=None,
        events=[EventReason.READ_RESTARTED],
        then=lambda w, d: None if status_of(w, d).active_operation is None else pytest.fail("kept"),
    ),
    Row(
        "A read under way -> Pending: an execution component changed",
        lambda: with_runner(reading(), ROLLED_OUT),
        ("MIG-28",),
        phase=MigrationPhase.PENDING,
        job=None,
    ),
    Row(
        "A read under way -> Pending: the spec changed",
        lambda: edited(reading(), interval="5m"),
        ("MIG-28",),
        phase=MigrationPhase.PENDING,
        job=None,
    ),
    Row(
        "A read under way -> Pending: spec.suspend",
        lambda: suspended(reading()),
        ("MIG-28", "SUS-06"),
        phase=MigrationPhase.PENDING,
        job=None,
    ),
    Row(
        "A read under way -> Failed: its Job could not be held to its admission snapshot",
        lambda: with_job(
            reading(),
            JobPhase.FAILED,
            snapshot_refused=True,
            message="snapshot refused: file 0002_add_invoice_status.sql does not match",
        ),
        ("MIG-29", "SRC-CM-16", "JOB-06"),
        phase=MigrationPhase.FAILED,
        ready=Reason.SNAPSHOT_MISSING,
        job=None,
        entries=[created.OPERATION_FAILED],
    ),
    Row(
        "Blocked -> Resolving (Reading): the interval ended",
        lambda: later(blocked_dirty(), TEN_MINUTES),
        ("MIG-30", "MIG-40", "PATH-14"),
        phase=MigrationPhase.READING,
        job="History",
    ),
    Row(
        "Blocked -> Resolving (Reading): an input changed",
        lambda: with_source(blocked_dirty(), source_files(EDITED_FILES)),
        ("MIG-30", "MIG-40"),
        phase=MigrationPhase.READING,
        job="History",
    ),
    Row(
        "Failed -> Resolving (Reading): after failureRetryInterval",
        lambda: later(failed_before_selection(), A_MINUTE),
        ("MIG-31", "RETRY-11", "MIG-42"),
        phase=MigrationPhase.READING,
        job="History",
    ),
    Row(
        "Failed waits for failureRetryInterval",
        lambda: later(failed_before_selection(), dt.timedelta(seconds=30)),
        ("MIG-31", "RETRY-11"),
        writes=False,
        job=None,
    ),
    Row(
        "Pending -> Resolving (Reading): the next pass",
        pending_after_stale_plan,
        ("MIG-32",),
        phase=MigrationPhase.READING,
        job="History",
    ),
    Row(
        "Suspended -> Resolving (Reading): resumed, the edit moved the generation",
        lambda: resumed(step(suspended(in_sync()))),
        ("MIG-32", "SUS-07"),
        phase=MigrationPhase.READING,
        job="History",
    ),
]


@pytest.mark.parametrize("row", params(SOURCE_TO_PLAN))
def test_from_the_source_to_a_plan(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(PLAN_TO_VERDICT))
def test_from_a_plan_to_the_verdict_on_its_run(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(LEAVING_THE_PATH))
def test_what_leaves_the_path_and_how_it_comes_back(row: Row) -> None:
    check(row)


@pytest.mark.req("MIG-21", "JOB-06")
def test_applying_to_failed_when_the_job_cannot_be_built(monkeypatch: pytest.MonkeyPatch) -> None:
    from ptah_operator.reconcile.migration import apply as apply_run

    def refuse(*args: object, **kwargs: object) -> dict[str, object]:
        raise ValueError("spec.execution.resources cannot be rendered")

    monkeypatch.setattr(apply_run, "apply_job", refuse)
    world = with_approval(awaiting_approval())
    check(
        Row(
            "AwaitingApproval -> Failed: the Job could not be built; none exists",
            lambda: world,
            ("MIG-21",),
            phase=MigrationPhase.FAILED,
            ready=Reason.JOB_NOT_BUILT,
            job=None,
            lease=[],
            entries=[created.OPERATION_FAILED],
        )
    )


@pytest.mark.req("MIG-01")
def test_every_phase_written_is_a_migration_phase() -> None:
    assert {p.value for p in MigrationPhase} == {
        "Pending",
        "Resolving",
        "Verifying",
        "Reading",
        "Planning",
        "AwaitingApproval",
        "Applying",
        "VerifyingHistory",
        "InSync",
        "Blocked",
        "Failed",
        "Suspended",
    }
    assert BINDING.runner_version == "0.1.0"


def _approved_plan_read_again() -> Any:
    """An exactly approved Apply withdrawn before its Job existed (spec.suspend), resumed; the
    read that follows reports the same plan, its approval still unused (APR-13)."""
    world = applying(dispatched=False)
    world = step(suspended(world))
    world = step(world)
    assert status(world).phase == MigrationPhase.SUSPENDED
    world = step(resumed(world))
    assert status(world).phase == MigrationPhase.READING
    return history_reported(world, ready_to_plan())


@pytest.mark.req("MIG-52", "MIG-14", "APR-13")
def test_progressing_is_true_while_an_approved_apply_is_one_pass_away() -> None:
    world = _approved_plan_read_again()
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.AWAITING_APPROVAL
    progressing = after.condition(ConditionType.PROGRESSING)
    assert progressing is not None
    assert (progressing.status.value, progressing.reason) == ("True", Reason.READY_TO_APPLY)
    world = step(world)
    assert status(step(world)).phase == MigrationPhase.APPLYING, "and the next pass starts it"
