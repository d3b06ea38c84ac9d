"""Reading a history: the revision table against a migration directory, one verdict of six.

`evaluate` is pure: it takes one reading of the table and the directory and never guesses.
The verdicts, first match wins:

    Dirty           a row is not applied (a failed or interrupted run left it)
    Modified        an applied file no longer hashes to the recorded checksum, or a recorded
                    version's file is gone from below the directory's newest version
    Ahead           the table records a version above everything the directory carries
    OutOfOrder      a pending version sorts below the current (highest applied) version
    NothingPending  nothing to run
    Ready           a sequence ready to plan: the pending list, in order

Checkpoints. On a history with no rows at all, the newest checkpoint file is where the
database starts: the pending list is that checkpoint and the migrations above it, and the
versions below it are covered (neither pending nor applied yet). Once a checkpoint row is
applied, the directory's versions below it that have no row of their own are covered and
count as applied. A history with rows ignores checkpoint files it did not run: a checkpoint
changes where a new database starts, never what an existing one has run. That is why the
pending list is computed here, version by version, and is not a subtraction of counts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from ptah_operator.engine.migrations.connection import Database
from ptah_operator.engine.migrations.directory import FileKind, MigrationDirectory, MigrationFile
from ptah_operator.engine.migrations.revision_table import (
    Revision,
    RevisionRead,
    RevisionTable,
    read_revisions,
)


class Verdict(StrEnum):
    DIRTY = "Dirty"
    MODIFIED = "Modified"
    AHEAD = "Ahead"
    OUT_OF_ORDER = "OutOfOrder"
    NOTHING_PENDING = "NothingPending"
    READY = "Ready"

    @property
    def blocks(self) -> bool:
        return self in BLOCKING_VERDICTS

    @property
    def reason(self) -> str:
        """The condition reason the operator publishes for a verdict that stops it."""
        return {
            Verdict.DIRTY: "HistoryDirty",
            Verdict.MODIFIED: "HistoryModified",
            Verdict.AHEAD: "HistoryAhead",
            Verdict.OUT_OF_ORDER: "HistoryOutOfOrder",
        }.get(self, self.value)


BLOCKING_VERDICTS = frozenset(
    {Verdict.DIRTY, Verdict.MODIFIED, Verdict.AHEAD, Verdict.OUT_OF_ORDER}
)


@dataclass(frozen=True)
class Status:
    verdict: Verdict
    revision_table_exists: bool
    current_version: int | None
    artifact_version: int | None
    checkpoint_version: int | None
    checkpoint_applied: bool
    covered_versions: tuple[int, ...]
    ignored_checkpoint_versions: tuple[int, ...]
    applied_count: int
    pending: tuple[MigrationFile, ...]
    dirty: tuple[Revision, ...]
    modified_versions: tuple[int, ...]
    missing_versions: tuple[int, ...]
    ahead_versions: tuple[int, ...]
    out_of_order_versions: tuple[int, ...]
    history_fingerprint: str
    revisions: tuple[Revision, ...]

    @property
    def pending_count(self) -> int:
        return len(self.pending)

    @property
    def pending_versions(self) -> tuple[int, ...]:
        return tuple(f.version for f in self.pending)


def history_fingerprint(rows: tuple[Revision, ...] | list[Revision]) -> str:
    """SHA-256 over every row's version, checksum and state, in version order."""
    digest = hashlib.sha256()
    for row in sorted(rows, key=lambda r: r.version):
        digest.update(f"{row.version}\x00{row.checksum}\x00{row.state}\n".encode())
    return "sha256:" + digest.hexdigest()


def evaluate(directory: MigrationDirectory, read: RevisionRead) -> Status:
    rows = read.rows
    recorded = {row.version: row for row in rows}
    applied = [row for row in rows if not row.dirty]
    dirty = tuple(row for row in rows if row.dirty)
    current = max((row.version for row in applied), default=None)
    files = directory.files
    latest = directory.latest_version

    checkpoint_version: int | None = None
    checkpoint_applied = False
    covered: list[int] = []
    ignored: list[int] = []
    if not rows:
        checkpoints = directory.checkpoints
        if checkpoints:
            start = checkpoints[-1]
            checkpoint_version = start.version
            covered = [f.version for f in files if f.version < start.version]
            pending = [start] + [f for f in files if f.version > start.version]
        else:
            pending = list(files)
    else:
        checkpoint_rows = [row for row in applied if row.is_checkpoint]
        if checkpoint_rows:
            checkpoint_version = checkpoint_rows[-1].version
            checkpoint_applied = True
            covered = [
                f.version
                for f in files
                if f.version < checkpoint_version and f.version not in recorded
            ]
        covered_set = set(covered)
        ignored = [
            f.version
            for f in files
            if f.kind is FileKind.CHECKPOINT
            and f.version not in recorded
            and f.version not in covered_set
        ]
        pending = [
            f
            for f in files
            if f.kind is FileKind.MIGRATION
            and f.version not in recorded
            and f.version not in covered_set
        ]

    modified = [
        row.version
        for row in rows
        if row.version in directory.by_version
        and directory.by_version[row.version].checksum != row.checksum
    ]
    missing = [
        row.version
        for row in rows
        if row.version not in directory.by_version and latest is not None and row.version <= latest
    ]
    ahead = [
        row.version
        for row in applied
        if row.version not in directory.by_version and (latest is None or row.version > latest)
    ]
    out_of_order = [f.version for f in pending if current is not None and f.version < current]

    if dirty:
        verdict = Verdict.DIRTY
    elif modified or missing:
        verdict = Verdict.MODIFIED
    elif ahead:
        verdict = Verdict.AHEAD
    elif out_of_order:
        verdict = Verdict.OUT_OF_ORDER
    elif not pending:
        verdict = Verdict.NOTHING_PENDING
    else:
        verdict = Verdict.READY

    return Status(
        verdict=verdict,
        revision_table_exists=read.exists,
        current_version=current,
        artifact_version=latest,
        checkpoint_version=checkpoint_version,
        checkpoint_applied=checkpoint_applied,
        covered_versions=tuple(covered),
        ignored_checkpoint_versions=tuple(ignored),
        applied_count=len(applied) + (len(covered) if checkpoint_applied else 0),
        pending=tuple(pending),
        dirty=dirty,
        modified_versions=tuple(sorted(set(modified) | set(missing))),
        missing_versions=tuple(missing),
        ahead_versions=tuple(ahead),
        out_of_order_versions=tuple(out_of_order),
        history_fingerprint=history_fingerprint(rows),
        revisions=rows,
    )


async def read_status(
    db: Database, directory: MigrationDirectory, table: RevisionTable
) -> tuple[Status, RevisionRead]:
    """One read of the revision table, evaluated against the directory. Writes nothing."""
    read = await read_revisions(db, table)
    return evaluate(directory, read), read
