"""A ConfigMap source and its snapshots (seed 000, SRC-CM)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.constants import EventReason, MigrationPhase, Reason
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.worlds import (
    EDITED_FILES,
    FILES,
    awaiting_approval,
    in_sync,
    later,
    reading,
    source_files,
    status,
    status_of,
    step,
    with_job,
    with_source,
)


def snapshot_of(world: MigrationWorld) -> str:
    record = status(world).source
    assert record is not None
    assert record.snapshot_name is not None
    return record.snapshot_name


def same_source_same_plan(world: MigrationWorld, decision: Decision) -> None:
    assert decision.status is None
    assert not decision.create
    assert not decision.events


def new_snapshot(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.source is not None
    assert after.source.snapshot_name != snapshot_of(world)
    assert after.source.content_digest == source_files(EDITED_FILES).content_digest
    assert after.source.snapshot_name in [
        o["metadata"]["name"] for o in decision.create if isinstance(o, dict)
    ]
    # The old snapshot is still named by the stored status: it goes in a later pass.
    assert snapshot_of(world) not in [ref.name for ref in decision.delete]


def old_snapshot_deleted(world: MigrationWorld, decision: Decision) -> None:
    stored = status(world).source
    assert stored is not None
    unnamed = [s for s in world.snapshots if s != stored.snapshot_name]
    assert unnamed
    assert sorted(
        ref.name for ref in decision.delete if ref.name.startswith("ptah-src-")
    ) == sorted(unnamed)


def binds_uid_and_digest(world: MigrationWorld, decision: Decision) -> None:
    ref = status(world).plan
    assert ref is not None
    plan = world.plans[ref.name]
    assert plan.spec.plan_contract_version == 2
    assert plan.spec.source.config_map_uid == source_files().config_map_uid
    assert plan.spec.source.content_digest == source_files().content_digest
    assert status_of(world, decision).plan is None


def put_back(world: MigrationWorld, decision: Decision) -> None:
    name = snapshot_of(world)
    assert name in [o["metadata"]["name"] for o in decision.create if isinstance(o, dict)]
    assert status_of(world, decision).source == status(world).source


def read_snapshot_gone() -> MigrationWorld:
    world = reading()
    return dataclasses.replace(world, snapshots=frozenset())


def put_back_world() -> MigrationWorld:
    failed = step(with_job(read_snapshot_gone(), JobPhase.FAILED, snapshot_refused=True))
    return dataclasses.replace(later(failed, dt.timedelta(minutes=1)), snapshots=frozenset())


ROWS = [
    Row(
        "an edit to a key the source does not select keeps the digest, the snapshot, the plan",
        lambda: with_source(awaiting_approval(), source_files(FILES)),
        ("SRC-CM-11", "SRC-CM-04"),
        writes=False,
        then=same_source_same_plan,
    ),
    Row(
        "an edit to a selected key is read at once and gives a new snapshot",
        lambda: with_source(in_sync(), source_files(EDITED_FILES)),
        ("SRC-CM-10", "SRC-CM-12", "SRC-CM-02"),
        phase=MigrationPhase.READING,
        events=[EventReason.SNAPSHOT_TAKEN],
        then=new_snapshot,
    ),
    Row(
        "an edit to a selected key retires the plan",
        lambda: with_source(awaiting_approval(), source_files(EDITED_FILES)),
        ("SRC-CM-12", "MIG-16"),
        phase=MigrationPhase.PENDING,
        events=[EventReason.PLAN_STALE],
    ),
    Row(
        "another ConfigMap of the same name retires the plan (contract 2 binds its UID)",
        lambda: with_source(awaiting_approval(), source_files(FILES, config_map_uid="another-uid")),
        ("SRC-CM-13",),
        phase=MigrationPhase.PENDING,
        events=[EventReason.PLAN_STALE],
        then=binds_uid_and_digest,
    ),
    Row(
        "a snapshot nothing names any more is deleted once the new resolution is stored",
        lambda: step(with_source(in_sync(), source_files(EDITED_FILES))),
        ("SRC-CM-14",),
        then=old_snapshot_deleted,
    ),
    Row(
        "a snapshot gone while its read still needs it: the read is refused, Failed",
        lambda: with_job(read_snapshot_gone(), JobPhase.FAILED, snapshot_refused=True),
        ("SRC-CM-16", "MIG-29"),
        phase=MigrationPhase.FAILED,
        ready=Reason.SNAPSHOT_MISSING,
    ),
    Row(
        "the retry reads the source again and puts the exact bytes back",
        put_back_world,
        ("SRC-CM-17", "MIG-31"),
        phase=MigrationPhase.READING,
        job="History",
        then=put_back,
    ),
]


@pytest.mark.parametrize("row", params(ROWS))
def test_configmap_source(row: Row) -> None:
    check(row)


@pytest.mark.req("SRC-CM-01", "SRC-CM-06", "MIG-05", "PATH-06")
def test_a_configmap_source_never_needs_a_resolve_job() -> None:
    world = in_sync()
    world = with_source(world, source_files(EDITED_FILES))
    decision = reconcile_migration(world)
    kinds = [
        o["metadata"]["labels"]["operator.ptah.run/operation"]
        for o in decision.create
        if isinstance(o, dict) and o["kind"] == "Job"
    ]
    assert kinds == ["History"]
    assert status_of(world, decision).phase == MigrationPhase.READING


def test_a_proof_owed_with_no_source_on_record_and_no_configmap_fails_instead_of_crashing() -> None:
    # Seen in the manager's log (session 11): a status restored or edited to VerifyingHistory
    # with no lastRun, its ConfigMap absent, made every pass raise on the missing source.
    from ptah_operator.api.constants import MigrationPhase, Reason
    from ptah_operator.api.migration import PtahMigrationStatus
    from tests.unit.reconcile.migration.worlds import new, status_of
    from tests.unit.reconcile.worlds import condition_reason, job_of

    world = new()
    resource = world.migration.model_copy(
        update={"status": PtahMigrationStatus(phase=MigrationPhase.VERIFYING_HISTORY)}
    )
    world = dataclasses.replace(world, migration=resource, source=None)
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.FAILED
    assert condition_reason(after) == Reason.CONFIGURATION_ERROR
    assert job_of(decision) is None
