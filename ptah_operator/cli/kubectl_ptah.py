"""`kubectl ptah`: read a PtahMigration, approve its plan, wait for it, ask for a read.

Verbs:
- `kubectl ptah migration NAME`: the status, readable: phase, conditions, history, plan, last
  run, unresolved run, journal (newest first). No SQL and no rows (PLUGIN-04).
- `kubectl ptah approve migration/NAME [--wait]`: shows the plan `status.plan` names and creates
  a PtahMigrationApproval of exactly that plan (name, UID, fingerprint) and the migration's UID.
  If the plan was replaced meanwhile, admission refuses it and nothing is approved (PLUGIN-05).
  `--wait` waits for the run's verdict (PLUGIN-06).
- `kubectl ptah wait migration/NAME [--for=InSync] [--timeout=30m]`: waits for a phase.
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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn, TextIO, TypeVar

import aiohttp
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException
from pydantic import ValidationError

from ptah_operator.api.approvals import PtahMigrationApproval, PtahMigrationApprovalSpec
from ptah_operator.api.common import ObjectReference, StatusCommon
from ptah_operator.api.constants import (
    ANNOTATION_READ_REQUESTED_AT,
    GROUP,
    VERSION,
    ApplyPolicy,
    Kind,
    MigrationPhase,
)
from ptah_operator.api.fields import parse_duration
from ptah_operator.api.kinds import from_manifest, kind_info, to_manifest
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
from ptah_operator.api.objectmeta import ObjectMeta, Resource
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.api.schema import PtahSchema
from ptah_operator.cli.migration_view import (
    person,
    render_approval_summary,
    render_migration,
    render_plan,
)
from ptah_operator.cli.observe import observe
from ptah_operator.cli.waits import (
    SUCCESSFUL_OUTCOMES,
    ReadTracker,
    RunProgress,
    next_read_request,
    phase_reached,
    run_progress,
)
from ptah_operator.controller.informer import ApiStatusError

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

    plan = verbs.add_parser("plan", help="show the plan a migration published (no SQL)")
    plan.add_argument("target", metavar="migration/NAME")
    _common(plan, argparse.SUPPRESS)

    approve = verbs.add_parser("approve", help="approve the plan a migration waits on")
    approve.add_argument("target", metavar="migration/NAME")
    approve.add_argument("--wait", action="store_true", help="wait for the run's verdict")
    approve.add_argument("--timeout", default=DEFAULT_TIMEOUT, help="how long --wait waits")
    _common(approve, argparse.SUPPRESS)

    wait = verbs.add_parser("wait", help="wait for a migration to reach a phase")
    wait.add_argument("target", metavar="migration/NAME")
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


def _phase(text: str) -> MigrationPhase:
    try:
        return MigrationPhase(text)
    except ValueError:
        known = ", ".join(p.value for p in MigrationPhase)
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
    try:
        created = await session.custom.create_namespaced_custom_object(
            GROUP, VERSION, session.namespace, "ptahmigrationapprovals", body
        )
    except ApiException as exc:
        message = api_message(exc)
        if _DENIED in message:
            reason = message.split(_DENIED, 1)[1]
            raise CommandError(f"not approved: {reason}") from None
        raise CommandError(f"not approved: {message}") from None
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


async def _migration_states(session: Session, name: str) -> Any:
    async for obj in observe(session.api, "ptahmigrations", session.namespace, name):
        if obj is None:
            raise CommandError(f"migration {name} was deleted")
        yield _read(PtahMigration, obj)


def _phase_line(status: StatusCommon, phase: str | None) -> str:
    progressing = status.condition("Progressing")
    reason = f" ({progressing.reason})" if progressing is not None else ""
    return f"phase {phase or 'none yet'}{reason}"


async def wait_for_run(
    session: Session, name: str, plan_name: str, plan_uid: str | None, wait_seconds: float
) -> int:
    """Follow the migration until the run of the plan reaches its verdict."""
    shown = ""
    try:
        async with asyncio.timeout(wait_seconds):
            async for migration in _migration_states(session, name):
                status = migration.status or PtahMigrationStatus()
                line = _phase_line(status, status.phase)
                if line != shown:
                    session.say(line)
                    shown = line
                progress = run_progress(status, plan_name, plan_uid)
                if progress is RunProgress.RETIRED:
                    current = status.plan.name if status.plan else "none"
                    raise CommandError(
                        f"plan {plan_name} was retired before it ran (current plan: {current}); "
                        "the approval authorizes nothing else"
                    )
                if progress is RunProgress.FINISHED:
                    return _report_run(session, status)
    except TimeoutError:
        raise CommandError(f"timed out waiting for the run of plan {plan_name}") from None
    raise CommandError(f"stopped watching migration {name}")


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


async def wait_for_phase(
    session: Session, name: str, phase: MigrationPhase, wait_seconds: float
) -> int:
    shown = ""
    last: PtahMigration | None = None
    try:
        async with asyncio.timeout(wait_seconds):
            async for migration in _migration_states(session, name):
                last = migration
                status = migration.status or PtahMigrationStatus()
                if phase_reached(migration, phase):
                    session.say(f"migration {name} is {phase}")
                    return EXIT_OK
                line = _phase_line(status, status.phase)
                if line != shown:
                    session.say(line)
                    shown = line
    except TimeoutError:
        where = ""
        if last is not None:
            status = last.status or PtahMigrationStatus()
            where = f"; it is in {_phase_line(status, status.phase)}"
        raise CommandError(f"timed out waiting for migration {name} to be {phase}{where}") from None
    raise CommandError(f"stopped watching migration {name}")


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
    noun = "migration" if command.kind == Kind.PTAH_MIGRATION else "schema"
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
    phase: MigrationPhase = MigrationPhase.IN_SYNC
    reference: str = ""
    policy: tuple[str, str] | None = None


def parse_command(argv: Sequence[str]) -> tuple[Command, argparse.Namespace]:
    """The command and the connection flags; raises UsageError."""
    args = build_parser().parse_args(list(argv))
    if args.verb == "migration":
        kind, name = parse_target(args.name, Kind.PTAH_MIGRATION)
        command = Command("migration", kind, name)
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
        if kind != Kind.PTAH_MIGRATION:
            raise UsageError(f"{args.verb} takes migration/NAME")
        if args.verb == "plan":
            command = Command("plan", kind, name)
        elif args.verb == "approve":
            command = Command("approve", kind, name, args.wait, _seconds(args.timeout))
        else:
            command = Command("wait", kind, name, True, _seconds(args.timeout), _phase(args.phase))
    if command.kind == Kind.PTAH_MIGRATION and not command.name:
        raise UsageError("a name is required")
    return command, args


async def execute(command: Command, session: Session) -> int:
    if command.verb == "migration":
        return await show_migration(session, command.name)
    if command.verb == "plan":
        return await show_plan(session, command.name)
    if command.verb == "approve":
        return await approve(session, command.name, command.wait, command.wait_seconds)
    if command.verb == "wait":
        return await wait_for_phase(session, command.name, command.phase, command.wait_seconds)
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
