"""An Apply claim whose Job does not exist yet is withdrawn when anything it was claimed under
moves (MIG-20, SCH-23, APR-13): nothing ran, nothing is consumed, the Lease goes back, and
status says what moved, in the words a person reads, and where the resource goes next.

One row per input, in both families where both have it (a schema also withdraws on a changed
verification policy or a plan that no longer fits; a migration on a lost Lease). Written
against the survivors of `make mutate` on the two families' apply.py (issue #11).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from ptah_operator.api.constants import (
    ConditionType,
    MigrationPhase,
    Reason,
    SchemaPhase,
)
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.schema import reconcile_schema
from tests.unit.reconcile.migration import worlds as migration
from tests.unit.reconcile.schema import worlds as schema
from tests.unit.reconcile.worlds import ROLLED_OUT, condition_reason, with_runner, with_source

WITHDRAWN = "the Apply was withdrawn before its Job existed: "


def _claim(worlds: Any, world: Any) -> Any:
    claim = worlds.status(world).active_operation
    assert claim is not None
    return claim


def _source_moved(worlds: Any) -> Callable[[Any], Any]:
    def moved(world: Any) -> Any:
        files = {**worlds.FILES, "9999_added.sql": b"SELECT 1;\n"}
        return with_source(
            world,
            worlds.SCHEMA.source_files(files)
            if worlds is schema
            else worlds.MIGRATION.source_files(files),
        )

    return moved


def _approval_deleted(worlds: Any) -> Callable[[Any], Any]:
    return lambda world: dataclasses.replace(world, approvals=())


def _plan_retired(worlds: Any) -> Callable[[Any], Any]:
    return lambda world: worlds.with_status(world, plan=None)


def _plan_replaced(worlds: Any) -> Callable[[Any], Any]:
    def replaced(world: Any) -> Any:
        plan = worlds.status(world).plan
        return worlds.with_status(world, plan=plan.model_copy(update={"uid": "another-uid"}))

    return replaced


def _respec(worlds: Any) -> Callable[[Any], Any]:
    return lambda world: worlds.edited(world)


Row = tuple[str, Any, Callable[[Any], Any], Callable[[Any], str], Any, str | None]

ROWS: list[Row] = [
    (
        "migration suspended",
        migration,
        migration.suspended,
        lambda w: "spec.suspend is set",
        MigrationPhase.PENDING,
        Reason.SUSPENDED,
    ),
    (
        "schema suspended",
        schema,
        schema.suspended,
        lambda w: "spec.suspend is set",
        SchemaPhase.SUSPENDED,
        Reason.SUSPENDED,
    ),
    (
        "migration source moved",
        migration,
        _source_moved(migration),
        lambda w: "the source changed",
        MigrationPhase.PENDING,
        Reason.PLAN_STALE,
    ),
    (
        "schema source moved",
        schema,
        _source_moved(schema),
        lambda w: "the source changed",
        SchemaPhase.OBSERVING,
        None,
    ),
    (
        "migration spec edited",
        migration,
        _respec(migration),
        lambda w: "the spec changed (generation 2)",
        MigrationPhase.PENDING,
        Reason.OPERATION_IN_PROGRESS,
    ),
    (
        "schema spec edited",
        schema,
        _respec(schema),
        lambda w: "the spec changed (generation 2)",
        SchemaPhase.PENDING,
        Reason.OPERATION_IN_PROGRESS,
    ),
    (
        "migration runner rolled out",
        migration,
        lambda w: with_runner(w, ROLLED_OUT),
        lambda w: "the execution binding changed",
        MigrationPhase.PENDING,
        Reason.OPERATION_IN_PROGRESS,
    ),
    (
        "schema runner rolled out",
        schema,
        lambda w: with_runner(w, ROLLED_OUT),
        lambda w: "the execution binding changed",
        SchemaPhase.PENDING,
        Reason.OPERATION_IN_PROGRESS,
    ),
    (
        "migration plan object gone",
        migration,
        lambda w: dataclasses.replace(w, plans={}),
        lambda w: "the plan is gone",
        MigrationPhase.PENDING,
        Reason.PLAN_STALE,
    ),
    (
        "migration plan retired",
        migration,
        _plan_retired(migration),
        lambda w: "the plan was retired",
        MigrationPhase.PENDING,
        Reason.PLAN_STALE,
    ),
    (
        "migration plan replaced",
        migration,
        _plan_replaced(migration),
        lambda w: "the plan was retired",
        MigrationPhase.PENDING,
        Reason.PLAN_STALE,
    ),
    (
        "schema plan retired",
        schema,
        _plan_retired(schema),
        lambda w: "the plan was retired",
        SchemaPhase.OBSERVING,
        None,
    ),
    (
        "schema plan replaced",
        schema,
        _plan_replaced(schema),
        lambda w: "the plan was retired",
        SchemaPhase.OBSERVING,
        None,
    ),
    (
        "schema chunk gone",
        schema,
        lambda w: dataclasses.replace(w, chunks={}),
        lambda w: f"a chunk of plan {_claim(schema, w).plan.name} is gone",
        SchemaPhase.OBSERVING,
        None,
    ),
    (
        "migration approval deleted",
        migration,
        _approval_deleted(migration),
        lambda w: f"approval {_claim(migration, w).approval.name} was deleted",
        MigrationPhase.PENDING,
        Reason.OPERATION_IN_PROGRESS,
    ),
    (
        "schema approval deleted",
        schema,
        _approval_deleted(schema),
        lambda w: f"approval {_claim(schema, w).approval.name} was deleted",
        SchemaPhase.AWAITING_APPROVAL,
        None,
    ),
    (
        "migration lease lost",
        migration,
        lambda w: migration.with_status(
            w,
            active_operation=_claim(migration, w).model_copy(
                update={"lease_continuity_lost": True}
            ),
        ),
        lambda w: "the database-realm Lease changed hands",
        MigrationPhase.PENDING,
        Reason.OPERATION_IN_PROGRESS,
    ),
]


@pytest.mark.req("MIG-20", "SCH-23", "APR-13")
@pytest.mark.parametrize(
    ("worlds", "move", "why", "phase", "reason"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_an_undispatched_apply_is_withdrawn_when_what_it_was_claimed_under_moves(
    worlds: Any,
    move: Callable[[Any], Any],
    why: Callable[[Any], str],
    phase: Any,
    reason: str | None,
) -> None:
    world = worlds.applying(dispatched=False)
    reconcile: Callable[[Any], Decision] = (
        reconcile_migration if worlds is migration else reconcile_schema
    )
    moved = move(world)
    expected = why(world)
    decision = reconcile(moved)
    after = worlds.status_of(moved, decision)
    assert after.active_operation is None
    assert after.message is not None
    assert WITHDRAWN + expected in after.message
    assert after.phase == phase
    if reason is not None:
        assert condition_reason(after, ConditionType.READY) == reason
    assert not decision.create, "nothing of the Apply is made"
    if worlds is migration:
        assert [a.verb for a in decision.lease] == [LeaseVerb.RELEASE]
