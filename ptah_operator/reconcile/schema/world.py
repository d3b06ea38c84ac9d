"""What a PtahSchema pass sees: an immutable snapshot, built by the controller from its caches.

The sibling of reconcile.migration.world.MigrationWorld, with what a schema has and a migration has not:
published plans and their chunks, approvals of schema plans, and the text of a plan a Plan
operation reported, which the manager turns into PtahSchemaPlanChunk objects (see
docs/design/schema-path.md, "Plans and chunks"). The parts both families share (a Job's state,
a result record, the source files, a policy file, the realm census, the Lease, the runner) are
the same types.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from ptah_operator.api.approvals import PtahSchemaApproval
from ptah_operator.api.constants import Engine
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.api.realm import PtahRealm
from ptah_operator.api.schema import PtahSchema
from ptah_operator.reconcile.world import (
    Claimant,
    JobState,
    LeaseState,
    OperationResult,
    PolicyFile,
    RunnerConfig,
    SourceFiles,
)


@dataclass(frozen=True)
class PlanText:
    """The plan file a Plan operation produced, as the runner uploaded it in pieces beside its
    report (never inside it: a report holds no SQL). Each piece becomes one
    PtahSchemaPlanChunk's data."""

    operation_id: str
    pieces: Mapping[int, str]
    """The uploaded pieces by index (0, 1, ...), as stored; a missing index is a piece that did
    not arrive."""


@dataclass(frozen=True)
class SchemaWorld:
    """Everything reconcile_schema may look at for one PtahSchema."""

    schema: PtahSchema
    now: dt.datetime
    new_operation_id: str
    """A fresh id the decision may claim; unused when nothing new starts."""
    runner: RunnerConfig
    source: SourceFiles | None = None
    """The ConfigMap source's files; None when the ConfigMap does not exist (or the source is
    not a ConfigMap)."""
    verification_policy: PolicyFile | None = None
    """The OCI source's verification policy; None when the source is not an OCI artifact."""
    source_policy: PolicyFile | None = None
    """The source policy a ConfigMap or Git source names (sourcePolicyFrom), parsed."""
    snapshots: frozenset[str] = frozenset()
    """Names of the snapshot ConfigMaps this resource owns that exist."""
    jobs: Mapping[str, JobState] = field(default_factory=dict)
    """The resource's Jobs by name; the controller waits for its cache to hold its own creates,
    so a claim whose Job is absent here has none (an undispatched Apply may be withdrawn)."""
    job_refusals: Mapping[str, str] = field(default_factory=dict)
    """Jobs the API server refused to create (admission, validation), by name, with the reason
    it gave, free of SQL and credentials. Such a Job does not exist and never will as built."""
    running_pods: frozenset[str] = frozenset()
    """The operations (by id) with a Pod not yet Succeeded or Failed: a Pod its Job controls,
    or one that still carries the operation's label after its Job went (orphaned, or still
    terminating). A run is over only once none of its Pods runs (issue #18)."""
    results: Mapping[str, OperationResult] = field(default_factory=dict)
    """Reported results by operation id (contract ptah.run/result/v1)."""
    plan_texts: Mapping[str, PlanText] = field(default_factory=dict)
    """The plan files Plan operations uploaded, by operation id."""
    plans: Mapping[str, PtahSchemaPlan] = field(default_factory=dict)
    """The resource's plans by name."""
    chunks: Mapping[str, PtahSchemaPlanChunk] = field(default_factory=dict)
    """The chunks of the resource's plans by name."""
    approvals: tuple[PtahSchemaApproval, ...] = ()
    """Approvals in the namespace that name this schema."""
    claimants: tuple[Claimant, ...] = ()
    """Every resource (this one included) whose coordination key digest matches."""
    realm: PtahRealm | None = None
    realm_missing: bool = False
    lease: LeaseState | None = None
    """The database-realm Lease of the coordination key."""
    supported_engines: frozenset[Engine] = frozenset(Engine)
    manager_namespace: str = "ptah-system"
