"""`kubectl ptah approve KIND/NAME [--wait]`: show the plan the resource waits on, approve
exactly that plan, and with --wait follow the resource until the run of that plan ends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.approvals import (
    PtahMigrationApproval,
    PtahMigrationApprovalSpec,
    PtahSchemaApproval,
    PtahSchemaApprovalSpec,
)
from ptah_operator.api.common import ObjectReference, StatusCommon
from ptah_operator.api.constants import (
    GROUP,
    VERSION,
    ApplyOutcome,
    ApplyPolicy,
    Kind,
    MigrationPhase,
    SchemaPhase,
)
from ptah_operator.api.kinds import to_manifest
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.plans import PtahMigrationPlan, PtahSchemaPlan
from ptah_operator.api.schema import PtahSchema, PtahSchemaStatus
from ptah_operator.cli.kubectl.errors import EXIT_FAILED, EXIT_OK, CommandError
from ptah_operator.cli.kubectl.migration_view import person, render_approval_summary
from ptah_operator.cli.kubectl.schema_view import render_schema_approval_summary
from ptah_operator.cli.kubectl.session import Session, api_message, read_model
from ptah_operator.cli.kubectl.wait import follow
from ptah_operator.cli.kubectl.waits import (
    SUCCESSFUL_OUTCOMES,
    RunProgress,
    apply_progress,
    run_progress,
)


@dataclass(frozen=True)
class PlanToApprove:
    """The plan `approve` showed, exactly as it showed it."""

    migration: PtahMigration
    plan: PtahMigrationPlan


async def prepare_approval(session: Session, name: str) -> PlanToApprove:
    """Read the migration and the plan it waits on, and print what will be approved."""
    migration = await session.migration(name)
    status = migration.status or PtahMigrationStatus()
    phase = status.phase or "none yet"
    policy = migration.spec.policy.apply
    if policy != ApplyPolicy.ON_APPROVAL:
        raise CommandError(
            f"migration {name} does not ask for approvals (spec.policy.apply is {policy}); "
            "nothing was approved"
        )
    if status.plan is None:
        raise CommandError(
            f"migration {name} has no plan to approve (phase {phase}); nothing was approved"
        )
    if status.phase != MigrationPhase.AWAITING_APPROVAL:
        raise CommandError(
            f"migration {name} is not waiting for an approval (phase {phase}); nothing was approved"
        )
    plan = await session.migration_plan(status.plan.name)
    if plan is None or (status.plan.uid is not None and plan.metadata.uid != status.plan.uid):
        raise CommandError(
            f"plan {status.plan.name} was replaced while it was read; nothing was approved"
        )
    session.say(render_approval_summary(migration, plan))
    return PlanToApprove(migration, plan)


def approval_for(target: PlanToApprove, namespace: str) -> PtahMigrationApproval:
    """The approval of exactly that plan, of exactly that migration (APR-02)."""
    m, p = target.migration, target.plan
    assert m.metadata.name is not None
    assert m.metadata.uid is not None
    assert p.metadata.name is not None
    assert p.metadata.uid is not None
    return PtahMigrationApproval(
        metadata=ObjectMeta(generate_name=f"{p.metadata.name}-", namespace=namespace),
        spec=PtahMigrationApprovalSpec(
            migration_ref=ObjectReference(name=m.metadata.name, uid=m.metadata.uid),
            plan_ref=ObjectReference(name=p.metadata.name, uid=p.metadata.uid),
            plan_fingerprint=p.spec.fingerprint,
        ),
    )


_DENIED = "denied the request: "


async def create_approval(session: Session, target: PlanToApprove) -> PtahMigrationApproval:
    """Create the approval; a refusal raises CommandError saying nothing was approved."""
    body = to_manifest(approval_for(target, session.namespace))
    created = await _create_approval_object(session, "ptahmigrationapprovals", body)
    approval: PtahMigrationApproval = read_model(PtahMigrationApproval, created)
    return approval


async def approve(session: Session, name: str, wait: bool, wait_seconds: float) -> int:
    target = await prepare_approval(session, name)
    approval = await create_approval(session, target)
    session.say(
        f"approved: ptahmigrationapproval/{approval.metadata.name} "
        f"by {person(approval.spec.approved_by)}"
    )
    if not wait:
        return EXIT_OK
    plan = target.plan
    assert plan.metadata.name is not None
    return await wait_for_run(session, name, plan.metadata.name, plan.metadata.uid, wait_seconds)


async def wait_for_run(
    session: Session, name: str, plan_name: str, plan_uid: str | None, wait_seconds: float
) -> int:
    """Follow the migration until the run of the plan reaches its verdict."""

    def judge(migration: Any) -> int | None:
        status: PtahMigrationStatus = migration.status or PtahMigrationStatus()
        progress = run_progress(status, plan_name, plan_uid)
        if progress is RunProgress.RETIRED:
            _retired(plan_name, status)
        return _report_run(session, status) if progress is RunProgress.FINISHED else None

    return await follow(
        session, Kind.PTAH_MIGRATION, name, f"the run of plan {plan_name}", wait_seconds, judge
    )


def _retired(plan_name: str, status: StatusCommon) -> NoReturn:
    plan = getattr(status, "plan", None)
    current = plan.name if plan is not None else "none"
    raise CommandError(
        f"plan {plan_name} was retired before it ran (current plan: {current}); "
        "the approval authorizes nothing else"
    )


def _report_run(session: Session, status: PtahMigrationStatus) -> int:
    run = status.last_run
    assert run is not None
    applied = ", ".join(run.applied_versions) or "nothing"
    session.say(f"run {run.operation_id}: {run.outcome}, applied {applied}")
    if run.failure is not None:
        f = run.failure
        codes = [
            f"SQLSTATE {f.sqlstate}" if f.sqlstate else "",
            f"errno {f.mysql_errno}" if f.mysql_errno is not None else "",
        ]
        detail = ", ".join(c for c in codes if c)
        session.say(f"stopped at version {f.version}" + (f" ({detail})" if detail else ""))
    session.say(f"migration is {status.phase or 'in no phase yet'}")
    return EXIT_OK if run.outcome in SUCCESSFUL_OUTCOMES else EXIT_FAILED


@dataclass(frozen=True)
class SchemaPlanToApprove:
    """The schema plan `approve` showed, exactly as it showed it."""

    schema: PtahSchema
    plan: PtahSchemaPlan


async def prepare_schema_approval(session: Session, name: str) -> SchemaPlanToApprove:
    """Read the schema and the plan it waits on, and print what will be approved."""
    schema = await session.schema(name)
    status = schema.status or PtahSchemaStatus()
    phase = status.phase or "none yet"
    if status.plan is None:
        raise CommandError(
            f"schema {name} has no plan to approve (phase {phase}); nothing was approved"
        )
    if status.phase != SchemaPhase.AWAITING_APPROVAL or status.plan.uid is None:
        raise CommandError(
            f"schema {name} is not waiting for an approval (phase {phase}); nothing was approved"
        )
    plan = await session.schema_plan(status.plan.name, status.plan.uid)
    if plan is None:
        raise CommandError(
            f"plan {status.plan.name} was replaced while it was read; nothing was approved"
        )
    session.say(render_schema_approval_summary(schema, plan))
    return SchemaPlanToApprove(schema, plan)


def schema_approval_for(target: SchemaPlanToApprove, namespace: str) -> PtahSchemaApproval:
    """The approval of exactly that plan, of exactly that schema (APR-02)."""
    s, p = target.schema, target.plan
    assert s.metadata.name is not None
    assert s.metadata.uid is not None
    assert p.metadata.name is not None
    assert p.metadata.uid is not None
    return PtahSchemaApproval(
        metadata=ObjectMeta(generate_name=f"{p.metadata.name}-", namespace=namespace),
        spec=PtahSchemaApprovalSpec(
            schema_ref=ObjectReference(name=s.metadata.name, uid=s.metadata.uid),
            plan_ref=ObjectReference(name=p.metadata.name, uid=p.metadata.uid),
            plan_fingerprint=p.spec.fingerprint,
        ),
    )


async def _create_approval_object(session: Session, plural: str, body: dict[str, Any]) -> Any:
    try:
        return await session.custom.create_namespaced_custom_object(
            GROUP, VERSION, session.namespace, plural, body
        )
    except ApiException as exc:
        message = api_message(exc)
        if _DENIED in message:
            reason = message.split(_DENIED, 1)[1]
            raise CommandError(f"not approved: {reason}") from None
        raise CommandError(f"not approved: {message}") from None


async def create_schema_approval(
    session: Session, target: SchemaPlanToApprove
) -> PtahSchemaApproval:
    """Create the approval; a refusal raises CommandError saying nothing was approved."""
    body = to_manifest(schema_approval_for(target, session.namespace))
    created = await _create_approval_object(session, "ptahschemaapprovals", body)
    approval: PtahSchemaApproval = read_model(PtahSchemaApproval, created)
    return approval


async def approve_schema(session: Session, name: str, wait: bool, wait_seconds: float) -> int:
    target = await prepare_schema_approval(session, name)
    approval = await create_schema_approval(session, target)
    session.say(
        f"approved: ptahschemaapproval/{approval.metadata.name} "
        f"by {person(approval.spec.approved_by)}"
    )
    if not wait:
        return EXIT_OK
    plan = target.plan
    assert plan.metadata.name is not None
    return await wait_for_apply(session, name, plan.metadata.name, plan.metadata.uid, wait_seconds)


async def wait_for_apply(
    session: Session, name: str, plan_name: str, plan_uid: str | None, wait_seconds: float
) -> int:
    """Follow the schema until the Apply of the plan was proved (or the plan retired)."""

    def judge(schema: Any) -> int | None:
        status: PtahSchemaStatus = schema.status or PtahSchemaStatus()
        progress = apply_progress(status, plan_name, plan_uid)
        if progress is RunProgress.RETIRED:
            _retired(plan_name, status)
        return _report_apply(session, status) if progress is RunProgress.FINISHED else None

    return await follow(
        session, Kind.PTAH_SCHEMA, name, f"the Apply of plan {plan_name}", wait_seconds, judge
    )


def _report_apply(session: Session, status: PtahSchemaStatus) -> int:
    record = status.last_apply
    assert record is not None
    reason = f" ({record.reason})" if record.reason else ""
    session.say(f"apply {record.operation_id}: {record.outcome or 'Unknown'}{reason}")
    if record.verification is not None:
        session.say(f"verified: {record.verification.outcome}")
    session.say(f"schema is {status.phase or 'in no phase yet'}")
    return EXIT_OK if record.outcome == ApplyOutcome.SUCCEEDED else EXIT_FAILED
