"""Baseline: record the history an existing schema already earned, after proving it.

The files are replayed into a disposable shadow database, emptied first, and the schema they
produce there is compared with the target's (catalog.py). Only when the two agree are the
revisions written to the target, and then only to the revision table: the target's
application schema and rows are never touched (MIG-67..70). A refusal records nothing.

The sequence replayed and recorded is what a new database would run: the newest checkpoint
and the migrations above it when the directory has a checkpoint, every migration otherwise.

On MySQL/MariaDB the shadow is emptied only when its user holds the global privileges that
let it see every object it drops (MIG-71); a grant on one schema cannot prove that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.catalog import differences, inspect
from ptah_operator.engine.migrations.connection import (
    Database,
    DatabaseError,
    Engine,
)
from ptah_operator.engine.migrations.directory import MigrationDirectory, MigrationFile
from ptah_operator.engine.migrations.refusals import (
    RefusedError,
    holding_migration_lock,
    rollback_quietly,
    split_or_refuse,
)
from ptah_operator.engine.migrations.revision_table import (
    RevisionTable,
    ensure_table,
    insert_revision,
    read_revisions,
    recorded_without_running,
)
from ptah_operator.engine.migrations.status import Status, evaluate
from ptah_operator.engine.splitter import Statement

# What emptying the shadow needs on both engines, then what each engine adds.
_SHADOW_PRIVILEGES = (
    "SELECT",
    "DROP",
    "ALTER",
    "ALTER ROUTINE",
    "EVENT",
    "LOCK TABLES",
    "PROCESS",
)
MYSQL_SHADOW_PRIVILEGES = (*_SHADOW_PRIVILEGES, "SHOW_ROUTINE", "TRIGGER")
MARIADB_SHADOW_PRIVILEGES = (*_SHADOW_PRIVILEGES, "SHOW VIEW")

_GLOBAL_GRANT = re.compile(r"^GRANT (?P<privileges>.+?) ON \*\.\* TO ", re.IGNORECASE)


class BaselineRefusedError(RefusedError):
    def __init__(self, reason: str, message: str, details: list[str] | None = None) -> None:
        super().__init__(reason, message)
        self.details = details or []


@dataclass
class BaselineResult:
    recorded_versions: list[int] = field(default_factory=list)
    status: Status | None = None
    target_identity_digest: str | None = None


def missing_shadow_privileges(engine: Engine, grants: list[str]) -> list[str]:
    """The required global privileges that `SHOW GRANTS` lines do not give."""
    required = MARIADB_SHADOW_PRIVILEGES if engine is Engine.MARIADB else MYSQL_SHADOW_PRIVILEGES
    held: set[str] = set()
    for line in grants:
        match = _GLOBAL_GRANT.match(line.strip())
        if match is None:
            continue
        for privilege in match.group("privileges").split(","):
            held.add(" ".join(privilege.split()).upper())
    if "ALL PRIVILEGES" in held or "ALL" in held:
        return []
    return [p for p in required if p not in held]


async def _split_all(files: list[MigrationFile], dialect: Dialect) -> list[list[Statement]]:
    return [split_or_refuse(file, dialect, BaselineRefusedError) for file in files]


async def empty_shadow(shadow: Database) -> None:
    """Drop everything in the shadow database, so the replay starts from nothing (MIG-70)."""
    if shadow.dialect is Dialect.POSTGRESQL:
        _, rows = await shadow.fetch(
            "SELECT nspname FROM pg_namespace WHERE nspname NOT IN"
            " ('pg_catalog', 'information_schema', 'pg_toast')"
            " AND nspname NOT LIKE 'pg_temp_%' AND nspname NOT LIKE 'pg_toast_temp_%'"
        )
        for (name,) in rows:
            quoted = '"' + str(name).replace('"', '""') + '"'
            await shadow.execute(f"DROP SCHEMA {quoted} CASCADE")
        await shadow.execute("CREATE SCHEMA public")
        return
    await shadow.execute("SET FOREIGN_KEY_CHECKS = 0")
    try:
        _, rows = await shadow.fetch(
            "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES"
            " WHERE TABLE_SCHEMA = DATABASE()"
        )
        for name, kind in rows:
            quoted = "`" + str(name).replace("`", "``") + "`"
            what = {"VIEW": "VIEW", "SEQUENCE": "SEQUENCE"}.get(str(kind), "TABLE")
            await shadow.execute(f"DROP {what} IF EXISTS {quoted}")
        _, rows = await shadow.fetch(
            "SELECT ROUTINE_TYPE, ROUTINE_NAME FROM information_schema.ROUTINES"
            " WHERE ROUTINE_SCHEMA = DATABASE()"
        )
        for kind, name in rows:
            quoted = "`" + str(name).replace("`", "``") + "`"
            await shadow.execute(f"DROP {kind} IF EXISTS {quoted}")
        _, rows = await shadow.fetch(
            "SELECT EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()"
        )
        for (name,) in rows:
            quoted = "`" + str(name).replace("`", "``") + "`"
            await shadow.execute(f"DROP EVENT IF EXISTS {quoted}")
    finally:
        await shadow.execute("SET FOREIGN_KEY_CHECKS = 1")


async def _replay(
    shadow: Database, files: list[MigrationFile], splits: list[list[Statement]]
) -> None:
    for file, statements in zip(files, splits, strict=True):
        transactional = shadow.dialect is Dialect.POSTGRESQL and not file.no_transaction
        if transactional:
            await shadow.begin()
        for index, statement in enumerate(statements, start=1):
            try:
                await shadow.execute(statement.text)
            except DatabaseError as exc:
                if transactional:
                    await shadow.rollback()
                raise BaselineRefusedError(
                    "ShadowReplayFailed",
                    f"version {file.version}: statement {index} failed in the shadow database"
                    f" with {exc.error_class.describe()}",
                ) from None
        if transactional:
            await shadow.commit()


async def baseline(
    target: Database,
    shadow: Database,
    directory: MigrationDirectory,
    *,
    table: RevisionTable,
    lock_timeout: float = 30.0,
) -> BaselineResult:
    result = BaselineResult(target_identity_digest=await target.identity_digest())
    if target.dialect is not shadow.dialect:
        raise BaselineRefusedError(
            "EngineMismatch", "the shadow database is not the target's engine"
        )
    if await shadow.identity_digest() == result.target_identity_digest:
        raise BaselineRefusedError("ShadowIsTarget", "the shadow database is the target database")
    async with holding_migration_lock(target, lock_timeout, BaselineRefusedError):
        read = await read_revisions(target, table)
        if read.rows:
            raise BaselineRefusedError(
                "HistoryNotEmpty",
                f"the revision table already records {len(read.rows)} version(s);"
                " a database with a history is migrated, not adopted",
            )
        files = list(evaluate(directory, read).pending)
        if not files:
            raise BaselineRefusedError("NothingToRecord", "the directory carries no migration")
        splits = await _split_all(files, target.dialect)
        if shadow.dialect is Dialect.MYSQL:
            _, rows = await shadow.fetch("SHOW GRANTS")
            missing = missing_shadow_privileges(shadow.engine, [str(r[0]) for r in rows])
            if missing:
                raise BaselineRefusedError(
                    "ShadowPrivileges",
                    "the shadow user lacks the global privileges "
                    + ", ".join(missing)
                    + " needed to empty the shadow database",
                )
        try:
            await empty_shadow(shadow)
        except DatabaseError as exc:
            raise BaselineRefusedError(
                "ShadowNotEmptied",
                f"emptying the shadow database failed with {exc.error_class.describe()}",
            ) from None
        await _replay(shadow, files, splits)
        found = differences(await inspect(target, table), await inspect(shadow, table))
        if found:
            raise BaselineRefusedError(
                "SchemaMismatch",
                "the files do not produce the target's schema; nothing was recorded",
                found,
            )
        await ensure_table(target, table, read)
        await target.begin()
        try:
            for file, statements in zip(files, splits, strict=True):
                await insert_revision(
                    target, table, recorded_without_running(file, len(statements), "baseline")
                )
            await target.commit()
        except BaseException:
            await rollback_quietly(target)
            raise
        result.recorded_versions = [f.version for f in files]
        result.status = evaluate(directory, await read_revisions(target, table))
        return result
