"""The read-requested-at annotation on a schema (seed 000, "A resource reads its database again
at status.nextReconciliationTime ..."): when a request is answered, how, and when it waits."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest

from ptah_operator.api.constants import (
    ANNOTATION_READ_REQUESTED_AT,
    ApplyPolicy,
    EventReason,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.api.read_requests import recorded_read_request
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from tests.unit.reconcile.schema.table import Row, check, params
from tests.unit.reconcile.schema.worlds import (
    A_MINUTE,
    annotated,
    applying,
    awaiting_approval,
    in_sync,
    later,
    lease_taken_by_another,
    observed,
    observing,
    planned,
    proving,
    published,
    read_failed,
    ready_to_apply,
    source_files,
    status,
    status_of,
    step,
    target_moved,
    with_claimant,
    with_source,
)

REQUEST = "2026-09-01T12:00:30Z"
LONG = "x" * 65
CONTROL = "now\x1b[2J\r\nplease\u202e"


def requested(world: SchemaWorld, value: str = REQUEST) -> SchemaWorld:
    return annotated(world, ANNOTATION_READ_REQUESTED_AT, value)


def answered(world: SchemaWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.last_read_request == REQUEST
    claim = after.active_operation
    assert claim is not None
    assert claim.read_request == REQUEST
    assert claim.type in (OperationType.OBSERVE, OperationType.RESOLVE)
    assert after.next_reconciliation_time == world.now


def not_answered(world: SchemaWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.last_read_request != REQUEST
    assert EventReason.READ_REQUESTED not in [e.reason for e in decision.events]


def plan_kept(world: SchemaWorld, decision: Decision) -> None:
    assert status(world).plan is not None
    assert status_of(world, decision).plan == status(world).plan


def answered_and_plan_kept(world: SchemaWorld, decision: Decision) -> None:
    answered(world, decision)
    plan_kept(world, decision)


def recorded_invalid(value: str) -> Callable[[SchemaWorld, Decision], None]:
    def then(world: SchemaWorld, decision: Decision) -> None:
        assert status_of(world, decision).last_read_request == recorded_read_request(value)

    return then


def proof_goes_on_and_recorded_invalid(value: str) -> Callable[[SchemaWorld, Decision], None]:
    def then(world: SchemaWorld, decision: Decision) -> None:
        after = status_of(world, decision)
        assert after.last_read_request == value
        before_claim = status(world).active_operation
        assert before_claim is not None
        assert before_claim.serves_proof
        assert after.active_operation == before_claim, "the proof keeps its claim and retry time"

    return then


def recorded_as_digest(value: str) -> Callable[[SchemaWorld, Decision], None]:
    def then(world: SchemaWorld, decision: Decision) -> None:
        recorded = "sha256:" + hashlib.sha256(value.encode()).hexdigest()
        assert status_of(world, decision).last_read_request == recorded
        assert all(event.message.isprintable() for event in decision.events)

    return then


ROWS = [
    Row(
        "InSync: answered; the read the interval would start starts now",
        lambda: requested(in_sync()),
        ("RRQ-03", "RRQ-04", "RRQ-05", "RRQ-02", "RRQ-21"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
        events=[EventReason.READ_REQUESTED],
        then=answered,
    ),
    Row(
        "AwaitingApproval: answered, and the waiting plan is kept",
        lambda: requested(awaiting_approval()),
        ("RRQ-04", "RRQ-06", "SCH-65"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
        then=answered_and_plan_kept,
    ),
    Row(
        "ReadyToApply, its Apply waiting for the Lease: answered",
        lambda: requested(lease_taken_by_another(ready_to_apply())),
        ("RRQ-04",),
        phase=SchemaPhase.OBSERVING,
        then=answered,
    ),
    Row(
        "Blocked by its plan (apply: Never): answered",
        lambda: requested(published(spec={"apply": ApplyPolicy.NEVER})),
        ("RRQ-04", "RRQ-09"),
        phase=SchemaPhase.OBSERVING,
        then=answered,
    ),
    Row(
        "Blocked with TargetIdentityChanged: not answered, the proof comes first",
        lambda: requested(target_moved()),
        ("RRQ-08",),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.TARGET_IDENTITY_CHANGED,
        job=None,
        then=not_answered,
    ),
    Row(
        "Blocked with TargetIdentityChanged, its read again: still not answered",
        lambda: requested(later(target_moved(), A_MINUTE)),
        ("RRQ-08",),
        phase=SchemaPhase.BLOCKED,
        then=not_answered,
    ),
    Row(
        "Blocked by a realm conflict: not answered",
        lambda: requested(step(with_claimant(in_sync()))),
        ("RRQ-07", "LCK-06"),
        phase=SchemaPhase.BLOCKED,
        job=None,
        then=not_answered,
    ),
    Row(
        "A read under way: not answered by it",
        lambda: requested(observing()),
        ("RRQ-12",),
        phase=SchemaPhase.OBSERVING,
        job=None,
        then=not_answered,
    ),
    Row(
        "An Apply under way: the request waits",
        lambda: requested(applying()),
        ("RRQ-15", "RRQ-10"),
        phase=SchemaPhase.APPLYING,
        then=not_answered,
    ),
    Row(
        "The read that proves an Apply: the request waits",
        lambda: requested(proving()),
        ("RRQ-15", "RETRY-09"),
        phase=SchemaPhase.VERIFYING_CONVERGENCE,
        then=not_answered,
    ),
    Row(
        "AwaitingApproval without an approval: the request starts a read, never an Apply",
        lambda: requested(awaiting_approval()),
        ("RRQ-10",),
        job="Observe",
    ),
    Row(
        "Failed (no claim): the request waits for the retry; it does not shorten it",
        lambda: requested(step(with_source(in_sync(), None))),
        ("RRQ-11",),
        phase=SchemaPhase.FAILED,
        job=None,
        then=not_answered,
    ),
    Row(
        "Failed (no claim), its retry due: the read that starts answers it",
        lambda: requested(
            later(with_source(step(with_source(in_sync(), None)), source_files()), A_MINUTE)
        ),
        ("RRQ-11",),
        phase=SchemaPhase.OBSERVING,
        then=answered,
    ),
    Row(
        "A failed read between attempts gives way to the request when its delay ends",
        lambda: requested(later(step(read_failed(observing(), OperationType.OBSERVE)), A_MINUTE)),
        ("RRQ-14", "RETRY-03"),
        phase=SchemaPhase.PENDING,
        events=[EventReason.READ_RESTARTED],
    ),
    Row(
        "A value that is not an instant: recorded as answered, one Warning, nothing starts",
        lambda: requested(in_sync(), "yesterday"),
        ("RRQ-16", "RRQ-18", "RRQ-13"),
        phase=SchemaPhase.IN_SYNC,
        job=None,
        events=[EventReason.READ_REQUEST_INVALID],
        then=recorded_invalid("yesterday"),
    ),
    Row(
        "Between failed attempts, an invalid value is answered at once and the retry goes on",
        lambda: requested(step(read_failed(observing(), OperationType.OBSERVE)), "soon"),
        ("RRQ-17",),
        phase=SchemaPhase.FAILED,
        events=[EventReason.READ_REQUEST_INVALID],
        then=recorded_invalid("soon"),
    ),
    Row(
        "A failed proof read answers an invalid value at once too, and goes on retrying",
        lambda: requested(step(read_failed(proving(), OperationType.OBSERVE)), "soon"),
        ("RRQ-17", "RRQ-15"),
        phase=SchemaPhase.FAILED,
        job=None,
        events=[EventReason.READ_REQUEST_INVALID],
        then=proof_goes_on_and_recorded_invalid("soon"),
    ),
    Row(
        "A value over 64 bytes is recorded as its sha256:<hex>",
        lambda: requested(in_sync(), LONG),
        ("RRQ-19", "PRIV-08"),
        events=[EventReason.READ_REQUEST_INVALID],
        then=recorded_invalid(LONG),
    ),
    Row(
        "A value with control characters is recorded, and named, only as its sha256:<hex>",
        lambda: requested(in_sync(), CONTROL),
        ("RRQ-19", "RRQ-16", "PRIV-08"),
        events=[EventReason.READ_REQUEST_INVALID],
        then=recorded_as_digest(CONTROL),
    ),
]


@pytest.mark.parametrize("row", params(ROWS))
def test_read_requests(row: Row) -> None:
    check(row)


@pytest.mark.req("RRQ-12", "RRQ-03")
def test_a_request_that_came_during_a_read_is_answered_by_the_read_after_it() -> None:
    world = requested(observing())
    world = step(step(observed(world)))
    world = step(planned(world, changes=False))
    assert status(world).phase == SchemaPhase.IN_SYNC
    assert status(world).last_read_request != REQUEST
    answered(world, reconcile_schema(world))
