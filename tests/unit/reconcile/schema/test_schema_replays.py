"""apply: Always never replays a schema plan, whatever ran between (issue #11, hole 2; SCH-59
"the plan is never replayed"; docs/design/lifecycle-decisions.md).

Each row reaches its state as the cluster does: an Apply ends, its proof observes and plans
again, and the plan it publishes is judged."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ptah_operator.api.constants import ConditionType, Reason, SchemaPhase
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.schema.world import SchemaWorld
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.schema.worlds import (
    OTHER_PLAN_FILE,
    PLAN_FILE,
    applied,
    claim_of,
    condition_reason,
    created_kinds,
    later,
    observed,
    phase,
    planned,
    publish,
    ready_to_apply,
    status,
    step,
    with_approval,
    with_status,
)

UNKNOWN: dict[str, Any] = {"outcome": "Failed", "reason": "UniqueViolation", "job": JobPhase.FAILED}
"""An Apply that ended with an error: its outcome is unknown (SCH-59)."""


def _apply_and_prove(world: SchemaWorld, text: str | None, **apply: Any) -> SchemaWorld:
    """The published plan starts, its Apply ends as `apply` says, and its proof finds the
    changes `text` gives (None: none) and publishes their plan."""
    world = step(world)
    assert phase(world) == SchemaPhase.APPLYING, phase(world)
    world = step(applied(step(world), **apply))
    world = step(observed(step(world)))
    if text is None:
        return step(planned(world, changes=False))
    return publish(step(planned(world, text=text)))


def _fingerprint(world: SchemaWorld) -> str | None:
    plan = status(world).plan
    assert plan is not None
    return plan.fingerprint


def _held(world: SchemaWorld) -> None:
    for _ in range(3):
        decision = reconcile_schema(world)
        assert "Job" not in created_kinds(decision), "the plan was carried out: not replayed"
        world = step(world)
    after = status(world)
    assert after.phase == SchemaPhase.AWAITING_APPROVAL
    assert condition_reason(after, ConditionType.READY) == Reason.AWAITING_APPROVAL
    assert after.active_operation is None


@pytest.mark.req("SCH-59", "SCH-12")
def test_a_plan_is_not_replayed_after_another_plan_ran_in_between() -> None:
    world = ready_to_apply()
    a = _fingerprint(world)
    world = _apply_and_prove(world, OTHER_PLAN_FILE, **UNKNOWN)
    assert _fingerprint(world) != a, "the proof found other changes: plan B, a new plan"
    world = _apply_and_prove(world, PLAN_FILE, **UNKNOWN)
    assert _fingerprint(world) == a, "B's proof found A's changes again"
    _held(world)


@pytest.mark.req("SCH-59", "SCH-12")
def test_a_plan_whose_apply_was_proved_runs_again_once_the_database_moved_back() -> None:
    world = ready_to_apply()
    a = _fingerprint(world)
    world = _apply_and_prove(world, None)
    assert phase(world) == SchemaPhase.IN_SYNC
    # A backup is restored: the next refresh observes the structure the plan was made from.
    world = step(later(world, dt.timedelta(minutes=10)))
    assert phase(world) == SchemaPhase.OBSERVING, phase(world)
    world = publish(step(planned(step(step(observed(world))))))
    assert _fingerprint(world) == a
    world = step(world)
    assert phase(world) == SchemaPhase.APPLYING, "proved done: the same changes again are new"
    assert claim_of(world).authorization == "Policy"


@pytest.mark.req("SCH-59", "APR-11")
def test_a_held_plan_approved_and_proved_unfinished_again_waits_for_another_approval() -> None:
    world = ready_to_apply()
    world = _apply_and_prove(world, OTHER_PLAN_FILE, **UNKNOWN)
    world = _apply_and_prove(world, PLAN_FILE, **UNKNOWN)
    world = step(with_approval(step(world)))
    assert phase(world) == SchemaPhase.APPLYING
    world = step(applied(step(world), **UNKNOWN))
    world = publish(step(planned(step(observed(step(world))), text=PLAN_FILE)))
    _held(world)


@pytest.mark.req("SCH-59")
def test_plans_carried_out_are_remembered_until_a_proof_shows_them_done() -> None:
    world = ready_to_apply()
    a = _fingerprint(world)
    world = _apply_and_prove(world, OTHER_PLAN_FILE, **UNKNOWN)
    b = _fingerprint(world)
    assert status(world).carried_out_plans == [a]
    world = _apply_and_prove(world, None)
    assert phase(world) == SchemaPhase.IN_SYNC
    assert status(world).carried_out_plans == [a], "B was proved done; A never was"
    assert b not in (status(world).carried_out_plans or [])


@pytest.mark.req("SCH-59")
def test_a_status_written_before_the_list_still_holds_the_plan_of_its_last_apply() -> None:
    world = ready_to_apply()
    world = _apply_and_prove(world, PLAN_FILE, **UNKNOWN)
    world = with_status(world, carried_out_plans=None)
    _held(world)


@pytest.mark.req("SCH-59")
def test_a_status_written_before_the_list_runs_a_plan_its_last_apply_proved_done() -> None:
    world = _apply_and_prove(ready_to_apply(), None)
    world = with_status(world, carried_out_plans=None)
    world = step(later(world, dt.timedelta(minutes=10)))
    world = publish(step(planned(step(step(observed(world))))))
    world = step(world)
    assert phase(world) == SchemaPhase.APPLYING


@pytest.mark.req("SCH-59")
def test_a_status_written_before_the_list_remembers_its_last_apply_when_the_next_one_ends() -> None:
    world = ready_to_apply()
    a = _fingerprint(world)
    world = _apply_and_prove(world, OTHER_PLAN_FILE, **UNKNOWN)
    b = _fingerprint(world)
    world = with_status(world, carried_out_plans=None)
    world = _apply_and_prove(world, PLAN_FILE, **UNKNOWN)
    assert status(world).carried_out_plans == [a, b]
    _held(world)


@pytest.mark.req("SCH-59")
def test_the_wait_says_which_apply_carried_the_plan_out() -> None:
    world = ready_to_apply()
    world = _apply_and_prove(world, PLAN_FILE, **UNKNOWN)
    last = status(world).last_apply
    assert last is not None
    plan = status(world).plan
    assert plan is not None
    said = (
        "already carried this plan out; apply: Always never replays a plan, so it runs again "
        "only on a PtahSchemaApproval naming it"
    )
    assert status(world).message == (
        f"plan {plan.name} waits for a PtahSchemaApproval naming it and its fingerprint (Apply "
        f"{last.operation_id} {said})"
    )
    world = ready_to_apply()
    world = _apply_and_prove(world, OTHER_PLAN_FILE, **UNKNOWN)
    world = _apply_and_prove(world, PLAN_FILE, **UNKNOWN)
    plan = status(world).plan
    assert plan is not None
    assert status(world).message == (
        f"plan {plan.name} waits for a PtahSchemaApproval naming it and its fingerprint (an "
        f"earlier Apply {said})"
    )
