"""What a PtahMigration pass sees: an immutable snapshot, built by the controller from its caches.

The parts both families share (a Job's state, a result record, the source files, a policy file,
the realm census, the Lease, the runner) are the types of reconcile.world; see that module for
what a World carries and why.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from ptah_operator.api.approvals import PtahMigrationApproval, PtahMigrationRunAcknowledgment
from ptah_operator.api.constants import Engine
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.api.realm import PtahRealm
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
class MigrationWorld:
    """Everything reconcile_migration may look at for one PtahMigration."""

    migration: PtahMigration
    now: dt.datetime
    new_operation_id: str
    """A fresh id the decision may claim; unused when nothing new starts."""
    runner: RunnerConfig
    source: SourceFiles | None = None
    """The ConfigMap source's files; None when the ConfigMap does not exist (or the source
    is not a ConfigMap)."""
    verification_policy: PolicyFile | None = None
    """The OCI source's verification policy; None when the source is not an OCI artifact."""
    source_policy: PolicyFile | None = None
    """The source policy a ConfigMap or Git source names (sourcePolicyFrom); None when it
    names none."""
    snapshots: frozenset[str] = frozenset()
    """Names of the snapshot ConfigMaps this resource owns that exist."""
    jobs: Mapping[str, JobState] = field(default_factory=dict)
    """The resource's Jobs by name. A Job the controller created must be here from then on:
    the controller waits for its cache to hold its own creates (as controller-runtime's
    expectations do), because an Apply claim with no Job is withdrawn when what it rests on
    moved, and only an absent Job makes that safe."""
    job_refusals: Mapping[str, str] = field(default_factory=dict)
    """Jobs the API server refused to create (admission, validation, a quota), by name, with
    the reason it gave, free of SQL and credentials. Such a Job does not exist and never will
    as built."""
    running_pods: frozenset[str] = frozenset()
    """The operations (by id) with a Pod not yet Succeeded or Failed: a Pod its Job controls,
    or one that still carries the operation's label after its Job went (orphaned, or still
    terminating). A run is over only once none of its Pods runs (issue #18)."""
    results: Mapping[str, OperationResult] = field(default_factory=dict)
    """Reported results by operation id."""
    plans: Mapping[str, PtahMigrationPlan] = field(default_factory=dict)
    """The resource's plans by name."""
    approvals: tuple[PtahMigrationApproval, ...] = ()
    """Approvals in the namespace that name this migration."""
    acknowledgments: tuple[PtahMigrationRunAcknowledgment, ...] = ()
    claimants: tuple[Claimant, ...] = ()
    """Every resource (this one included) whose coordination key digest matches."""
    realm: PtahRealm | None = None
    """The PtahRealm spec.target.realm names, when it names one and it exists."""
    realm_missing: bool = False
    """spec.target.realm names a PtahRealm that does not exist."""
    lease: LeaseState | None = None
    supported_engines: frozenset[Engine] = frozenset(Engine)
    """Engines this manager's runner can operate; any other is Blocked UnsupportedEngine."""
    manager_namespace: str = "ptah-system"
    """Where the database-realm Leases live (the manager's namespace)."""
