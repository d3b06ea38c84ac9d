"""The kinds the verbs take, one row each: what `show`, `plan`, `approve`, `wait`, `refresh` and
`set-source` need to know of a PtahMigration or a PtahSchema.

The verbs are written once, over a `Target`; where the two kinds really differ, the row says
how, as data. The differences the seeds give:
- a migration takes approvals under `spec.policy.apply: OnApproval`, and under Always for a
  plan a run already carried out, which Always never replays; a schema may wait for one under
  any policy (Always still asks for one for a destructive plan, or a plan an Apply carried
  out);
- a schema's `status.plan` has no UID until its plan object is published, and such a plan
  cannot be approved yet;
- a schema plan holds SQL (its chunks), which `plan` prints; a migration plan holds versions;
- `approve --wait` ends for a migration when the run reached its verdict (`status.lastRun`),
  for a schema when the Apply was proved (`status.lastApply`);
- a migration's history reading names the operation that made it, which `refresh --wait`
  counts as a finished read.

Names, plurals and short names come from `api.kinds`: this table adds only what the plugin
does with them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ptah_operator.api.constants import ApplyPolicy, Kind, MigrationPhase, SchemaPhase
from ptah_operator.cli.kubectl import migration_view, schema_view
from ptah_operator.cli.kubectl.manifest import NAMES, Names, empty
from ptah_operator.cli.kubectl.schema_view import PlanText
from ptah_operator.cli.kubectl.waits import (
    RunProgress,
    Verdict,
    apply_progress,
    apply_verdict,
    run_progress,
    run_verdict,
)

if TYPE_CHECKING:
    # The models only for the type checker: the read verbs print from `manifest` views, and
    # the verbs that write import a model when they first use one (`model_of`).
    from ptah_operator.api.approvals import PtahMigrationApproval, PtahSchemaApproval
    from ptah_operator.api.common import PlanReference, StatusCommon
    from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
    from ptah_operator.api.objectmeta import Resource
    from ptah_operator.api.plans import PtahMigrationPlan, PtahSchemaPlan
    from ptah_operator.api.schema import PtahSchema, PtahSchemaStatus

ResourceT = TypeVar("ResourceT", bound="Resource")
StatusT = TypeVar("StatusT", bound="StatusCommon")
PlanT = TypeVar("PlanT", bound="Resource")


def model_of(kind: Kind) -> Any:
    """The API model of a kind, imported on first use (it brings pydantic)."""
    from ptah_operator.api.kinds import kind_info

    return kind_info(kind.value).model


@dataclass(frozen=True)
class Target(Generic[ResourceT, StatusT, PlanT]):
    """One kind the verbs take, and how it differs from the other."""

    noun: str
    """The word the plugin uses for it: its `show` verb, and the kind in every message."""
    kind: Kind
    status: Callable[[ResourceT], StatusT]
    """The resource's status, or an empty one when it has none yet."""
    phases: type[MigrationPhase] | type[SchemaPhase]
    render_status: Callable[[ResourceT, PlanT | None], str]

    # plan
    plan_kind: Kind
    plan_has_sql: bool
    """`plan` reads the plan's SQL from its chunks (unless --no-sql)."""
    render_plan: Callable[[ResourceT, Any, PlanT | None, PlanText | None], str]
    no_plan_tail: Callable[[StatusT], str]
    """What `plan` adds when none is published: the plan that ran last."""

    # approve
    approval_kind: Kind
    owner_ref: str
    """The approval's spec field that names the resource (by name and UID)."""
    approving_policies: frozenset[ApplyPolicy]
    """The spec.policy.apply values under which the resource takes approvals at all."""
    unpublished_plan_has_no_uid: bool
    """A status.plan without a UID is not waiting for an approval yet."""
    render_approval_summary: Callable[[ResourceT, PlanT], str]

    # approve --wait
    run_noun: str
    """What `approve --wait` waits for: the run, or the Apply, of the plan."""
    progress: Callable[[StatusT, str, str | None], RunProgress]
    verdict: Callable[[StatusT], Verdict]

    # refresh --wait
    reading_operation: Callable[[StatusT], str | None]
    """The operation of the latest reading the status records, if the kind records one."""

    @property
    def info(self) -> Names:
        return NAMES[self.kind]

    @property
    def model(self) -> type[ResourceT]:
        model: type[ResourceT] = model_of(self.kind)
        return model

    @property
    def plan_model(self) -> type[PlanT]:
        model: type[PlanT] = model_of(self.plan_kind)
        return model

    @property
    def approval_model(self) -> type[PtahMigrationApproval] | type[PtahSchemaApproval]:
        model: type[PtahMigrationApproval] | type[PtahSchemaApproval] = model_of(self.approval_kind)
        return model

    @property
    def aliases(self) -> tuple[str, ...]:
        """Every name `KIND/NAME` takes for it, as kubectl takes a kind's names."""
        info = self.info
        return (self.noun, f"{self.noun}s", info.singular, info.plural, *info.short_names)


AnyTarget = Target[Any, Any, Any]


def _last_ran(status: PtahMigrationStatus) -> str:
    ran = status.last_run.plan.name if status.last_run is not None else None
    return f"; the last run carried plan {ran}" if ran else ""


def _last_applied(status: PtahSchemaStatus) -> str:
    applied = status.applied.plan.name if status.applied is not None else None
    return f"; the last applied plan is {applied} (--applied)" if applied else ""


def _migration_plan(
    migration: PtahMigration,
    reference: PlanReference,
    plan: PtahMigrationPlan | None,
    _text: PlanText | None,
) -> str:
    return migration_view.render_plan(migration, reference, plan)


MIGRATION: Target[PtahMigration, PtahMigrationStatus, PtahMigrationPlan] = Target(
    noun="migration",
    kind=Kind.PTAH_MIGRATION,
    status=lambda migration: migration.status or empty("PtahMigrationStatus"),
    phases=MigrationPhase,
    render_status=migration_view.render_migration,
    plan_kind=Kind.PTAH_MIGRATION_PLAN,
    plan_has_sql=False,
    render_plan=_migration_plan,
    no_plan_tail=_last_ran,
    approval_kind=Kind.PTAH_MIGRATION_APPROVAL,
    owner_ref="migration_ref",
    approving_policies=frozenset({ApplyPolicy.ON_APPROVAL, ApplyPolicy.ALWAYS}),
    unpublished_plan_has_no_uid=False,
    render_approval_summary=migration_view.render_approval_summary,
    run_noun="run",
    progress=run_progress,
    verdict=run_verdict,
    reading_operation=lambda status: status.history.operation_id if status.history else None,
)

SCHEMA: Target[PtahSchema, PtahSchemaStatus, PtahSchemaPlan] = Target(
    noun="schema",
    kind=Kind.PTAH_SCHEMA,
    status=lambda schema: schema.status or empty("PtahSchemaStatus"),
    phases=SchemaPhase,
    render_status=schema_view.render_schema,
    plan_kind=Kind.PTAH_SCHEMA_PLAN,
    plan_has_sql=True,
    render_plan=schema_view.render_schema_plan,
    no_plan_tail=_last_applied,
    approval_kind=Kind.PTAH_SCHEMA_APPROVAL,
    owner_ref="schema_ref",
    approving_policies=frozenset(ApplyPolicy),
    unpublished_plan_has_no_uid=True,
    render_approval_summary=schema_view.render_schema_approval_summary,
    run_noun="Apply",
    progress=apply_progress,
    verdict=apply_verdict,
    reading_operation=lambda _status: None,
)

TARGETS: Mapping[Kind, AnyTarget] = {target.kind: target for target in (MIGRATION, SCHEMA)}
BY_NOUN: Mapping[str, AnyTarget] = {target.noun: target for target in TARGETS.values()}
BY_ALIAS: Mapping[str, Kind] = {
    alias: target.kind for target in TARGETS.values() for alias in target.aliases
}
