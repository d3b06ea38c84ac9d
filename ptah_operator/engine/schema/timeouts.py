"""The timeouts every statement of a schema Apply or dry run is held to (a leaf module: the
runner reads them from its operation document without loading the engine)."""

from __future__ import annotations

from dataclasses import dataclass

from ptah_operator.engine.schema.model import Dialect


@dataclass(frozen=True)
class Timeouts:
    """What every statement of an Apply or a dry run is held to, in seconds. `lock`: how long
    one statement may wait for a lock on what it changes (PostgreSQL `lock_timeout`, MySQL
    `lock_wait_timeout` and `innodb_lock_wait_timeout`): an ALTER TABLE queued behind a long
    transaction otherwise blocks every reader of the table behind it. `statement`: how long
    one statement may run (PostgreSQL `statement_timeout`, MariaDB `max_statement_time`;
    MySQL has no limit for DDL). None (or 0) for no limit."""

    lock: float | None = 30.0
    statement: float | None = None

    def postgresql(self) -> list[str]:
        return [
            f"SET lock_timeout = '{_milliseconds(self.lock)}ms'",
            f"SET statement_timeout = '{_milliseconds(self.statement)}ms'",
        ]

    def mysql(self, dialect: Dialect) -> list[str]:
        # A year is the server's own upper bound for lock_wait_timeout.
        seconds = _MYSQL_NO_LIMIT if not self.lock else max(1, round(self.lock))
        settings = [
            f"SET SESSION lock_wait_timeout = {seconds}",
            f"SET SESSION innodb_lock_wait_timeout = {seconds}",
        ]
        if dialect is Dialect.MARIADB:
            statement = 0 if not self.statement else max(0.001, self.statement)
            settings.append(f"SET SESSION max_statement_time = {statement:.3f}")
        else:
            # MySQL bounds SELECTs only: the checks that stand in for a dry run, and reads.
            settings.append(f"SET SESSION max_execution_time = {_milliseconds(self.statement)}")
        return settings


_MYSQL_NO_LIMIT = 31536000


def _milliseconds(seconds: float | None) -> int:
    """PostgreSQL's spelling: 0 is no limit, anything else at least a millisecond."""
    return 0 if not seconds else max(1, round(seconds * 1000))
