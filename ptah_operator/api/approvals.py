"""A person's decisions: approvals of one exact plan, and acknowledgments of an unresolved run.

Each names its resource, the plan (and for an acknowledgment the run's operation and Job) by
name and UID, so a later object under the same name is never mistaken for it. The fields a
person does not write, who and when, are stamped by the mutating admission webhook from the
authenticated request; a client-supplied value is replaced. Specs are immutable once created.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ptah_operator.api.common import ObjectReference, UserInfo
from ptah_operator.api.constants import RunOutcome
from ptah_operator.api.fields import ApiModel, Digest, LabelName, Timestamp
from ptah_operator.api.objectmeta import Resource
from ptah_operator.api.plans import IMMUTABLE_SPEC


class PtahSchemaApprovalSpec(ApiModel):
    """Approval of one exact schema plan."""

    schema_ref: ObjectReference
    """The PtahSchema, by name and UID."""
    plan_ref: ObjectReference
    """The PtahSchemaPlan, by name and UID (status.plan of the schema)."""
    plan_fingerprint: Digest
    """The plan's spec.fingerprint."""
    plan_operation_id: LabelName | None = Field(default=None, alias="planOperationID")
    """Which publication of the plan is approved: status.plan.operationID, the read that
    published it. Admission fills it in from status when it is absent and refuses another
    value. A plan retired and published again by a later read is another publication, which
    this approval does not name (APR-12)."""
    approved_by: UserInfo | None = None
    """Stamped by admission."""
    approved_at: Timestamp | None = None
    """Stamped by admission."""


class PtahSchemaApproval(Resource):
    """A person's approval of one exact schema plan. It authorizes one execution."""

    kind: Literal["PtahSchemaApproval"] = "PtahSchemaApproval"
    spec: PtahSchemaApprovalSpec = Field(json_schema_extra=IMMUTABLE_SPEC)


class PtahMigrationApprovalSpec(ApiModel):
    """Approval of one exact migration plan."""

    migration_ref: ObjectReference
    """The PtahMigration, by name and UID."""
    plan_ref: ObjectReference
    """The PtahMigrationPlan, by name and UID (status.plan of the migration)."""
    plan_fingerprint: Digest
    """The plan's spec.fingerprint."""
    plan_operation_id: LabelName | None = Field(default=None, alias="planOperationID")
    """Which publication of the plan is approved: status.plan.operationID, the read that
    published it. Admission fills it in from status when it is absent and refuses another
    value. A plan retired and published again by a later read is another publication, which
    this approval does not name (APR-12)."""
    approved_by: UserInfo | None = None
    """Stamped by admission."""
    approved_at: Timestamp | None = None
    """Stamped by admission."""


class PtahMigrationApproval(Resource):
    """A person's approval of one exact migration plan. It authorizes one execution."""

    kind: Literal["PtahMigrationApproval"] = "PtahMigrationApproval"
    spec: PtahMigrationApprovalSpec = Field(json_schema_extra=IMMUTABLE_SPEC)


class PtahMigrationRunAcknowledgmentSpec(ApiModel):
    """Names the unresolved run a person has accounted for."""

    migration_ref: ObjectReference
    """The PtahMigration, by name and UID."""
    operation_id: LabelName = Field(alias="operationID")
    """status.unresolvedRun.operationID."""
    plan_ref: ObjectReference
    """The plan the run carried out."""
    job_ref: ObjectReference
    """The Job the run ran in."""
    outcome: Literal[RunOutcome.PARTIAL, RunOutcome.UNKNOWN]
    """The outcome the run ended with."""
    acknowledged_by: UserInfo | None = None
    """Stamped by admission."""
    acknowledged_at: Timestamp | None = None
    """Stamped by admission."""


class PtahMigrationRunAcknowledgment(Resource):
    """A person's statement that they established what a Partial or Unknown run did."""

    kind: Literal["PtahMigrationRunAcknowledgment"] = "PtahMigrationRunAcknowledgment"
    spec: PtahMigrationRunAcknowledgmentSpec = Field(json_schema_extra=IMMUTABLE_SPEC)
