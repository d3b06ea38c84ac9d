"""`kubectl ptah approve` of a migration plan that apply: Always holds from a replay."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ptah_operator.api.common import ObjectReference
from ptah_operator.api.constants import ApplyPolicy
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.cli.kubectl.approve import prepare
from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.targets import MIGRATION
from tests.support.migration_objects import (
    awaiting_approval,
    migration,
    plan,
    plan_spec,
)


class _Session:
    def __init__(self, resource: PtahMigration, found: PtahMigrationPlan) -> None:
        self._resource = resource
        self._plan = found
        self.said: list[str] = []

    async def resource(self, target: Any, name: str) -> PtahMigration:
        return self._resource

    async def plan(self, target: Any, name: str, uid: str | None) -> PtahMigrationPlan:
        return self._plan

    def say(self, text: str) -> None:
        self.said.append(text)


def _waiting(policy: ApplyPolicy) -> tuple[PtahMigration, PtahMigrationPlan]:
    p = plan(plan_spec(ObjectReference(name="orders", uid="m-uid-1")))
    m = migration(status=awaiting_approval(p))
    spec = m.spec.model_copy(update={"policy": m.spec.policy.model_copy(update={"apply": policy})})
    return m.model_copy(update={"spec": spec}), p


@pytest.mark.req("MIG-14", "PLUGIN-05")
def test_approve_takes_a_migration_plan_that_always_holds_from_a_replay() -> None:
    m, p = _waiting(ApplyPolicy.ALWAYS)
    session = _Session(m, p)
    prepared = asyncio.run(prepare(session, MIGRATION, "orders"))  # type: ignore[arg-type]
    assert prepared.plan is p


@pytest.mark.req("APR-01", "PLUGIN-05")
def test_approve_refuses_a_migration_under_never() -> None:
    m, p = _waiting(ApplyPolicy.NEVER)
    with pytest.raises(CommandError, match="does not ask for approvals"):
        asyncio.run(prepare(_Session(m, p), MIGRATION, "orders"))  # type: ignore[arg-type]
