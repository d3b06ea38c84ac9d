"""What baseline and the maintenance commands (`set`, `repair`) share.

A refusal is an exception with a stable reason code and a message; a command that refuses has
changed nothing. The migration lock is held for the command's length (LockTimeout when it is
not free in time), and a file that cannot be split is refused as UnsplittableFile.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.connection import Database
from ptah_operator.engine.migrations.directory import MigrationFile
from ptah_operator.engine.splitter import SplitError, Statement, split


class RefusedError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@contextlib.asynccontextmanager
async def holding_migration_lock(
    db: Database, lock_timeout: float, refused: type[RefusedError]
) -> AsyncIterator[None]:
    if not await db.try_lock(lock_timeout):
        raise refused("LockTimeout", f"the migration lock was not free within {lock_timeout:g}s")
    try:
        yield
    finally:
        await db.unlock()


def split_or_refuse(
    file: MigrationFile, dialect: Dialect, refused: type[RefusedError]
) -> list[Statement]:
    try:
        return split(file.sql, dialect)
    except SplitError as exc:
        raise refused("UnsplittableFile", f"version {file.version}: {exc}") from None


async def rollback_quietly(db: Database) -> None:
    # The original error is the one worth raising.
    with contextlib.suppress(Exception):
        await db.rollback()
