"""Blocked is a refusal, not a fault; Failed is (seed 000, "Blocked means the answer will not
change until somebody changes an input", and how each kind of Blocked refreshes)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

import pytest

from ptah_operator.api.common import Target
from ptah_operator.api.constants import ApplyPolicy, Reason, SchemaPhase
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.realm import PtahRealm, PtahRealmSpec
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from tests.unit.reconcile.schema.table import Row, check, params
from tests.unit.reconcile.schema.test_schema_sources import oci_verifying, verified
from tests.unit.reconcile.schema.worlds import (
    A_MINUTE,
    TEN_MINUTES,
    condition_reason,
    created_kinds,
    edited,
    in_sync,
    later,
    published,
    status,
    status_of,
    step,
    target_moved,
    with_approval,
    with_claimant,
    with_source,
)


def _target(world: SchemaWorld, **changes: object) -> Target:
    return world.schema.spec.target.model_copy(update=changes)


def realm_conflict() -> SchemaWorld:
    return step(with_claimant(in_sync(), shared=True))


def realm_refused() -> SchemaWorld:
    world = edited(in_sync(), target=_target(in_sync(), realm="production"))
    realm = PtahRealm(
        metadata=ObjectMeta(name="production", uid="r-1"),
        spec=PtahRealmSpec(engine="PostgreSQL", namespaces=["billing"]),
    )
    return step(dataclasses.replace(world, realm=realm))


def unsupported_engine() -> SchemaWorld:
    return step(dataclasses.replace(in_sync(), supported_engines=frozenset()))


def artifact_refused() -> SchemaWorld:
    return step(verified(oci_verifying(), accepted=False))


def protected_table() -> SchemaWorld:
    return published(spec={"protected": ["public.order_lines"]}, protected=["public.order_lines"])


def destructive() -> SchemaWorld:
    return published(destructive=True)


def apply_never() -> SchemaWorld:
    return published(spec={"apply": ApplyPolicy.NEVER})


EIGHT: list[tuple[Callable[[], SchemaWorld], Reason]] = [
    (realm_conflict, Reason.REALM_CONFLICT),
    (realm_refused, Reason.REALM_NOT_AUTHORIZED),
    (unsupported_engine, Reason.UNSUPPORTED_ENGINE),
    (artifact_refused, Reason.POLICY_REFUSED),
    (protected_table, Reason.PROTECTED_TABLE),
    (destructive, Reason.DESTRUCTIVE_CHANGE_DISALLOWED),
    (target_moved, Reason.TARGET_IDENTITY_CHANGED),
    (apply_never, Reason.APPLY_DISABLED),
]


@pytest.mark.req("SCH-48", "PATH-14")
@pytest.mark.parametrize(("world", "reason"), EIGHT, ids=[r.value for _, r in EIGHT])
def test_blocked_has_exactly_eight_causes_and_none_applies(
    world: Callable[[], SchemaWorld], reason: Reason
) -> None:
    blocked = world()
    assert status(blocked).phase == SchemaPhase.BLOCKED
    assert condition_reason(status(blocked)) == reason
    ref = status(blocked).plan
    if ref is not None and ref.uid is not None:
        blocked = with_approval(blocked)
    for delay in (dt.timedelta(0), A_MINUTE / 2):
        decision = reconcile_schema(later(blocked, delay))
        assert "Apply" not in [
            o["metadata"]["labels"].get("operator.ptah.run/operation")
            for o in decision.create
            if isinstance(o, dict) and o.get("kind") == "Job"
        ]
        assert not [a for a in decision.lease if a.verb == LeaseVerb.ACQUIRE]


def rechecked_within_a_minute(world: SchemaWorld, decision: Decision) -> None:
    assert decision.requeue_after is not None
    assert decision.requeue_after <= A_MINUTE


def never_requeued(world: SchemaWorld, decision: Decision) -> None:
    assert decision.requeue_after is None


def retry_due_now(world: SchemaWorld, decision: Decision) -> None:
    assert status(world).next_reconciliation_time == world.now
    assert "Job" not in created_kinds(decision)


REFRESH = [
    Row(
        "Blocked by what its plan would do: the interval starts the full pipeline again",
        lambda: later(protected_table(), TEN_MINUTES),
        ("SCH-49",),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
    ),
    Row(
        "Blocked by a destructive plan: before the interval, nothing",
        lambda: later(destructive(), TEN_MINUTES / 2),
        ("SCH-49",),
        phase=SchemaPhase.BLOCKED,
        writes=False,
        job=None,
    ),
    Row(
        "Blocked by a realm conflict: taken again within a minute",
        realm_conflict,
        ("SCH-50",),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.REALM_CONFLICT,
        writes=False,
        job=None,
        then=rechecked_within_a_minute,
    ),
    Row(
        "Blocked by a realm refusal that ended: the pipeline starts",
        lambda: _realm_lifted(),
        ("SCH-50",),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
    ),
    Row(
        "Blocked by an unsupported engine: no periodic read, it waits for an edit",
        lambda: later(unsupported_engine(), TEN_MINUTES * 6),
        ("SCH-51",),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.UNSUPPORTED_ENGINE,
        writes=False,
        job=None,
        then=never_requeued,
    ),
    Row(
        "apply: Never rests in Blocked; an approval changes nothing",
        lambda: with_approval(apply_never()),
        ("SCH-52",),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.APPLY_DISABLED,
        writes=False,
        job=None,
    ),
    Row(
        "Failed is a fault: retried after failureRetryInterval",
        lambda: later(step(with_source(in_sync(), None)), A_MINUTE),
        ("SCH-53",),
        phase=SchemaPhase.FAILED,
        ready=Reason.CONFIGURATION_ERROR,
        job=None,
        then=retry_due_now,
    ),
]


def _realm_lifted() -> SchemaWorld:
    world = realm_refused()
    assert world.realm is not None
    realm = world.realm.model_copy(
        update={"spec": world.realm.spec.model_copy(update={"namespaces": ["catalog"]})}
    )
    return later(dataclasses.replace(world, realm=realm), A_MINUTE)


@pytest.mark.parametrize("row", params(REFRESH))
def test_blocked_and_failed_refresh(row: Row) -> None:
    check(row)


@pytest.mark.req("SCH-52", "JNL-04")
def test_apply_never_records_every_plan_it_does_not_apply() -> None:
    world = apply_never()
    journal = status(world).journal
    assert journal is not None
    published_entries = [e for e in journal.entries if e.type == "PlanPublished"]
    assert len(published_entries) == 1
    assert published_entries[0].approval_required is False
    world = step(later(world, TEN_MINUTES))
    assert status_of(world, reconcile_schema(world)).phase == SchemaPhase.OBSERVING
