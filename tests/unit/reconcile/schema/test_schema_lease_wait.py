"""A schema Apply whose database-realm Lease another operation holds waits for it (LCK-01,
LCK-05): no claim, no Job, and the conditions say what it waits for, approved or not."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from ptah_operator.api.constants import ConditionType, Reason, SchemaPhase
from ptah_operator.reconcile.schedule import LEASE_WAIT
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import LeaseState
from tests.unit.reconcile.migration.worlds import MANAGER_NAMESPACE
from tests.unit.reconcile.schema.worlds import (
    SCHEMA,
    awaiting_approval,
    ready_to_apply,
    status,
    with_approval,
)

HELD = "the database-realm Lease is held by another operation"


def _held(world: SchemaWorld) -> SchemaWorld:
    lease = LeaseState("ptah-realm-x", MANAGER_NAMESPACE, "op-ffffffffff", 7, False)
    return dataclasses.replace(world, lease=lease)


@pytest.mark.req("LCK-01", "LCK-05")
@pytest.mark.parametrize(
    ("world", "phase", "message"),
    [
        (
            lambda: with_approval(awaiting_approval()),
            SchemaPhase.AWAITING_APPROVAL,
            "plan {plan} is approved; the Apply waits: " + HELD,
        ),
        (
            ready_to_apply,
            SchemaPhase.READY_TO_APPLY,
            "plan {plan} is next to apply: it waits: " + HELD,
        ),
    ],
)
def test_an_apply_waits_while_another_operation_holds_the_lease(
    world: Callable[[], SchemaWorld], phase: SchemaPhase, message: str
) -> None:
    held = _held(world())
    plan = status(held).plan
    assert plan is not None
    decision = reconcile_schema(held)
    after = SCHEMA.status_of(held, decision)
    assert after.active_operation is None
    assert not decision.lease
    assert not [o for o in decision.create if isinstance(o, dict) and o.get("kind") == "Job"]
    assert after.phase == phase
    for kind in (ConditionType.READY, ConditionType.PROGRESSING):
        condition = after.condition(kind)
        assert condition is not None
        assert condition.reason == Reason.READY_TO_APPLY
        assert condition.message == message.format(plan=plan.name)
    assert decision.requeue_after == LEASE_WAIT
