"""`kubectl ptah`: read a PtahMigration or PtahSchema, approve its plan, wait, ask for a read.

Verbs:
- `kubectl ptah migration NAME`: the status, readable: phase, conditions, history, plan, last
  run, unresolved run, journal (newest first). No SQL and no rows (PLUGIN-04).
- `kubectl ptah approve migration/NAME [--wait]`: shows the plan `status.plan` names and creates
  a PtahMigrationApproval of exactly that plan (name, UID, fingerprint) and the migration's UID.
  If the plan was replaced meanwhile, admission refuses it and nothing is approved (PLUGIN-05).
  `--wait` waits for the run's verdict (PLUGIN-06).
- `kubectl ptah wait migration/NAME [--for=InSync] [--timeout=30m]`: waits for a phase.
- `kubectl ptah schema NAME`: a PtahSchema's status, readable: phase, conditions, drift
  summary, plan with severity and findings, last Apply, what was applied, journal. No SQL.
- `kubectl ptah plan schema/NAME [--no-sql]`: the published plan's identity, bindings,
  severity, findings and decision, then its generated SQL read from its chunks (PLUGIN-02:
  the person asked for the plan, which holds the SQL; each chunk and the whole are checked
  against the plan's digests first). `--applied` prints the plan status.applied records
  (PLUGIN-03). `--no-sql` leaves the SQL out.
- `kubectl ptah approve schema/NAME [--wait]`: as for a migration, a PtahSchemaApproval of the
  plan status.plan names (name, UID, fingerprint); it prints the plan's summary, not its SQL.
  `--wait` waits until the Apply of that plan was proved (lastApply verified).
- `kubectl ptah wait schema/NAME [--for=InSync]`: waits for a schema's phase.
- `kubectl ptah refresh migration/NAME [--wait]` (or schema/NAME): writes
  `operator.ptah.run/read-requested-at` later than any value the resource holds (RRQ-20);
  `--wait` waits for the read the request starts (RRQ-21).
- `kubectl ptah set-source migration/NAME oci://REGISTRY/REPO:TAG [--verification-policy
  CONFIGMAP/KEY]` (or schema/NAME): points the resource at another OCI artifact (PLUGIN-01).
  It changes spec.artifact.ociRef (and the verification policy when given; a resource that
  reads a ConfigMap or Git needs one), so the generation moves and the operator resolves,
  verifies and reads the new artifact at once; a plan of the old one retires.

`--kubeconfig`, `--context` and `-n/--namespace` work as in kubectl (KUBECONFIG is read; the
context's namespace is the default). Exit codes: 0 done, 1 refused, failed or timed out, 2 bad
usage. Errors are one readable line, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn, TextIO, TypeVar

import aiohttp
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException
from pydantic import ValidationError

from ptah_operator.api.approvals import (
    PtahMigrationApproval,
    PtahMigrationApprovalSpec,
    PtahSchemaApproval,
    PtahSchemaApprovalSpec,
)
from ptah_operator.api.common import ObjectReference, StatusCommon
from ptah_operator.api.constants import (
    ANNOTATION_READ_REQUESTED_AT,
    GROUP,
    VERSION,
    ApplyOutcome,
    ApplyPolicy,
    Kind,
    MigrationPhase,
    SchemaPhase,
)
from ptah_operator.api.fields import parse_duration
from ptah_operator.api.kinds import from_manifest, kind_info, to_manifest
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
from ptah_operator.api.objectmeta import ObjectMeta, Resource
from ptah_operator.api.plans import PtahMigrationPlan, PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.api.schema import PtahSchema, PtahSchemaStatus
from ptah_operator.cli.migration_view import (
    person,
    render_approval_summary,
    render_migration,
    render_plan,
)
from ptah_operator.cli.observe import observe
from ptah_operator.cli.schema_view import (
    PlanText,
    plan_text,
    render_applied,
    render_schema,
    render_schema_approval_summary,
    render_schema_plan,
)
from ptah_operator.cli.waits import (
    SUCCESSFUL_OUTCOMES,
    ReadTracker,
    RunProgress,
    apply_progress,
    next_read_request,
    phase_reached,
    run_progress,
)
from ptah_operator.runtime.informer import ApiStatusError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
DEFAULT_TIMEOUT = "30m"
_CONFLICT_RETRIES = 5

R = TypeVar("R", bound=Resource)

_KIND_NAMES = {
    Kind.PTAH_MIGRATION: ("migration", "migrations", "ptahmigration", "ptahmigrations", "pmig"),
    Kind.PTAH_SCHEMA: ("schema", "schemas", "ptahschema", "ptahschemas", "psch"),
}
KIND_ALIASES = {alias: kind for kind, aliases in _KIND_NAMES.items() for alias in aliases}


class CommandError(Exception):
    """A failure the person reads: printed as `error: ...`, exit 1."""


class UsageError(Exception):
    """Bad flags or arguments: printed with the usage, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}\n{self.format_usage().rstrip()}")


# --- arguments ---------------------------------------------------------------------------------


def _common(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument("--kubeconfig", default=default, help="kubeconfig file")
    parser.add_argument("--context", default=default, help="kubeconfig context")
    parser.add_argument("-n", "--namespace", default=default, help="namespace")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kubectl ptah", description="Read, approve and refresh Ptah resources.")
    _common(parser, None)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    verbs.required = True

    show = verbs.add_parser("migration", help="show a PtahMigration's status")
    show.add_argument("name", metavar="NAME", help="NAME or migration/NAME")
    _common(show, argparse.SUPPRESS)

    show_schema = verbs.add_parser("schema", help="show a PtahSchema's status")
    show_schema.add_argument("name", metavar="NAME", help="NAME or schema/NAME")
    _common(show_schema, argparse.SUPPRESS)

    plan = verbs.add_parser(
        "plan", help="show the plan a migration (no SQL) or schema (with its SQL) published"
    )
    plan.add_argument("target", metavar="KIND/NAME")
    plan.add_argument(
        "--applied", action="store_true", help="a schema's last confirmed plan (status.applied)"
    )
    plan.add_argument("--no-sql", action="store_true", help="leave a schema plan's SQL out")
    _common(plan, argparse.SUPPRESS)

    approve = verbs.add_parser("approve", help="approve the plan a migration or schema waits on")
    approve.add_argument("target", metavar="KIND/NAME")
    approve.add_argument("--wait", action="store_true", help="wait for the run's verdict")
    approve.add_argument("--timeout", default=DEFAULT_TIMEOUT, help="how long --wait waits")
    _common(approve, argparse.SUPPRESS)

    wait = verbs.add_parser("wait", help="wait for a migration or schema to reach a phase")
    wait.add_argument("target", metavar="KIND/NAME")
    wait.add_argument("--for", dest="phase", default=MigrationPhase.IN_SYNC.value, metavar="PHASE")
    wait.add_argument("--timeout", default=DEFAULT_TIMEOUT)
    _common(wait, argparse.SUPPRESS)

    set_source = verbs.add_parser(
        "set-source", help="point a migration or schema at another OCI artifact"
    )
    set_source.add_argument("target", metavar="KIND/NAME")
    set_source.add_argument("reference", metavar="oci://REGISTRY/REPOSITORY[:TAG|@DIGEST]")
    set_source.add_argument(
        "--verification-policy",
        metavar="CONFIGMAP/KEY",
        help="the ConfigMap key holding the verification policy (needed when the resource "
        "does not read an OCI artifact yet)",
    )
    _common(set_source, argparse.SUPPRESS)

    refresh = verbs.add_parser("refresh", help="ask for a read of the database now")
    refresh.add_argument("target", metavar="KIND/NAME")
    refresh.add_argument("--wait", action="store_true", help="wait for the read it starts")
    refresh.add_argument("--timeout", default=DEFAULT_TIMEOUT, help="how long --wait waits")
    _common(refresh, argparse.SUPPRESS)
    return parser


def parse_target(text: str, default_kind: Kind | None = None) -> tuple[Kind, str]:
    """`kind/name` (kind by any of its names), or a bare name of `default_kind`."""
    kind_text, sep, name = text.partition("/")
    if not sep:
        if default_kind is None:
            raise UsageError(f"expected KIND/NAME, such as migration/orders, not {text!r}")
        return default_kind, text
    kind = KIND_ALIASES.get(kind_text.lower())
    if kind is None:
        raise UsageError(f"unknown kind {kind_text!r}: use migration/NAME or schema/NAME")
    if not name:
        raise UsageError(f"{text!r} names no object")
    return kind, name


def _seconds(text: str) -> float:
    try:
        return parse_duration(text).total_seconds()
    except ValueError:
        raise UsageError(
            f"--timeout takes a duration such as 90s, 10m or 1h, not {text!r}"
        ) from None


def _phase(text: str, kind: Kind = Kind.PTAH_MIGRATION) -> MigrationPhase | SchemaPhase:
    phases: type[MigrationPhase] | type[SchemaPhase] = (
        SchemaPhase if kind == Kind.PTAH_SCHEMA else MigrationPhase
    )
    try:
        return phases(text)
    except ValueError:
        known = ", ".join(p.value for p in phases)
        raise UsageError(f"--for takes a phase ({known}), not {text!r}") from None


# --- the connection ----------------------------------------------------------------------------


def kubeconfig_path(flag: str | None) -> str:
    """--kubeconfig, else $KUBECONFIG (a list, merged), else ~/.kube/config."""
    return flag or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")


async def load_configuration(
    kubeconfig: str | None, context: str | None
) -> tuple[client.Configuration, str]:
    """The client configuration and the context's namespace ("default" when it names none)."""
    path = kubeconfig_path(kubeconfig)
    configuration = client.Configuration()
    try:
        loader = await config.load_kube_config(
            config_file=path,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    except Exception as exc:
        detail = str(exc) or type(exc).__name__
        raise CommandError(f"cannot use the kubeconfig {path}: {detail}") from None
    current = loader.current_context or {}
    namespace = (current.get("context") or {}).get("namespace") or "default"
    return configuration, str(namespace)


def api_message(exc: ApiException) -> str:
    """The API server's own message for a failed request."""
    try:
        body = json.loads(exc.body or "")
    except (TypeError, ValueError):
        body = None
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return f"HTTP {exc.status} {exc.reason or ''}".strip()


@dataclass
class Session:
    """One connection to the API server, in one namespace, printing to `out`."""

    api: client.ApiClient
    namespace: str
    out: TextIO

    @property
    def custom(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self.api)

    def say(self, text: str) -> None:
        self.out.write(text if text.endswith("\n") else text + "\n")
        self.out.flush()

    async def get(
        self, kind: Kind, name: str, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        info = kind_info(kind)
        try:
            obj: dict[str, Any] = await self.custom.get_namespaced_custom_object(
                GROUP, VERSION, self.namespace, info.plural, name
            )
        except ApiException as exc:
            if exc.status == 404:
                if missing_ok:
                    return None
                raise CommandError(
                    f"{info.singular} {name} not found in namespace {self.namespace}"
                ) from None
            raise CommandError(api_message(exc)) from None
        return obj

    async def migration(self, name: str) -> PtahMigration:
        obj = await self.get(Kind.PTAH_MIGRATION, name)
        assert obj is not None
        return _read(PtahMigration, obj)

    async def migration_plan(self, name: str) -> PtahMigrationPlan | None:
        obj = await self.get(Kind.PTAH_MIGRATION_PLAN, name, missing_ok=True)
        return None if obj is None else _read(PtahMigrationPlan, obj)

    async def schema(self, name: str) -> PtahSchema:
        obj = await self.get(Kind.PTAH_SCHEMA, name)
        assert obj is not None
        return _read(PtahSchema, obj)

    async def schema_plan(self, name: str, uid: str | None) -> PtahSchemaPlan | None:
        """The plan of that name, when it is the object of that UID (if one is given)."""
        obj = await self.get(Kind.PTAH_SCHEMA_PLAN, name, missing_ok=True)
        plan = None if obj is None else _read(PtahSchemaPlan, obj)
        if plan is not None and uid is not None and plan.metadata.uid != uid:
            return None
        return plan

    async def plan_text(self, plan: PtahSchemaPlan) -> PlanText:
        """The plan's SQL from its chunks, checked against its digests."""
        chunks: list[PtahSchemaPlanChunk] = []
        for ref in plan.spec.chunks:
            try:
                obj = await self.get(Kind.PTAH_SCHEMA_PLAN_CHUNK, ref.name, missing_ok=True)
            except CommandError as exc:
                return PlanText(None, f"chunk {ref.name} could not be read: {exc}")
            if obj is None:
                return PlanText(None, f"chunk {ref.name} does not exist")
            chunks.append(_read(PtahSchemaPlanChunk, obj))
        return plan_text(plan, chunks)


def _read(model: type[R], obj: dict[str, Any]) -> R:
    try:
        return from_manifest(model, obj)
    except ValidationError as exc:
        places = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors()[:3])
        name = (obj.get("metadata") or {}).get("name")
        raise CommandError(
            f"{obj.get('kind')} {name} has fields this plugin does not understand ({places}); "
            "is the plugin older than the operator?"
        ) from None


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


# --- approve -----------------------------------------------------------------------------------


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
    approval: PtahMigrationApproval = _read(PtahMigrationApproval, created)
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


def _phase_line(status: StatusCommon, phase: str | None) -> str:
    progressing = status.condition("Progressing")
    reason = f" ({progressing.reason})" if progressing is not None else ""
    return f"phase {phase or 'none yet'}{reason}"


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

    return await _follow(
        session, Kind.PTAH_MIGRATION, name, f"the run of plan {plan_name}", wait_seconds, judge
    )


async def _follow(
    session: Session,
    kind: Kind,
    name: str,
    what: str,
    wait_seconds: float,
    judge: Callable[[Any], int | None],
) -> int:
    """Say each new phase of the resource until `judge` returns an exit code."""
    shown = ""
    try:
        async with asyncio.timeout(wait_seconds):
            async for resource in _states(session, kind, name):
                status = resource.status or StatusCommon()
                line = _phase_line(status, getattr(status, "phase", None))
                if line != shown:
                    session.say(line)
                    shown = line
                code = judge(resource)
                if code is not None:
                    return code
    except TimeoutError:
        raise CommandError(f"timed out waiting for {what}") from None
    raise CommandError(f"stopped watching {_noun(kind)} {name}")


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


# --- wait --------------------------------------------------------------------------------------


async def _states(session: Session, kind: Kind, name: str) -> Any:
    info = kind_info(kind)
    model: type[PtahMigration] | type[PtahSchema] = (
        PtahSchema if kind == Kind.PTAH_SCHEMA else PtahMigration
    )
    async for obj in observe(session.api, info.plural, session.namespace, name):
        if obj is None:
            raise CommandError(f"{_noun(kind)} {name} was deleted")
        yield _read(model, obj)


def _noun(kind: Kind) -> str:
    return "schema" if kind == Kind.PTAH_SCHEMA else "migration"


async def wait_for_phase(
    session: Session,
    name: str,
    phase: str,
    wait_seconds: float,
    kind: Kind = Kind.PTAH_MIGRATION,
) -> int:
    shown = ""
    last: PtahMigration | PtahSchema | None = None
    noun = _noun(kind)
    try:
        async with asyncio.timeout(wait_seconds):
            async for resource in _states(session, kind, name):
                last = resource
                status: StatusCommon = resource.status or StatusCommon()
                current = resource.status.phase if resource.status is not None else None
                if phase_reached(resource, phase):
                    session.say(f"{noun} {name} is {phase}")
                    return EXIT_OK
                line = _phase_line(status, current)
                if line != shown:
                    session.say(line)
                    shown = line
    except TimeoutError:
        where = ""
        if last is not None:
            status = last.status or StatusCommon()
            current = last.status.phase if last.status is not None else None
            where = f"; it is in {_phase_line(status, current)}"
        raise CommandError(f"timed out waiting for {noun} {name} to be {phase}{where}") from None
    raise CommandError(f"stopped watching {noun} {name}")


# --- schema ------------------------------------------------------------------------------------


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
    approval: PtahSchemaApproval = _read(PtahSchemaApproval, created)
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

    return await _follow(
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


# --- refresh -----------------------------------------------------------------------------------


def _status_of(kind: Kind, obj: dict[str, Any]) -> tuple[StatusCommon, str | None]:
    """The status and, for a migration, the operation of its latest history reading."""
    if kind == Kind.PTAH_MIGRATION:
        migration: PtahMigration = _read(PtahMigration, obj)
        status = migration.status or PtahMigrationStatus()
        reading = status.history.operation_id if status.history else None
        return status, reading
    schema: PtahSchema = _read(PtahSchema, obj)
    return schema.status or StatusCommon(), None


async def request_read(session: Session, kind: Kind, name: str) -> ReadTracker:
    """Write the annotation with a value later than any the resource holds (RRQ-20)."""
    info = kind_info(kind)
    for _ in range(_CONFLICT_RETRIES):
        obj = await session.get(kind, name)
        assert obj is not None
        meta = obj.get("metadata") or {}
        status, reading = _status_of(kind, obj)
        held = (meta.get("annotations") or {}).get(ANNOTATION_READ_REQUESTED_AT)
        value = next_read_request(datetime.now(UTC), [held, status.last_read_request])
        before = {reading} if reading else set()
        if status.active_operation is not None:
            before.add(status.active_operation.operation_id)
        patch = {
            "metadata": {
                "resourceVersion": meta.get("resourceVersion"),
                "annotations": {ANNOTATION_READ_REQUESTED_AT: value},
            }
        }
        try:
            custom: Any = session.custom  # its stubs do not list _content_type
            await custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                session.namespace,
                info.plural,
                name,
                patch,
                _content_type="application/merge-patch+json",
            )
        except ApiException as exc:
            if exc.status == 409:
                continue
            raise CommandError(f"read not requested: {api_message(exc)}") from None
        session.say(f"read requested: {ANNOTATION_READ_REQUESTED_AT}={value}")
        return ReadTracker(value=value, before=frozenset(before))
    raise CommandError(f"read not requested: {info.singular} {name} kept changing; try again")


async def wait_for_read(
    session: Session, kind: Kind, name: str, tracker: ReadTracker, wait_seconds: float
) -> int:
    """Wait until the request is answered and the read it started has finished (RRQ-21)."""
    info = kind_info(kind)
    announced = False
    last_status: StatusCommon | None = None
    try:
        async with asyncio.timeout(wait_seconds):
            async for obj in observe(session.api, info.plural, session.namespace, name):
                if obj is None:
                    raise CommandError(f"{info.singular} {name} was deleted")
                status, reading = _status_of(kind, obj)
                last_status = status
                if tracker.answered(status) and not announced:
                    session.say("request answered; waiting for the read it starts")
                    announced = True
                if tracker.finished(status, reading):
                    phase = (obj.get("status") or {}).get("phase") or "none yet"
                    operation = tracker.read_operation or reading or "-"
                    session.say(f"read finished: operation {operation}; phase {phase}")
                    return EXIT_OK
    except TimeoutError:
        if last_status is None or not tracker.answered(last_status):
            recorded = last_status.last_read_request if last_status else None
            raise CommandError(
                f"timed out: the request is not answered yet "
                f"(status.lastReadRequest is {recorded or 'unset'})"
            ) from None
        raise CommandError("timed out waiting for the read the request started") from None
    raise CommandError(f"stopped watching {info.singular} {name}")


# --- set-source --------------------------------------------------------------------------------


# registry[:port]/repository (lowercase path components), then a tag and/or a digest.
_OCI_REFERENCE = re.compile(
    r"oci://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[a-z0-9]+([._-]+[a-z0-9]+)*)+"
    r"(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(@sha256:[0-9a-f]{64})?"
)
MAX_OCI_REF_LENGTH = 512


def _oci_reference(text: str) -> str:
    if not _OCI_REFERENCE.fullmatch(text) or len(text) > MAX_OCI_REF_LENGTH:
        raise UsageError(
            f"{text!r} is not an OCI reference: oci://REGISTRY/REPOSITORY[:TAG|@sha256:DIGEST]"
        )
    return text


def _policy_key(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    name, _, key = text.partition("/")
    if not name or not key or "/" in key:
        raise UsageError(f"--verification-policy {text!r}: expected CONFIGMAP/KEY")
    return name, key


async def set_source(session: Session, command: Command) -> int:
    """Point the resource at another OCI artifact with one merge patch of its spec, under
    optimistic concurrency (the resourceVersion read)."""
    info = kind_info(command.kind)
    noun = _noun(command.kind)
    for _ in range(_CONFLICT_RETRIES):
        obj = await session.get(command.kind, command.name)
        assert obj is not None
        spec = obj.get("spec") or {}
        artifact = spec.get("artifact") or {}
        policy = artifact.get("verificationPolicyFrom")
        if command.policy is not None:
            policy = {"name": command.policy[0], "key": command.policy[1]}
        if policy is None:
            raise CommandError(
                f"{noun} {command.name} reads no OCI artifact yet: name its "
                "verification policy with --verification-policy CONFIGMAP/KEY"
            )
        wanted = {"ociRef": command.reference, "verificationPolicyFrom": policy}
        if artifact == wanted:
            session.say(f"{noun} {command.name} already reads {command.reference}")
            return EXIT_OK
        patch = {
            "metadata": {"resourceVersion": (obj.get("metadata") or {}).get("resourceVersion")},
            "spec": {"artifact": wanted, "configMap": None, "git": None},
        }
        try:
            custom: Any = session.custom  # its stubs do not list _content_type
            await custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                session.namespace,
                info.plural,
                command.name,
                patch,
                _content_type="application/merge-patch+json",
            )
        except ApiException as exc:
            if exc.status == 409:
                continue
            raise CommandError(f"source not changed: {api_message(exc)}") from None
        session.say(
            f"{noun} {command.name} now reads {command.reference}; "
            "it is resolved and verified before anything else runs"
        )
        return EXIT_OK
    raise CommandError(f"source not changed: {noun} {command.name} kept changing")


# --- entry -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One verb with its arguments, checked before anything reaches the server."""

    verb: str
    kind: Kind
    name: str
    wait: bool = False
    wait_seconds: float = 0.0
    phase: str = MigrationPhase.IN_SYNC.value
    reference: str = ""
    policy: tuple[str, str] | None = None
    applied: bool = False
    sql: bool = True


def parse_command(argv: Sequence[str]) -> tuple[Command, argparse.Namespace]:
    """The command and the connection flags; raises UsageError."""
    args = build_parser().parse_args(list(argv))
    if args.verb in ("migration", "schema"):
        default = Kind.PTAH_SCHEMA if args.verb == "schema" else Kind.PTAH_MIGRATION
        kind, name = parse_target(args.name, default)
        if kind != default:
            raise UsageError(f"{args.verb} takes NAME or {args.verb}/NAME")
        command = Command(args.verb, kind, name)
    elif args.verb == "refresh":
        kind, name = parse_target(args.target)
        command = Command("refresh", kind, name, args.wait, _seconds(args.timeout))
    elif args.verb == "set-source":
        kind, name = parse_target(args.target)
        if kind not in (Kind.PTAH_MIGRATION, Kind.PTAH_SCHEMA):
            raise UsageError("set-source takes migration/NAME or schema/NAME")
        command = Command(
            "set-source",
            kind,
            name,
            reference=_oci_reference(args.reference),
            policy=_policy_key(args.verification_policy),
        )
    else:
        kind, name = parse_target(args.target, Kind.PTAH_MIGRATION)
        if args.verb == "plan":
            if args.applied and kind != Kind.PTAH_SCHEMA:
                raise UsageError("--applied takes schema/NAME: status.applied is a schema's")
            command = Command("plan", kind, name, applied=args.applied, sql=not args.no_sql)
        elif args.verb == "approve":
            command = Command("approve", kind, name, args.wait, _seconds(args.timeout))
        else:
            phase = _phase(args.phase, kind).value
            command = Command("wait", kind, name, True, _seconds(args.timeout), phase)
    if not command.name:
        raise UsageError("a name is required")
    return command, args


async def execute(command: Command, session: Session) -> int:
    schema = command.kind == Kind.PTAH_SCHEMA
    if command.verb == "migration":
        return await show_migration(session, command.name)
    if command.verb == "schema":
        return await show_schema(session, command.name)
    if command.verb == "plan" and schema:
        if command.applied:
            return await show_applied(session, command.name, command.sql)
        return await show_schema_plan(session, command.name, command.sql)
    if command.verb == "plan":
        return await show_plan(session, command.name)
    if command.verb == "approve" and schema:
        return await approve_schema(session, command.name, command.wait, command.wait_seconds)
    if command.verb == "approve":
        return await approve(session, command.name, command.wait, command.wait_seconds)
    if command.verb == "wait":
        return await wait_for_phase(
            session, command.name, command.phase, command.wait_seconds, command.kind
        )
    if command.verb == "set-source":
        return await set_source(session, command)
    tracker = await request_read(session, command.kind, command.name)
    if not command.wait:
        return EXIT_OK
    return await wait_for_read(session, command.kind, command.name, tracker, command.wait_seconds)


async def run(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one command; returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        command, args = parse_command(argv)
        configuration, context_namespace = await load_configuration(args.kubeconfig, args.context)
        namespace = args.namespace or context_namespace
        async with client.ApiClient(configuration) as api:
            return await execute(command, Session(api, namespace, out))
    except UsageError as exc:
        err.write(f"error: {exc}\n")
        return EXIT_USAGE
    except CommandError as exc:
        err.write(f"error: {exc}\n")
        return EXIT_FAILED
    except ApiException as exc:
        err.write(f"error: {api_message(exc)}\n")
        return EXIT_FAILED
    except ApiStatusError as exc:
        err.write(f"error: {exc.message or exc}\n")
        return EXIT_FAILED
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        err.write(f"error: cannot reach the API server: {exc or type(exc).__name__}\n")
        return EXIT_FAILED
    except SystemExit as exc:
        # --help prints and exits 0.
        return exc.code if isinstance(exc.code, int) else EXIT_OK


def main() -> None:
    # The client library logs warnings (a kubeconfig not found) that the error line says better.
    logging.getLogger("kubernetes_asyncio").setLevel(logging.ERROR)
    try:
        code = asyncio.run(run(sys.argv[1:]))
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:
        # Whatever slipped past the handlers above is still said in one line.
        sys.stderr.write(f"error: {type(exc).__name__}: {exc}\n")
        code = EXIT_FAILED
    sys.exit(code)


if __name__ == "__main__":
    main()
