"""`kubectl ptah migration NAME`, `schema NAME` and `plan KIND/NAME`: read, then print."""

from __future__ import annotations

from ptah_operator.api.migration import PtahMigrationStatus
from ptah_operator.api.schema import PtahSchemaStatus
from ptah_operator.cli.kubectl.errors import EXIT_OK
from ptah_operator.cli.kubectl.migration_view import render_migration, render_plan
from ptah_operator.cli.kubectl.schema_view import render_applied, render_schema, render_schema_plan
from ptah_operator.cli.kubectl.session import Session

# --- migration ---------------------------------------------------------------------------------


async def show_migration(session: Session, name: str) -> int:
    migration = await session.migration(name)
    plan = None
    status = migration.status
    if status is not None and status.plan is not None:
        plan = await session.migration_plan(status.plan.name)
        if plan is not None and status.plan.uid and plan.metadata.uid != status.plan.uid:
            plan = None
    session.say(render_migration(migration, plan))
    return EXIT_OK


async def show_plan(session: Session, name: str) -> int:
    """The plan the migration published: identity, what it binds, and its versions."""
    migration = await session.migration(name)
    status = migration.status or PtahMigrationStatus()
    if status.plan is None:
        phase = status.phase or "none yet"
        ran = status.last_run.plan.name if status.last_run is not None else None
        tail = f"; the last run carried plan {ran}" if ran else ""
        session.say(f"migration {name} has no plan published (phase {phase}){tail}")
        return EXIT_OK
    plan = await session.migration_plan(status.plan.name)
    if plan is not None and status.plan.uid and plan.metadata.uid != status.plan.uid:
        plan = None
    session.say(render_plan(migration, status.plan, plan))
    return EXIT_OK


async def show_schema(session: Session, name: str) -> int:
    schema = await session.schema(name)
    plan = None
    status = schema.status
    if status is not None and status.plan is not None:
        plan = await session.schema_plan(status.plan.name, status.plan.uid)
    session.say(render_schema(schema, plan))
    return EXIT_OK


async def show_schema_plan(session: Session, name: str, sql: bool) -> int:
    """The plan the schema published: identity, bindings, findings, decision, SQL."""
    schema = await session.schema(name)
    status = schema.status or PtahSchemaStatus()
    if status.plan is None:
        phase = status.phase or "none yet"
        applied = status.applied.plan.name if status.applied is not None else None
        tail = f"; the last applied plan is {applied} (--applied)" if applied else ""
        session.say(f"schema {name} has no plan published (phase {phase}){tail}")
        return EXIT_OK
    plan = await session.schema_plan(status.plan.name, status.plan.uid)
    text = await session.plan_text(plan) if plan is not None and sql else None
    session.say(render_schema_plan(schema, status.plan, plan, text))
    return EXIT_OK


async def show_applied(session: Session, name: str, sql: bool) -> int:
    """The plan status.applied records (PLUGIN-03)."""
    schema = await session.schema(name)
    status = schema.status or PtahSchemaStatus()
    applied = status.applied
    if applied is None:
        session.say(f"schema {name} has no confirmed Apply yet (status.applied is empty)")
        return EXIT_OK
    plan = await session.schema_plan(applied.plan.name, applied.plan.uid)
    if plan is not None and plan.spec.digest != applied.digest:
        plan = None
    text = await session.plan_text(plan) if plan is not None and sql else None
    session.say(render_applied(schema, applied, plan, text))
    return EXIT_OK
