"""A migration with every part of its status filled, for the rendering tests."""

from __future__ import annotations

from datetime import timedelta

from ptah_operator.api.common import (
    ActiveOperation,
    JobReference,
    ObjectReference,
    PlanReference,
    UserInfo,
)
from ptah_operator.api.constants import (
    Authorization,
    HistoryVerdict,
    JournalEntryType,
    JournalOutcome,
    MigrationPhase,
    OperationType,
    RevisionState,
    RunOutcome,
    VerifiedOutcome,
)
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.api.migration import (
    DirtyRevision,
    LastRun,
    PtahMigration,
    Revision,
    RunFailure,
    RunVerification,
    UnresolvedRun,
)
from ptah_operator.api.plans import PtahMigrationPlan
from tests.support.migration_objects import (
    T0,
    awaiting_approval,
    d,
    migration,
    plan,
    plan_spec,
)

ALICE = UserInfo(username="alice@example.com", groups=["approvers", "system:authenticated"])


def waiting() -> tuple[PtahMigration, PtahMigrationPlan]:
    """AwaitingApproval, after a failed run and an acknowledged Partial one."""
    p = plan(plan_spec(ObjectReference(name="orders", uid="m-uid-1")))
    status = awaiting_approval(p)
    assert status.history is not None
    status.history = status.history.model_copy(
        update={
            "verdict": HistoryVerdict.READY_TO_PLAN,
            "operation_id": "op-00000000aa",
            "revisions": [
                Revision(
                    version="0000000001",
                    description="create orders",
                    state=RevisionState.APPLIED,
                    checksum=d("file-0000000001"),
                    execution_millis=12,
                    applied_at=T0 - timedelta(days=1),
                ),
                Revision(
                    version="0000000000",
                    description="baseline",
                    state=RevisionState.BASELINE,
                    checksum=None,
                    execution_millis=None,
                    applied_at=T0 - timedelta(days=2),
                ),
            ],
        }
    )
    status.next_reconciliation_time = T0 + timedelta(minutes=10)
    status.last_run = LastRun(
        operation_id="op-00000000bb",
        outcome=RunOutcome.FAILED,
        plan=PlanReference(name="orders-1111111111", uid="p-0", fingerprint=d("plan-0")),
        approval=ObjectReference(name="orders-1111111111-x7k2p", uid="a-0"),
        approver=ALICE,
        job=JobReference(name="ptah-apply-00000000bb", uid="j-0"),
        authorization=Authorization.APPROVAL,
        applied_versions=["0000000001"],
        started_at=T0 - timedelta(hours=2),
        finished_at=T0 - timedelta(hours=2) + timedelta(seconds=3),
        failure=RunFailure(version="0000000002", statement_index=3, sqlstate="23505"),
        target_identity_digest=d("target-1"),
        verification=RunVerification(
            outcome=VerifiedOutcome.BLOCKED, read_at=T0 - timedelta(hours=1)
        ),
        message="migration 0000000002 failed: SQLSTATE 23505",
    )
    status.journal = Journal(
        covered_since=T0 - timedelta(days=3),
        entries=[
            JournalEntry(
                type=JournalEntryType.RUN_FINISHED,
                time=T0 - timedelta(hours=2),
                operation_id="op-00000000bb",
                plan_name="orders-1111111111",
                approval_name="orders-1111111111-x7k2p",
                approver=ALICE,
                job_name="ptah-apply-00000000bb",
                outcome=JournalOutcome.FAILED,
                versions_applied=1,
                stopped_at="0000000002",
            ),
            JournalEntry(
                type=JournalEntryType.PLAN_PUBLISHED,
                time=T0,
                plan_name=p.metadata.name,
                plan_fingerprint=p.spec.fingerprint,
            ),
            JournalEntry(
                type=JournalEntryType.OPERATION_FAILED,
                time=T0 - timedelta(minutes=30),
                operation=OperationType.HISTORY,
                reason="ConnectionFailed",
                count=3,
            ),
        ],
    )
    return migration(status=status), p


def blocked() -> PtahMigration:
    """Blocked on a dirty history with a Partial run held, a read running."""
    m, _ = waiting()
    assert m.status is not None
    assert m.status.history is not None
    m.status.phase = MigrationPhase.BLOCKED
    m.status.plan = None
    m.status.history.verdict = HistoryVerdict.DIRTY
    m.status.history.dirty = DirtyRevision(version="0000000002", description="step 2")
    m.status.history.modified_versions = ["0000000001"]
    m.status.history.out_of_order_versions = ["0000000000"]
    m.status.unresolved_run = UnresolvedRun(
        operation_id="op-00000000bb",
        outcome=RunOutcome.PARTIAL,
        plan=PlanReference(name="orders-1111111111", uid="p-0", fingerprint=d("plan-0")),
        job=JobReference(name="ptah-apply-00000000bb", uid="j-0"),
        finished_at=T0,
        planned_target_digest=d("target-1"),
    )
    m.status.active_operation = ActiveOperation(
        operation_id="op-00000000cc",
        type=OperationType.HISTORY,
        job_name="ptah-history-00000000cc",
        started_at=T0,
        attempt=2,
        retry_at=T0 + timedelta(minutes=1),
        last_failure_reason="ConnectionFailed",
    )
    m.status.journal = None
    return m
