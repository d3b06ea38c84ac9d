"""`kubectl ptah migration NAME`, `schema NAME` and `plan KIND/NAME`: read, then print.

The plan shown is the object status.plan names, and only while it is that object (its UID); a
plan replaced meanwhile is shown by its reference alone. `plan --applied` (a schema's) shows
the plan status.applied records, and its SQL only while the object still gives that digest.
"""

from __future__ import annotations

from ptah_operator.cli.kubectl.errors import EXIT_OK
from ptah_operator.cli.kubectl.lookup import Reads
from ptah_operator.cli.kubectl.manifest import empty
from ptah_operator.cli.kubectl.schema_view import render_applied
from ptah_operator.cli.kubectl.targets import SCHEMA, AnyTarget


async def show_status(session: Reads, target: AnyTarget, name: str) -> int:
    """Everything the status says, readable, with the plan it names."""
    resource = await session.resource(target, name)
    status = target.status(resource)
    plan = None
    if status.plan is not None:
        plan = await session.plan(target, status.plan.name, status.plan.uid)
    session.say(target.render_status(resource, plan))
    return EXIT_OK


async def show_plan(session: Reads, target: AnyTarget, name: str, sql: bool) -> int:
    """The plan the resource published: identity, what it binds, its contents (a schema plan's
    SQL too, unless `sql` is False), and what the policy decides."""
    resource = await session.resource(target, name)
    status = target.status(resource)
    if status.plan is None:
        phase = status.phase or "none yet"
        tail = target.no_plan_tail(status)
        session.say(f"{target.noun} {name} has no plan published (phase {phase}){tail}")
        return EXIT_OK
    plan = await session.plan(target, status.plan.name, status.plan.uid)
    text = None
    if plan is not None and sql and target.plan_has_sql:
        text = await session.plan_text(plan)
    session.say(target.render_plan(resource, status.plan, plan, text))
    return EXIT_OK


async def show_applied(session: Reads, name: str, sql: bool) -> int:
    """The plan status.applied records (PLUGIN-03)."""
    schema = await session.resource(SCHEMA, name)
    status = schema.status or empty("PtahSchemaStatus")
    applied = status.applied
    if applied is None:
        session.say(f"schema {name} has no confirmed Apply yet (status.applied is empty)")
        return EXIT_OK
    plan = await session.plan(SCHEMA, applied.plan.name, applied.plan.uid)
    if plan is not None and plan.spec.digest != applied.digest:
        plan = None
    text = await session.plan_text(plan) if plan is not None and sql else None
    session.say(render_applied(schema, applied, plan, text))
    return EXIT_OK
