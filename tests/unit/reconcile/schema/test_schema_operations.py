"""Operations, the proof and unknown outcomes (seed 000: the five operations; "After an Apply,
Observe and Plan run again under the original Apply Lease"; "Schema, Apply uncertain").

Also the contracts the runner is held to: what an Observe's report leaves in status, how a
Plan's text becomes chunks, what an Apply Job carries and what its report must say to count as
Succeeded.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest

from ptah_operator.api.constants import (
    ANNOTATION_SETTLED_APPLY,
    ConditionType,
    EventReason,
    JournalEntryType,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.api.fingerprints import plan_fingerprint_matches
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.schema import apply as schema_apply
from ptah_operator.reconcile.schema import jobs as schema_jobs
from ptah_operator.reconcile.schema import plans as schema_plans
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.schema.draft import SchemaDraft
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.schema.table import Row, check, params
from tests.unit.reconcile.schema.worlds import (
    A_MINUTE,
    DB,
    OTHER_DB,
    PLAN_FILE,
    PLAN_SQL,
    annotated,
    applied,
    applying,
    awaiting_approval,
    carry_out,
    claim_id,
    claim_of,
    condition_reason,
    created_kinds,
    digest,
    edited,
    entries_added,
    job_manifest,
    job_of,
    journal_entries,
    last_apply_id,
    later,
    lease_taken_by_another,
    new,
    observed,
    observing,
    phase,
    planned,
    planning,
    proof_planning,
    proving,
    publish,
    ready_to_apply,
    report,
    status,
    status_of,
    step,
    target_moved,
    verifying_convergence,
    with_approval,
    with_result,
    with_status,
)

E = JournalEntryType
L = LeaseVerb


def container(decision: Decision, name: str) -> dict[str, Any]:
    spec = job_manifest(decision)["spec"]["template"]["spec"]
    everything = [*spec.get("initContainers", []), *spec["containers"]]
    return next(c for c in everything if c["name"] == name)


def document(decision: Decision) -> dict[str, Any]:
    env = {e["name"]: e for e in container(decision, "run")["env"]}
    return dict(json.loads(env["PTAH_OPERATION"]["value"]))


def env_names(c: Mapping[str, Any]) -> set[str]:
    return {e["name"] for e in c.get("env", [])}


# --- Observe -----------------------------------------------------------------------------------


@pytest.mark.req("SCH-54", "PRIV-03")
def test_observe_leaves_only_the_drift_reports_aggregates_in_status() -> None:
    world = observing()
    block = {
        "digest": digest("drift report"),
        "dialect": "postgresql",
        "total": 3,
        "highestSeverity": "High",
        "categories": [
            {"category": "tables_added", "count": 2},
            {"category": "grants_added", "count": 1, "highestSeverity": "High"},
        ],
        "detail": [{"sql": PLAN_SQL, "object": "public.order_lines"}],
    }
    result = with_result(world, report(world, OperationType.OBSERVE, drift=block))
    decision = reconcile_schema(result)
    drift = status_of(result, decision).drift
    assert drift is not None
    assert drift.digest == digest("drift report")
    assert (drift.dialect, drift.total, drift.highest_severity) == ("postgresql", 3, "High")
    assert [(c.category, c.count) for c in drift.categories] == [
        ("tables_added", 2),
        ("grants_added", 1),
    ]
    assert drift.target_identity_digest == DB
    assert "order_lines" not in json.dumps(decision.status)


@pytest.mark.req("SCH-54", "JOB-01", "JOB-02", "JOB-03", "SRC-CM-07", "SRC-CM-08")
def test_observe_job_separates_the_files_from_the_database_url() -> None:
    decision = reconcile_schema(new())
    source = container(decision, "source")
    run = container(decision, "run")
    assert "PTAH_DATABASE_URL" not in env_names(source)
    url = next(e for e in run["env"] if e["name"] == "PTAH_DATABASE_URL")
    assert url["valueFrom"]["secretKeyRef"] == {"name": "orders-database", "key": "url"}
    assert any("--digest=sha256:" in arg for arg in source["command"])
    assert document(decision)["type"] == "Observe"
    assert "postgresql://" not in json.dumps(job_manifest(decision))


# --- Plan --------------------------------------------------------------------------------------


@pytest.mark.req("SCH-55", "LCK-08")
def test_the_plan_is_bound_to_the_database_its_observation_read_and_holds_the_lease() -> None:
    world = step(observed(observing()))
    decision = reconcile_schema(world)
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.type == OperationType.PLAN
    assert [(a.verb, a.holder) for a in decision.lease] == [(L.ACQUIRE, claim.operation_id)]
    assert document(decision)["expectedTargetDigest"] == DB
    assert claim.target_identity_digest == DB


@pytest.mark.req("SCH-55", "SCH-36")
def test_plans_that_do_not_agree_are_a_failed_attempt_not_a_plan() -> None:
    world = planning()
    failed = with_result(
        world,
        report(world, OperationType.PLAN, error={"reason": "PlanIncoherent", "message": "x"}),
        job=JobPhase.FAILED,
    )
    decision = reconcile_schema(failed)
    after = status_of(failed, decision)
    assert after.phase == SchemaPhase.FAILED
    assert after.plan is None
    assert "PtahSchemaPlan" not in created_kinds(decision)
    assert [a.verb for a in decision.lease] == [L.RELEASE]
    assert entries_added(failed, decision)[0].reason == "PlanIncoherent"


@pytest.mark.req("SCH-56", "PATH-07", "PRIV-02")
def test_a_plans_text_becomes_its_chunks_and_nowhere_else() -> None:
    world = step(planned(planning(), piece_size=20))
    ref = status(world).plan
    assert ref is not None
    plan = world.plans[ref.name]
    assert PLAN_SQL not in json.dumps(plan.model_dump(mode="json", by_alias=True))
    assert plan.spec.digest == digest(PLAN_FILE)
    assert plan.spec.target_identity_digest == DB
    assert plan.spec.plan_contract_version == 2
    assert plan_fingerprint_matches(plan.spec)
    decision = reconcile_schema(world)
    chunks = [o for o in decision.create if isinstance(o, Mapping)]
    assert [c["kind"] for c in chunks] == ["PtahSchemaPlanChunk"] * len(plan.spec.chunks)
    assert "".join(c["spec"]["data"] for c in chunks) == PLAN_FILE
    assert {c["spec"]["planRef"]["uid"] for c in chunks} == {plan.metadata.uid}
    assert [c["metadata"]["ownerReferences"][0]["kind"] for c in chunks] == [
        "PtahSchemaPlan"
    ] * len(chunks)
    published = publish(world)
    assert status(published).plan is not None
    published_ref = status(published).plan
    assert published_ref is not None
    assert published_ref.uid == plan.metadata.uid
    assert status(published).phase == SchemaPhase.AWAITING_APPROVAL
    assert not published.plan_texts, "the uploaded text is deleted once its chunks exist"


@pytest.mark.req("SCH-56", "SCH-33")
def test_a_plan_whose_text_does_not_match_its_report_is_never_published() -> None:
    world = step(planned(planning()))
    ref = status(world).plan
    assert ref is not None
    assert ref.operation_id is not None
    text = world.plan_texts[ref.operation_id]
    tampered = dataclasses.replace(
        world,
        plan_texts={ref.operation_id: dataclasses.replace(text, pieces={0: "DROP TABLE x;"})},
    )
    waiting = reconcile_schema(tampered)
    assert "PtahSchemaPlanChunk" not in created_kinds(waiting)
    assert status_of(tampered, waiting).phase == SchemaPhase.PLANNING
    overdue = reconcile_schema(later(tampered, 2 * A_MINUTE))
    after = status_of(tampered, overdue)
    assert after.phase == SchemaPhase.FAILED
    assert condition_reason(after, ConditionType.READY) == Reason.CONFIGURATION_ERROR
    assert after.plan is None


# --- Apply -------------------------------------------------------------------------------------


@pytest.mark.req("SCH-57", "JOB-01", "PATH-09")
def test_the_apply_job_carries_the_plan_digest_and_no_source_or_sql() -> None:
    world = with_approval(awaiting_approval())
    decision = reconcile_schema(world)
    ref = status(world).plan
    assert ref is not None
    spec = job_manifest(decision)["spec"]["template"]["spec"]
    assert "initContainers" not in spec, "an Apply reads no source files"
    doc = document(decision)
    assert doc["type"] == "Apply"
    assert doc["plan"]["digest"] == ref.digest
    assert doc["plan"]["uid"] == ref.uid
    assert doc["plan"]["fingerprint"] == ref.fingerprint
    assert doc["plannedTargetDigest"] == DB
    assert job_manifest(decision)["spec"]["ttlSecondsAfterFinished"] == 86400
    assert PLAN_SQL not in json.dumps(job_manifest(decision))


@pytest.mark.req("SCH-57", "SCH-59")
def test_an_apply_that_ran_other_bytes_is_unknown() -> None:
    world = applied(applying(), plan_digest=digest("other bytes"))
    after = status_of(world, reconcile_schema(world))
    assert after.last_apply is not None
    assert after.last_apply.outcome == "Unknown"
    assert after.phase == SchemaPhase.VERIFYING_CONVERGENCE


@pytest.mark.req("SCH-59", "SCH-25", "JNL-06", "PATH-19")
def test_every_apply_error_is_apply_outcome_unknown_and_is_never_replayed() -> None:
    world = applied(applying(), outcome="Refused", reason="StalePlan", job=JobPhase.FAILED)
    decision = reconcile_schema(world)
    after = status_of(world, decision)
    assert after.last_apply is not None
    assert after.last_apply.outcome == "Unknown"
    assert after.last_apply.reason == Reason.APPLY_OUTCOME_UNKNOWN
    failure = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failure is not None
    assert failure.reason == Reason.APPLY_OUTCOME_UNKNOWN
    finished = entries_added(world, decision)
    assert [(e.type, e.outcome) for e in finished] == [(E.APPLY_FINISHED, "Unknown")]
    assert EventReason.APPLY_FINISHED in [e.reason for e in decision.events]
    nxt = reconcile_schema(step(world))
    assert job_manifest(nxt)["metadata"]["labels"]["operator.ptah.run/operation"] == "Observe"


@pytest.mark.req("RETRY-14", "SCH-24", "JOB-06")
def test_an_apply_whose_job_cannot_be_built_keeps_its_claim_and_tries_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = schema_jobs.apply_job

    def refuse(*args: object, **kwargs: object) -> dict[str, object]:
        raise ValueError("spec.execution.resources cannot be rendered")

    monkeypatch.setattr(schema_jobs, "apply_job", refuse)
    world = with_approval(awaiting_approval())
    row = Row(
        "AwaitingApproval -> Applying -> Failed: the Job could not be built; the claim stays",
        lambda: world,
        ("RETRY-14",),
        phase=SchemaPhase.FAILED,
        ready=Reason.JOB_NOT_BUILT,
        progressing=(True, Reason.JOB_NOT_BUILT),
        job=None,
        lease=[],
        entries=[E.OPERATION_FAILED],
    )
    _, _decision = check(row)
    failed = step(world)
    claim = claim_of(failed)
    assert claim.type == OperationType.APPLY
    assert claim.retry_at == world.now + A_MINUTE
    early = reconcile_schema(later(failed, A_MINUTE / 2))
    assert not early.create
    monkeypatch.setattr(schema_jobs, "apply_job", real)
    retried = reconcile_schema(later(failed, A_MINUTE))
    after = status_of(failed, retried)
    assert after.phase == SchemaPhase.APPLYING
    assert after.active_operation is not None
    assert after.active_operation.operation_id == claim.operation_id
    assert [(a.verb, a.holder) for a in retried.lease] == [(L.ACQUIRE, claim.operation_id)]
    assert "Job" in created_kinds(retried)


@pytest.mark.req("RETRY-14", "SCH-24", "JOB-06")
def test_an_apply_job_the_api_server_refused_is_failed_and_tried_again() -> None:
    world = applying(dispatched=False)
    name = claim_of(world).job_name
    refused = dataclasses.replace(world, job_refusals={name: "admission webhook denied it"})
    decision = reconcile_schema(refused)
    after = status_of(refused, decision)
    assert after.phase == SchemaPhase.FAILED
    assert condition_reason(after, ConditionType.READY) == Reason.JOB_REFUSED
    assert after.active_operation is not None
    assert [a.verb for a in decision.lease] == [L.RELEASE]


@pytest.mark.req("APR-14", "JNL-05", "APR-04")
def test_the_dispatch_consumes_the_approval_and_the_plan_records_it() -> None:
    world = step(with_approval(awaiting_approval()))
    decision = reconcile_schema(world)
    after = status_of(world, decision)
    assert after.plan is not None
    assert after.plan.approval is not None
    assert after.plan.approval.name == "orders-ok"
    assert after.plan.approver is not None
    assert after.plan.approver.username == "alice@example.com"
    accepted = entries_added(world, decision)
    assert [e.type for e in accepted] == [E.APPROVAL_ACCEPTED]
    assert accepted[0].approval_uid == world.approvals[0].metadata.uid


# --- the proof ---------------------------------------------------------------------------------


@pytest.mark.req("SCH-58", "LCK-08", "SUS-03")
def test_the_proof_runs_under_the_original_apply_lease() -> None:
    world = applying()
    apply_id = claim_id(world)
    world = step(applied(world))
    for change in (lambda w: w, observed):
        decision = reconcile_schema(change(world))
        assert not [a for a in decision.lease if a.verb == L.ACQUIRE]
        world = step(change(world))
        assert world.lease is not None
        assert world.lease.holder == apply_id
    assert claim_of(world).type == OperationType.PLAN
    assert claim_of(world).serves_proof


@pytest.mark.req("PATH-17", "PATH-21", "SCH-26")
def test_the_proof_of_a_succeeded_apply_records_what_it_ran() -> None:
    world = proof_planning()
    last = status(world).last_apply
    assert last is not None
    decision = reconcile_schema(planned(world, changes=False))
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.IN_SYNC
    condition = after.condition(ConditionType.IN_SYNC)
    assert condition is not None
    assert (condition.status.value, condition.reason) == ("True", Reason.SCOPED_CONVERGED)
    assert after.applied is not None
    assert after.applied.plan == last.plan
    assert after.applied.digest == last.plan_digest
    assert after.applied.operation_id == last.operation_id
    assert after.applied.approver is not None
    assert after.applied.verified_at == world.now


@pytest.mark.req("SCH-60", "PATH-21")
def test_an_unknown_outcome_that_converged_is_converged_after_unknown_outcome() -> None:
    world = proof_planning(outcome="Unknown", reason="ApplyOutcomeUnknown", job=JobPhase.FAILED)
    decision = reconcile_schema(planned(world, changes=False))
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.IN_SYNC
    assert condition_reason(after, ConditionType.READY) == Reason.CONVERGED_AFTER_UNKNOWN_OUTCOME
    assert after.applied is None, "an Apply nobody can account for is not what ran"
    assert after.last_apply is not None
    assert after.last_apply.verification is not None


@pytest.mark.req("SCH-60", "SCH-27", "PATH-16")
def test_an_unknown_outcome_with_changes_left_plans_again_and_needs_a_new_approval() -> None:
    world = proof_planning(outcome="Unknown", job=JobPhase.FAILED)
    old_approval = world.approvals[0]
    world = publish(step(planned(world, text="-- the rest --")))
    after = status(world)
    assert after.phase == SchemaPhase.AWAITING_APPROVAL
    assert after.plan is not None
    assert after.plan.uid != old_approval.spec.plan_ref.uid
    assert reconcile_schema(world).create == ()


def _always_applied_and_planned_again(outcome: str, **apply: Any) -> Any:
    """apply: Always; the Apply ran and ended `outcome`; its proof found the same changes and
    published the same plan again."""
    world = step(ready_to_apply())
    assert phase(world) == SchemaPhase.APPLYING
    world = step(world)
    world = proof_planning(proving(verifying_convergence(world, outcome=outcome, **apply)))
    world = publish(step(planned(world)))
    last = status(world).last_apply
    plan = status(world).plan
    assert last is not None
    assert plan is not None
    assert plan.fingerprint == last.plan.fingerprint, "the same plan, published again"
    return world


@pytest.mark.req("SCH-59", "SCH-12")
@pytest.mark.parametrize(
    ("outcome", "apply"),
    [
        ("Failed", {"reason": "UniqueViolation", "job": JobPhase.FAILED}),
        ("Applied", {}),
    ],
    ids=["an Apply that failed", "an Apply that reported success"],
)
def test_under_always_the_plan_an_apply_carried_out_is_never_replayed(
    outcome: str, apply: dict[str, Any]
) -> None:
    world = _always_applied_and_planned_again(outcome, **apply)
    for _ in range(3):
        decision = reconcile_schema(world)
        assert "Job" not in created_kinds(decision), "the same plan is never started again"
        world = step(world)
    after = status(world)
    assert after.phase == SchemaPhase.AWAITING_APPROVAL
    assert condition_reason(after, ConditionType.READY) == Reason.AWAITING_APPROVAL
    assert after.active_operation is None


@pytest.mark.req("SCH-59", "APR-02")
def test_a_plan_held_from_replay_runs_again_on_a_persons_exact_approval() -> None:
    world = with_approval(
        _always_applied_and_planned_again("Failed", reason="X", job=JobPhase.FAILED)
    )
    world = step(world)
    assert phase(world) == SchemaPhase.APPLYING
    assert claim_of(world).authorization == "Approval"


def _proof_owed(world: Any, ended: Any = None) -> Any:
    """The world with an Apply recorded in status.lastApply and not proved yet (the one that
    ended in `ended`), as a restored or edited status can put it beside a published plan."""
    last = status(ended or verifying_convergence()).last_apply
    assert last is not None
    assert last.verification is None
    return with_status(world, last_apply=last)


def _not_applied(world: Any, decision: Decision) -> None:
    assert status_of(world, decision).active_operation is not None
    assert claim_of_decision(world, decision).type == OperationType.OBSERVE
    assert claim_of_decision(world, decision).serves_proof


def claim_of_decision(world: Any, decision: Decision) -> Any:
    claim = status_of(world, decision).active_operation
    assert claim is not None
    return claim


NO_UNPROVED_APPLY = [
    Row(
        "an exact approval beside an Apply whose proof is owed: the proof first, no Apply",
        lambda: _proof_owed(with_approval(awaiting_approval())),
        ("SCH-59", "SCH-22", "APR-02"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        job="Observe",
        then=_not_applied,
    ),
    Row(
        "apply: Always beside an Apply whose proof is owed: the proof first, no Apply",
        lambda: _proof_owed(ready_to_apply(), verifying_convergence(step(step(ready_to_apply())))),
        ("SCH-59", "SCH-22", "SCH-12"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        job="Observe",
        then=_not_applied,
    ),
]


@pytest.mark.parametrize("row", params(NO_UNPROVED_APPLY))
def test_no_apply_starts_while_an_apply_is_unproved(row: Row) -> None:
    check(row)


@pytest.mark.req("SCH-59", "SCH-22")
def test_the_apply_gate_itself_refuses_to_start_beside_an_unproved_apply() -> None:
    """Defence in depth: apply.start, however it is reached, starts the proof instead."""
    world = _proof_owed(with_approval(awaiting_approval()))
    draft = SchemaDraft.begin(world)
    plan = schema_plans.published(draft)
    assert plan is not None
    schema_apply.start(draft, plan, world.approvals[0])
    decision = draft.finish()
    assert job_of(decision) == "Observe"
    assert claim_of_decision(world, decision).serves_proof


@pytest.mark.req("APR-11", "APR-15")
def test_one_approval_one_execution_even_for_the_same_plan_again() -> None:
    world = proof_planning()
    world = publish(step(planned(world)))
    after = status(world)
    assert after.phase == SchemaPhase.AWAITING_APPROVAL
    assert after.plan is not None
    assert world.approvals[0].spec.plan_ref.uid == after.plan.uid, "the same plan object"
    decision = reconcile_schema(world)
    assert "Job" not in created_kinds(decision), "a consumed approval authorizes nothing more"


@pytest.mark.req("SCH-61", "SCH-62", "LCK-12")
def test_a_moved_target_holds_claim_and_lease_and_reads_again_every_retry_interval() -> None:
    world = target_moved()
    claim = claim_of(world)
    holder = world.lease.holder if world.lease else None
    assert holder == last_apply_id(world)
    quiet = reconcile_schema(later(world, A_MINUTE / 2))
    assert not quiet.create
    assert not quiet.lease
    again = reconcile_schema(later(world, A_MINUTE))
    assert [d.kind for d in again.delete] == ["Job", "ConfigMap"]
    world = step(later(world, A_MINUTE))
    decision = reconcile_schema(world)
    assert job_manifest(decision)["metadata"]["name"] == claim.job_name
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.BLOCKED
    assert after.active_operation is not None
    assert after.active_operation.operation_id == claim.operation_id
    assert not decision.lease


@pytest.mark.req("SCH-63", "SCH-41", "JNL-07")
def test_a_person_settles_a_moved_target_with_the_settled_apply_annotation() -> None:
    world = target_moved()
    settled = annotated(world, ANNOTATION_SETTLED_APPLY, claim_id(world))
    row = Row(
        "Blocked (target moved) -> Pending: a person settled it",
        lambda: settled,
        ("SCH-63",),
        phase=SchemaPhase.PENDING,
        ready=Reason.APPLY_SETTLED,
        entries=[E.VERIFIED],
        events=[EventReason.VERIFIED, EventReason.SETTLED_APPLY],
        lease=[L.RELEASE],
        job=None,
    )
    _, decision = check(row)
    assert decision.annotations == {ANNOTATION_SETTLED_APPLY: None}
    assert entries_added(settled, decision)[0].outcome == "Unknown"
    nxt = reconcile_schema(carry_out(settled, decision))
    assert job_manifest(nxt)["metadata"]["labels"]["operator.ptah.run/operation"] == "Observe"


@pytest.mark.req("SCH-41", "SCH-63")
def test_a_settled_apply_value_that_names_no_such_proof_is_answered_once_as_invalid() -> None:
    world = annotated(target_moved(), ANNOTATION_SETTLED_APPLY, "op-0000000000")
    decision = reconcile_schema(world)
    assert [e.reason for e in decision.events] == [EventReason.SETTLED_APPLY_INVALID]
    assert decision.annotations == {ANNOTATION_SETTLED_APPLY: None}
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.BLOCKED
    assert after.active_operation is not None
    assert not entries_added(world, decision)


@pytest.mark.req("SCH-29", "SCH-61")
def test_the_proofs_observation_of_another_target_blocks_too() -> None:
    world = proving()
    decision = reconcile_schema(observed(world, target=OTHER_DB))
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.BLOCKED
    assert condition_reason(after, ConditionType.READY) == Reason.TARGET_IDENTITY_CHANGED
    assert after.drift is None or after.drift.target_identity_digest != OTHER_DB
    assert "Job" not in created_kinds(decision)


@pytest.mark.req("JNL-06", "APR-13")
def test_an_apply_withdrawn_before_dispatch_writes_no_apply_finished_and_keeps_its_approval() -> (
    None
):
    world = edited(applying(dispatched=False), interval="20m")
    world = step(world)
    assert status(world).phase == SchemaPhase.PENDING
    world = step(observed(step(world)))
    world = publish(step(planned(step(world))))
    types = [e.type for e in journal_entries(world)]
    assert E.APPLY_FINISHED not in types
    assert E.APPROVAL_ACCEPTED not in types
    decision = reconcile_schema(world)
    assert "Job" in created_kinds(decision), "the same approval starts the Apply"


@pytest.mark.req("JNL-07")
def test_verified_names_the_apply_it_settles() -> None:
    world = proof_planning()
    apply_id = last_apply_id(world)
    decision = reconcile_schema(planned(world, changes=False))
    entry = entries_added(world, decision)[0]
    assert (entry.type, entry.outcome, entry.operation_id) == (E.VERIFIED, "InSync", apply_id)


@pytest.mark.req("JNL-06")
def test_apply_finished_carries_the_plan_job_and_authorization() -> None:
    world = applying()
    claim = claim_of(world)
    decision = reconcile_schema(applied(world))
    entry = entries_added(world, decision)[0]
    assert entry.type == E.APPLY_FINISHED
    assert entry.outcome == "Succeeded"
    assert entry.operation_id == claim.operation_id
    assert entry.job_name == claim.job_name
    assert entry.authorization == "Approval"
    assert entry.plan_uid == claim.plan.uid


@pytest.mark.req("SCH-22", "LCK-10", "LCK-11")
def test_an_apply_across_a_lease_epoch_change_is_unknown() -> None:
    world = step(lease_taken_by_another(applying()))
    assert claim_of(world).lease_continuity_lost
    decision = reconcile_schema(applied(world))
    after = status_of(world, decision)
    assert after.last_apply is not None
    assert after.last_apply.outcome == "Unknown"


def test_verifying_convergence_world_holds_the_lease() -> None:
    world = verifying_convergence()
    assert world.lease is not None
    assert world.lease.holder == last_apply_id(world)
