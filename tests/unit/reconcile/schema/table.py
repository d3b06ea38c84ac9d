"""One row per seed transition of the schema lifecycle: a world, and what the pass must decide.

A row names the transition in the seed's words, the world it starts from, and what it expects:
the next phase, the Ready and Progressing reasons, the Job created (or none), the journal
entries written, the Events, the Lease actions. Fields left at ANY are not checked; `then`
holds any further assertion. Every decision is also held to what must never appear (PRIV): no
SQL, no database URL, in any Event, status or plan object; SQL lives only in the chunks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from ptah_operator.api.constants import ConditionType, JournalEntryType, SchemaPhase
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from tests.unit.reconcile.schema.worlds import (
    FILES,
    PLAN_SQL,
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
    world: Callable[[], SchemaWorld]
    reqs: tuple[str, ...]
    phase: SchemaPhase | None = ANY
    ready: str | None = ANY
    progressing: tuple[bool, str] | None = ANY
    job: str | None = ANY
    entries: Sequence[JournalEntryType] = ANY
    events: Sequence[str] = ANY
    lease: Sequence[LeaseVerb] = ANY
    writes: bool = ANY
    then: Callable[[SchemaWorld, Decision], None] | None = field(default=None)


def params(rows: Sequence[Row]) -> list[Any]:
    return [pytest.param(row, id=row.id, marks=pytest.mark.req(*row.reqs)) for row in rows]


def check(row: Row) -> tuple[SchemaWorld, Decision]:
    world = row.world()
    decision = reconcile_schema(world)
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
    PLAN_SQL,
    "CREATE TABLE",
    "postgresql://",
    "mysql://",
]


def never_shows_sql_or_urls(decision: Decision) -> None:
    """No SQL, no URL in Events, status, the journal, Jobs or plans (PRIV-01..PRIV-04); the
    only place a plan's SQL goes is its chunks."""
    texts = [e.message for e in decision.events]
    if decision.status is not None:
        texts.append(json.dumps(decision.status))
    for obj in decision.create:
        if isinstance(obj, Mapping) and obj.get("kind") in ("PtahSchemaPlan", "Job"):
            texts.append(json.dumps(obj))
    for text in texts:
        for needle in FORBIDDEN:
            assert needle not in text, f"{needle!r} appears in {text[:200]!r}"
