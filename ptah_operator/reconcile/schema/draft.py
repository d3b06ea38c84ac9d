"""A schema pass under construction: the core Draft (reconcile/draft.py) with what a PtahSchema's
status names.

Beyond the core's rules: the snapshot of an Apply not yet proven (lastApply with no
verification) is kept; an Apply's result record stays until status.lastApply records it; the
uploaded text of plans whose chunks exist or that were retired is deleted; plans named by
status.plan, the claim, lastApply, status.applied or the retired plan are kept, and approvals the
journal or lastApply shows accepted may go. A failure keeps its retry time only with no claim on
record. Beside Ready and Progressing, `verdict` sets InSync.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptah_operator.api.common import SourceRecord
from ptah_operator.api.constants import (
    ApplyOutcome,
    ConditionStatus,
    ConditionType,
    SchemaPhase,
    VerifiedOutcome,
)
from ptah_operator.api.names import plan_text_record_name
from ptah_operator.api.schema import PtahSchema, PtahSchemaSpec, PtahSchemaStatus
from ptah_operator.reconcile import conditions, draft, journal
from ptah_operator.reconcile.decision import ObjectRef
from ptah_operator.reconcile.schema.standings import Standing, failed
from ptah_operator.reconcile.schema.world import SchemaWorld


@dataclass(kw_only=True)
class SchemaDraft(draft.Draft[SchemaWorld, PtahSchemaStatus, SchemaPhase]):
    FAILED = SchemaPhase.FAILED
    PLAN_KIND = "PtahSchemaPlan"
    APPROVAL_KIND = "PtahSchemaApproval"
    FAILURE_KEPT_UNDER_A_CLAIM = False

    @classmethod
    def begin(cls, world: SchemaWorld) -> SchemaDraft:
        stored = world.schema.status
        status = stored.model_copy(deep=True) if stored is not None else PtahSchemaStatus()
        return cls(world=world, status=status)

    @property
    def resource(self) -> PtahSchema:
        return self.world.schema

    @property
    def schema(self) -> PtahSchema:
        return self.world.schema

    @property
    def spec(self) -> PtahSchemaSpec:
        return self.world.schema.spec

    @property
    def stored(self) -> PtahSchemaStatus | None:
        return self.world.schema.status

    def _enter(self, phase: SchemaPhase) -> None:
        self.status.phase = phase

    def _failed(self, reason: str, message: str) -> Standing:
        return failed(reason, message)

    def verdict(self, converged: bool, reason: str, message: str) -> None:
        """The InSync condition: what the last coherent plan said about the database."""
        conditions.set_condition(
            self.status,
            ConditionType.IN_SYNC,
            ConditionStatus.TRUE if converged else ConditionStatus.FALSE,
            reason,
            message,
            self.now,
            self.generation,
        )

    def _named_sources(self) -> list[SourceRecord | None]:
        last_apply = self.status.last_apply
        if last_apply is not None and last_apply.verification is None:
            return [last_apply.source]
        return []

    def _ended_apply(self) -> str | None:
        last_apply = self.status.last_apply
        return last_apply.operation_id if last_apply is not None else None

    def _succeeded_apply(self) -> str | None:
        """An Apply that reported success and whose proof found the database in sync (JOB-07);
        until then, or when the proof finds changes left, its Job keeps its day."""
        last_apply = self.status.last_apply
        if last_apply is None or last_apply.outcome != ApplyOutcome.SUCCEEDED:
            return None
        verification = last_apply.verification
        if verification is None or verification.outcome != VerifiedOutcome.IN_SYNC:
            return None
        return last_apply.operation_id

    def _clean_up_more(self, claimed: str | None) -> None:
        """The uploaded text of plans whose chunks exist or that were retired."""
        status = self.status
        needed = {claimed} if claimed is not None else set()
        plan = status.plan
        if plan is not None and plan.operation_id is not None and not _chunked(self):
            needed.add(plan.operation_id)
        for operation_id, text in sorted(self.world.plan_texts.items()):
            if operation_id in needed:
                continue
            for index in sorted(text.pieces):
                self.delete(
                    ObjectRef(
                        "v1",
                        "ConfigMap",
                        self.namespace,
                        plan_text_record_name(operation_id, index),
                    )
                )

    def _named_plans(self) -> set[str]:
        status = self.status
        claim = status.active_operation
        last_apply = status.last_apply
        return {
            ref.name
            for ref in (
                status.plan,
                claim.plan if claim is not None else None,
                last_apply.plan if last_apply is not None else None,
                status.applied.plan if status.applied is not None else None,
                status.retired_plan,
            )
            if ref is not None
        }

    def _consumed_approvals(self) -> set[str]:
        consumed = journal.accepted_approval_uids(self.status.journal)
        last_apply = self.status.last_apply
        if last_apply is not None and last_apply.approval is not None:
            consumed.add(last_apply.approval.uid)
        return consumed


def _chunked(draft: SchemaDraft) -> bool:
    """Whether status.plan's object and every one of its chunks exist."""
    ref = draft.status.plan
    if ref is None:
        return False
    plan = draft.world.plans.get(ref.name)
    if plan is None or plan.metadata.uid is None:
        return False
    return all(chunk.name in draft.world.chunks for chunk in plan.spec.chunks)
