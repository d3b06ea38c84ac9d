"""A person's decisions as the lifecycle reads them: approvals and run acknowledgments.

An approval moves AwaitingApproval to Applying only when it is *exact* (APR-02, MIG-14): it
names this migration by UID, the plan status.plan names by name and UID, and that plan's
fingerprint, and admission stamped who approved it (APR-04). One approval authorizes one
execution (APR-11): an approval an Apply consumed, which the journal records by UID in its
ApprovalAccepted entry (APR-15) and lastRun names, never authorizes another, even when the
same plan object is published again after a run that stopped before it selected anything
(MIG-45). An Apply withdrawn before its Job existed consumed nothing (APR-13). When several
exact approvals are usable, the newest is taken.

An acknowledgment settles an unresolved run only when it names exactly that run: the
migration by UID, the run's operation, its plan and its Job by name and UID, and the outcome
it ended with, stamped by admission (RUN-06).
"""

from __future__ import annotations

import datetime as dt

from ptah_operator.api.approvals import PtahMigrationApproval, PtahMigrationRunAcknowledgment
from ptah_operator.api.common import PlanReference
from ptah_operator.api.constants import OperationType
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus, UnresolvedRun
from ptah_operator.reconcile import journal

_EPOCH = dt.datetime.min.replace(tzinfo=dt.UTC)


def consumed(status: PtahMigrationStatus) -> set[str]:
    """UIDs of approvals an Apply already consumed."""
    uids = journal.accepted_approval_uids(status.journal)
    if status.last_run is not None and status.last_run.approval is not None:
        uids.add(status.last_run.approval.uid)
    claim = status.active_operation
    if (
        claim is not None
        and claim.type == OperationType.APPLY
        and claim.job_uid is not None
        and claim.approval is not None
    ):
        uids.add(claim.approval.uid)
    return uids


def is_exact(
    approval: PtahMigrationApproval, migration: PtahMigration, plan: PlanReference
) -> bool:
    spec = approval.spec
    return (
        approval.metadata.deletion_timestamp is None
        and spec.migration_ref.uid == migration.metadata.uid
        and spec.migration_ref.name == migration.metadata.name
        and spec.plan_ref.name == plan.name
        and plan.uid is not None
        and spec.plan_ref.uid == plan.uid
        and plan.fingerprint is not None
        and spec.plan_fingerprint == plan.fingerprint
        and spec.approved_by is not None
    )


def exact_approval(
    approvals: tuple[PtahMigrationApproval, ...],
    migration: PtahMigration,
    plan: PlanReference,
    used: set[str],
) -> PtahMigrationApproval | None:
    """The newest usable approval of exactly this plan, or None."""
    usable = [
        a
        for a in approvals
        if is_exact(a, migration, plan) and (a.metadata.uid or "") not in used and a.metadata.uid
    ]
    if not usable:
        return None
    return max(
        usable,
        key=lambda a: (
            a.metadata.creation_timestamp or _EPOCH,
            a.metadata.name or "",
        ),
    )


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
