"""Applying a migration sequence, and saying honestly what happened.

The run, in order:
 1. Take the database's advisory lock (waiting at most `lock_timeout`).
 2. Read the history once and evaluate it (status.evaluate). A blocking verdict refuses.
 3. Compare the selection (Ptah's own pending list) with the expected sequence, if one was
    given: versions and checksums must be equal, or the run refuses. An empty selection with
    every expected version already applied under the same checksum is UpToDate.
 4. Split every selected file and check every file can run in its transaction mode; any
    refusal here comes before a single statement runs.
 5. Only then create the revision table (or add an older table's newer columns) and run.

Every refusal in 1-4 writes nothing: the database and the revision table stay as they were.

Transaction modes:
  file  each file and its revision row commit together (the default). MySQL and MariaDB
        commit DDL implicitly, so a file holding such a statement (or a compound statement,
        which may hold one) is refused in this mode: it could not be witnessed as one unit. A transaction-control statement (BEGIN,
        COMMIT, ...) is refused in this mode on every engine for the same reason.
  none  each statement stands alone. A `failed` row with zero statements applied is written
        first, and `statements_applied` moves after every statement, so a file that stops
        halfway (an error, a kill, a lost session) leaves a dirty row saying how far it got.
        A file with `-- +ptah no_transaction` runs in this mode whatever the run's mode.

Outcomes (the seeds' table; Decisions 11 and 22):
  UpToDate  nothing was selected; the database already had every expected migration
  Applied   every selected migration is recorded applied
  Failed    the run refused before running anything, or a file failed and none of its
            statements committed (its dirty row says 0 applied)
  Partial   a file failed after at least one of its statements committed
  Unknown   the evidence could not be read: the session was lost mid-run, the revision
            table could not be written or read back, or a MySQL/MariaDB DDL statement failed
            in a way that may still have committed (RUN-19)
The outcome is confirmed by reading the revision table back after the run: what the table
holds, not what the process believes, settles it (RUN-02). A run's message names the version
and the error class only; no SQL text, row data or server message is ever kept.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.connection import (
    BatchCountError,
    BatchError,
    CommitFailedError,
    ConnectionLostError,
    Database,
    DatabaseError,
    ErrorClass,
)
from ptah_operator.engine.migrations.directory import MigrationDirectory, MigrationFile
from ptah_operator.engine.migrations.revision_table import (
    STATE_APPLIED,
    STATE_FAILED,
    NewRevision,
    RevisionRead,
    RevisionTable,
    RevisionTableError,
    ensure_table,
    finish_revision,
    insert_revision,
    insert_revision_and_commit,
    insert_revision_sql,
    read_revisions,
    record_progress,
)
from ptah_operator.engine.migrations.status import Status, evaluate
from ptah_operator.engine.patterns import or_non_ascii
from ptah_operator.engine.splitter import SplitError, Statement, leading_keywords, split

Reconnect = Callable[[], Awaitable[Database]]


class TransactionMode(StrEnum):
    FILE = "file"
    NONE = "none"


class Outcome(StrEnum):
    UP_TO_DATE = "UpToDate"
    APPLIED = "Applied"
    FAILED = "Failed"
    PARTIAL = "Partial"
    UNKNOWN = "Unknown"


@dataclass(frozen=True)
class ExpectedMigration:
    version: int
    checksum: str


@dataclass(frozen=True)
class Failure:
    """Where a run stopped, when a statement reached the database and failed there."""

    version: int
    statement_index: int
    sqlstate: str | None
    mysql_errno: int | None


@dataclass(frozen=True)
class StatementWarning:
    """A warning the server raised for one statement: its code and position, never its text."""

    version: int
    statement_index: int
    line: int
    code: str


@dataclass(frozen=True)
class StoppedAt:
    """The file a run stopped in and how far it got (statements known committed)."""

    version: int
    statements_applied: int
    statements_total: int


@dataclass
class RunResult:
    outcome: Outcome
    reason: str
    message: str
    selected: bool = False
    selection: list[ExpectedMigration] = field(default_factory=list)
    applied_versions: list[int] = field(default_factory=list)
    failure: Failure | None = None
    stopped_at: StoppedAt | None = None
    target_identity_digest: str | None = None
    transaction_mode: TransactionMode = TransactionMode.FILE
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    status_before: Status | None = None
    warnings: list[StatementWarning] = field(default_factory=list)


# Statements that end a transaction on every engine, so a file holding one is not one unit.
_TRANSACTION_CONTROL = frozenset(
    {"BEGIN", "START", "COMMIT", "ROLLBACK", "END", "ABORT", "PREPARE", "XA"}
)
# MySQL/MariaDB statements that commit implicitly (the reference manual's list).
_IMPLICIT_COMMIT = frozenset(
    {
        "ALTER",
        "CREATE",
        "DROP",
        "RENAME",
        "TRUNCATE",
        "GRANT",
        "REVOKE",
        "LOCK",
        "UNLOCK",
        "ANALYZE",
        "CHECK",
        "OPTIMIZE",
        "REPAIR",
        "FLUSH",
        "RESET",
        "INSTALL",
        "UNINSTALL",
        "CACHE",
        "LOAD",
    }
)
# MySQL errors raised before a DDL statement changes anything (parsing, names, privileges):
# such a failure is known not to have committed. Any other DDL failure may have (RUN-19).
_MYSQL_DDL_FAILED_CLEANLY = frozenset(
    {
        1044, 1045, 1046, 1049, 1050, 1051, 1054, 1059, 1060, 1061, 1063, 1064, 1068, 1072,
        1091, 1142, 1143, 1146, 1149, 1166, 1170, 1227, 1304, 1305, 1359, 1360, 1449, 1630,
    }
)  # fmt: skip


# MariaDB compound statements outside routines: whatever they hold (DDL, COMMIT) runs inside
# them, so a transaction cannot witness one either.
_MYSQL_COMPOUND = frozenset({"IF", "CASE", "LOOP", "REPEAT", "WHILE", "FOR"})


# A label before a compound statement: `name:` or `` `name`: `` (never `:=`).
_LABEL = re.compile(rf"\s*(?:`(?:[^`]|``)*`|{or_non_ascii('A-Za-z0-9_$')}+)\s*:(?!=)")


def _is_compound_block(words: tuple[str, ...]) -> bool:
    return bool(words) and (words[0] in _MYSQL_COMPOUND or words[:3] == ("BEGIN", "NOT", "ATOMIC"))


def _is_labelled_compound_block(statement: Statement) -> bool:
    label = _LABEL.match(statement.text)
    rest = statement.text[label.end() :] if label is not None else ""
    return label is not None and _is_compound_block(leading_keywords(rest, Dialect.MYSQL))


def is_transaction_control(statement: Statement) -> bool:
    words = statement.keywords
    if not words or words[0] not in _TRANSACTION_CONTROL:
        return False
    if words[:3] == ("BEGIN", "NOT", "ATOMIC"):
        return False  # a MariaDB compound block, not a transaction
    if words[0] == "ROLLBACK" and len(words) > 1 and words[1] == "TO":
        return False  # ROLLBACK TO SAVEPOINT stays inside the transaction
    if words[0] == "START":
        return len(words) > 1 and words[1] == "TRANSACTION"
    return not (words[0] == "PREPARE" and (len(words) < 2 or words[1] != "TRANSACTION"))


def commits_implicitly(statement: Statement) -> bool:
    """True when MySQL/MariaDB would commit around this statement (DDL and the like)."""
    words = statement.keywords
    if _is_labelled_compound_block(statement):
        return True  # `name: BEGIN NOT ATOMIC ... END`, `name: LOOP ... END LOOP`
    if not words:
        return False
    first = words[0]
    if first in {"CREATE", "DROP"} and len(words) > 1 and words[1] == "TEMPORARY":
        return False
    if first == "LOAD":
        return len(words) > 1 and words[1] == "INDEX"
    if first == "SET":
        return len(words) > 1 and words[1] in {"AUTOCOMMIT", "PASSWORD"}
    if _is_compound_block(words):
        return True  # it may hold a statement that commits
    return first in _IMPLICIT_COMMIT or is_transaction_control(statement)


def _may_have_committed(dialect: Dialect, statement: Statement, error: ErrorClass) -> bool:
    if dialect is not Dialect.MYSQL or not commits_implicitly(statement):
        return False
    return error.mysql_errno not in _MYSQL_DDL_FAILED_CLEANLY


@dataclass(frozen=True)
class _Planned:
    file: MigrationFile
    statements: list[Statement]
    mode: TransactionMode


class _RefusedError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def _millis(since: float) -> int:
    return int((time.monotonic() - since) * 1000)


async def apply(
    db: Database,
    directory: MigrationDirectory,
    *,
    table: RevisionTable,
    expected: Sequence[ExpectedMigration] | None = None,
    mode: TransactionMode | None = None,
    lock_timeout: float = 30.0,
    reconnect: Reconnect | None = None,
) -> RunResult:
    """Run the pending sequence (or exactly `expected`) and return the confirmed outcome."""
    result = RunResult(
        outcome=Outcome.FAILED,
        reason="",
        message="",
        transaction_mode=mode or TransactionMode.FILE,
    )
    session: Database | None = db
    try:
        result.target_identity_digest = await db.identity_digest()
        if not await db.try_lock(lock_timeout):
            return _refuse(
                result, "LockTimeout", f"the migration lock was not free within {lock_timeout:g}s"
            )
        try:
            read = await read_revisions(db, table)
            plans = _select(result, directory, read, expected, db.dialect, mode)
            if plans is None:
                return result
            result.selected = True
            await ensure_table(db, table, read)
            session = await _run(result, db, table, plans)
        finally:
            if session is not None:
                try:
                    await session.unlock()
                except (ConnectionLostError, DatabaseError):
                    session = None
    except _RefusedError as refusal:
        return _refuse(result, refusal.reason, refusal.message)
    except RevisionTableError as exc:
        return _refuse(result, exc.reason, str(exc))
    except ConnectionLostError as exc:
        if not result.selected:
            return _refuse(result, "ConnectionLostError", exc.detail)
        result.outcome = Outcome.UNKNOWN
        result.reason = "ConnectionLostError"
        result.message = "the session was lost during the run; what it committed is not known"
        session = None
    except DatabaseError as exc:
        if not result.selected:
            return _refuse(
                result,
                "DatabaseBusy" if exc.error_class.transient else "DatabaseError",
                f"reading the history failed with {exc.error_class.describe()}",
            )
        result.outcome = Outcome.UNKNOWN
        result.reason = "RevisionTableUnwritable"
        result.message = f"writing the revision table failed with {exc.error_class.describe()}"
    if result.selected:
        await _confirm(result, session, table, reconnect)
    result.finished_at = datetime.now(UTC)
    return result


def _refuse(result: RunResult, reason: str, message: str) -> RunResult:
    result.outcome = Outcome.FAILED
    result.reason = reason
    result.message = message
    result.selected = False
    result.finished_at = datetime.now(UTC)
    return result


def _select(
    result: RunResult,
    directory: MigrationDirectory,
    read: RevisionRead,
    expected: Sequence[ExpectedMigration] | None,
    dialect: Dialect,
    mode: TransactionMode | None,
) -> list[_Planned] | None:
    status = evaluate(directory, read)
    result.status_before = status
    if status.verdict.blocks:
        raise _RefusedError(status.verdict.reason, _verdict_message(status))
    selection = [ExpectedMigration(f.version, f.checksum) for f in status.pending]
    result.selection = selection
    if expected is not None and list(expected) != selection:
        recorded = {row.version: row for row in read.rows}
        already = not selection and all(
            e.version in recorded
            and recorded[e.version].state == STATE_APPLIED
            and recorded[e.version].checksum == e.checksum
            for e in expected
        )
        if not already:
            raise _RefusedError(
                "SequenceMismatch",
                "the pending sequence under the lock differs from the expected sequence"
                f" (expected {[e.version for e in expected]},"
                f" selected {[s.version for s in selection]})",
            )
    if not status.pending:
        result.outcome = Outcome.UP_TO_DATE
        result.reason = "UpToDate"
        result.message = "the database already has every migration"
        result.finished_at = datetime.now(UTC)
        return None
    plans: list[_Planned] = []
    for file in status.pending:
        try:
            statements = split(file.sql, dialect)
        except SplitError as exc:
            raise _RefusedError("UnsplittableFile", f"version {file.version}: {exc}") from None
        file_mode = TransactionMode.NONE if file.no_transaction else (mode or TransactionMode.FILE)
        if file_mode is TransactionMode.FILE:
            for index, statement in enumerate(statements, start=1):
                if is_transaction_control(statement):
                    raise _RefusedError(
                        "TransactionModeRefused",
                        f"version {file.version}: statement {index} controls the transaction,"
                        " which transaction mode file cannot witness",
                    )
                if dialect is Dialect.MYSQL and commits_implicitly(statement):
                    raise _RefusedError(
                        "TransactionModeRefused",
                        f"version {file.version}: statement {index} commits implicitly on"
                        " MySQL/MariaDB, so the file cannot run as one unit; use transaction"
                        " mode none",
                    )
        plans.append(_Planned(file=file, statements=statements, mode=file_mode))
    return plans


def _verdict_message(status: Status) -> str:
    if status.dirty:
        row = status.dirty[0]
        return (
            f"the history is dirty at version {row.version}"
            f" ({row.statements_applied}/{row.statements_total} statements applied)"
        )
    if status.modified_versions:
        return f"recorded checksums no longer match versions {list(status.modified_versions)}"
    if status.ahead_versions:
        return (
            f"the database is at version {status.current_version}, past the directory's"
            f" newest version {status.artifact_version}"
        )
    return f"pending versions {list(status.out_of_order_versions)} sort below version {status.current_version}"


async def _run(
    result: RunResult, db: Database, table: RevisionTable, plans: list[_Planned]
) -> Database:
    for plan in plans:
        if plan.mode is TransactionMode.FILE:
            done = await _run_in_transaction(result, db, table, plan)
        else:
            done = await _run_statements(result, db, table, plan)
        if not done:
            return db
        result.applied_versions.append(plan.file.version)
    result.outcome = Outcome.APPLIED
    result.reason = "Applied"
    result.message = f"applied {len(result.applied_versions)} migration(s)"
    return db


def _up_row(
    plan: _Planned, state: str, applied: int, millis: int | None, error: str | None = None
) -> NewRevision:
    """The row `up` writes for a planned file (recorded_by `up`, the file's statement count)."""
    return NewRevision(
        plan.file,
        state=state,
        statements_applied=applied,
        statements_total=len(plan.statements),
        execution_millis=millis,
        error_class=error,
        recorded_by="up",
    )


async def _run_in_transaction(
    result: RunResult, db: Database, table: RevisionTable, plan: _Planned
) -> bool:
    file, total = plan.file, len(plan.statements)
    started = time.monotonic()
    if db.dialect is Dialect.MYSQL and not any(
        s.keywords[:1] == ("CALL",) for s in plan.statements
    ):
        return await _run_batched(result, db, table, plan)
    # Where the engine can, BEGIN goes with the first statement (PostgreSQL); elsewhere, or for
    # a file of comments only, it goes alone, before any statement is counted.
    combined = db.begins_with_first_statement and bool(plan.statements)
    if not combined:
        await db.begin()
    for index, statement in enumerate(plan.statements, start=1):
        try:
            await _execute(result, db, plan, index, statement, opening=combined and index == 1)
        except DatabaseError as exc:
            await db.rollback()
            await _record_failure(db, table, plan, 0, _millis(started), exc.error_class)
            _stopped(result, plan, 0, index, exc.error_class, Outcome.FAILED)
            return False
        except ConnectionLostError:
            result.stopped_at = StoppedAt(file.version, 0, total)
            raise
    try:
        await insert_revision_and_commit(
            db, table, _up_row(plan, STATE_APPLIED, total, _millis(started))
        )
    except CommitFailedError as exc:
        return await _commit_failed(result, db, table, plan, started, exc.error_class)
    return True


async def _commit_failed(
    result: RunResult,
    db: Database,
    table: RevisionTable,
    plan: _Planned,
    started: float,
    error: ErrorClass,
) -> bool:
    """Every statement ran and the commit failed (a deferred constraint): there is no
    statement to point at, so `failure` stays unset (RUN-18)."""
    await _record_failure(db, table, plan, 0, _millis(started), error)
    result.outcome = Outcome.FAILED
    result.reason = "CommitFailed"
    result.message = f"version {plan.file.version}: the commit failed with {error.describe()}"
    result.stopped_at = StoppedAt(plan.file.version, 0, len(plan.statements))
    return False


async def _run_batched(
    result: RunResult, db: Database, table: RevisionTable, plan: _Planned
) -> bool:
    """File mode on MySQL/MariaDB in one request: the transaction, the statements and the
    revision row, then COMMIT once every answer is in. The server measures the duration."""
    file, total = plan.file, len(plan.statements)
    started = time.monotonic()
    insert = insert_revision_sql(
        db,
        table,
        _up_row(plan, STATE_APPLIED, total, None),
        millis_expression="TIMESTAMPDIFF(MICROSECOND, @ptah_started, SYSDATE(6)) DIV 1000",
    )
    items: list[tuple[str, Sequence[object] | None]] = [
        ("START TRANSACTION", None),
        ("SET @ptah_started = SYSDATE(6)", None),
        *((s.text, None) for s in plan.statements),
        insert,
        ("COMMIT", None),
    ]
    try:
        await db.execute_batch(items)
        # One request for the whole file: a warning there has no statement to point at.
        db.take_warnings()
    except BatchError as exc:
        # The server stops at the first error, so the COMMIT at the end never ran.
        await db.rollback()
        index = exc.position - 2
        if exc.position == len(items):
            return await _commit_failed(result, db, table, plan, started, exc.error_class)
        if not 1 <= index <= total:
            # The transaction's own statements or the revision row failed, not the file.
            raise DatabaseError(exc.error_class) from None
        await _record_failure(db, table, plan, 0, _millis(started), exc.error_class)
        _stopped(result, plan, 0, index, exc.error_class, Outcome.FAILED)
        return False
    except BatchCountError:
        # The server split the request otherwise than Ptah did: what ran is not known.
        result.outcome = Outcome.UNKNOWN
        result.reason = "StatementCountMismatch"
        result.message = (
            f"version {file.version}: the server did not answer one result per statement;"
            " what it ran is not known"
        )
        result.stopped_at = StoppedAt(file.version, 0, total)
        return False
    except ConnectionLostError:
        result.stopped_at = StoppedAt(file.version, 0, total)
        raise
    return True


async def _execute(
    result: RunResult,
    db: Database,
    plan: _Planned,
    index: int,
    statement: Statement,
    *,
    opening: bool = False,
) -> None:
    """Run one statement of a file; its warnings are kept by code and position. `opening`: the
    file's transaction begins with it (in one request where the engine can)."""
    db.take_warnings()  # what the revision table's own statements raised is not the file's
    try:
        if opening:
            await db.begin_with(statement.text)
        else:
            await db.execute(statement.text)
    finally:
        result.warnings += [
            StatementWarning(plan.file.version, index, statement.line, code)
            for code in db.take_warnings()
        ]


async def _record_failure(
    db: Database,
    table: RevisionTable,
    plan: _Planned,
    applied: int,
    millis: int,
    error: ErrorClass,
) -> None:
    """The dirty row a file that failed in a transaction leaves behind (0 statements applied)."""
    await insert_revision(db, table, _up_row(plan, STATE_FAILED, applied, millis, error.code))


async def _run_statements(
    result: RunResult, db: Database, table: RevisionTable, plan: _Planned
) -> bool:
    file, total = plan.file, len(plan.statements)
    started = time.monotonic()
    await insert_revision(db, table, _up_row(plan, STATE_FAILED, 0, None))
    for index, statement in enumerate(plan.statements, start=1):
        try:
            await _execute(result, db, plan, index, statement)
        except DatabaseError as exc:
            committed = index - 1
            await finish_revision(
                db,
                table,
                version=file.version,
                state=STATE_FAILED,
                statements_applied=committed,
                execution_millis=_millis(started),
                error_class=exc.error_class.code,
            )
            if _may_have_committed(db.dialect, statement, exc.error_class):
                _stopped(result, plan, committed, index, exc.error_class, Outcome.UNKNOWN)
                result.reason = "OutcomeNotRecorded"
                result.message = (
                    f"version {file.version}: statement {index} failed with"
                    f" {exc.error_class.describe()}; it is not recorded whether it committed"
                )
            else:
                outcome = Outcome.FAILED if committed == 0 else Outcome.PARTIAL
                _stopped(result, plan, committed, index, exc.error_class, outcome)
            return False
        except ConnectionLostError:
            result.stopped_at = StoppedAt(file.version, index - 1, total)
            raise
        if index < total:
            await record_progress(db, table, file.version, index)
    await finish_revision(
        db,
        table,
        version=file.version,
        state=STATE_APPLIED,
        statements_applied=total,
        execution_millis=_millis(started),
        error_class=None,
    )
    return True


def _stopped(
    result: RunResult,
    plan: _Planned,
    committed: int,
    index: int,
    error: ErrorClass,
    outcome: Outcome,
) -> None:
    version = plan.file.version
    result.outcome = outcome
    result.reason = "StatementFailed" if outcome is not Outcome.UNKNOWN else "OutcomeNotRecorded"
    result.message = f"version {version}: statement {index} failed with {error.describe()}"
    result.failure = Failure(version, index, error.sqlstate, error.mysql_errno)
    result.stopped_at = StoppedAt(version, committed, len(plan.statements))


async def _confirm(
    result: RunResult,
    session: Database | None,
    table: RevisionTable,
    reconnect: Reconnect | None,
) -> None:
    """Read the revision table back; the outcome is what it holds (RUN-02)."""
    opened: Database | None = None
    try:
        if session is None:
            if reconnect is None:
                raise ConnectionLostError("no session to read the history back with")
            opened = session = await reconnect()
        read = await read_revisions(session, table)
    except (ConnectionLostError, DatabaseError, RevisionTableError):
        if result.outcome is not Outcome.UNKNOWN:
            result.outcome = Outcome.UNKNOWN
            result.reason = "HistoryUnreadable"
            result.message = "the revision table could not be read back after the run"
        return
    finally:
        if opened is not None:
            await opened.close()
    recorded = {row.version: row for row in read.rows}
    by_version = {s.version: s for s in result.selection}
    confirmed = [
        version
        for version in result.applied_versions
        if version in recorded
        and not recorded[version].dirty
        and recorded[version].checksum == by_version[version].checksum
    ]
    if result.outcome is Outcome.UNKNOWN:
        result.applied_versions = confirmed
        return
    if confirmed != result.applied_versions:
        missing = sorted(set(result.applied_versions) - set(confirmed))
        result.applied_versions = confirmed
        _disagrees(result, missing[0])
        return
    stop = result.stopped_at
    if stop is None:
        return
    row = recorded.get(stop.version)
    if row is None or not row.dirty or (row.statements_applied or 0) != stop.statements_applied:
        _disagrees(result, stop.version)


def _disagrees(result: RunResult, version: int) -> None:
    result.outcome = Outcome.UNKNOWN
    result.reason = "HistoryDisagrees"
    result.message = f"version {version} is not recorded as the run left it"
