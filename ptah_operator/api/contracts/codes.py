"""The vocabulary of the operation and result contracts that costs nothing to import.

The runner's init container that checks a snapshot loads this and no pydantic model; the
manager reads the same words back (a result's `error.reason`, a container's exit code).
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

OPERATION_CONTRACT = "ptah.run/operation/v1"
RESULT_CONTRACT = "ptah.run/result/v1"


class ExitCode(IntEnum):
    """How a runner command ends (runner/main.py's docstring says when each is given)."""

    REPORTED = 0
    """The result was reported, whatever it says; `fetch`: the files are written."""
    NOT_DONE = 1
    """The result was reported and says the operation could not do its work; `fetch`: the
    source cannot be reached."""
    USAGE = 2
    """The command line, the operation document or the endpoint's configuration cannot be
    used: nothing was run and nothing reported."""
    REFUSED = 3
    """`source`: the snapshot does not give the bound digest; `fetch`: the source refused (a
    digest that differs, a commit no longer reachable). The manager reads it as
    SnapshotRefused."""
    NOT_REPORTED = 4
    """The result could not be reported."""


class ErrorReason(StrEnum):
    """`error.reason` values: why an operation could not do its work. The set is closed: a
    report giving any other reason does not fit its contract (issue #18: the manager words
    status from these codes, never from a runner's text). The source operations' reasons are
    engine/sources/errors.py's, the same words."""

    CONNECTION_FAILED = "ConnectionFailed"
    BAD_URL = "BadURL"
    ENGINE_MISMATCH = "EngineMismatch"
    SNAPSHOT_REFUSED = "SnapshotRefused"
    INTERRUPTED = "Interrupted"
    RUNNER_ERROR = "RunnerError"
    # A migration's History and Apply.
    DIRECTORY_REFUSED = "DirectoryRefused"
    HISTORY_UNREADABLE = "HistoryUnreadable"
    """The revision table cannot be read for a cause that will not change by itself: a table
    Ptah cannot read (columns missing), a permission or any error class not known to pass."""
    DATABASE_BUSY = "DatabaseBusy"
    """Reading the history (or the database's identity) was refused with an error class that
    passes on its own: a lock or statement timeout, a deadlock or serialization failure, too
    many sessions, a server shutting down or starting."""
    LOCK_TIMEOUT = "LockTimeout"
    # A schema's Observe, Plan and Apply.
    DESIRED_SCHEMA_REFUSED = "DesiredSchemaRefused"
    PLAN_REFUSED = "PlanRefused"
    INTROSPECTION_FAILED = "IntrospectionFailed"
    PLAN_INCOHERENT = "PlanIncoherent"
    DRY_RUN_REFUSED = "DryRunRefused"
    PRECHECK_REFUSED = "PrecheckRefused"
    LOCK_NOT_ACQUIRED = "LockNotAcquired"
    LOCK_LOST = "LockLost"
    PLAN_TOO_LARGE = "PlanTooLarge"
    PLAN_NOT_UPLOADED = "PlanNotUploaded"
    PLAN_UNAVAILABLE = "PlanUnavailable"
    # A Resolve's and a Verify's (engine/sources/errors.py REASONS).
    SOURCE_UNREACHABLE = "SourceUnreachable"
    REF_NOT_FOUND = "RefNotFound"
    COMMIT_NOT_ADVERTISED = "CommitNotAdvertised"
    COMMIT_UNREACHABLE = "CommitUnreachable"
    SOURCE_REFUSED = "SourceRefused"


def error_class(sqlstate: str | None, mysql_errno: int | None) -> str:
    """A database error's class in words, the only part of it a report's words or status
    name: the runner's messages and the manager's status say it alike."""
    if sqlstate is not None:
        return f"SQLSTATE {sqlstate}"
    if mysql_errno is not None:
        return f"MySQL error {mysql_errno}"
    return "no error class"
