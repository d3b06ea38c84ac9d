"""One row per seed transition: a world, and what the pass must decide about it.

A row names the transition in the seed's words, the world it starts from, and what it
expects: the next phase, the Ready and Progressing reasons, the Job created (or none), the
journal entries written, the Events, the Lease actions. Fields left at ANY are not checked;
`then` holds any further assertion. Every decision is also held to what must never appear
(PRIV-01, PRIV-02): no SQL of the source files, no database URL, in any Event or status text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from ptah_operator.api.constants import ConditionType, JournalEntryType, MigrationPhase
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile.migration.worlds import (
    FILES,
    entry_types,
    event_reasons,
    job_of,
    status_of,
)


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()


@dataclass(frozen=True)
class Row:
    id: str
    world: Callable[[], MigrationWorld]
    reqs: tuple[str, ...]
    phase: MigrationPhase | None = ANY
    ready: str | None = ANY
    progressing: tuple[bool, str] | None = ANY
    job: str | None = ANY
    entries: Sequence[JournalEntryType] = ANY
    events: Sequence[str] = ANY
    lease: Sequence[LeaseVerb] = ANY
    writes: bool = ANY
    then: Callable[[MigrationWorld, Decision], None] | None = field(default=None)


def params(rows: Sequence[Row]) -> list[Any]:
    return [pytest.param(row, id=row.id, marks=pytest.mark.req(*row.reqs)) for row in rows]


def check(row: Row) -> tuple[MigrationWorld, Decision]:
    world = row.world()
    decision = reconcile_migration(world)
    after = status_of(world, decision)
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
        assert entry_types(world, decision) == list(row.entries)
    if row.events is not ANY:
        assert event_reasons(decision) == list(row.events)
    if row.lease is not ANY:
        assert [a.verb for a in decision.lease] == list(row.lease)
    if row.writes is not ANY:
        assert (decision.status is not None) == row.writes
    never_shows_sql_or_urls(decision)
    if row.then is not None:
        row.then(world, decision)
    return world, decision


FORBIDDEN = [
    *(content.decode().strip() for content in FILES.values()),
    "CREATE TABLE",
    "ALTER TABLE",
    "postgresql://",
    "mysql://",
    "SELECT ",
]


def never_shows_sql_or_urls(decision: Decision) -> None:
    """No SQL, no row, no URL in Events, status or a plan (PRIV-01, PRIV-02)."""
    texts = [e.message for e in decision.events]
    if decision.status is not None:
        texts.append(json.dumps(decision.status))
    for obj in decision.create:
        if isinstance(obj, dict) and obj.get("kind") == "PtahMigrationPlan":
            texts.append(json.dumps(obj))
    for text in texts:
        for needle in FORBIDDEN:
            assert needle not in text, f"{needle!r} appears in {text[:200]!r}"
