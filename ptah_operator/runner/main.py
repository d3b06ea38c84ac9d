"""`ptah-runner`: what runs inside an operation Job.

The contracts: docs/design/migration-path.md, docs/design/schema-path.md.

    ptah-runner source  --snapshot DIR --digest sha256:... --out DIR   (the init container)
    ptah-runner history --files DIR                  (a migration's History: the run container)
    ptah-runner apply   --files DIR                  (a migration's Apply: the run container)
    ptah-runner observe --files DIR                  (a schema's Observe: the run container)
    ptah-runner plan    --files DIR                  (a schema's Plan: the run container)
    ptah-runner apply                                (a schema's Apply: no files, the run container)
    ptah-runner resolve [--credentials DIR]              (a Resolve Job's only container)
    ptah-runner verify  --policy FILE [--credentials DIR]  (a Verify Job's only container)
    ptah-runner fetch   --source JSON --digest sha256:... --out DIR [--credentials DIR]
                        (the init container fetching a Git/OCI source before `source`)

The operation document's `resource.kind` decides which family runs: PtahMigration (History,
Apply) or PtahSchema (Observe, Plan, Apply); its `type` must be the command.

Environment of `history`, `apply`, `observe` and `plan`:
    PTAH_OPERATION          the operation document (contract ptah.run/operation/v1)
    PTAH_DATABASE_URL       the database (only here; never logged, reported or written)
    PTAH_RESULT_URL         the result endpoint's base, e.g. https://…:9443/v1/results
    PTAH_RESULT_TOKEN_FILE  the operation's bearer token
    PTAH_RESULT_CA_FILE     the only CA trusted for the endpoint
    PTAH_RESULT_RETRY_SECONDS  how long to keep trying each request to the endpoint (default 120)
    PTAH_LOCK_TIMEOUT_SECONDS  how long an Apply, or a schema Plan, waits for the database's
                               lock (default 30)
    PTAH_TERMINATION_LOG    where the termination message goes (default /dev/termination-log)

A schema's operations (schema_operations.py): `observe` reports `drift` aggregates; `plan`
plans twice under the engine's schema lock, dry-runs the bytes on the Apply path, uploads the
plan file in pieces (`PUT {PTAH_RESULT_URL}/{namespace}/{operationID}/plan/{index}`) and
reports `plan`; `apply` fetches the published plan (`GET …/plan`), hashes it, and runs it with
`engine.schema.apply` only when it gives `plan.digest` on the database `plannedTargetDigest`
names, reporting `apply` {outcome Applied | Refused | Unknown, reason, planDigest,
statementsExecuted, failure {statementIndex, sqlstate, mysqlErrno}}. `error.reason` of a
schema operation: SnapshotRefused, BadURL, EngineMismatch, ConnectionFailed,
IntrospectionFailed, DesiredSchemaRefused, PlanRefused, LockNotAcquired, LockLost,
PlanIncoherent, DryRunRefused, PlanTooLarge, PlanNotUploaded, PlanUnavailable, Interrupted,
RunnerError.

Git and OCI sources (resolve, verify, fetch; docs/engine-sources.md). These hold the source
credentials (`--credentials DIR`: files `username` and `password`) and never a database URL.
    PTAH_OPERATION            resolve/verify: the operation document, type Resolve or Verify,
                              with its `source` block (and, Resolve of Git, `sourcePolicy`)
    PTAH_RESULT_*             resolve/verify: as for history and apply
    PTAH_INSECURE_REGISTRIES  comma-separated host[:port] reached over plain HTTP
`resolve` reports `resolve` {kind Git: repository, ref, path, commit, contentDigest,
fileCount, totalBytes | kind Artifact: ociRef, ociDigest}, or `error` {reason SourceUnreachable,
RefNotFound, CommitNotAdvertised, SourceRefused or CommitUnreachable, message}. `verify` reports
`verify` {accepted, artifactType, policyDigest, contentDigest (accepted) | refusal (refused)};
a refusal is a verdict (exit 0), a registry that cannot be read an `error` (exit 1). `fetch`
reports nothing: it writes the files and `ptah-manifest.json` into `--out` only when they give
`--digest`, for `ptah-runner source --snapshot` to check again.

Exit codes:
    0  the result was reported, whatever it says (a History reading, any migration Apply
       outcome; an Observe's drift, a Plan, a schema Apply's Applied, Unknown or Refused
       verdict such as StalePlan, PlanDigestMismatch or TargetIdentityChanged; a Resolve, a
       Verify verdict); `fetch`: the files are written
    1  the result was reported, and it says the operation could not do its work (its
       `error` block: the database unreachable, the history unreadable, the lock not free or
       lost, the files refused, two plans that differ, a dry run refused, the plan not
       uploaded or not fetched, the runner stopped; the source unreachable or refused);
       `fetch`: the source cannot be reached (`source unavailable: …`)
    2  the command line, the operation document or the result endpoint's configuration
       cannot be used (a migration's apply without --files, a schema's apply with them):
       nothing was run and nothing reported
    3  `source`: the snapshot does not match the bound digest (`snapshot refused: …`);
       `fetch`: the source refused, e.g. a digest that differs, a commit no longer reachable,
       a submodule or LFS pointer (`source refused: …`)
    4  the result could not be reported (`result not reported`)

The termination message is one short line: never SQL, a row, a URL or a token. A schema
operation's reads `Observe: 3 difference(s)`, `Plan: 4 statement(s) in 1 piece(s)`,
`Plan: no change`, `Apply Applied, 4 statement(s) executed`, `Apply Refused (StalePlan), 0
statement(s) executed`, followed by `: <reason>: <message>` when it carries an `error`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from ptah_operator.api.constants import MAX_CHUNK_CHARS, MAX_PLAN_CHUNKS
from ptah_operator.runner.logs import configure_logging
from ptah_operator.runner.operation import OperationError, parse_operation
from ptah_operator.runner.operations import (
    DEFAULT_LOCK_TIMEOUT_SECONDS,
    Finished,
    Progress,
    describe,
    interrupted,
    recorded_after_interruption,
    run_apply,
    run_history,
)
from ptah_operator.runner.report import (
    DEFAULT_BUDGET_SECONDS,
    ReportConfigError,
    ReportTarget,
    encode,
    get_plan,
    post_result,
    put_piece,
)
from ptah_operator.runner.schema_document import Piece, describe_schema
from ptah_operator.runner.schema_operation import is_schema_document, parse_schema_operation
from ptah_operator.runner.schema_operations import (
    Fetched,
    SchemaProgress,
    Upload,
    run_observe,
    run_plan,
    schema_interrupted,
)
from ptah_operator.runner.schema_operations import run_apply as run_schema_apply
from ptah_operator.runner.source import SnapshotError, take_snapshot
from ptah_operator.runner.source_commands import (
    Ending,
    fetch_command,
    resolve_command,
    verify_command,
)

log = structlog.get_logger("ptah.runner")

EXIT_REPORTED = 0
EXIT_NOT_DONE = 1
EXIT_USAGE = 2
EXIT_SNAPSHOT_REFUSED = 3
EXIT_NOT_REPORTED = 4

DEFAULT_TERMINATION_LOG = "/dev/termination-log"
MAX_PLAN_BYTES = MAX_PLAN_CHUNKS * 4 * MAX_CHUNK_CHARS
"""The most a published plan can hold: 64 chunks of 262,144 characters of up to 4 bytes."""
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def write_termination_message(message: str) -> None:
    """Write the container's termination message. The default path is written only where the
    kubelet made it, so a runner started by hand never litters /dev."""
    configured = os.environ.get("PTAH_TERMINATION_LOG")
    path = Path(configured or DEFAULT_TERMINATION_LOG)
    if configured is None and not path.exists():
        return
    with contextlib.suppress(OSError):
        path.write_text(message[:4000] + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ptah-runner", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    source = commands.add_parser("source", help="check the snapshot and copy its files")
    source.add_argument("--snapshot", required=True, type=Path)
    source.add_argument("--digest", required=True)
    source.add_argument("--out", required=True, type=Path)
    helps = {
        "history": "read the revision table against the files (a History operation)",
        "observe": "a schema's drift against the files (an Observe operation)",
        "plan": "a schema's plan against the files, uploaded in pieces (a Plan operation)",
    }
    for name, text in helps.items():
        command = commands.add_parser(name, help=text)
        command.add_argument("--files", required=True, type=Path)
    apply = commands.add_parser(
        "apply",
        help="a migration: run exactly the expected sequence of --files; "
        "a schema: run exactly the published plan (no files)",
    )
    apply.add_argument("--files", type=Path, default=None)
    resolve = commands.add_parser("resolve", help="resolve a Git or OCI source (a Resolve)")
    resolve.add_argument("--credentials", type=Path, default=None)
    verify = commands.add_parser("verify", help="verify an OCI artifact against a policy")
    verify.add_argument("--policy", required=True, type=Path)
    verify.add_argument("--credentials", type=Path, default=None)
    fetch = commands.add_parser("fetch", help="fetch a pinned Git/OCI source into a snapshot")
    fetch.add_argument("--source", required=True)
    fetch.add_argument("--digest", required=True)
    fetch.add_argument("--out", required=True, type=Path)
    fetch.add_argument("--credentials", type=Path, default=None)
    return parser


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name)
    if not text:
        return default
    value = float(text)
    if value < 0:
        raise ValueError(f"{name} must not be negative")
    return value


def _source(args: argparse.Namespace) -> int:
    if not _DIGEST.match(args.digest):
        log.error("bad digest")
        write_termination_message("bad invocation: --digest is not sha256:<64 hex>")
        return EXIT_USAGE
    try:
        names = take_snapshot(args.snapshot, args.digest, args.out)
    except SnapshotError as exc:
        log.error("snapshot refused", reason=str(exc))
        write_termination_message(f"snapshot refused: {exc}")
        return EXIT_SNAPSHOT_REFUSED
    log.info("snapshot checked", files=len(names))
    return 0


@dataclass(frozen=True)
class _Settings:
    target: ReportTarget
    budget: float
    lock_timeout: float


def _settings() -> _Settings | str:
    """The result endpoint and the timings, or what is wrong with them. Checked before
    anything runs: an Apply that could not report must not start."""
    try:
        return _Settings(
            ReportTarget.from_env(
                os.environ.get("PTAH_RESULT_URL"),
                os.environ.get("PTAH_RESULT_TOKEN_FILE"),
                os.environ.get("PTAH_RESULT_CA_FILE"),
            ),
            _seconds("PTAH_RESULT_RETRY_SECONDS", DEFAULT_BUDGET_SECONDS),
            _seconds("PTAH_LOCK_TIMEOUT_SECONDS", DEFAULT_LOCK_TIMEOUT_SECONDS),
        )
    except (ReportConfigError, ValueError) as exc:
        return str(exc)


def _usage(message: str, *, what: str = "bad operation document") -> int:
    log.error(what, reason=message)
    write_termination_message(f"{what}: {message}")
    return EXIT_USAGE


async def _until_done(work: Coroutine[Any, Any, Finished]) -> Finished | None:
    """Run the work; None when SIGTERM/SIGINT stopped it first (its caller reports that)."""
    task: asyncio.Task[Finished] = asyncio.create_task(work)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, task.cancel)
    try:
        return await task
    except asyncio.CancelledError:
        return None
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)


async def _report(
    settings: _Settings, namespace: str, operation_id: str, finished: Finished, summary: str
) -> int:
    outcome = await post_result(
        settings.target,
        namespace,
        operation_id,
        encode(finished.document),
        budget_seconds=settings.budget,
    )
    if not outcome.reported:
        write_termination_message("result not reported")
        return EXIT_NOT_REPORTED
    error = finished.document.get("error")
    if error is not None:
        write_termination_message(f"{summary}: {error['reason']}: {error['message']}")
    else:
        write_termination_message(summary)
    return finished.exit_code


async def _operate(args: argparse.Namespace) -> int:
    text = os.environ.get("PTAH_OPERATION", "")
    if is_schema_document(text):
        return await _operate_schema(args, text)
    try:
        operation = parse_operation(text)
    except OperationError as exc:
        return _usage(str(exc))
    structlog.contextvars.bind_contextvars(operationID=operation.operation_id)
    if operation.type.lower() != args.command:
        log.error("operation type does not match the command", type=operation.type)
        write_termination_message(f"bad operation document: type is not {args.command}")
        return EXIT_USAGE
    if args.files is None:
        return _usage(f"a migration's {operation.type} reads --files", what="bad invocation")
    settings = _settings()
    if isinstance(settings, str):
        return _usage(settings, what="bad configuration")
    # The URL lives in this process only as long as it must, and no child inherits it.
    url = os.environ.pop("PTAH_DATABASE_URL", None)
    progress = Progress()
    log.info("operation started", type=operation.type)
    if operation.is_apply:
        work = run_apply(operation, args.files, url, progress, lock_timeout=settings.lock_timeout)
    else:
        work = run_history(operation, args.files, url, progress)
    finished = await _until_done(work)
    if finished is None:
        log.warning("operation interrupted", apply_started=progress.apply_started)
        recorded = (
            await recorded_after_interruption(operation, url, progress.spell)
            if progress.apply_started
            else []
        )
        finished = interrupted(operation, progress, recorded=recorded)
    return await _report(
        settings,
        operation.resource.namespace,
        operation.operation_id,
        finished,
        describe(finished.document),
    )


async def _operate_schema(args: argparse.Namespace, text: str) -> int:
    """Observe, Plan or Apply of a PtahSchema (docs/design/schema-path.md)."""
    try:
        operation = parse_schema_operation(text)
    except OperationError as exc:
        return _usage(str(exc))
    structlog.contextvars.bind_contextvars(operationID=operation.operation_id)
    if operation.type.lower() != args.command:
        log.error("operation type does not match the command", type=operation.type)
        write_termination_message(f"bad operation document: type is not {args.command}")
        return EXIT_USAGE
    if operation.is_apply and args.files is not None:
        # The Pod that changes the database reads no source files: it runs the published plan.
        return _usage("a schema Apply reads no --files", what="bad invocation")
    settings = _settings()
    if isinstance(settings, str):
        return _usage(settings, what="bad configuration")
    url = os.environ.pop("PTAH_DATABASE_URL", None)
    namespace = operation.resource.namespace
    operation_id = operation.operation_id
    progress = SchemaProgress()
    log.info("operation started", type=operation.type, proof=operation.proof)

    async def upload(piece: Piece) -> Upload:
        sent = await put_piece(
            settings.target,
            namespace,
            operation_id,
            piece.index,
            piece.text,
            budget_seconds=settings.budget,
        )
        if sent.done:
            return Upload()
        return Upload(
            f"HTTP {sent.status}: {sent.error}"
            if sent.status is not None and sent.error
            else f"HTTP {sent.status}"
            if sent.status is not None
            else "the result endpoint could not be reached"
        )

    async def fetch() -> Fetched:
        assert operation.plan is not None
        got = await get_plan(
            settings.target,
            namespace,
            operation_id,
            max_bytes=MAX_PLAN_BYTES,
            budget_seconds=settings.budget,
        )
        if got.done:
            return Fetched(data=got.body)
        if got.status is None:
            return Fetched(refused="the result endpoint could not be reached")
        return Fetched(refused=f"HTTP {got.status}: {got.error or 'refused'}")

    work: Coroutine[Any, Any, Finished]
    if operation.type == "Observe":
        work = run_observe(operation, args.files, url, progress)
    elif operation.type == "Plan":
        work = run_plan(
            operation, args.files, url, progress, upload, lock_timeout=settings.lock_timeout
        )
    else:
        work = run_schema_apply(operation, url, progress, fetch, lock_timeout=settings.lock_timeout)
    finished = await _until_done(work)
    if finished is None:
        log.warning("operation interrupted", apply_started=progress.apply_started)
        finished = schema_interrupted(operation, progress)
    return await _report(
        settings, namespace, operation_id, finished, describe_schema(finished.document)
    )


def _ended(ending: Ending) -> int:
    if ending.message:
        write_termination_message(ending.message)
    return ending.code


def _fetch(args: argparse.Namespace) -> int:
    if not _DIGEST.match(args.digest):
        log.error("bad digest")
        write_termination_message("bad invocation: --digest is not sha256:<64 hex>")
        return EXIT_USAGE
    return _ended(fetch_command(args.source, args.digest, args.out, args.credentials))


def main(argv: Sequence[str] | None = None) -> int:
    configure_logging()
    args = build_parser().parse_args(argv)
    structlog.contextvars.bind_contextvars(command=args.command)
    if args.command == "source":
        return _source(args)
    if args.command == "fetch":
        return _fetch(args)
    if args.command == "resolve":
        return _ended(asyncio.run(resolve_command(args.credentials)))
    if args.command == "verify":
        return _ended(asyncio.run(verify_command(args.policy, args.credentials)))
    return asyncio.run(_operate(args))


if __name__ == "__main__":
    sys.exit(main())
