"""A schema read whose Job refused its snapshot (SRC-CM-16: the files are never read from
anywhere else): the read ends Failed with reason SnapshotMissing, an OperationFailed journal
entry and Warning, and its claim is dropped."""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    JournalEntryType,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.schema.worlds import SCHEMA, observing, status, with_job


@pytest.mark.req("SRC-CM-16")
def test_an_observe_refused_its_files_ends_failed_and_drops_its_claim() -> None:
    world = observing()
    claim = status(world).active_operation
    assert claim is not None
    assert claim.type == OperationType.OBSERVE
    refused = with_job(
        dataclasses.replace(world, snapshots=frozenset()), JobPhase.FAILED, snapshot_refused=True
    )

    decision = reconcile_schema(refused)

    after = SCHEMA.status_of(refused, decision)
    assert after.phase == SchemaPhase.FAILED
    assert after.active_operation is None
    why = f"the files were refused by Job {claim.job_name}"
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == Reason.SNAPSHOT_MISSING
    assert failed.message == f"the Observe was refused its files: {why}"
    assert [(e.reason, e.message) for e in decision.events] == [
        (EventReason.OPERATION_FAILED, f"Observe {claim.operation_id} refused: {why}")
    ]
    assert after.journal is not None
    entry = after.journal.entries[-1]
    assert entry.type == JournalEntryType.OPERATION_FAILED
    assert entry.operation == OperationType.OBSERVE
    assert entry.reason == Reason.SNAPSHOT_MISSING
