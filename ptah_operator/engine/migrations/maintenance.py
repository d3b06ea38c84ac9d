"""What a person runs to move or mend a history: `set` and `repair`. Neither runs migration SQL;
both write only the revision table, under the migration lock, in one transaction.

set --version V
    The history boundary moves to V: rows above V are removed; a dirty row at or below V is
    recorded applied under its file's checksum; every version at or below V that would be
    pending is recorded applied (recorded_by `set`, no execution time, because nothing ran).
    V is 0 (an empty history) or a version the directory carries or the table records.

repair --version V --mark applied|pending
    Clears the dirty row at V after a person has fixed the database by hand: `applied` says the
    file is in effect now (the row becomes applied under the file's checksum), `pending` says
    what it committed was undone (the row is removed, so the file runs again).

A refusal changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from ptah_operator.engine.migrations.connection import Database
from ptah_operator.engine.migrations.directory import FileKind, MigrationDirectory, MigrationFile
from ptah_operator.engine.migrations.refusals import (
    RefusedError,
    holding_migration_lock,
    rollback_quietly,
    split_or_refuse,
)
from ptah_operator.engine.migrations.revision_table import (
    RevisionRead,
    RevisionTable,
    delete_revisions,
    ensure_table,
    insert_revision,
    mark_applied,
    read_revisions,
    recorded_without_running,
)
from ptah_operator.engine.migrations.status import Status, evaluate


class MaintenanceRefusedError(RefusedError):
    pass


class RepairMark(StrEnum):
    APPLIED = "applied"
    PENDING = "pending"


@dataclass(frozen=True)
class Change:
    version: int
    change: str  # recorded | removed | markedApplied


@dataclass
class MaintenanceResult:
    changes: list[Change] = field(default_factory=list)
    status: Status | None = None
    target_identity_digest: str | None = None


def _statement_count(file: MigrationFile, db: Database) -> int:
    return len(split_or_refuse(file, db.dialect, MaintenanceRefusedError))


async def set_version(
    db: Database,
    directory: MigrationDirectory,
    *,
    table: RevisionTable,
    version: int,
    lock_timeout: float = 30.0,
) -> MaintenanceResult:
    result = MaintenanceResult(target_identity_digest=await db.identity_digest())
    async with holding_migration_lock(db, lock_timeout, MaintenanceRefusedError):
        read = await read_revisions(db, table)
        recorded = {row.version: row for row in read.rows}
        if version != 0 and version not in directory.by_version and version not in recorded:
            raise MaintenanceRefusedError(
                "UnknownVersion",
                f"version {version} is neither in the directory nor in the revision table",
            )
        above = [row.version for row in read.rows if row.version > version]
        dirty_below = [row for row in read.rows if row.version <= version and row.dirty]
        kept = tuple(row for row in read.rows if row.version <= version)
        after = evaluate(
            directory, RevisionRead(exists=read.exists, columns=read.columns, rows=kept)
        )
        if not kept and after.checkpoint_version is not None and version < after.checkpoint_version:
            # Below the checkpoint a new database would start from, the files themselves are
            # what the person says is in effect.
            to_record = [
                f for f in directory.files if f.kind is FileKind.MIGRATION and f.version <= version
            ]
        else:
            to_record = [f for f in after.pending if f.version <= version]
        for row in dirty_below:
            if row.version not in directory.by_version:
                raise MaintenanceRefusedError(
                    "UnknownVersion",
                    f"the dirty version {row.version} has no file in the directory to record",
                )
        counts = {f.version: _statement_count(f, db) for f in to_record}
        dirty_counts = {
            row.version: _statement_count(directory.by_version[row.version], db)
            for row in dirty_below
        }
        if not (above or dirty_below or to_record):
            result.status = evaluate(directory, read)
            return result
        await ensure_table(db, table, read)
        await db.begin()
        try:
            await delete_revisions(db, table, above)
            for row in dirty_below:
                file = directory.by_version[row.version]
                await mark_applied(
                    db,
                    table,
                    version=row.version,
                    checksum=file.checksum,
                    statements_total=dirty_counts[row.version],
                    recorded_by="set",
                )
            for file in to_record:
                await insert_revision(
                    db, table, recorded_without_running(file, counts[file.version], "set")
                )
            await db.commit()
        except BaseException:
            await rollback_quietly(db)
            raise
        result.changes = (
            [Change(v, "removed") for v in above]
            + [Change(row.version, "markedApplied") for row in dirty_below]
            + [Change(f.version, "recorded") for f in to_record]
        )
        result.status = evaluate(directory, await read_revisions(db, table))
        return result


async def repair(
    db: Database,
    directory: MigrationDirectory,
    *,
    table: RevisionTable,
    version: int,
    mark: RepairMark,
    lock_timeout: float = 30.0,
) -> MaintenanceResult:
    result = MaintenanceResult(target_identity_digest=await db.identity_digest())
    async with holding_migration_lock(db, lock_timeout, MaintenanceRefusedError):
        read = await read_revisions(db, table)
        row = next((r for r in read.rows if r.version == version), None)
        if row is None or not row.dirty:
            raise MaintenanceRefusedError(
                "NotDirty", f"version {version} has no dirty row to repair"
            )
        if mark is RepairMark.APPLIED:
            file = directory.by_version.get(version)
            if file is None:
                raise MaintenanceRefusedError(
                    "UnknownVersion", f"version {version} has no file in the directory"
                )
            total = _statement_count(file, db)
            await ensure_table(db, table, read)
            await mark_applied(
                db,
                table,
                version=version,
                checksum=file.checksum,
                statements_total=total,
                recorded_by="repair",
            )
            result.changes = [Change(version, "markedApplied")]
        else:
            await delete_revisions(db, table, [version])
            result.changes = [Change(version, "removed")]
        result.status = evaluate(directory, await read_revisions(db, table))
        return result
