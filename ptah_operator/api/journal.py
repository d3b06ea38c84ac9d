"""status.journal: the bounded record of a resource's significant events (JNL-01..JNL-25).

One entry shape serves every type; which fields an entry fills depends on its type, and outcome
means something different on each (JNL-15). Entries carry condition reasons, never messages,
and name only objects in the resource's namespace. The journal holds at most 64 entries; the
reconcile layer enforces the age bound and coveredSince.
"""

from __future__ import annotations

from pydantic import Field

from ptah_operator.api.common import PlanReference, UserInfo
from ptah_operator.api.constants import (
    JOURNAL_MAX_ENTRIES,
    Authorization,
    JournalEntryType,
    JournalOutcome,
    OperationType,
)
from ptah_operator.api.fields import (
    ApiModel,
    ConditionReason,
    Digest,
    LabelName,
    Name,
    Timestamp,
    Uid,
    Version,
    bounded_list,
)


class JournalEntry(ApiModel):
    """One significant event. Filter on type as well as on outcome."""

    type: JournalEntryType
    time: Timestamp
    """When it happened: from the transition where it carries a time, else the manager's clock.
    For OperationFailed, the time of the last failure of the run of failures."""
    operation: OperationType | None = None
    """OperationFailed: the operation that failed."""
    operation_id: LabelName | None = Field(default=None, alias="operationID")
    """The Apply claim a RunFinished, a migration's Verified and a RunAcknowledged belong to."""
    plan_name: Name | None = None
    plan_uid: Uid | None = Field(default=None, alias="planUID")
    plan_fingerprint: Digest | None = None
    approval_name: Name | None = None
    approval_uid: Uid | None = Field(default=None, alias="approvalUID")
    """Tells two decisions apart; absent on entries written before 0.2.10."""
    approver: UserInfo | None = None
    """The person admission stamped on the approval."""
    acknowledgment_name: Name | None = None
    acknowledgment_uid: Uid | None = Field(default=None, alias="acknowledgmentUID")
    acknowledged_by: UserInfo | None = None
    job_name: LabelName | None = None
    job_uid: Uid | None = Field(default=None, alias="jobUID")
    authorization: Authorization | None = None
    outcome: JournalOutcome | None = None
    reason: ConditionReason | None = None
    """A condition reason; never a message. RunFinished: why a run stopped before it selected
    a migration, when its result said."""
    count: int | None = Field(default=None, ge=1)
    """OperationFailed: how many attempts in a row failed with the same operation and reason.
    RunFinished: how many runs in a row of the same plan, on policy, ended so (the entry names
    the newest)."""
    approval_required: bool | None = None
    """Schema PlanPublished: the plan asked for a person's approval when it was published."""
    replaced: PlanReference | None = None
    """Schema PlanPublished: the plan this one took the place of, when a person could approve
    it or had approved it and it never ran."""
    versions_applied: int | None = Field(default=None, ge=0)
    """RunFinished: how many versions the run applied."""
    stopped_at: Version | None = None
    """RunFinished: the version the run stopped at."""


class Journal(ApiModel):
    """The bounded journal."""

    covered_since: Timestamp | None = None
    """The instant from which the journal is complete."""
    entries: list[JournalEntry] = bounded_list(JOURNAL_MAX_ENTRIES)
