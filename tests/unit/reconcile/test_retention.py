"""Plans and approvals are a bounded store (PATH-23): what is named stays, a few more are kept."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.retention import (
    RETAINED_APPROVALS,
    RETAINED_PLANS,
    approvals_to_delete,
    plans_to_delete,
)
from tests.unit.reconcile.migration.worlds import (
    applying,
    approval_of,
    awaiting_approval,
    status,
    with_approval,
)


def _old_plans(template: PtahMigrationPlan, count: int) -> dict[str, PtahMigrationPlan]:
    base = template.metadata.creation_timestamp or dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    plans = {}
    for n in range(count):
        name = f"billing-old{n:05d}"
        meta = template.metadata.model_copy(
            update={
                "name": name,
                "uid": f"00000000-0000-4000-8000-0000000{n:05d}",
                "creation_timestamp": base - dt.timedelta(days=count - n),
            }
        )
        plans[name] = template.model_copy(update={"metadata": meta})
    return plans


def _deleted(decision_deletes: tuple[object, ...], kind: str) -> set[str]:
    return {
        ref.name  # type: ignore[attr-defined]
        for ref in decision_deletes
        if getattr(ref, "kind", None) == kind
    }


@pytest.mark.req("PATH-23")
def test_retired_plans_beyond_the_newest_few_are_deleted_and_the_waiting_one_stays() -> None:
    world = awaiting_approval()
    current = status(world).plan
    assert current is not None
    template = world.plans[current.name]
    extra = RETAINED_PLANS + 3
    world = dataclasses.replace(world, plans={**world.plans, **_old_plans(template, extra)})
    deleted = _deleted(reconcile_migration(world).delete, "PtahMigrationPlan")
    assert deleted == {f"billing-old{n:05d}" for n in range(3)}, "the three oldest"
    assert current.name not in deleted


@pytest.mark.req("PATH-23", "APR-11")
def test_consumed_approvals_beyond_the_newest_few_are_deleted_but_never_a_claims() -> None:
    world = applying(with_approval(awaiting_approval()))
    claim = status(world).active_operation
    assert claim is not None
    assert claim.approval is not None
    decision = reconcile_migration(world)
    assert claim.approval.name not in _deleted(decision.delete, "PtahMigrationApproval")


def test_the_arithmetic_of_keeping() -> None:
    world = awaiting_approval()
    current = status(world).plan
    assert current is not None
    template = world.plans[current.name]
    plans = _old_plans(template, RETAINED_PLANS + 2)
    assert plans_to_delete(plans, {"billing-old00000"}) == ["billing-old00001"]
    approvals = []
    for n in range(RETAINED_APPROVALS + 2):
        a = approval_of(world)
        meta = a.metadata.model_copy(
            update={
                "name": f"ok-{n}",
                "uid": f"a-{n}",
                "creation_timestamp": dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(n),
            }
        )
        approvals.append(a.model_copy(update={"metadata": meta}))
    spent = approvals_to_delete(
        approvals,
        plan_of={a.metadata.uid or "": "gone" for a in approvals},
        live_plans=set(),
        consumed=set(),
        protected={"a-0"},
    )
    # a-0 is protected; of the six spent, the newest five stay.
    assert spent == ["ok-1"]


@pytest.mark.req("PATH-23")
def test_a_schema_keeps_its_waiting_plan_and_the_newest_few_others() -> None:
    from ptah_operator.api.plans import PtahSchemaPlan
    from ptah_operator.reconcile.schema.lifecycle import reconcile_schema
    from tests.unit.reconcile.schema import worlds as schema_worlds

    world = schema_worlds.awaiting_approval()
    current = schema_worlds.status(world).plan
    assert current is not None
    template: PtahSchemaPlan = world.plans[current.name]
    base = template.metadata.creation_timestamp or dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    extra: dict[str, PtahSchemaPlan] = {}
    for n in range(RETAINED_PLANS + 2):
        name = f"old-{n}"
        meta = template.metadata.model_copy(
            update={"name": name, "uid": f"u-{n}", "creation_timestamp": base - dt.timedelta(n + 1)}
        )
        extra[name] = template.model_copy(update={"metadata": meta})
    world = dataclasses.replace(world, plans={**world.plans, **extra})
    deleted = _deleted(reconcile_schema(world).delete, "PtahSchemaPlan")
    oldest = {f"old-{RETAINED_PLANS}", f"old-{RETAINED_PLANS + 1}"}
    assert deleted == oldest
    assert current.name not in deleted


def test_a_schema_gives_back_a_lease_it_took_but_never_recorded() -> None:
    from ptah_operator.reconcile.decision import LeaseVerb
    from ptah_operator.reconcile.schema.lifecycle import reconcile_schema
    from ptah_operator.reconcile.world import LeaseState
    from tests.unit.reconcile.schema import worlds as schema_worlds

    world = schema_worlds.awaiting_approval()
    uid = str(world.schema.metadata.uid)
    orphan = LeaseState("ptah-realm-x", "ptah-system", "op-00000000f0", 2, False, holder_uid=uid)
    decision = reconcile_schema(dataclasses.replace(world, lease=orphan))
    assert [(a.verb, a.holder) for a in decision.lease] == [(LeaseVerb.RELEASE, "op-00000000f0")]
    foreign = dataclasses.replace(orphan, holder_uid="someone-else")
    assert reconcile_schema(dataclasses.replace(world, lease=foreign)).lease == ()
