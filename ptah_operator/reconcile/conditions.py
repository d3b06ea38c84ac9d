"""status.phase, status.message and the conditions that go with them (Decision 15, Decision 17).

A pass ends with one *standing*: the phase, the reason and a short message, and whether
something is coming on its own. From it come the two kstatus conditions every resource
carries, so generic tools read them:

- `Ready`: True only in InSync (reason HistoryMatched); otherwise False with the standing's
  reason.
- `Progressing`: True only while something is coming on its own: an operation runs, a read
  that failed will run again, a plan is being published, an Apply is next under Always or
  on an exact approval (AwaitingApproval, reason ReadyToApply), a finished run is being
  confirmed, or a dropped claim is about to be replaced (Pending).
  False wherever the resource has stopped or waits for a person, with the reason that says
  which (MIG-52, MIG-53).

Beside them, `ReconciliationFailed` is True while the latest operation failed, with the reason
naming the failure and the message the last line the failing step wrote; it is removed when a
later operation replaces the failure (RETRY-06), `ArtifactResolved` says how the source was
pinned (SnapshotTaken for a ConfigMap source, SRC-CM-05; CommitResolved naming the commit for
Git, SRC-GIT-05; DigestResolved for OCI), and `ArtifactVerified` (OCI only) whether the
verification policy accepted the pinned digest (PolicySatisfied / PolicyRefused). A condition's lastTransitionTime
moves only when its status does, so a pass that changes nothing writes nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from ptah_operator.api.common import Condition, StatusCommon
from ptah_operator.api.constants import (
    MAX_MESSAGE_LENGTH,
    ConditionStatus,
    ConditionType,
    MigrationPhase,
    Reason,
    SchemaPhase,
)
from ptah_operator.api.fields import REASON_PATTERN

PhaseT = TypeVar("PhaseT", MigrationPhase, SchemaPhase)
"""The phases of one family: MigrationPhase or SchemaPhase."""


@dataclass(frozen=True)
class Standing(Generic[PhaseT]):
    """Where a pass leaves the resource: its phase, the reason and message of Ready and
    Progressing, whether something comes on its own, and whether it is Ready. Each family
    names its standings in its own table (migration/standings.py, schema/standings.py)."""

    phase: PhaseT
    reason: str
    message: str
    progressing: bool
    ready: bool = False


@dataclass(frozen=True)
class PlanStandings(Generic[PhaseT]):
    """The standings both families share, the same rule in each but for what differs as data:
    the phases (`phases`, and where a plan next to apply stands) and what the awaited approval
    names. Each family's table (migration/standings.py, schema/standings.py) makes one and
    exposes its methods under the family's names."""

    phases: type[PhaseT]
    next_to_apply: PhaseT
    """The phase of a plan whose Apply is next under Always."""
    awaited: str
    """What a plan waits for, e.g. "a PtahMigrationApproval naming it"."""

    def ready_to_apply(self, plan_name: str, why: str) -> Standing[PhaseT]:
        message = f"plan {plan_name} is next to apply: {why}"
        return Standing(self.next_to_apply, Reason.READY_TO_APPLY, message, True)

    def awaiting_approval(self, plan_name: str, why: str = "") -> Standing[PhaseT]:
        message = _with_why(f"plan {plan_name} waits for {self.awaited}", why)
        phase = self.phases.AWAITING_APPROVAL
        return Standing(phase, Reason.AWAITING_APPROVAL, message, False)

    def approved(self, plan_name: str, why: str) -> Standing[PhaseT]:
        """An exactly approved plan whose Apply is next: still AwaitingApproval (the approval
        is consumed when the Apply's Job shows), but coming on its own."""
        message = f"plan {plan_name} is approved; {why}"
        return Standing(self.phases.AWAITING_APPROVAL, Reason.READY_TO_APPLY, message, True)

    def applying(self, plan_name: str, why: str = "") -> Standing[PhaseT]:
        message = _with_why(f"applying plan {plan_name}", why)
        return Standing(self.phases.APPLYING, Reason.OPERATION_IN_PROGRESS, message, True)

    def blocked(self, reason: str, message: str) -> Standing[PhaseT]:
        return Standing(self.phases.BLOCKED, reason, message, False)

    def failed(self, reason: str, message: str) -> Standing[PhaseT]:
        return Standing(self.phases.FAILED, reason, message, False)

    def pending(self, reason: str, message: str) -> Standing[PhaseT]:
        return Standing(self.phases.PENDING, reason, message, True)


def _with_why(message: str, why: str) -> str:
    return f"{message} ({why})" if why else message


def bounded(message: str) -> str:
    """A message cut to what status holds."""
    if len(message) <= MAX_MESSAGE_LENGTH:
        return message
    return message[: MAX_MESSAGE_LENGTH - 1] + "…"


def reason_or(value: str | None, fallback: str) -> str:
    """A reason from outside (a runner, a Job) when it is a condition reason, else fallback."""
    if value and len(value) <= 128 and re.fullmatch(REASON_PATTERN, value):
        return value
    return fallback


def set_condition(
    status: StatusCommon,
    condition_type: ConditionType,
    value: ConditionStatus,
    reason: str,
    message: str,
    now: dt.datetime,
    generation: int | None,
) -> None:
    """Set one condition; its transition time moves only when its status does."""
    old = status.condition(condition_type)
    changed_at = now if old is None or old.status != value else old.last_transition_time
    new = Condition(
        type=condition_type,
        status=value,
        observed_generation=generation,
        last_transition_time=changed_at,
        reason=reason,
        message=bounded(message),
    )
    others = [c for c in status.conditions if c.type != condition_type]
    status.conditions = sorted([*others, new], key=lambda c: _ORDER.get(c.type, 99))


def set_flag(
    status: StatusCommon,
    condition_type: ConditionType,
    value: bool,
    reason: str,
    message: str,
    now: dt.datetime,
    generation: int | None,
) -> None:
    """Set one condition that is True or False (never Unknown), as `set_condition` does."""
    truth = ConditionStatus.TRUE if value else ConditionStatus.FALSE
    set_condition(status, condition_type, truth, reason, message, now, generation)


_ORDER: dict[str, int] = {
    ConditionType.READY: 0,
    ConditionType.PROGRESSING: 1,
    ConditionType.RECONCILIATION_FAILED: 2,
    ConditionType.ARTIFACT_RESOLVED: 3,
}


def remove_condition(status: StatusCommon, condition_type: ConditionType) -> None:
    status.conditions = [c for c in status.conditions if c.type != condition_type]


def kstatus(
    status: StatusCommon,
    reason: str,
    message: str,
    *,
    progressing: bool,
    ready: bool,
    now: dt.datetime,
    generation: int | None,
) -> None:
    """status.message, Ready and Progressing of any resource (a migration's or a schema's
    standing): the two kstatus conditions carry the same reason and message."""
    status.message = bounded(message)
    set_flag(status, ConditionType.READY, ready, reason, message, now, generation)
    set_flag(status, ConditionType.PROGRESSING, progressing, reason, message, now, generation)


def record_failure(
    status: StatusCommon, reason: str, message: str, now: dt.datetime, generation: int | None
) -> None:
    """ReconciliationFailed=True: the latest operation failed, and why."""
    set_condition(
        status,
        ConditionType.RECONCILIATION_FAILED,
        ConditionStatus.TRUE,
        reason,
        message,
        now,
        generation,
    )


def clear_failure(status: StatusCommon) -> None:
    """A later operation replaced the failure (RETRY-06)."""
    remove_condition(status, ConditionType.RECONCILIATION_FAILED)


def artifact_resolved(
    status: StatusCommon,
    resolved: bool,
    reason: str,
    message: str,
    now: dt.datetime,
    generation: int | None,
) -> None:
    set_flag(status, ConditionType.ARTIFACT_RESOLVED, resolved, reason, message, now, generation)


def ready_reason(status: StatusCommon) -> str | None:
    """The reason on Ready: why the resource is where it is."""
    ready = status.condition(ConditionType.READY)
    return None if ready is None else ready.reason


def refresh_generation(status: StatusCommon, generation: int | None) -> None:
    """Every condition describes the generation the status describes."""
    status.conditions = [
        c.model_copy(update={"observed_generation": generation}) for c in status.conditions
    ]


def artifact_verified(
    status: StatusCommon,
    verified: bool,
    reason: str,
    message: str,
    now: dt.datetime,
    generation: int | None,
) -> None:
    set_flag(status, ConditionType.ARTIFACT_VERIFIED, verified, reason, message, now, generation)
