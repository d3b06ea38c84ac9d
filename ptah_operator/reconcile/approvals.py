"""A person's approval of a plan as both lifecycles read it (APR-02, APR-04, APR-11).

An approval authorizes an Apply only when it is *exact*: it names its resource by UID and name,
the plan status.plan names by name and UID, that plan's fingerprint and the publication
status.plan records (its operationID: a plan retired before it ran and published again by a
later read is the same object, and an approval of the retired publication never carries over,
APR-12), and admission stamped who approved it. One approval authorizes one execution: an approval an Apply consumed (the
journal records its UID in the ApprovalAccepted entry, APR-15; the ended Apply's record names
it; a dispatched Apply claim holds it) never authorizes another. When several exact approvals
are usable, the newest is taken. Each family says which record names its ended Apply
(migration/approvals.py: lastRun; schema/plans.py: lastApply).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any, TypeVar

from ptah_operator.api.approvals import PtahMigrationApproval, PtahSchemaApproval
from ptah_operator.api.common import (
    ActiveOperation,
    ObjectReference,
    PublishedPlan,
    StatusCommon,
)
from ptah_operator.api.constants import (
    MAX_CARRIED_OUT_PLANS,
    Authorization,
    EventReason,
    JournalEntryType,
    OperationType,
)
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.reconcile import journal as journals
from ptah_operator.reconcile.draft import Pass

_EPOCH = dt.datetime.min.replace(tzinfo=dt.UTC)

Approval = PtahMigrationApproval | PtahSchemaApproval
ApprovalT = TypeVar("ApprovalT", PtahMigrationApproval, PtahSchemaApproval)


def authorization_of(
    approval: PtahMigrationApproval | PtahSchemaApproval | None,
) -> dict[str, Any]:
    """The fields of an Apply claim that say what authorized it: the approval, by name and UID,
    and who gave it; or, with no approval, the policy (apply: Always)."""
    if approval is None:
        return {"approval": None, "approver": None, "authorization": Authorization.POLICY}
    return {
        "approval": ObjectReference(
            name=approval.metadata.name or "", uid=approval.metadata.uid or ""
        ),
        "approver": approval.spec.approved_by,
        "authorization": Authorization.APPROVAL,
    }


def consumed(
    journal: Journal | None, ended: ObjectReference | None, claim: ActiveOperation | None
) -> set[str]:
    """UIDs of approvals an Apply already consumed: those the journal accepted, the one the
    ended Apply's record names (`ended`), and that of a dispatched Apply claim."""
    uids = journals.accepted_approval_uids(journal)
    if ended is not None:
        uids.add(ended.uid)
    if (
        claim is not None
        and claim.type == OperationType.APPLY
        and claim.job_uid is not None
        and claim.approval is not None
    ):
        uids.add(claim.approval.uid)
    return uids


def is_exact(
    approval: Approval, owner_uid: str | None, owner_name: str | None, plan: PublishedPlan
) -> bool:
    """Whether the approval names exactly this resource and this publication of this plan,
    stamped by admission. A status.plan written before publications were told apart records
    none, and matches an approval that names none."""
    owner = (
        approval.spec.migration_ref
        if isinstance(approval, PtahMigrationApproval)
        else approval.spec.schema_ref
    )
    spec = approval.spec
    return (
        approval.metadata.deletion_timestamp is None
        and bool(approval.metadata.uid)
        and owner.uid == owner_uid
        and owner.name == owner_name
        and spec.plan_ref.name == plan.name
        and plan.uid is not None
        and spec.plan_ref.uid == plan.uid
        and plan.fingerprint is not None
        and spec.plan_fingerprint == plan.fingerprint
        and spec.plan_operation_id == plan.operation_id
        and spec.approved_by is not None
    )


def newest_exact(
    approvals: Iterable[ApprovalT],
    owner_uid: str | None,
    owner_name: str | None,
    plan: PublishedPlan,
    used: set[str],
) -> ApprovalT | None:
    """The newest usable (exact, not consumed) approval of the plan, or None."""
    usable = [
        a
        for a in approvals
        if is_exact(a, owner_uid, owner_name, plan) and (a.metadata.uid or "") not in used
    ]
    if not usable:
        return None
    return max(
        usable, key=lambda a: (a.metadata.creation_timestamp or _EPOCH, a.metadata.name or "")
    )


def accepted(draft: Pass, claim: ActiveOperation) -> None:
    """The Apply consumed its approval, now that its Job exists: an ApprovalAccepted entry that
    names it by UID, and an Event (JNL-05, APR-11, APR-15). An Apply the policy authorized
    consumed none."""
    if claim.authorization != Authorization.APPROVAL or claim.approval is None:
        return
    plan = claim.plan
    draft.journal(
        JournalEntry(
            type=JournalEntryType.APPROVAL_ACCEPTED,
            time=draft.now,
            plan_name=plan.name if plan else None,
            plan_uid=plan.uid if plan else None,
            plan_fingerprint=plan.fingerprint if plan else None,
            approval_name=claim.approval.name,
            approval_uid=claim.approval.uid,
            approver=claim.approver,
        )
    )
    who = claim.approver.username if claim.approver else "an unknown person"
    draft.normal(
        EventReason.APPROVAL_ACCEPTED,
        f"approval {claim.approval.name} by {who} is consumed by Apply {claim.operation_id}",
    )


# --- plans carried out: what apply: Always never starts again ----------------------------------
#
# status.carriedOutPlans holds the fingerprints of the plans an Apply carried out and nothing
# showed done (the family says which ends count), oldest first and at most
# MAX_CARRIED_OUT_PLANS, so a plan published again after other plans ran in between is still
# known (docs/design/lifecycle-decisions.md). Under apply: Always such a plan waits for a
# person's exact approval, whose one execution ends as any other and is remembered again.


def remember(status: StatusCommon, fingerprint: str | None) -> None:
    """An Apply carried out this plan and nothing showed it done: the newest entry."""
    if fingerprint is None:
        return
    kept = [f for f in status.carried_out_plans or [] if f != fingerprint]
    status.carried_out_plans = [*kept, fingerprint][-MAX_CARRIED_OUT_PLANS:]


def forget(status: StatusCommon, fingerprint: str | None) -> None:
    """The plan's execution was shown done: the same plan again is a new need, not a replay."""
    if fingerprint is None or status.carried_out_plans is None:
        return
    status.carried_out_plans = [f for f in status.carried_out_plans if f != fingerprint]


def remembered(status: StatusCommon, fingerprint: str | None) -> bool:
    """Whether an Apply carried this plan out and nothing showed it done."""
    return fingerprint is not None and fingerprint in (status.carried_out_plans or [])
