"""The engine and realm checks, and the database-realm Lease (LCK; Decision 18)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.constants import Engine, MigrationPhase, Reason, Sharing
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.realm import PtahRealm, PtahRealmSpec
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.worlds import (
    NAMESPACE,
    applying,
    in_sync,
    job_of,
    new,
    reading,
    status,
    status_of,
    step,
    with_claimant,
    with_realm,
)

SIXTY = dt.timedelta(seconds=60)


def realm(
    namespaces: list[str], *, sharing: Sharing = Sharing.SHARED, engine: Engine = Engine.POSTGRESQL
) -> PtahRealm:
    return PtahRealm(
        metadata=ObjectMeta(name="billing-primary"),
        spec=PtahRealmSpec(engine=engine, namespaces=namespaces, sharing=sharing),
    )


def in_realm(
    world: MigrationWorld,
    the_realm: PtahRealm | None,
    *,
    missing: bool = False,
    shared: bool = False,
) -> MigrationWorld:
    target = world.migration.spec.target.model_copy(
        update={"realm": "billing-primary", "shared_realm": shared}
    )
    spec = world.migration.spec.model_copy(update={"target": target})
    world = dataclasses.replace(world, migration=world.migration.model_copy(update={"spec": spec}))
    return with_realm(world, the_realm, missing=missing)


def shared(world: MigrationWorld) -> MigrationWorld:
    target = world.migration.spec.target.model_copy(update={"shared_realm": True})
    spec = world.migration.spec.model_copy(update={"target": target})
    return dataclasses.replace(world, migration=world.migration.model_copy(update={"spec": spec}))


def rechecked_within_a_minute(world: MigrationWorld, decision: Decision) -> None:
    assert decision.requeue_after is not None
    assert decision.requeue_after <= SIXTY
    assert not decision.create


def waits_for_an_edit(world: MigrationWorld, decision: Decision) -> None:
    assert decision.requeue_after is None
    assert not decision.create


ROWS = [
    Row(
        "a database claimed by two resources, neither shared: every claimant Blocked, no Job",
        lambda: with_claimant(new(), shared=False),
        ("LCK-02", "LCK-04", "MIG-24"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.REALM_CONFLICT,
        progressing=(False, Reason.REALM_CONFLICT),
        job=None,
        then=rechecked_within_a_minute,
    ),
    Row(
        "one claimant that has not set sharedRealm blocks all of them, the shared ones too",
        lambda: shared(with_claimant(new(), shared=False)),
        ("LCK-03", "LCK-02"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.REALM_CONFLICT,
        job=None,
    ),
    Row(
        "every claimant sets sharedRealm: they share the database and take turns",
        lambda: shared(with_claimant(new(), shared=True)),
        ("LCK-02", "LCK-01"),
        phase=MigrationPhase.READING,
        job="History",
    ),
    Row(
        "a suspended claimant is no claimant",
        lambda: with_claimant(new(), shared=False, suspended=True),
        ("LCK-02",),
        phase=MigrationPhase.READING,
    ),
    Row(
        "an Exclusive realm admits one claimant even when all are shared",
        lambda: shared(
            with_claimant(
                in_realm(new(), realm([NAMESPACE], sharing=Sharing.EXCLUSIVE), shared=True),
                shared=True,
            )
        ),
        ("LCK-02", "LCK-04"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.REALM_CONFLICT,
    ),
    Row(
        "a PtahRealm that does not list the namespace: Blocked RealmNotAuthorized",
        lambda: in_realm(new(), realm(["payments"])),
        ("LCK-04", "MIG-24"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.REALM_NOT_AUTHORIZED,
        progressing=(False, Reason.REALM_NOT_AUTHORIZED),
        job=None,
        then=rechecked_within_a_minute,
    ),
    Row(
        "a realm that does not exist admits nobody",
        lambda: in_realm(new(), None, missing=True),
        ("LCK-04",),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.REALM_NOT_AUTHORIZED,
    ),
    Row(
        "a realm of another engine does not admit the resource",
        lambda: in_realm(new(), realm([NAMESPACE], engine=Engine.MARIADB)),
        ("LCK-04",),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.REALM_NOT_AUTHORIZED,
    ),
    Row(
        "a realm that lists the namespace admits it",
        lambda: in_realm(new(), realm([NAMESPACE])),
        ("LCK-04",),
        phase=MigrationPhase.READING,
    ),
    Row(
        "an unsupported engine: Blocked, waiting for an edit",
        lambda: dataclasses.replace(new(), supported_engines=frozenset({Engine.MYSQL})),
        ("MIG-24", "LCK-06"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.UNSUPPORTED_ENGINE,
        progressing=(False, Reason.UNSUPPORTED_ENGINE),
        then=waits_for_an_edit,
    ),
    Row(
        "a read under way stops when the realm refuses: Blocked, the claim dropped",
        lambda: with_claimant(reading(), shared=False),
        ("LCK-06", "LCK-02"),
        phase=MigrationPhase.BLOCKED,
        job=None,
        then=lambda w, d: None if status_of(w, d).active_operation is None else pytest.fail("kept"),
    ),
    Row(
        "a dispatched Apply is not interrupted by a realm conflict",
        lambda: with_claimant(applying(), shared=False),
        ("LCK-02", "SUS-02"),
        phase=MigrationPhase.APPLYING,
        lease=[],
    ),
    Row(
        "the refusal ends: the pipeline starts",
        lambda: dataclasses.replace(
            step(with_claimant(in_sync(), shared=False)), claimants=in_sync().claimants
        ),
        ("LCK-06", "MIG-30"),
        phase=MigrationPhase.READING,
        job="History",
    ),
    Row(
        "a refusal taken again changes nothing",
        lambda: step(with_claimant(in_sync(), shared=False)),
        ("LCK-06",),
        writes=False,
        then=rechecked_within_a_minute,
    ),
]


@pytest.mark.parametrize("row", params(ROWS))
def test_engine_and_realm(row: Row) -> None:
    check(row)


@pytest.mark.req("LCK-07")
def test_history_never_takes_the_lease() -> None:
    world = new()
    for _ in range(3):
        decision = reconcile_migration(world)
        assert not decision.lease
        world = step(world)
    assert status(world).phase == MigrationPhase.READING
    assert job_of(reconcile_migration(world)) is None
