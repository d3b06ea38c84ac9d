"""History and Apply as the run container does them: read, maybe run, and say what happened.

Both begin the same way, and anything that stops them there is an `error` result (exit 1):
  1. the files the init container copied must still give the bound content digest
     (SnapshotRefused) and be a usable migration directory (DirectoryRefused);
  2. the database URL must name the operation's engine (BadURL, EngineMismatch);
  3. the database must be reachable (ConnectionFailed; the message keeps the error class or
     the kind of network failure, never the host, the URL or a credential).

History then reads the revision table once (read_status) and reports the reading. A table that
cannot be read is HistoryUnreadable, or DatabaseBusy when the database's answer passes on its
own (ErrorClass.transient); the operator retries a History that could not read.

Apply. Whether a run may have started decides between Failed and Unknown, and the engine's
own answer decides that, not a guess here:
  - everything that stops before `engine.apply` is called (the steps above, or a database
    that is not the one the plan was read from, RUN-14) is outcome Failed, selected=false:
    nothing was selected, so nothing ran (MIG-44);
  - `engine.apply` itself refuses before selecting (lock not free, history unreadable, the
    session lost while reading, a blocking verdict, an expected sequence that differs from
    its own selection under the lock, a transaction-mode refusal) with Failed, selected=false
    (MIG-50, RUN-20); of these, the lock, the unreadable history and the lost session are
    also an `error` (the operation could not do its work, exit 1): LockTimeout,
    HistoryUnreadable, or DatabaseBusy for a database answer that passes on its own, and
    ConnectionFailed; the others are the run's verdict (exit 0);
  - once the engine selected, its confirmed outcome is reported as it is (Applied, Failed,
    Partial, Unknown, UpToDate);
  - if `engine.apply` raises instead of answering, or the runner is told to stop while it
    runs, what it committed is not known: outcome Unknown, selected=true (the run may have
    started), with an `error` (RunnerError, Interrupted).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.contracts.operation import (
    ExpectedVersion,
    MigrationDocument,
    ResourceRef,
)
from ptah_operator.engine.migrations.apply import (
    ExpectedMigration,
    RunResult,
    TransactionMode,
    apply,
)
from ptah_operator.engine.migrations.connection import (
    BadURLError,
    ConnectionLostError,
    Database,
    DatabaseError,
    Engine,
    connect,
)
from ptah_operator.engine.migrations.directory import (
    DirectoryError,
    MigrationDirectory,
    read_directory,
)
from ptah_operator.engine.migrations.revision_table import (
    RevisionRead,
    RevisionTable,
    RevisionTableError,
    read_revisions,
)
from ptah_operator.engine.migrations.status import read_status
from ptah_operator.runner.checks import (
    Now,
    StoppedError,
    check_files,
    check_url,
    connection_message,
    utc_now,
)
from ptah_operator.runner.database_commands import (
    DEFAULT_LOCK_TIMEOUT_SECONDS,
    Finished,
    begin,
    finish,
    report,
    until_done,
)
from ptah_operator.runner.document import (
    ErrorBlock,
    Json,
    VersionSpelling,
    history_block,
    not_selected_run,
    run_block,
    stopped_at_block,
    unknown_run,
)

log = structlog.get_logger("ptah.runner")


# Engine refusals before selection that mean the run could not do its work (not a verdict).
_ENGINE_ERRORS = {
    "ConnectionLostError": ErrorReason.CONNECTION_FAILED,
    "DatabaseBusy": ErrorReason.DATABASE_BUSY,
    "DatabaseError": ErrorReason.HISTORY_UNREADABLE,
    "RevisionTableUnreadable": ErrorReason.HISTORY_UNREADABLE,
    "LockTimeout": ErrorReason.LOCK_TIMEOUT,
}


@dataclass(frozen=True)
class Operation:
    operation_id: str
    type: str
    resource: ResourceRef
    engine: Engine
    revision_table: RevisionTable
    transaction_mode: TransactionMode | None
    content_digest: str
    expected: tuple[ExpectedVersion, ...] | None = None
    planned_target_digest: str | None = None

    @property
    def is_apply(self) -> bool:
        return self.type == "Apply"

    def expected_migrations(self) -> list[ExpectedMigration] | None:
        if self.expected is None:
            return None
        return [
            ExpectedMigration(int(e.version), e.checksum.removeprefix("sha256:"))
            for e in self.expected
        ]


def parse_operation(text: str) -> Operation:
    """Read and check a History or Apply document; raises OperationError saying what is wrong."""
    document = MigrationDocument.parse(text)
    table = document.revision_table
    mode = document.transaction_mode
    return Operation(
        operation_id=document.operation_id,
        type=document.type,
        resource=document.resource,
        engine=Engine(document.engine),
        revision_table=RevisionTable(name=table.name, schema=table.schema_),
        transaction_mode=None if mode is None else TransactionMode(mode),
        content_digest=document.content_digest,
        expected=document.expected,
        planned_target_digest=document.planned_target_digest,
    )


@dataclass
class Progress:
    """What an operation got to, so an interrupted one can be reported truthfully."""

    started_at: dt.datetime = field(default_factory=utc_now)
    spell: VersionSpelling = field(default_factory=lambda: VersionSpelling(None))
    target_identity_digest: str | None = None
    apply_started: bool = False


def unreadable(exc: DatabaseError) -> ErrorReason:
    """The reason of a history (or identity) read the database refused: DatabaseBusy when
    its answer passes on its own, HistoryUnreadable otherwise."""
    if exc.error_class.transient:
        return ErrorReason.DATABASE_BUSY
    return ErrorReason.HISTORY_UNREADABLE


def _check_files(operation: Operation, files_dir: Path) -> MigrationDirectory:
    check_files(files_dir, operation.content_digest)
    try:
        return read_directory(files_dir)
    except DirectoryError as exc:
        raise StoppedError(
            ErrorBlock(
                ErrorReason.DIRECTORY_REFUSED,
                f"{exc.reason}: {exc}",
                code=exc.reason,
                file=exc.name,
                line=exc.line,
            )
        ) from None


async def _connect(url: str) -> Database:
    try:
        return await connect(url)
    except ConnectionLostError as exc:
        raise StoppedError(
            ErrorBlock(ErrorReason.CONNECTION_FAILED, connection_message(exc.detail))
        ) from None
    except BadURLError as exc:
        raise StoppedError(ErrorBlock(ErrorReason.BAD_URL, str(exc))) from None


async def _close(db: Database) -> None:
    with contextlib.suppress(Exception):
        await db.close()


async def run_history(
    operation: Operation,
    files_dir: Path,
    url: str | None,
    progress: Progress,
    now: Now = utc_now,
) -> Finished:
    """Read the revision table once against the files and report the reading."""
    try:
        directory = _check_files(operation, files_dir)
        progress.spell = VersionSpelling(directory)
        db = await _connect(check_url(url, operation.engine))
        try:
            progress.target_identity_digest = await db.identity_digest()
            status, _ = await read_status(db, directory, operation.revision_table)
        except ConnectionLostError as exc:
            raise StoppedError(
                ErrorBlock(ErrorReason.CONNECTION_FAILED, connection_message(exc.detail))
            ) from None
        except DatabaseError as exc:
            raise StoppedError(
                ErrorBlock(
                    unreadable(exc),
                    f"reading the revision table failed with {exc.error_class.describe()}",
                )
            ) from None
        except RevisionTableError as exc:
            raise StoppedError(ErrorBlock(ErrorReason.HISTORY_UNREADABLE, str(exc))) from None
        finally:
            await _close(db)
    except StoppedError as stop:
        return finish(operation, progress, now, error=stop.error, summary=f"{stop.error.reason}")
    history = history_block(status, progress.spell)
    log.info(
        "history read",
        verdict=history["verdict"],
        pending=history["pendingCount"],
        applied=history["appliedCount"],
    )
    return finish(operation, progress, now, history=history, summary=str(history["verdict"]))


async def run_apply(
    operation: Operation,
    files_dir: Path,
    url: str | None,
    progress: Progress,
    now: Now = utc_now,
    *,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_SECONDS,
) -> Finished:
    """Run exactly the expected sequence under the engine's lock and report its outcome."""
    try:
        directory = _check_files(operation, files_dir)
        progress.spell = VersionSpelling(directory)
        checked_url = check_url(url, operation.engine)
        db = await _connect(checked_url)
    except StoppedError as stop:
        return finish(
            operation,
            progress,
            now,
            run=not_selected_run(stop.error.message),
            error=stop.error,
            summary=stop.error.reason,
        )
    try:
        try:
            progress.target_identity_digest = await db.identity_digest()
        except (ConnectionLostError, DatabaseError) as exc:
            if isinstance(exc, ConnectionLostError):
                error = ErrorBlock(ErrorReason.CONNECTION_FAILED, connection_message(exc.detail))
            else:
                error = ErrorBlock(
                    unreadable(exc),
                    f"reading the database's identity failed with {exc.error_class.describe()}",
                )
            return finish(
                operation,
                progress,
                now,
                run=not_selected_run(error.message),
                error=error,
                summary=error.reason,
            )
        planned = operation.planned_target_digest
        if planned is not None and progress.target_identity_digest != planned:
            # The URL Secret now names another database than the plan was read from: refuse
            # before the engine touches it, and name the database it held (RUN-14).
            log.warning("target identity changed")
            return finish(
                operation,
                progress,
                now,
                run=not_selected_run(
                    "the database is not the one the plan was read from; nothing ran",
                    reason="TargetIdentityChanged",
                ),
                summary="TargetIdentityChanged",
            )
        progress.apply_started = True
        result = await apply(
            db,
            directory,
            table=operation.revision_table,
            expected=operation.expected_migrations(),
            mode=operation.transaction_mode,
            lock_timeout=lock_timeout,
            reconnect=lambda: connect(checked_url),
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        # The engine answers every database failure itself; reaching here is a fault whose
        # effect on the database is not known.
        log.error("the run ended unexpectedly", error=type(exc).__name__)
        error = ErrorBlock(
            ErrorReason.RUNNER_ERROR, f"the run ended unexpectedly ({type(exc).__name__})"
        )
        return finish(
            operation,
            progress,
            now,
            run=unknown_run("the run ended unexpectedly; what it committed is not known"),
            error=error,
            summary=error.reason,
        )
    finally:
        await _close(db)
    return apply_finished(operation, progress, now, result)


def apply_finished(
    operation: Operation, progress: Progress, now: Now, result: RunResult
) -> Finished:
    spell = progress.spell
    if result.target_identity_digest is not None:
        progress.target_identity_digest = result.target_identity_digest
    run = run_block(result, spell)
    error: ErrorBlock | None = None
    if not result.selected and result.reason in _ENGINE_ERRORS:
        message = run["message"]
        if result.reason == "ConnectionLostError":
            message = connection_message(result.message)
        error = ErrorBlock(_ENGINE_ERRORS[result.reason], message)
        run["message"] = message
    history = None if result.status_before is None else history_block(result.status_before, spell)
    log.info(
        "run finished",
        outcome=run["outcome"],
        selected=run["selected"],
        reason=result.reason,
        applied=len(run["appliedVersions"]),
    )
    return finish(
        operation,
        progress,
        now,
        history=history,
        run=run,
        error=error,
        summary=f"{run['outcome']}",
    )


@dataclass(frozen=True)
class AfterInterruption:
    """What the revision table, read again after an interrupted Apply, says of the run."""

    applied: list[str] = field(default_factory=list)
    """The expected versions it records applied (same checksum)."""
    stopped_at: Json | None = None
    """`run.stoppedAt`: the first expected version it does not record applied, with the
    statement counts of its dirty row if it has one; None when every one is recorded."""


def after_interruption(
    expected: Sequence[ExpectedMigration], read: RevisionRead, spell: VersionSpelling
) -> AfterInterruption:
    """How far an interrupted run is known to have got, from the revision table (pure)."""
    rows = {row.version: row for row in read.rows}

    def recorded(e: ExpectedMigration) -> bool:
        row = rows.get(e.version)
        return row is not None and not row.dirty and row.checksum == e.checksum

    applied = [spell(e.version) for e in expected if recorded(e)]
    stop = next((e for e in expected if not recorded(e)), None)
    if stop is None:
        return AfterInterruption(applied)
    row = rows.get(stop.version)
    dirty = row is not None and row.dirty
    return AfterInterruption(
        applied,
        stopped_at_block(
            spell(stop.version),
            row.statements_applied if dirty and row is not None else None,
            row.statements_total if dirty and row is not None else None,
        ),
    )


async def recorded_after_interruption(
    operation: Operation, url: str | None, spell: VersionSpelling, limit: float = 10.0
) -> AfterInterruption:
    """The revision table read on a fresh session after an interrupted Apply: how far the run
    is known to have got, and where it stopped. Best effort: anything that stops the read
    gives nothing, never a guess."""
    expected = operation.expected_migrations() or []
    if not url or not expected:
        return AfterInterruption()
    try:
        async with asyncio.timeout(limit):
            db = await connect(url)
            try:
                read = await read_revisions(db, operation.revision_table)
            finally:
                await _close(db)
    except (ConnectionLostError, DatabaseError, RevisionTableError, BadURLError, TimeoutError):
        return AfterInterruption()
    return after_interruption(expected, read, spell)


def interrupted(
    operation: Operation,
    progress: Progress,
    now: Now = utc_now,
    *,
    recorded: AfterInterruption | None = None,
) -> Finished:
    """The result of an operation the runner was told to stop (SIGTERM) before it ended.
    `recorded`: what the table was found to record afterwards (versions applied, where the
    run stopped)."""
    error = ErrorBlock(ErrorReason.INTERRUPTED, "the runner was stopped before it finished")
    run: Json | None = None
    found = recorded or AfterInterruption()
    if operation.is_apply:
        run = (
            unknown_run(
                "the run was interrupted; what it committed is not known",
                found.applied,
                found.stopped_at,
            )
            if progress.apply_started
            else not_selected_run(error.message)
        )
    return finish(operation, progress, now, run=run, error=error, summary=error.reason)


def describe(document: dict[str, Any]) -> str:
    """A one-line summary for the termination message: no text from the database."""
    run = document.get("run")
    if isinstance(run, dict):
        return f"{document['type']} {run['outcome']}"
    history = document.get("history")
    if isinstance(history, dict):
        return f"{document['type']} {history['verdict']}"
    return str(document["type"])


def _files_refused(operation: Operation, files: Path | None) -> str | None:
    return f"a migration's {operation.type} reads --files" if files is None else None


async def operate(args: argparse.Namespace, text: str) -> int:
    """History or Apply of a PtahMigration (docs/design/migration-path.md)."""
    begun = begin(args, text, parse_operation, _files_refused)
    if isinstance(begun, int):
        return begun
    operation, settings, url = begun.operation, begun.settings, begun.url
    assert args.files is not None
    progress = Progress()
    log.info("operation started", type=operation.type)
    if operation.is_apply:
        work = run_apply(operation, args.files, url, progress, lock_timeout=settings.lock_timeout)
    else:
        work = run_history(operation, args.files, url, progress)
    finished = await until_done(work)
    if finished is None:
        log.warning("operation interrupted", apply_started=progress.apply_started)
        recorded = (
            await recorded_after_interruption(operation, url, progress.spell)
            if progress.apply_started
            else AfterInterruption()
        )
        finished = interrupted(operation, progress, recorded=recorded)
    return await report(
        settings,
        operation.resource.namespace,
        operation.operation_id,
        finished,
        describe(finished.document),
    )
