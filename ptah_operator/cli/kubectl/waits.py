"""When a wait is over, as pure functions of the status the plugin observes.

- `run_progress`: `approve --wait` waits for the run of the plan it approved to reach its
  verdict: `status.lastRun` names that plan and the phase has left Applying and
  VerifyingHistory (and the one Reading pass after it, unless the run is verified already). A
  plan retired before it ran ends the wait too: the approval authorizes nothing else
  (APR-11, APR-12).
- `apply_progress`: `approve schema/NAME --wait` waits for the Apply of the plan it approved
  to be proved: `status.lastApply` names that plan and records its verification. A plan
  retired before it ran ends the wait too.
- `run_verdict`, `apply_verdict`: what that wait says once the run (the Apply) ended, and
  whether it succeeded: the exit code of `approve --wait`.
- `phase_reached`: `wait --for=PHASE` waits for the phase, in a status that describes the
  current generation (a migration's or a schema's).
- `next_read_request`: the value `refresh` writes, later than any the resource holds and than
  the last one `status.lastReadRequest` answered (RRQ-20).
- `ReadTracker`: `refresh --wait` waits until the value is answered and the read it started has
  finished (RRQ-21). A read that was running when the request arrived does not answer it
  (RRQ-12), so the read that counts is an operation that was not there before the request.
  Under a Git or OCI source the request starts a Resolve, and the read it asked for is the
  chain that follows (Verify, then the history read, or Observe and Plan): each ends its claim
  and the next pass claims the next one, so a status between two claims, still in a phase of
  that chain, is not the end of the read (RRQ-05).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import TYPE_CHECKING

from ptah_operator.api.constants import (
    ApplyOutcome,
    MigrationPhase,
    OperationType,
    RunOutcome,
    SchemaPhase,
)
from ptah_operator.cli.kubectl.manifest import format_time

if TYPE_CHECKING:
    # Pure functions of the status, a model's or a `manifest` view's alike.
    from ptah_operator.api.common import PlanReference, StatusCommon
    from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
    from ptah_operator.api.schema import PtahSchema, PtahSchemaStatus

RUNNING_PHASES = frozenset({MigrationPhase.APPLYING, MigrationPhase.VERIFYING_HISTORY})
# Where a migration rests without a plan: a plan gone in one of these will not run.
RESTING_PHASES = frozenset(
    {
        MigrationPhase.IN_SYNC,
        MigrationPhase.BLOCKED,
        MigrationPhase.FAILED,
        MigrationPhase.SUSPENDED,
    }
)
SUCCESSFUL_OUTCOMES = frozenset({RunOutcome.APPLIED, RunOutcome.UP_TO_DATE})
# The phases of a read's chain (Resolve, Verify, then the history read or Observe and Plan): a
# resource in one of them with no claim is between two of its operations, not at rest.
MIGRATION_READ_PHASES = frozenset(
    {
        MigrationPhase.PENDING,
        MigrationPhase.RESOLVING,
        MigrationPhase.VERIFYING,
        MigrationPhase.READING,
    }
)
SCHEMA_READ_PHASES = frozenset(
    {
        SchemaPhase.PENDING,
        SchemaPhase.RESOLVING,
        SchemaPhase.VERIFYING,
        SchemaPhase.OBSERVING,
        SchemaPhase.PLANNING,
    }
)


class RunProgress(Enum):
    WAITING = "waiting"
    FINISHED = "finished"
    RETIRED = "retired"


def _carried(reference: PlanReference, plan_name: str, plan_uid: str | None) -> bool:
    """A run record's plan is the approved plan (a UID missing on either side does not differ)."""
    return reference.name == plan_name and (
        plan_uid is None or reference.uid is None or reference.uid == plan_uid
    )


def _gone(
    current: PlanReference | None,
    phase: str | None,
    resting: frozenset[str],
    plan_name: str,
    plan_uid: str | None,
) -> RunProgress:
    """For a plan that has not run: RETIRED once status.plan names another plan, or none while
    the resource rests; WAITING otherwise."""
    if current is not None and (
        current.name != plan_name or (current.uid is not None and current.uid != plan_uid)
    ):
        return RunProgress.RETIRED
    if current is None and phase in resting:
        return RunProgress.RETIRED
    return RunProgress.WAITING


def run_progress(status: PtahMigrationStatus, plan_name: str, plan_uid: str | None) -> RunProgress:
    """Where the run of one approved plan stands."""
    run = status.last_run
    if run is not None and _carried(run.plan, plan_name, plan_uid):
        if status.phase in RUNNING_PHASES:
            return RunProgress.WAITING
        if status.phase == MigrationPhase.READING and run.verification is None:
            return RunProgress.WAITING
        return RunProgress.FINISHED
    if status.phase in RUNNING_PHASES:
        return RunProgress.WAITING
    return _gone(status.plan, status.phase, RESTING_PHASES, plan_name, plan_uid)


# Where a schema rests without a plan: a plan gone in one of these will not run.
SCHEMA_RESTING_PHASES = frozenset(
    {SchemaPhase.IN_SYNC, SchemaPhase.BLOCKED, SchemaPhase.FAILED, SchemaPhase.SUSPENDED}
)


def apply_progress(status: PtahSchemaStatus, plan_name: str, plan_uid: str | None) -> RunProgress:
    """Where the Apply of one approved schema plan stands: finished once its proof settled
    (lastApply names the plan and records its verification)."""
    record = status.last_apply
    if record is not None and _carried(record.plan, plan_name, plan_uid):
        return RunProgress.WAITING if record.verification is None else RunProgress.FINISHED
    if status.phase == SchemaPhase.APPLYING:
        return RunProgress.WAITING
    return _gone(status.plan, status.phase, SCHEMA_RESTING_PHASES, plan_name, plan_uid)


@dataclass(frozen=True)
class Verdict:
    """What `approve --wait` says when the run it waited for has ended, and whether it succeeded."""

    lines: tuple[str, ...]
    succeeded: bool


def run_verdict(status: PtahMigrationStatus) -> Verdict:
    """The migration's last run: its outcome, where it stopped, the phase it left."""
    run = status.last_run
    assert run is not None
    applied = ", ".join(run.applied_versions) or "nothing"
    lines = [f"run {run.operation_id}: {run.outcome}, applied {applied}"]
    if run.failure is not None:
        f = run.failure
        codes = [
            f"SQLSTATE {f.sqlstate}" if f.sqlstate else "",
            f"errno {f.mysql_errno}" if f.mysql_errno is not None else "",
        ]
        detail = ", ".join(c for c in codes if c)
        lines.append(f"stopped at version {f.version}" + (f" ({detail})" if detail else ""))
    lines.append(f"migration is {status.phase or 'in no phase yet'}")
    return Verdict(tuple(lines), run.outcome in SUCCESSFUL_OUTCOMES)


def apply_verdict(status: PtahSchemaStatus) -> Verdict:
    """The schema's last Apply: its outcome, its proof, the phase it left."""
    record = status.last_apply
    assert record is not None
    reason = f" ({record.reason})" if record.reason else ""
    lines = [f"apply {record.operation_id}: {record.outcome or 'Unknown'}{reason}"]
    if record.verification is not None:
        lines.append(f"verified: {record.verification.outcome}")
    lines.append(f"schema is {status.phase or 'in no phase yet'}")
    return Verdict(tuple(lines), record.outcome == ApplyOutcome.SUCCEEDED)


def phase_reached(resource: PtahMigration | PtahSchema, phase: str) -> bool:
    """The status says `phase`, and it describes the current spec."""
    status = resource.status
    if status is None or status.phase != phase:
        return False
    generation = resource.metadata.generation
    observed = status.observed_generation
    return generation is None or observed is None or observed >= generation


def next_read_request(now: datetime, held: Iterable[str | None]) -> str:
    """An RFC 3339 instant (whole seconds, Z) later than every instant in `held`, and not
    earlier than `now`. Values that are not instants (invalid, or a sha256: record) count for
    nothing: they name no time."""
    from ptah_operator.api.read_requests import parse_read_request

    instants = [t for t in (parse_read_request(v) for v in held if v) if t is not None]
    value = now.replace(microsecond=0)
    if instants:
        latest = max(instants)
        if value <= latest:
            value = latest.replace(microsecond=0) + timedelta(seconds=1)
    return format_time(value)


@dataclass
class ReadTracker:
    """Follows one read request from its answer to the end of the read it started."""

    value: str
    before: frozenset[str]
    """Operation ids the resource knew before the request: its claim and its last reading."""
    read_operation: str | None = field(default=None)

    @property
    def recorded(self) -> str:
        from ptah_operator.api.read_requests import recorded_read_request

        return recorded_read_request(self.value)

    def answered(self, status: StatusCommon) -> bool:
        return status.last_read_request == self.recorded

    def finished(self, status: StatusCommon, reading_operation: str | None = None) -> bool:
        """Whether the read the request started has finished, given one observed status.

        `reading_operation` is the operation id of the latest reading the status records
        (status.history.operationID for a migration): a new one means a read finished even
        if its claim came and went unseen.
        """
        if not self.answered(status):
            return False
        active = status.active_operation
        if active is not None and active.type != OperationType.APPLY:
            # A claim that says it answers this request is the read, whatever its id (a retry
            # may keep its claim); so is a claim the resource did not have before: the next
            # operation of the chain the request started. `read_operation` is the latest.
            if active.read_request == self.recorded or active.operation_id not in self.before:
                self.read_operation = active.operation_id
            return False
        if active is None and _between_reads(status):
            return False
        if self.read_operation is not None:
            return True
        return reading_operation is not None and reading_operation not in self.before


def _between_reads(status: StatusCommon) -> bool:
    """Whether a status with no claim is between two operations of a read's chain."""
    from ptah_operator.api.migration import PtahMigrationStatus
    from ptah_operator.api.schema import PtahSchemaStatus

    if isinstance(status, PtahMigrationStatus):
        if status.phase == MigrationPhase.PLANNING:
            # The reading planned, and the plan is not published yet (its UID comes next).
            return status.plan is not None and status.plan.uid is None
        return status.phase in MIGRATION_READ_PHASES
    if isinstance(status, PtahSchemaStatus):
        return status.phase in SCHEMA_READ_PHASES
    return False
