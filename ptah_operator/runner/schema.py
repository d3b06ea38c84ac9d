"""Observe, Plan and Apply of a PtahSchema as the run container does them (docs/design/schema-path.md).

Observe and Plan begin alike, and anything that stops them there is an `error` result (exit 1):
  1. the files the init container copied must still give the bound content digest
     (SnapshotRefused);
  2. the database URL must name the operation's engine (BadURL, EngineMismatch);
  3. the database's identity is read, as the migration runner reads it
     (`engine.migrations` `Database.identity_digest`: engine, server, port, database and, on
     PostgreSQL, the system identifier), so every report names the database it opened
     (ConnectionFailed when it cannot be reached).

Observe: one scoped plan of the files against the database (`engine.schema.operations.plan_url`:
the desired schema from the `*.sql` and `*.hcl` files, the database introspected in a
read-only transaction), reduced to the drift aggregates; the detail stays here (SCH-54).

Plan (SCH-55, SCH-56):
  - the engine's schema lock (the advisory lock `engine.schema.apply` takes) is held on a
    session of its own while two independent scoped plans are computed, each on its own
    connection from the files; LockNotAcquired when it is not free within
    PTAH_LOCK_TIMEOUT_SECONDS, LockLost when that session no longer holds it at the end;
  - the two plan files must be byte-identical, else PlanIncoherent;
  - the lock is given back and the Apply path itself (`engine.schema.apply.apply_plan`,
    `dry_run=True`) reads those exact bytes: it hashes them, parses every statement, takes the
    lock and checks that the database is still the one they were planned from. A refusal is
    DryRunRefused, except that the lock being taken meanwhile is LockLost. The dry run holds
    the plan to no policy: what the policy says of it is the manager's verdict (SCH-14), for
    which the report names the protected tables it would change. On PostgreSQL it runs the
    statements in a transaction it rolls back (a failure is DryRunRefused, with the statement
    and SQLSTATE); MySQL/MariaDB commit DDL as they run it, so there it prepares each
    statement and checks the rows (PrecheckRefused). The report's `plan.trial` names what was
    checked; both hold every statement to the policy's timeouts;
  - with changes, the plan file is uploaded in pieces (`PUT …/plan/{index}`) before the report
    names them (PlanTooLarge over 64 pieces, PlanNotUploaded when a piece is refused).

Apply (SCH-57, SCH-59): the published plan is fetched (`GET …/plan`, PlanUnavailable when it
cannot be), hashed, and refused unless it gives `plan.digest`; the database must be
`plannedTargetDigest` (TargetIdentityChanged); then `engine.schema.apply.apply_plan` runs those
bytes under its lock, after its own hash, policy, parse and stale-plan checks. Its answer is
reported as it is: Applied only when every statement ran and committed; Refused when nothing
ran; Unknown for any error once execution began, or when the runner cannot hear the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime as dt
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from ptah_operator.api.constants import MAX_CHUNK_CHARS, MAX_PLAN_CHUNKS
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.contracts.operation import (
    ResourceRef,
    SchemaDocument,
    SchemaPlanRef,
)
from ptah_operator.engine.migrations.connection import (
    BadURLError,
    ConnectionLostError,
    DatabaseError,
    Engine,
    connect,
)
from ptah_operator.engine.schema.apply import (
    ApplyResult,
    acquire_lock,
    apply_plan,
    lock_key,
    lock_name,
)
from ptah_operator.engine.schema.connection import Connection, TargetError
from ptah_operator.engine.schema.connection import parse_url as parse_schema_url
from ptah_operator.engine.schema.diff import PlanError
from ptah_operator.engine.schema.drift import drift_report
from ptah_operator.engine.schema.functions import FunctionError
from ptah_operator.engine.schema.normalize import NormalizationError
from ptah_operator.engine.schema.operations import PlanResult, plan_url
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.timeouts import Timeouts
from ptah_operator.engine.schema.views import ViewError
from ptah_operator.runner.checks import (
    Now,
    StoppedError,
    check_files,
    check_url,
    connection_message,
    utc_now,
)
from ptah_operator.runner.database_commands import (
    Finished,
    begin,
    finish,
    report,
    until_done,
)
from ptah_operator.runner.document import ErrorBlock, Json
from ptah_operator.runner.report import get_plan, put_piece
from ptah_operator.runner.schema_document import (
    ApplyReason,
    Piece,
    PlanTooLargeError,
    apply_block,
    describe_schema,
    drift_block,
    failure_block,
    plan_block,
    plan_pieces,
    protected_tables,
    sha256_digest,
)

log = structlog.get_logger("ptah.runner")

MAX_PLAN_BYTES = MAX_PLAN_CHUNKS * 4 * MAX_CHUNK_CHARS
"""The most a published plan can hold: 64 chunks of 262,144 characters of up to 4 bytes."""

_DESIRED_ERRORS = (DesiredSchemaError, NormalizationError, ViewError, FunctionError)
_NO_POLICY = Policy(protected_tables=(), allow_destructive=True)


@dataclass(frozen=True)
class SchemaOperation:
    operation_id: str
    type: str
    resource: ResourceRef
    engine: Engine
    scope: Scope
    protected_tables: tuple[str, ...]
    allow_destructive: bool
    timeouts: Timeouts = dataclasses.field(default_factory=Timeouts)
    content_digest: str | None = None
    expected_target_digest: str | None = None
    proof: bool = False
    plan: SchemaPlanRef | None = None
    planned_target_digest: str | None = None

    @property
    def is_apply(self) -> bool:
        return self.type == "Apply"

    @property
    def policy(self) -> Policy:
        """The schema's policy, as the engine holds a plan to it."""
        return Policy(self.protected_tables, self.allow_destructive)


def parse_schema_operation(text: str) -> SchemaOperation:
    """Read and check a PtahSchema's Observe, Plan or Apply document; raises OperationError
    saying what is wrong."""
    document = SchemaDocument.parse(text)
    scope = document.scope
    policy = document.policy
    lock = policy.lock_timeout_seconds
    return SchemaOperation(
        operation_id=document.operation_id,
        type=document.type,
        resource=document.resource,
        engine=Engine(document.engine),
        scope=Scope(
            schemas=scope.schemas or Scope().schemas,
            tables=scope.include_tables,
            exclude=scope.exclude_tables,
        ),
        protected_tables=policy.protected_tables,
        allow_destructive=policy.allow_destructive,
        timeouts=Timeouts(
            lock=Timeouts().lock if lock is None else lock or None,
            statement=policy.statement_timeout_seconds or None,
        ),
        content_digest=document.content_digest,
        expected_target_digest=document.expected_target_digest,
        proof=document.proof,
        plan=document.plan,
        planned_target_digest=document.planned_target_digest,
    )


@dataclass(frozen=True)
class Upload:
    """What storing one piece came to: None when stored, else why not (no content)."""

    refused: str | None = None


Uploader = Callable[[Piece], Awaitable[Upload]]
"""Stores one piece of the plan file with the endpoint (main.py gives it the token)."""


@dataclass(frozen=True)
class Fetched:
    """The plan's bytes, or why they could not be had (no content)."""

    data: bytes | None = None
    refused: str | None = None


Fetcher = Callable[[], Awaitable[Fetched]]
"""Fetches the published plan from the endpoint (main.py gives it the token)."""


@dataclass
class SchemaProgress:
    """What an operation got to, so an interrupted one can be reported truthfully."""

    started_at: dt.datetime = field(default_factory=utc_now)
    target_identity_digest: str | None = None
    plan_digest: str | None = None
    apply_started: bool = False
    executed: int = 0


# --- checks every operation makes ----------------------------------------------------------


def _check_url(operation: SchemaOperation, url: str | None) -> str:
    return check_url(
        url, operation.engine, also=parse_schema_url, refused=(BadURLError, TargetError)
    )


async def _identity(url: str) -> str:
    """The database's identity digest, read as the migration runner reads it."""
    try:
        db = await connect(url)
    except ConnectionLostError as exc:
        raise StoppedError.of(
            ErrorReason.CONNECTION_FAILED, connection_message(exc.detail)
        ) from None
    except BadURLError as exc:
        raise StoppedError.of(ErrorReason.BAD_URL, str(exc)) from None
    try:
        return await db.identity_digest()
    except ConnectionLostError as exc:
        raise StoppedError.of(
            ErrorReason.CONNECTION_FAILED, connection_message(exc.detail)
        ) from None
    except DatabaseError as exc:
        raise StoppedError.of(
            ErrorReason.INTROSPECTION_FAILED,
            f"reading the database's identity failed with {exc.error_class.describe()}",
        ) from None
    finally:
        with contextlib.suppress(Exception):
            await db.close()


def _database_code(exc: BaseException) -> tuple[str | None, int | None]:
    """The error class of a driver's exception: SQLSTATE or MySQL error number, never text."""
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and sqlstate:
        return sqlstate, None
    args = getattr(exc, "args", ())
    if args and isinstance(args[0], int) and not isinstance(args[0], bool):
        return None, args[0]
    return None, None


def engine_error(exc: Exception, files_dir: Path | None = None) -> ErrorBlock:
    """What stopped the engine, as an `error` block: the engine's own message where it is
    made to be shown (it names files and objects, never SQL or data), else the class of the
    failure only (a driver's message may quote a statement, a row or the server's address)."""
    if isinstance(exc, _DESIRED_ERRORS):
        message = str(exc)
        if files_dir is not None:
            message = message.replace(f"{files_dir}/", "")
        named = message.split(": ", 1)[0] if ": " in message else ""
        return ErrorBlock(
            ErrorReason.DESIRED_SCHEMA_REFUSED,
            message[:1024],
            file=named if named.endswith((".sql", ".hcl")) else None,
        )
    if isinstance(exc, PlanError):
        return ErrorBlock(ErrorReason.PLAN_REFUSED, str(exc)[:1024])
    if isinstance(exc, TargetError):
        return ErrorBlock(ErrorReason.BAD_URL, str(exc))
    if isinstance(exc, OSError | TimeoutError):
        # Before the error numbers: an OSError's first argument is the system's errno.
        return ErrorBlock(
            ErrorReason.CONNECTION_FAILED,
            f"the database could not be reached ({type(exc).__name__})",
        )
    sqlstate, errno = _database_code(exc)
    if sqlstate is not None:
        return ErrorBlock(
            ErrorReason.INTROSPECTION_FAILED,
            f"the database answered SQLSTATE {sqlstate}",
        )
    if errno is not None:
        if 2000 <= errno < 3000:
            return ErrorBlock(
                ErrorReason.CONNECTION_FAILED,
                f"the database could not be reached (MySQL error {errno})",
            )
        return ErrorBlock(
            ErrorReason.INTROSPECTION_FAILED, f"the database answered MySQL error {errno}"
        )
    return ErrorBlock(
        ErrorReason.RUNNER_ERROR, f"the engine stopped unexpectedly ({type(exc).__name__})"
    )


async def _plan_once(url: str, files_dir: Path, operation: SchemaOperation) -> PlanResult:
    try:
        return await plan_url(url, [files_dir], operation.scope, operation.timeouts)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        error = engine_error(exc, files_dir)
        raise StoppedError.of(error.reason, error.message) from None


def _stopped(
    operation: SchemaOperation, progress: SchemaProgress, now: Now, stop: StoppedError
) -> Finished:
    log.warning("operation could not do its work", reason=stop.error.reason)
    return finish(operation, progress, now, error=stop.error, summary=stop.error.reason)


# --- Observe ---------------------------------------------------------------------------------


async def run_observe(
    operation: SchemaOperation,
    files_dir: Path,
    url: str | None,
    progress: SchemaProgress,
    now: Now = utc_now,
) -> Finished:
    """One scoped plan of the files against the database, reported as drift aggregates."""
    try:
        check_files(files_dir, operation.content_digest)
        checked = _check_url(operation, url)
        progress.target_identity_digest = await _identity(checked)
        result = await _plan_once(checked, files_dir, operation)
    except StoppedError as stop:
        return _stopped(operation, progress, now, stop)
    dialect = result.observed.dialect
    report = drift_report(dialect, result.statements)
    drift = drift_block(dialect.value, result.statements, str(report["digest"]))
    log.info("drift observed", total=drift["total"], highest=drift["highestSeverity"])
    return finish(operation, progress, now, drift=drift, summary="Observed")


# --- Plan ------------------------------------------------------------------------------------


class _SchemaLock:
    """The engine's schema lock, held on a session of its own while the plans are made."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    @classmethod
    async def take(cls, url: str, wait_seconds: float) -> _SchemaLock:
        try:
            conn = await Connection.open(url)
        except Exception as exc:
            error = engine_error(exc)
            raise StoppedError.of(error.reason, error.message) from None
        try:
            taken = await acquire_lock(conn, wait_seconds)
        except Exception as exc:
            with contextlib.suppress(Exception):
                await conn.close()
            error = engine_error(exc)
            raise StoppedError.of(error.reason, error.message) from None
        if not taken:
            with contextlib.suppress(Exception):
                await conn.close()
            raise StoppedError.of(
                ErrorReason.LOCK_NOT_ACQUIRED,
                f"the database's schema lock was not free within {wait_seconds:g} s",
            )
        log.info("schema lock taken")
        return cls(conn)

    async def give_back(self) -> bool:
        """Release the lock; whether this session still held it (a session that ended, or
        was ended, released it long before)."""
        conn = self.conn
        held = False
        try:
            if conn.dialect.family == "postgresql":
                held = bool(
                    await conn.raw.fetchval(
                        "SELECT pg_advisory_unlock($1)", lock_key(conn.target.database)
                    )
                )
            else:
                async with conn.raw.cursor() as cur:
                    await cur.execute("SELECT RELEASE_LOCK(%s)", (lock_name(conn.target.database),))
                    row = await cur.fetchone()
                held = bool(row and row[0] == 1)
        except Exception as exc:
            log.warning("schema lock session lost", error=type(exc).__name__)
        finally:
            with contextlib.suppress(Exception):
                await conn.close()
        return held


async def _dry_run(
    url: str, plan_bytes: bytes, lock_timeout: float, timeouts: Timeouts
) -> dict[str, Any]:
    """The Apply path reads the exact bytes (hash, statements, lock, stale check) and tries
    them without keeping anything: on PostgreSQL it runs them in a transaction it rolls back;
    on MySQL/MariaDB it prepares each and checks the rows. What it checked is returned."""
    try:
        result = await apply_plan(
            url,
            plan_bytes,
            policy=_NO_POLICY,
            dry_run=True,
            lock_timeout=lock_timeout,
            timeouts=timeouts,
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        error = engine_error(exc)
        raise StoppedError.of(error.reason, error.message) from None
    if result.outcome == "dryRun":
        return result.detail
    if result.reason == "LockNotAcquired":
        raise StoppedError.of(
            ErrorReason.LOCK_LOST,
            "the schema lock was taken by another session before the dry run could hold it",
        )
    detail = result.detail
    where = f"statement {detail['statement']}" if "statement" in detail else "the plan"
    if result.reason == "DryRunRefused":
        code = detail.get("sqlstate") or detail.get("error", "an error")
        raise StoppedError.of(
            ErrorReason.DRY_RUN_REFUSED,
            f"{where} failed when the plan was tried and rolled back (SQLSTATE {code}); "
            "nothing was kept",
        )
    if result.reason == "PrecheckRefused":
        check = detail.get("check", "a check")
        raise StoppedError.of(
            ErrorReason.PRECHECK_REFUSED,
            f"{where} would fail: {check} found what it refuses (errno "
            f"{detail.get('errno', '-')}); nothing ran",
        )
    raise StoppedError.of(
        ErrorReason.DRY_RUN_REFUSED,
        f"the Apply path refuses the plan ({result.reason or result.outcome})",
    )


async def _upload(pieces: Sequence[Piece], upload: Uploader) -> None:
    for piece in pieces:
        stored = await upload(piece)
        if stored.refused is not None:
            raise StoppedError.of(
                ErrorReason.PLAN_NOT_UPLOADED,
                f"piece {piece.index} of the plan file was not stored: {stored.refused}",
            )


async def run_plan(
    operation: SchemaOperation,
    files_dir: Path,
    url: str | None,
    progress: SchemaProgress,
    upload: Uploader,
    now: Now = utc_now,
    *,
    lock_timeout: float,
) -> Finished:
    """Two independent scoped plans under the schema lock, compared byte for byte, dry-run on
    the Apply path, uploaded when they change something."""
    try:
        check_files(files_dir, operation.content_digest)
        checked = _check_url(operation, url)
        lock = await _SchemaLock.take(checked, lock_timeout)
        try:
            progress.target_identity_digest = await _identity(checked)
            first = await _plan_once(checked, files_dir, operation)
            second = await _plan_once(checked, files_dir, operation)
        finally:
            held = await lock.give_back()
        if not held:
            raise StoppedError.of(
                ErrorReason.LOCK_LOST,
                "the session holding the schema lock ended before the plans were made",
            )
        if first.plan_bytes != second.plan_bytes:
            raise StoppedError.of(
                ErrorReason.PLAN_INCOHERENT,
                "two independent plans of the same files and database differ",
            )
        trial = await _dry_run(checked, first.plan_bytes, lock_timeout, operation.timeouts)
        statements = first.statements
        pieces: list[Piece] = []
        if statements:
            try:
                pieces = plan_pieces(first.plan_bytes)
            except PlanTooLargeError as exc:
                raise StoppedError.of(ErrorReason.PLAN_TOO_LARGE, str(exc)) from None
            await _upload(pieces, upload)
    except StoppedError as stop:
        return _stopped(operation, progress, now, stop)
    plan = plan_block(
        dialect=first.observed.dialect.value,
        observed_fingerprint=first.observed.fingerprint(),
        desired_fingerprint=first.desired.fingerprint(),
        statements=statements,
        plan_bytes=first.plan_bytes,
        pieces=pieces,
        protected=protected_tables(statements, operation.protected_tables),
        trial=trial,
    )
    log.info(
        "plan made",
        changes=plan["changes"],
        statements=len(statements),
        pieces=len(pieces),
        highest=plan.get("severity", {}).get("highest"),
    )
    return finish(operation, progress, now, plan=plan, summary="Planned")


# --- Apply -----------------------------------------------------------------------------------


def _refused(
    operation: SchemaOperation,
    progress: SchemaProgress,
    now: Now,
    reason: str,
    error: ErrorBlock | None = None,
) -> Finished:
    log.warning("apply refused", reason=reason)
    return finish(
        operation,
        progress,
        now,
        apply=apply_block("Refused", reason=reason, plan_digest=progress.plan_digest),
        error=error,
        summary=reason,
    )


def apply_answer(
    operation: SchemaOperation, progress: SchemaProgress, now: Now, result: ApplyResult
) -> Finished:
    """The engine's answer as the report says it. Refused by the lock is also an `error`
    (the operation could not do its work); other refusals are the plan's verdict."""
    detail: dict[str, Any] = result.detail
    if result.outcome == "applied":
        block = apply_block("Applied", plan_digest=progress.plan_digest, executed=result.executed)
        error = None
    elif result.outcome == "refused":
        block = apply_block("Refused", reason=result.reason, plan_digest=progress.plan_digest)
        error = (
            ErrorBlock(
                ErrorReason.LOCK_NOT_ACQUIRED,
                "the database's schema lock was not free in time; nothing ran",
            )
            if result.reason == "LockNotAcquired"
            else None
        )
    else:
        block = apply_block(
            "Unknown",
            reason=ApplyReason.APPLY_OUTCOME_UNKNOWN,
            plan_digest=progress.plan_digest,
            executed=result.executed,
            failure=failure_block(detail) if detail else None,
        )
        error = None
    log.info(
        "apply finished",
        outcome=block["outcome"],
        reason=block.get("reason"),
        executed=block["statementsExecuted"],
    )
    return finish(operation, progress, now, apply=block, error=error, summary=block["outcome"])


async def run_apply(
    operation: SchemaOperation,
    url: str | None,
    progress: SchemaProgress,
    fetch: Fetcher,
    now: Now = utc_now,
    *,
    lock_timeout: float,
) -> Finished:
    """Fetch the published plan, hash it, check the database, and run exactly those bytes."""
    plan = operation.plan
    planned = operation.planned_target_digest
    # parse_schema_operation sees to both.
    assert plan is not None
    assert planned is not None
    try:
        checked = _check_url(operation, url)
    except StoppedError as stop:
        return _refused(operation, progress, now, ApplyReason.NOT_STARTED, stop.error)
    fetched = await fetch()
    if fetched.data is None:
        error = ErrorBlock(
            ErrorReason.PLAN_UNAVAILABLE,
            f"the published plan could not be fetched: {fetched.refused or 'no answer'}",
        )
        return _refused(operation, progress, now, ApplyReason.PLAN_UNAVAILABLE, error)
    raw = fetched.data
    progress.plan_digest = sha256_digest(raw)
    if progress.plan_digest != plan.digest or len(raw) != plan.size:
        # Not the published plan's bytes: nothing of them is run (SCH-57).
        return _refused(operation, progress, now, ApplyReason.PLAN_DIGEST_MISMATCH)
    try:
        progress.target_identity_digest = await _identity(checked)
    except StoppedError as stop:
        return _refused(operation, progress, now, ApplyReason.NOT_STARTED, stop.error)
    if progress.target_identity_digest != planned:
        # The URL now names another database than the plan was made for: refuse before the
        # engine touches it, and name the database it opened.
        return _refused(operation, progress, now, ApplyReason.TARGET_IDENTITY_CHANGED)

    def counted(event: dict[str, Any]) -> None:
        progress.executed += 1
        log.info(
            "statement ran",
            index=event.get("index"),
            total=event.get("total"),
            severity=event.get("severity"),
            category=event.get("category"),
        )

    progress.apply_started = True
    try:
        result = await apply_plan(
            checked,
            raw,
            policy=operation.policy,
            lock_timeout=lock_timeout,
            timeouts=operation.timeouts,
            progress=counted,
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        # The engine answers every execution error itself; reaching here is a fault whose
        # effect on the database is not known (SCH-59).
        log.error("the apply ended unexpectedly", error=type(exc).__name__)
        return finish(
            operation,
            progress,
            now,
            apply=apply_block(
                "Unknown",
                reason=ApplyReason.APPLY_OUTCOME_UNKNOWN,
                plan_digest=progress.plan_digest,
                executed=progress.executed,
            ),
            error=ErrorBlock(
                ErrorReason.RUNNER_ERROR,
                f"the apply ended unexpectedly ({type(exc).__name__}); what it committed is "
                "not known",
            ),
            summary=ErrorReason.RUNNER_ERROR,
        )
    return apply_answer(operation, progress, now, result)


def schema_interrupted(
    operation: SchemaOperation, progress: SchemaProgress, now: Now = utc_now
) -> Finished:
    """The result of an operation the runner was told to stop (SIGTERM) before it ended."""
    error = ErrorBlock(ErrorReason.INTERRUPTED, "the runner was stopped before it finished")
    block: Json | None = None
    if operation.is_apply:
        block = (
            apply_block(
                "Unknown",
                reason=ApplyReason.APPLY_OUTCOME_UNKNOWN,
                plan_digest=progress.plan_digest,
                executed=progress.executed,
            )
            if progress.apply_started
            else apply_block(
                "Refused", reason=ApplyReason.NOT_STARTED, plan_digest=progress.plan_digest
            )
        )
    return finish(operation, progress, now, apply=block, error=error, summary=error.reason)


def _files_refused(operation: SchemaOperation, files: Path | None) -> str | None:
    # The Pod that changes the database reads no source files: it runs the published plan.
    return "a schema Apply reads no --files" if operation.is_apply and files is not None else None


async def operate(args: argparse.Namespace, text: str) -> int:
    """Observe, Plan or Apply of a PtahSchema (docs/design/schema-path.md)."""
    begun = begin(args, text, parse_schema_operation, _files_refused)
    if isinstance(begun, int):
        return begun
    operation, settings, url = begun.operation, begun.settings, begun.url
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
        work = run_apply(operation, url, progress, fetch, lock_timeout=settings.lock_timeout)
    finished = await until_done(work)
    if finished is None:
        log.warning("operation interrupted", apply_started=progress.apply_started)
        finished = schema_interrupted(operation, progress)
    return await report(
        settings, namespace, operation_id, finished, describe_schema(finished.document)
    )
