"""The commands that open a database: `history`, `apply` (migration), `observe`, `plan`,
`apply` (schema). main.py loads this module only for them; the schema engine is loaded only
for a schema's document. Exit codes and termination messages: main.py's docstring."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import structlog

from ptah_operator.api.constants import MAX_CHUNK_CHARS, MAX_PLAN_CHUNKS
from ptah_operator.api.contracts.codes import ExitCode
from ptah_operator.api.contracts.operation import OperationError, is_schema_document
from ptah_operator.runner.migration import (
    DEFAULT_LOCK_TIMEOUT_SECONDS,
    Finished,
    Progress,
    describe,
    interrupted,
    recorded_after_interruption,
    run_apply,
    run_history,
)
from ptah_operator.runner.operation import parse_operation
from ptah_operator.runner.report import (
    DEFAULT_BUDGET_SECONDS,
    ReportConfigError,
    ReportTarget,
    encode,
    get_plan,
    post_result,
    put_piece,
)
from ptah_operator.runner.termination import write_termination_message

log = structlog.get_logger("ptah.runner")

MAX_PLAN_BYTES = MAX_PLAN_CHUNKS * 4 * MAX_CHUNK_CHARS
"""The most a published plan can hold: 64 chunks of 262,144 characters of up to 4 bytes."""


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name)
    if not text:
        return default
    value = float(text)
    if value < 0:
        raise ValueError(f"{name} must not be negative")
    return value


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
    return ExitCode.USAGE


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
        return ExitCode.NOT_REPORTED
    error = finished.document.get("error")
    if error is not None:
        write_termination_message(f"{summary}: {error['reason']}: {error['message']}")
    else:
        write_termination_message(summary)
    return finished.exit_code


async def operate(args: argparse.Namespace) -> int:
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
        return ExitCode.USAGE
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
    from ptah_operator.runner.schema import (
        Fetched,
        SchemaProgress,
        Upload,
        run_observe,
        run_plan,
        schema_interrupted,
    )
    from ptah_operator.runner.schema import run_apply as run_schema_apply
    from ptah_operator.runner.schema_document import Piece, describe_schema
    from ptah_operator.runner.schema_operation import parse_schema_operation

    try:
        operation = parse_schema_operation(text)
    except OperationError as exc:
        return _usage(str(exc))
    structlog.contextvars.bind_contextvars(operationID=operation.operation_id)
    if operation.type.lower() != args.command:
        log.error("operation type does not match the command", type=operation.type)
        write_termination_message(f"bad operation document: type is not {args.command}")
        return ExitCode.USAGE
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
