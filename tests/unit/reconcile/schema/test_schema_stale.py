"""Stale plans (seed 000, "Plan went stale"): a changed input retires the plan before Apply, an
approval of the old plan does not carry over, and a plan waiting for approval survives a
refresh that computes it again."""

from __future__ import annotations

import pytest

from ptah_operator.api.constants import (
    ApplyPolicy,
    EventReason,
    JournalEntryType,
    OperationType,
    SchemaPhase,
)
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from tests.unit.reconcile.schema.worlds import (
    EDITED_FILES,
    FILES,
    OTHER_PLAN_FILE,
    TEN_MINUTES,
    approval_of,
    awaiting_approval,
    created_kinds,
    entries_added,
    event_reasons,
    journal_entries,
    later,
    observed,
    planned,
    publish,
    published,
    source_files,
    status,
    status_of,
    step,
    with_approval,
    with_source,
)


def refreshed(world: SchemaWorld) -> SchemaWorld:
    """The interval ended: observed and planned again, the plan published (or kept)."""
    world = step(later(world, TEN_MINUTES))
    world = step(step(observed(world)))
    return publish(step(planned(world)))


@pytest.mark.req("SCH-65", "RETRY-12", "JNL-03", "RRQ-06")
def test_a_plan_waiting_for_approval_survives_a_refresh_that_computes_it_again() -> None:
    world = awaiting_approval()
    before = status(world).plan
    after_refresh = refreshed(world)
    assert status(after_refresh).phase == SchemaPhase.AWAITING_APPROVAL
    assert status(after_refresh).plan == before
    published = [e for e in journal_entries(after_refresh) if e.type == "PlanPublished"]
    assert len(published) == 1, "a plan republished while it refreshes writes nothing"
    assert "Job" in created_kinds(reconcile_schema(with_approval(after_refresh)))


@pytest.mark.req("SCH-64", "SCH-66", "APR-12", "JNL-04")
def test_a_refresh_that_computes_another_plan_retires_the_old_one_and_its_approval() -> None:
    world = with_approval(awaiting_approval())
    world = step(later(world, TEN_MINUTES))
    assert status(world).phase == SchemaPhase.APPLYING, "an approved plan goes first"
    world = awaiting_approval()
    old = status(world).plan
    assert old is not None
    world = step(later(world, TEN_MINUTES))
    world = step(step(observed(world)))
    world = with_approval(world, approval_of(world))
    decision = reconcile_schema(planned(world, text=OTHER_PLAN_FILE))
    assert EventReason.PLAN_STALE in event_reasons(decision)
    after = publish(step(planned(world, text=OTHER_PLAN_FILE)))
    new = status(after).plan
    assert new is not None
    assert new.uid != old.uid
    entry = [e for e in journal_entries(after) if e.type == "PlanPublished"][-1]
    assert entry.plan_uid == new.uid
    assert entry.replaced is not None
    assert (entry.replaced.name, entry.replaced.uid) == (old.name, old.uid)
    assert status(after).phase == SchemaPhase.AWAITING_APPROVAL
    assert "Job" not in created_kinds(reconcile_schema(after)), "the old approval never carries"


@pytest.mark.req("SCH-64", "SCH-66", "SCH-21", "JNL-04")
def test_a_source_edit_retires_an_approvable_plan_with_plan_stale_and_names_it_later() -> None:
    world = awaiting_approval()
    old = status(world).plan
    assert old is not None
    edited = with_source(world, source_files(EDITED_FILES))
    decision = reconcile_schema(edited)
    assert event_reasons(decision)[0] == EventReason.PLAN_STALE
    after = status_of(edited, decision)
    assert after.plan is None
    assert after.retired_plan is not None
    assert after.retired_plan.uid == old.uid
    world = step(edited)
    world = step(step(observed(world)))
    world = publish(step(planned(world, text=OTHER_PLAN_FILE)))
    entries = journal_entries(world)
    assert entries[-1].type == JournalEntryType.PLAN_PUBLISHED
    assert entries[-1].replaced is not None
    assert entries[-1].replaced.uid == old.uid
    assert status(world).retired_plan is None


@pytest.mark.req("SCH-66")
def test_a_plan_nobody_could_approve_retires_without_plan_stale() -> None:
    world = published(spec={"apply": ApplyPolicy.NEVER})
    decision = reconcile_schema(with_source(world, source_files(EDITED_FILES)))
    assert EventReason.PLAN_STALE not in event_reasons(decision)
    assert not entries_added(world, decision)


@pytest.mark.req("SCH-64", "SCH-11")
def test_a_refresh_that_finds_nothing_to_change_retires_the_waiting_plan() -> None:
    world = awaiting_approval()
    world = step(later(world, TEN_MINUTES))
    world = step(step(observed(world)))
    decision = reconcile_schema(planned(world, changes=False))
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.IN_SYNC
    assert after.plan is None
    assert after.retired_plan is None
    assert EventReason.PLAN_STALE in event_reasons(decision)


def retired_and_published_again(world: SchemaWorld) -> SchemaWorld:
    """The source changes before the Apply starts (the plan retires), it is moved back, and the
    next Plan computes the same plan: the same object, name, UID and fingerprint."""
    edited = with_source(world, source_files(EDITED_FILES))
    decision = reconcile_schema(edited)
    assert EventReason.PLAN_STALE in event_reasons(decision)
    assert status_of(edited, decision).plan is None
    world = with_source(step(edited), source_files(FILES))
    for _ in range(4):
        claim = status(world).active_operation
        if claim is not None and claim.type == OperationType.OBSERVE and claim.job_uid:
            break
        world = step(world)
    world = step(step(observed(world)))
    return publish(step(planned(world)))


@pytest.mark.req("APR-12", "SCH-64")
def test_an_approval_of_a_retired_plan_does_not_carry_over_to_its_publication_again() -> None:
    world = with_approval(awaiting_approval())
    before = status(world).plan
    assert before is not None
    assert "Job" in created_kinds(reconcile_schema(world)), "the approval was exact before"
    world = retired_and_published_again(world)
    again = status(world).plan
    assert again is not None
    assert (again.name, again.uid, again.fingerprint) == (
        before.name,
        before.uid,
        before.fingerprint,
    )
    assert status(world).phase == SchemaPhase.AWAITING_APPROVAL
    assert "Job" not in created_kinds(reconcile_schema(world)), "the old approval never carries"
    assert "Job" not in created_kinds(reconcile_schema(step(world)))
    assert again.operation_id != before.operation_id, "another read published it again"


@pytest.mark.req("APR-12", "APR-02")
def test_a_new_approval_of_the_plan_published_again_authorizes_it() -> None:
    world = retired_and_published_again(with_approval(awaiting_approval()))
    world = with_approval(world, approval_of(world, name="orders-ok-again"))
    assert "Job" in created_kinds(reconcile_schema(world))


@pytest.mark.req("APR-07", "SCH-65")
def test_a_plan_records_the_observation_it_was_computed_after_and_a_refresh_renews_it() -> None:
    world = awaiting_approval()
    plan = status(world).plan
    drift = status(world).drift
    assert plan is not None
    assert drift is not None
    assert plan.drift_digest == drift.digest
    world = step(later(world, TEN_MINUTES))
    world = step(step(observed(world, total=3)))
    moved = status(world).drift
    assert moved is not None
    assert moved.digest != drift.digest
    assert status(world).plan == plan, "until the Plan ends, the plan names the old observation"
    world = publish(step(planned(world)))
    kept = status(world).plan
    assert kept is not None
    assert (kept.name, kept.uid, kept.operation_id) == (plan.name, plan.uid, plan.operation_id)
    assert kept.drift_digest == moved.digest
    assert status(world).phase == SchemaPhase.AWAITING_APPROVAL
