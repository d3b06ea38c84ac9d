"""What the commands that open a database share: `history`, `apply` (migration.py), `observe`,
`plan`, `apply` (schema.py). The result endpoint and the timings, checked before anything runs;
the work run until it is done or the runner is told to stop; the result reported and the
termination message written. Exit codes and termination messages: main.py's docstring."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import signal
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import structlog

from ptah_operator.api.contracts.codes import ExitCode
from ptah_operator.api.contracts.operation import OperationError
from ptah_operator.runner.checks import Now
from ptah_operator.runner.document import ErrorBlock, Json, result_document
from ptah_operator.runner.envelope import Operated
from ptah_operator.runner.report import (
    DEFAULT_BUDGET_SECONDS,
    ReportConfigError,
    ReportTarget,
    encode,
    post_result,
)
from ptah_operator.runner.termination import write_termination_message

log = structlog.get_logger("ptah.runner")

DEFAULT_LOCK_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class Finished:
    """An operation's result document and the exit code it earns once reported."""

    document: Json
    exit_code: int
    summary: str

    @classmethod
    def ended(cls, document: Json, summary: str, *, stopped: bool) -> Finished:
        """The end of an operation of either family: REPORTED once the document is reported
        when it did its work, NOT_DONE when it stopped with an error block."""
        return cls(document, ExitCode.NOT_DONE if stopped else ExitCode.REPORTED, summary)


class Progressed(Protocol):
    """What an operation of either family got to that its result repeats."""

    @property
    def started_at(self) -> dt.datetime: ...
    @property
    def target_identity_digest(self) -> str | None: ...


def finish(
    operation: Operated,
    progress: Progressed,
    now: Now,
    *,
    summary: str,
    error: ErrorBlock | None = None,
    **blocks: Json | None,
) -> Finished:
    """The end of an operation: its result document (`blocks` are the family's: history and
    run, or drift, plan and apply), finished now, and the exit code it earns."""
    document = result_document(
        operation,
        started_at=progress.started_at,
        finished_at=now(),
        target_identity_digest=progress.target_identity_digest,
        error=error,
        **blocks,
    )
    return Finished.ended(document, summary, stopped=error is not None)


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name)
    if not text:
        return default
    value = float(text)
    if value < 0:
        raise ValueError(f"{name} must not be negative")
    return value


@dataclass(frozen=True)
class Settings:
    target: ReportTarget
    budget: float
    lock_timeout: float


def read_settings() -> Settings | str:
    """The result endpoint and the timings, or what is wrong with them. Checked before
    anything runs: an Apply that could not report must not start."""
    try:
        return Settings(
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


def usage(message: str, *, what: str = "bad operation document") -> int:
    log.error(what, reason=message)
    write_termination_message(f"{what}: {message}")
    return ExitCode.USAGE


OperationT = TypeVar("OperationT", bound=Operated)


@dataclass(frozen=True)
class Begun(Generic[OperationT]):
    """An operation document read and checked, with what every database operation needs."""

    operation: OperationT
    settings: Settings
    url: str | None
    """PTAH_DATABASE_URL, taken out of the environment: it lives in this process only as long
    as it must, and no child inherits it."""


def begin(
    args: argparse.Namespace,
    text: str,
    parse: Callable[[str], OperationT],
    files_refused: Callable[[OperationT, Path | None], str | None],
) -> Begun[OperationT] | int:
    """Read the operation document (`parse` raises OperationError), hold it to the command it
    was started as and to the family's rule on `--files` (`files_refused` says why not, or
    None), and read the settings; an int is the exit code of a refusal (USAGE)."""
    try:
        operation = parse(text)
    except OperationError as exc:
        return usage(str(exc))
    structlog.contextvars.bind_contextvars(operationID=operation.operation_id)
    if operation.type.lower() != args.command:
        log.error("operation type does not match the command", type=operation.type)
        write_termination_message(f"bad operation document: type is not {args.command}")
        return ExitCode.USAGE
    refused = files_refused(operation, args.files)
    if refused is not None:
        return usage(refused, what="bad invocation")
    settings = read_settings()
    if isinstance(settings, str):
        return usage(settings, what="bad configuration")
    return Begun(operation, settings, os.environ.pop("PTAH_DATABASE_URL", None))


async def until_done(work: Coroutine[Any, Any, Finished]) -> Finished | None:
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


async def report(
    settings: Settings, namespace: str, operation_id: str, finished: Finished, summary: str
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
