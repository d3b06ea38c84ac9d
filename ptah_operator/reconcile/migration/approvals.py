"""A person's decisions as the lifecycle reads them: approvals and run acknowledgments.

An approval moves AwaitingApproval to Applying only when it is *exact* (APR-02, MIG-14;
reconcile/approvals.py, the rule both families share): it names this migration by UID, the
plan status.plan names by name and UID, that plan's fingerprint and the publication status.plan
records (APR-12), and admission stamped who approved it (APR-04). One approval authorizes one execution (APR-11): an approval an Apply consumed, which the journal records by UID in its
ApprovalAccepted entry (APR-15) and lastRun names, never authorizes another, even when the
same plan object is published again after a run that stopped before it selected anything
(MIG-45). An Apply withdrawn before its Job existed consumed nothing (APR-13). When several
exact approvals are usable, the newest is taken.

An acknowledgment settles an unresolved run only when it names exactly that run: the
migration by UID, the run's operation, its plan and its Job by name and UID, and the outcome
it ended with, stamped by admission (RUN-06).
"""

from __future__ import annotations

from ptah_operator.api.approvals import PtahMigrationApproval, PtahMigrationRunAcknowledgment
from ptah_operator.api.common import PublishedPlan
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus, UnresolvedRun
from ptah_operator.reconcile import approvals as core


def consumed(status: PtahMigrationStatus) -> set[str]:
    """UIDs of approvals an Apply already consumed (approvals.consumed; lastRun names the
    ended run's)."""
    ended = status.last_run.approval if status.last_run is not None else None
    return core.consumed(status.journal, ended, status.active_operation)


def exact_approval(
    approvals: tuple[PtahMigrationApproval, ...],
    migration: PtahMigration,
    plan: PublishedPlan,
    used: set[str],
) -> PtahMigrationApproval | None:
    """The newest usable approval of exactly this plan, or None."""
    return core.newest_exact(approvals, migration.metadata.uid, migration.metadata.name, plan, used)


def still_there(approvals: tuple[PtahMigrationApproval, ...], uid: str) -> bool:
    return any(a.metadata.uid == uid and a.metadata.deletion_timestamp is None for a in approvals)


def acknowledgment_of(
    acknowledgments: tuple[PtahMigrationRunAcknowledgment, ...],
    migration: PtahMigration,
    hold: UnresolvedRun,
) -> PtahMigrationRunAcknowledgment | None:
    """The acknowledgment that names exactly the held run, or None."""
    for ack in sorted(acknowledgments, key=lambda a: a.metadata.name or ""):
        spec = ack.spec
        job = hold.job
        if (
            spec.migration_ref.uid == migration.metadata.uid
            and spec.operation_id == hold.operation_id
            and spec.plan_ref.name == hold.plan.name
            and (hold.plan.uid is None or spec.plan_ref.uid == hold.plan.uid)
            and (job is None or spec.job_ref.name == job.name)
            and (job is None or job.uid is None or spec.job_ref.uid == job.uid)
            and spec.outcome == hold.outcome
            and spec.acknowledged_by is not None
        ):
            return ack
    return None
