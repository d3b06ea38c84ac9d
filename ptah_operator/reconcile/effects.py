"""What a pass asks for besides its status, the same for both families: objects to create and
delete, Lease actions, Events, annotations, journal entries and when to look again.

`Draft` (migration) and `SchemaDraft` (schema) extend `Effects` with their own status, their
standings and the end of their pass; the helpers below are what both use around it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from ptah_operator.api.common import ExecutionBinding
from ptah_operator.api.constants import (
    EventReason,
    EventType,
    JournalEntryType,
    OperationType,
)
from ptah_operator.api.fingerprints import execution_binding_digest
from ptah_operator.api.journal import JournalEntry
from ptah_operator.reconcile import conditions
from ptah_operator.reconcile.decision import (
    Event,
    LeaseAction,
    ObjectRef,
    OperationCredentials,
    Requeue,
)
from ptah_operator.reconcile.world import RunnerConfig

Creatable = Mapping[str, Any] | OperationCredentials


class _RunsOperations(Protocol):
    @property
    def runner(self) -> RunnerConfig: ...


def current_binding(world: _RunsOperations) -> ExecutionBinding:
    """The runner's execution binding, with its digest filled in."""
    binding = world.runner.binding
    if binding.digest is not None:
        return binding
    return binding.model_copy(update={"digest": execution_binding_digest(binding)})


def binding_digest(binding: ExecutionBinding | None) -> str | None:
    if binding is None:
        return None
    return binding.digest or execution_binding_digest(binding)


def wire(status: BaseModel | None) -> dict[str, Any] | None:
    """A status as it is written (camelCase, no absent fields), for comparing and writing."""
    if status is None:
        return None
    return status.model_dump(mode="json", by_alias=True, exclude_none=True)


@dataclass(kw_only=True)
class Effects:
    creates: list[Creatable] = field(default_factory=list)
    deletes: list[ObjectRef] = field(default_factory=list)
    leases: list[LeaseAction] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    annotations: dict[str, str | None] = field(default_factory=dict)
    entries: list[JournalEntry] = field(default_factory=list)
    wake: dt.datetime | None = None
    """The earliest time the pass asked to run again at, if any."""
    own_write: bool = False
    """The pass asked to run again at once, through the watch event of its own write."""

    @property
    def now(self) -> dt.datetime:
        raise NotImplementedError

    def normal(self, reason: EventReason, message: str) -> None:
        self.events.append(Event(EventType.NORMAL, reason, conditions.bounded(message)))

    def warning(self, reason: EventReason, message: str) -> None:
        self.events.append(Event(EventType.WARNING, reason, conditions.bounded(message)))

    def journal(self, entry: JournalEntry) -> None:
        self.entries.append(entry)

    def operation_failed(
        self, operation: OperationType, reason: str, when: dt.datetime | None = None
    ) -> None:
        """Journal one failed attempt; the journal folds repeats into a count (JNL-12)."""
        self.journal(
            JournalEntry(
                type=JournalEntryType.OPERATION_FAILED,
                time=when or self.now,
                operation=operation,
                reason=reason,
            )
        )

    def create(self, manifest: Creatable) -> None:
        self.creates.append(manifest)

    def delete(self, ref: ObjectRef) -> None:
        if ref not in self.deletes:
            self.deletes.append(ref)

    def wake_at(self, when: dt.datetime) -> None:
        """Run again at `when` at the latest (a time already past is due at once: see
        `rely_on_own_write`)."""
        if self.wake is None or when < self.wake:
            self.wake = when

    def wake_in(self, delay: dt.timedelta) -> None:
        self.wake_at(self.now + delay)

    def rely_on_own_write(self) -> None:
        """Run again at once: the next step is due now, and the write this pass makes (its
        status, above all) comes back through the watch and starts it. The controller adds
        nothing to its queue for this, so a pass that calls it must write something."""
        self.own_write = True

    def requeue(self) -> Requeue:
        """When to run again, from what the pass asked for: at once through its own write
        wins over any time, a time not after now is the same, and no time is none."""
        if self.own_write:
            return Requeue.AFTER_OWN_WRITE
        if self.wake is None:
            return Requeue.NONE
        return Requeue.at(self.wake, self.now)
