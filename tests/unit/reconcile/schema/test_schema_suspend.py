"""spec.suspend on a schema (seed 000, "Suspended, and losing a lock"; SUS-05: a read under way
goes to Suspended directly, Decision 14)."""

from __future__ import annotations

import pytest

from ptah_operator.api.constants import JournalEntryType, OperationType, Reason, SchemaPhase
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.schema import SchemaWorld
from tests.unit.reconcile.schema.table import Row, check, params
from tests.unit.reconcile.schema.worlds import (
    applied,
    applying,
    awaiting_approval,
    in_sync,
    observed,
    observing,
    planned,
    planning,
    proof_planning,
    proving,
    read_failed,
    resumed,
    status,
    status_of,
    step,
    suspended,
    verifying_convergence,
    with_approval,
)

E = JournalEntryType
L = LeaseVerb


def claim_dropped(world: SchemaWorld, decision: Decision) -> None:
    assert status(world).active_operation is not None
    assert status_of(world, decision).active_operation is None


def claim_kept(world: SchemaWorld, decision: Decision) -> None:
    after = status_of(world, decision).active_operation
    before = status(world).active_operation
    assert before is not None
    assert after is not None
    assert after.operation_id == before.operation_id


def proof_still_owed(world: SchemaWorld, decision: Decision) -> None:
    last = status_of(world, decision).last_apply
    assert last is not None
    assert last.verification is None


def lease_kept_by_the_apply(world: SchemaWorld, decision: Decision) -> None:
    assert not decision.lease
    last = status(world).last_apply
    assert world.lease is not None
    assert last is not None
    assert world.lease.holder == last.operation_id


ROWS = [
    Row(
        "No claim -> Suspended: no Job starts",
        lambda: suspended(in_sync()),
        ("SUS-01", "SUS-05"),
        phase=SchemaPhase.SUSPENDED,
        ready=Reason.SUSPENDED,
        job=None,
        lease=[],
    ),
    Row(
        "An Observe under way -> Suspended: the claim is dropped",
        lambda: suspended(observing()),
        ("SUS-04", "SUS-05"),
        phase=SchemaPhase.SUSPENDED,
        job=None,
        lease=[],
        then=claim_dropped,
    ),
    Row(
        "A Plan under way -> Suspended: the write that drops it stages the Lease's release",
        lambda: suspended(planning()),
        ("SUS-04", "SUS-05"),
        phase=SchemaPhase.SUSPENDED,
        lease=[L.RELEASE],
        then=claim_dropped,
    ),
    Row(
        "Failed (a claim) -> Suspended",
        lambda: suspended(step(read_failed(observing(), OperationType.OBSERVE))),
        ("SUS-05",),
        phase=SchemaPhase.SUSPENDED,
        then=claim_dropped,
    ),
    Row(
        "An Apply withdrawn before its Job existed -> Suspended",
        lambda: suspended(applying(dispatched=False)),
        ("SUS-05", "SUS-01"),
        phase=SchemaPhase.SUSPENDED,
        entries=[],
        lease=[L.RELEASE],
        then=claim_dropped,
    ),
    Row(
        "A dispatched Apply under spec.suspend is observed to its end",
        lambda: suspended(applying()),
        ("SUS-02",),
        phase=SchemaPhase.APPLYING,
        lease=[],
        then=claim_kept,
    ),
    Row(
        "... and its end still leads to the proof, the Lease kept",
        lambda: applied(suspended(applying())),
        ("SUS-02",),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        entries=[E.APPLY_FINISHED],
        lease=[],
        then=proof_still_owed,
    ),
    Row(
        "No proof Job starts under spec.suspend: Suspended, the proof owed, the Lease released",
        lambda: step(applied(suspended(applying()))),
        ("SUS-01", "SUS-05"),
        phase=SchemaPhase.SUSPENDED,
        job=None,
        lease=[L.RELEASE],
        then=proof_still_owed,
    ),
    Row(
        "A proof's read under spec.suspend runs to its end and keeps the Lease",
        lambda: suspended(proving()),
        ("SUS-03",),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        job=None,
        then=lease_kept_by_the_apply,
    ),
    Row(
        "The proof's Observe ended under spec.suspend: Suspended, its Plan not started",
        lambda: observed(suspended(proving())),
        ("SUS-03", "SUS-05"),
        phase=SchemaPhase.SUSPENDED,
        job=None,
        lease=[L.RELEASE],
        then=proof_still_owed,
    ),
    Row(
        "The proof's Plan ended under spec.suspend: its verdict is kept, the schema Suspended",
        lambda: planned(suspended(proof_planning()), changes=False),
        ("SUS-03",),
        phase=SchemaPhase.SUSPENDED,
        entries=[E.VERIFIED],
        lease=[L.RELEASE],
    ),
    Row(
        "Suspended: an approved plan dispatches no Apply",
        lambda: with_approval(step(suspended(awaiting_approval()))),
        ("SUS-08",),
        phase=SchemaPhase.SUSPENDED,
        job=None,
        writes=False,
    ),
    Row(
        "Resumed: Resolving (Observing)",
        lambda: resumed(step(suspended(in_sync()))),
        ("SUS-07",),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
    ),
    Row(
        "Resumed with a proof owed: VerifyingConvergence, the Lease taken again for the proof",
        lambda: resumed(step(suspended(verifying_convergence()))),
        ("SUS-07",),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        job="Observe",
        lease=[L.ACQUIRE],
    ),
]


@pytest.mark.parametrize("row", params(ROWS))
def test_suspend(row: Row) -> None:
    check(row)


@pytest.mark.req("SUS-05", "SCH-37")
def test_a_suspended_read_never_shows_pending_first() -> None:
    world = suspended(observing())
    after = step(world)
    assert status(after).phase == SchemaPhase.SUSPENDED
    assert status(step(after)).phase == SchemaPhase.SUSPENDED
    assert planning is not None
