"""What a PtahSchema pass sees: an immutable snapshot, built by the controller from its caches.

The sibling of reconcile.migration.world.MigrationWorld, with what a schema has and a migration has not:
published plans and their chunks, approvals of schema plans, and the text of a plan a Plan
operation reported, which the manager turns into PtahSchemaPlanChunk objects (see
docs/design/schema-path.md, "Plans and chunks"). The parts both families share (a Job's state,
a result record, the source files, a policy file, the realm census, the Lease, the runner) are
the same types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ptah_operator.api.approvals import PtahSchemaApproval
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.api.schema import PtahSchema
from ptah_operator.reconcile.world import FamilyWorld


@dataclass(frozen=True)
class PlanText:
    """The plan file a Plan operation produced, as the runner uploaded it in pieces beside its
    report (never inside it: a report holds no SQL). Each piece becomes one
    PtahSchemaPlanChunk's data."""

    operation_id: str
    pieces: Mapping[int, str]
    """The uploaded pieces by index (0, 1, ...), as stored; a missing index is a piece that did
    not arrive."""


@dataclass(frozen=True, kw_only=True)
class SchemaWorld(FamilyWorld):
    """Everything reconcile_schema may look at for one PtahSchema: the shared fields of
    FamilyWorld, and these."""

    schema: PtahSchema
    plan_texts: Mapping[str, PlanText] = field(default_factory=dict)
    """The plan files Plan operations uploaded, by operation id."""
    plans: Mapping[str, PtahSchemaPlan] = field(default_factory=dict)
    """The resource's plans by name."""
    chunks: Mapping[str, PtahSchemaPlanChunk] = field(default_factory=dict)
    """The chunks of the resource's plans by name."""
    approvals: tuple[PtahSchemaApproval, ...] = ()
    """Approvals in the namespace that name this schema."""
