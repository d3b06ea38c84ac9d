"""One row per seed transition: a world, and what the pass must decide about it (both families).

A row names the transition in the seed's words, the world it starts from, and what it
expects: the next phase, the Ready and Progressing reasons, the Job created (or none), the
journal entries written, the Events, the Lease actions. Fields left at ANY are not checked;
`then` holds any further assertion. Every decision is also held to what must never appear
(PRIV-01, PRIV-02): no SQL of the source files, no database URL, in any Event or status text.

The mechanics are the same for both lifecycles; a family's table.py declares only what
differs: its reconcile function, how its status and journal are read after a decision, what
must never appear and which created objects are searched for it (a `Table`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

import pytest

from ptah_operator.api.common import Condition
from ptah_operator.api.constants import ConditionType, JournalEntryType
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from tests.unit.reconcile.worlds import event_reasons, job_of


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()

WorldT = TypeVar("WorldT")
PhaseT = TypeVar("PhaseT", bound=StrEnum)
PhaseT_co = TypeVar("PhaseT_co", bound=StrEnum, covariant=True)


class Status(Protocol[PhaseT_co]):
    """What a row reads of a family's status."""

    @property
    def phase(self) -> PhaseT_co | None: ...

    def condition(self, condition_type: str) -> Condition | None: ...


@dataclass(frozen=True)
class Row(Generic[WorldT, PhaseT]):
    id: str
    world: Callable[[], WorldT]
    reqs: tuple[str, ...]
    phase: PhaseT | None = ANY
    ready: str | None = ANY
    progressing: tuple[bool, str] | None = ANY
    job: str | None = ANY
    entries: Sequence[JournalEntryType] = ANY
    events: Sequence[str] = ANY
    lease: Sequence[LeaseVerb] = ANY
    writes: bool = ANY
    then: Callable[[WorldT, Decision], None] | None = field(default=None)


def params(rows: Sequence[Row[Any, Any]]) -> list[Any]:
    return [pytest.param(row, id=row.id, marks=pytest.mark.req(*row.reqs)) for row in rows]


@dataclass(frozen=True)
class Table(Generic[WorldT, PhaseT]):
    """What one family's table tests run against."""

    reconcile: Callable[[WorldT], Decision]
    status_of: Callable[[WorldT, Decision], Status[PhaseT]]
    """The resource's status after the decision (the old one when it writes none)."""
    entry_types: Callable[[WorldT, Decision], list[JournalEntryType]]
    """The journal entries the decision wrote."""
    forbidden: Sequence[str]
    """What never appears in an Event, a status or a searched object: SQL, URLs."""
    searched_kinds: tuple[str, ...]
    """The kinds of created objects searched for the forbidden text (the plans)."""

    def check(self, row: Row[WorldT, PhaseT]) -> tuple[WorldT, Decision]:
        world = row.world()
        decision = self.reconcile(world)
        after = self.status_of(world, decision)
        if row.phase is not ANY:
            assert after.phase == row.phase, f"phase {after.phase}, expected {row.phase}"
        if row.ready is not ANY:
            ready = after.condition(ConditionType.READY)
            assert ready is not None, "no Ready condition"
            assert ready.reason == row.ready, ready
        if row.progressing is not ANY:
            progressing = after.condition(ConditionType.PROGRESSING)
            assert progressing is not None, "no Progressing condition"
            assert (progressing.status.value == "True", progressing.reason) == row.progressing
        if row.job is not ANY:
            assert job_of(decision) == row.job
        if row.entries is not ANY:
            assert self.entry_types(world, decision) == list(row.entries)
        if row.events is not ANY:
            assert event_reasons(decision) == list(row.events)
        if row.lease is not ANY:
            assert [a.verb for a in decision.lease] == list(row.lease)
        if row.writes is not ANY:
            assert (decision.status is not None) == row.writes
        self.never_shows_sql_or_urls(decision)
        if row.then is not None:
            row.then(world, decision)
        return world, decision

    def never_shows_sql_or_urls(self, decision: Decision) -> None:
        """No SQL, no row, no URL in Events, status or a searched object (PRIV-01, PRIV-02)."""
        texts = [e.message for e in decision.events]
        if decision.status is not None:
            texts.append(json.dumps(decision.status))
        for obj in decision.create:
            if isinstance(obj, Mapping) and obj.get("kind") in self.searched_kinds:
                texts.append(json.dumps(obj))
        for text in texts:
            for needle in self.forbidden:
                assert needle not in text, f"{needle!r} appears in {text[:200]!r}"
