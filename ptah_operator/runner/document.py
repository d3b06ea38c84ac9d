"""The result document a runner reports (contract `ptah.run/result/v1`), built from the engine's
own findings. Pure: no I/O, no clock (times come in as arguments).

What goes in, and what never does (PRIV-01, PRIV-02, PRIV-05, Decision 22): versions,
descriptions, checksums, counts, statement positions, SQLSTATEs and MySQL error numbers. No
SQL text, no row, no server message, no URL.

Version spelling. The engine reads versions as integers; the document spells each one as the
migration file names it (`0000000001_init.up.sql` gives `0000000001`), so a plan, an Apply's
expected sequence and the revisions in status all show the same string. A version no file
carries (a database ahead of its files) is zero-padded to the files' common width when they
share one, else written in plain digits. `int()` reads every spelling back.

History block. `pending` is Ptah's own pending list (MIG-34), all of it up to 1000 entries
(`pendingCount` stays the true count); `revisions` are the newest 20 rows, newest first, with
`executionMillis` left out when the table recorded none (PATH-22). An Apply's history block is
the reading the run made under the lock, before it ran anything.

Run block (Apply only). `outcome`, `selected` and `appliedVersions` are the engine's confirmed
answer (RUN-02). `failure` is set only when a statement reached the database and failed
(RUN-17); a failed commit leaves it unset (RUN-18). `stoppedAt` names the file a run that did
not finish stopped in, whatever stopped it (a statement, a lost session, a failed commit, an
interruption), with the statements of it known committed (RUN-12). `message` names the migration version and
the database's error class, or the rule that refused the run, and nothing else.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ptah_operator.api.contracts.codes import error_class
from ptah_operator.api.fields import format_time
from ptah_operator.engine.migrations.apply import Outcome, RunResult
from ptah_operator.engine.migrations.directory import MigrationDirectory, printable
from ptah_operator.engine.migrations.revision_table import STATE_APPLIED, Revision
from ptah_operator.engine.migrations.status import Status, Verdict
from ptah_operator.runner.envelope import (
    Operated,
    envelope,
    present,
    report_code,
    reported_file,
)

MAX_PENDING = 1000
MAX_LISTED = 1000
MAX_REVISIONS = 20

Json = dict[str, Any]

_VERDICTS = {
    Verdict.DIRTY: "Dirty",
    Verdict.MODIFIED: "Modified",
    Verdict.OUT_OF_ORDER: "OutOfOrder",
    Verdict.AHEAD: "Ahead",
    Verdict.NOTHING_PENDING: "NothingPending",
    Verdict.READY: "ReadyToPlan",
}
_ERROR_CLASS = re.compile(r"SQLSTATE [0-9A-Z]{5}|MySQL error [0-9]+")


@dataclass(frozen=True)
class ErrorBlock:
    """An operation that could not do its work: the `error` block of the result."""

    reason: str
    message: str
    """The runner's own words, for a person reading the record or the Pod's log; the manager
    words status from `reason`, `code`, `file` and `line` alone (issue #18)."""
    code: str | None = None
    file: str | None = None
    line: int | None = None

    def as_json(self) -> Json:
        where = {
            "code": report_code(self.code),
            "file": reported_file(self.file),
            "line": self.line if self.line and reported_file(self.file) else None,
        }
        return {"reason": self.reason, **present(where), "message": self.message}


class VersionSpelling:
    """Spell engine versions (integers) the way the migration files name them."""

    def __init__(self, directory: MigrationDirectory | None) -> None:
        self._names: dict[int, str] = {}
        if directory is not None:
            self._names = {f.version: f.name.split("_", 1)[0] for f in directory.files}
        widths = {len(n) for n in self._names.values()}
        self._width = widths.pop() if len(widths) == 1 else None

    def __call__(self, version: int) -> str:
        named = self._names.get(version)
        if named is not None:
            return named
        text = str(version)
        if self._width is not None and len(text) < self._width:
            return text.zfill(self._width)
        return text

    def many(self, versions: Sequence[int], limit: int = MAX_LISTED) -> list[str]:
        return [self(v) for v in versions[:limit]]


def checksum(hex_digest: str) -> str:
    return hex_digest if hex_digest.startswith("sha256:") else "sha256:" + hex_digest


def revision_state(row: Revision) -> str:
    """A row's state as status.history.revisions spells it (api RevisionState)."""
    if row.state != STATE_APPLIED:
        return "Dirty"
    return "Baseline" if row.recorded_by == "baseline" else "Applied"


def shown(description: str | None) -> str | None:
    """A description as a report may carry it: what a terminal must not get escaped (a
    revision table's row is the database's text), at most 256 characters."""
    return None if description is None else printable(description)[:256]


def revision_json(row: Revision, spell: VersionSpelling) -> Json:
    doc: Json = {"version": spell(row.version), "state": revision_state(row)}
    if row.description is not None:
        doc["description"] = shown(row.description)
    if row.checksum:
        doc["checksum"] = checksum(row.checksum)
    if row.execution_millis is not None:
        doc["executionMillis"] = row.execution_millis
    if row.applied_at is not None:
        doc["appliedAt"] = format_time(row.applied_at)
    return doc


def history_block(status: Status, spell: VersionSpelling) -> Json:
    """The `history` block: one reading of the revision table against the files."""
    dirty = status.dirty[0] if status.dirty else None
    ahead: Json | None = None
    if status.verdict is Verdict.AHEAD and status.ahead_versions:
        ahead = {
            "databaseVersion": spell(max(status.ahead_versions)),
            "artifactVersion": None
            if status.artifact_version is None
            else spell(status.artifact_version),
        }
    return {
        "verdict": _VERDICTS[status.verdict],
        "currentVersion": None if status.current_version is None else spell(status.current_version),
        "checkpointVersion": None
        if status.checkpoint_version is None
        else spell(status.checkpoint_version),
        "appliedCount": status.applied_count,
        "pendingCount": status.pending_count,
        "pending": [
            {
                "version": spell(f.version),
                "description": shown(f.description),
                "checksum": checksum(f.checksum),
            }
            for f in status.pending[:MAX_PENDING]
        ],
        "dirty": None
        if dirty is None
        else {"version": spell(dirty.version), "description": shown(dirty.description)},
        "modifiedVersions": spell.many(status.modified_versions),
        "outOfOrderVersions": spell.many(status.out_of_order_versions),
        "ahead": ahead,
        "fingerprint": status.history_fingerprint,
        "revisions": [
            revision_json(row, spell) for row in reversed(status.revisions[-MAX_REVISIONS:])
        ],
    }


def run_message(result: RunResult, spell: VersionSpelling) -> str:
    """The run's message: the migration version and the database's error class, or the rule
    that refused the run (Decision 22). Built from the engine's structured answer; where the
    engine gives only a message (a refusal, a failed commit), its own message, which the engine
    builds from versions and error classes alone."""
    failure = result.failure
    if failure is not None:
        version = spell(failure.version)
        error = error_class(failure.sqlstate, failure.mysql_errno)
        if result.outcome is Outcome.UNKNOWN:
            return (
                f"migration {version} failed at statement {failure.statement_index}: {error};"
                " it is not recorded whether it committed"
            )
        if result.outcome is Outcome.PARTIAL:
            return (
                f"migration {version} failed at statement {failure.statement_index}: {error};"
                " earlier statements of it committed"
            )
        return f"migration {version} failed: {error}"
    if result.reason == "CommitFailed" and result.stopped_at is not None:
        found = _ERROR_CLASS.search(result.message)
        error = found.group(0) if found else "an error"
        return f"migration {spell(result.stopped_at.version)} failed at commit: {error}"
    if result.outcome is Outcome.APPLIED:
        return f"applied {len(result.applied_versions)} migration(s)"
    if result.outcome is Outcome.UP_TO_DATE:
        return "the database already has every planned migration"
    return result.message


def run_block(result: RunResult, spell: VersionSpelling) -> Json:
    failure = result.failure
    block: Json = {
        "outcome": result.outcome.value,
        "selected": result.selected,
        "appliedVersions": spell.many(result.applied_versions),
        "failure": None
        if failure is None
        else {
            "version": spell(failure.version),
            "statementIndex": failure.statement_index,
            "sqlstate": failure.sqlstate,
            "mysqlErrno": failure.mysql_errno,
        },
        "message": run_message(result, spell),
        **present({"reason": report_code(result.reason)}),
    }
    if result.reason == "CommitFailed":
        block.update(present(error_class_of(result.message)))
    stop = result.stopped_at
    if stop is not None and result.outcome not in (Outcome.APPLIED, Outcome.UP_TO_DATE):
        block["stoppedAt"] = stopped_at_block(
            spell(stop.version), stop.statements_applied, stop.statements_total
        )
    return block


def stopped_at_block(version: str, applied: int | None, total: int | None) -> Json:
    """`run.stoppedAt`: the file a run that did not finish stopped in, and how many of its
    statements are known committed (RUN-12); counts left out when nothing records them."""
    block: Json = {"version": version}
    if applied is not None:
        block["statementsApplied"] = applied
    if total is not None:
        block["statementsTotal"] = total
    return block


def not_selected_run(message: str, reason: str | None = None) -> Json:
    """The run block of an Apply that stopped before it selected anything: nothing ran."""
    return {
        "outcome": Outcome.FAILED.value,
        "selected": False,
        "appliedVersions": [],
        "failure": None,
        "message": message,
        **present({"reason": reason}),
    }


def error_class_of(message: str) -> Json:
    """The `sqlstate` or `mysqlErrno` an engine message names (its error class), else nothing."""
    found = _ERROR_CLASS.search(message)
    if found is None:
        return {}
    word = found.group(0)
    if word.startswith("SQLSTATE "):
        return {"sqlstate": word.removeprefix("SQLSTATE ")}
    return {"mysqlErrno": int(word.removeprefix("MySQL error "))}


def unknown_run(message: str, applied: Sequence[str] = (), stopped_at: Json | None = None) -> Json:
    """The run block of an Apply that may have started and whose evidence was not read."""
    block: Json = {
        "outcome": Outcome.UNKNOWN.value,
        "selected": True,
        "appliedVersions": list(applied),
        "failure": None,
        "message": message,
    }
    if stopped_at is not None:
        block["stoppedAt"] = stopped_at
    return block


def result_document(
    operation: Operated,
    *,
    started_at: dt.datetime,
    finished_at: dt.datetime,
    target_identity_digest: str | None,
    error: ErrorBlock | None = None,
    history: Json | None = None,
    run: Json | None = None,
    drift: Json | None = None,
    plan: Json | None = None,
    apply: Json | None = None,
) -> Json:
    """The whole `ptah.run/result/v1` document of an operation of either family. The blocks
    that do not apply are left out: a migration's History has no run, a schema's Observe only
    a drift, a reading that could not be made only the error."""
    failure = None if error is None else error.as_json()
    blocks = {"history": history, "run": run, "drift": drift, "plan": plan, "apply": apply}
    return {
        **envelope(operation, started_at, finished_at),
        "targetIdentityDigest": target_identity_digest,
        **present({**blocks, "error": failure}),
    }
