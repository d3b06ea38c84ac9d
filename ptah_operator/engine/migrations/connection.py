"""One database session behind one small interface, for PostgreSQL (asyncpg) and MySQL/MariaDB
(aiomysql).

Error reporting keeps only the database's error class: the SQLSTATE for PostgreSQL, the error
number for MySQL and MariaDB. The server's message is never kept, because it can quote the
statement or the row that failed. Warnings are kept the same way, as codes only (`take_warnings`);
neither driver is left to print one (aiomysql would show each warning's text on stderr).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from ptah_operator.engine import mysql_driver
from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.locks import ADVISORY_LOCK_KEY, named_lock

if TYPE_CHECKING:
    import aiomysql
    import asyncpg

# The drivers are imported when a URL of their engine is opened, not before: a command line
# that opens PostgreSQL never pays for loading the MySQL driver, and the reverse.


# Client-side MySQL error numbers that mean the session is gone, not that a statement failed.
_MYSQL_CONNECTION_LOST = frozenset({2006, 2013, 2014, 2045, 2055})


class Engine(StrEnum):
    POSTGRESQL = "PostgreSQL"
    MYSQL = "MySQL"
    MARIADB = "MariaDB"

    @property
    def dialect(self) -> Dialect:
        return Dialect.POSTGRESQL if self is Engine.POSTGRESQL else Dialect.MYSQL


_TRANSIENT_SQLSTATES = frozenset(
    {
        "40001",  # serialization_failure
        "40P01",  # deadlock_detected
        "55P03",  # lock_not_available (lock_timeout)
        "57014",  # query_canceled (statement_timeout)
        "57P01",  # admin_shutdown
        "57P02",  # crash_shutdown
        "57P03",  # cannot_connect_now (starting up, in recovery)
        "53200",  # out_of_memory
        "53300",  # too_many_connections
    }
)
"""PostgreSQL answers that pass on their own, beside class 08 (connection exception)."""
_TRANSIENT_MYSQL_ERRNOS = frozenset(
    {
        1040,  # ER_CON_COUNT_ERROR: too many connections
        1053,  # ER_SERVER_SHUTDOWN
        1203,  # ER_TOO_MANY_USER_CONNECTIONS
        1205,  # ER_LOCK_WAIT_TIMEOUT
        1213,  # ER_LOCK_DEADLOCK
        1317,  # ER_QUERY_INTERRUPTED
        1927,  # ER_CONNECTION_KILLED (MariaDB)
        1969,  # ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
        2006,  # CR_SERVER_GONE_ERROR
        2013,  # CR_SERVER_LOST
        3024,  # ER_QUERY_TIMEOUT (MySQL max_execution_time)
    }
)
"""MySQL and MariaDB answers that pass on their own."""


@dataclass(frozen=True)
class ErrorClass:
    """What the database answered, as a class only: SQLSTATE or MySQL error number."""

    sqlstate: str | None = None
    mysql_errno: int | None = None

    @property
    def code(self) -> str:
        if self.sqlstate is not None:
            return self.sqlstate
        if self.mysql_errno is not None:
            return str(self.mysql_errno)
        return "unknown"

    @property
    def transient(self) -> bool:
        """Whether the answer passes on its own: a lock or statement timeout, a deadlock or
        serialization failure, too many sessions or too little memory, a server shutting down
        or starting, a lost connection. Anything else (a permission, a missing column, an
        unknown class) is taken as an answer that will not change by itself."""
        if self.sqlstate is not None:
            return self.sqlstate[:2] == "08" or self.sqlstate in _TRANSIENT_SQLSTATES
        return self.mysql_errno in _TRANSIENT_MYSQL_ERRNOS

    def describe(self) -> str:
        if self.sqlstate is not None:
            return f"SQLSTATE {self.sqlstate}"
        if self.mysql_errno is not None:
            return f"MySQL error {self.mysql_errno}"
        return "no error class"


class DatabaseError(Exception):
    """A statement failed at the database. Carries the error class, never the server's text."""

    def __init__(self, error_class: ErrorClass) -> None:
        super().__init__(error_class.describe())
        self.error_class = error_class


class ConnectionLostError(Exception):
    """The session ended (or never started): what the last request did is not known."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class CommitFailedError(Exception):
    """The COMMIT itself failed (a deferred constraint): every statement before it ran."""

    def __init__(self, error_class: ErrorClass) -> None:
        super().__init__(f"the commit failed with {error_class.describe()}")
        self.error_class = error_class


class BatchError(Exception):
    """A statement of a batch failed; `position` is its 1-based place in the batch."""

    def __init__(self, position: int, error_class: ErrorClass) -> None:
        super().__init__(f"batch item {position} failed with {error_class.describe()}")
        self.position = position
        self.error_class = error_class


class BatchCountError(Exception):
    """The server answered a batch with another number of results than statements sent."""

    def __init__(self, sent: int, answered: int) -> None:
        super().__init__(f"{sent} statements sent, {answered} results answered")
        self.sent = sent
        self.answered = answered


class BadURLError(ValueError):
    """The URL names no engine Ptah supports, or cannot be parsed. Never carries the URL."""


@dataclass(frozen=True)
class Target:
    """A parsed database URL. `display` names the server and database, never the credentials."""

    dialect: Dialect
    url: str
    host: str
    port: int
    database: str
    user: str
    password: str
    params: dict[str, str]

    @property
    def display(self) -> str:
        return f"{self.host}:{self.port}/{self.database}"


def parse_url(url: str) -> Target:
    try:
        parts = urlsplit(url)
        port_value = parts.port
    except ValueError as exc:
        raise BadURLError("the database URL cannot be parsed") from exc
    scheme = parts.scheme.lower()
    if scheme in {"postgresql", "postgres"}:
        dialect, default_port = Dialect.POSTGRESQL, 5432
    elif scheme in {"mysql", "mariadb"}:
        dialect, default_port = Dialect.MYSQL, 3306
    else:
        raise BadURLError(
            "the database URL must start with postgresql://, postgres://, mysql:// or mariadb://"
        )
    database = unquote(parts.path.lstrip("/"))
    params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    return Target(
        dialect=dialect,
        url=url,
        host=parts.hostname or "localhost",
        port=port_value or default_port,
        database=database,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        params=params,
    )


class Database(ABC):
    """A session on one database. Statements run in autocommit unless `begin` was called."""

    engine: Engine
    target: Target
    _warning_codes: list[str]

    @property
    def dialect(self) -> Dialect:
        return self.engine.dialect

    @abstractmethod
    def param(self, index: int) -> str:
        """The placeholder for the `index`-th (1-based) query parameter."""

    @abstractmethod
    async def execute(self, sql: str, params: Sequence[object] | None = None) -> None:
        """Run one statement; with params, as a parameterised query."""

    @abstractmethod
    async def fetch(
        self, sql: str, params: Sequence[object] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one query; its column names and rows."""

    async def execute_batch(self, items: Sequence[tuple[str, Sequence[object] | None]]) -> None:
        """Run statements in order, stopping at the first failure (raised as BatchError).

        The base runs them one request each; an engine that can send them in one request and
        still say which one failed overrides it.
        """
        for position, (sql, params) in enumerate(items, start=1):
            try:
                await self.execute(sql, params)
            except DatabaseError as exc:
                raise BatchError(position, exc.error_class) from None

    async def begin(self) -> None:
        await self.execute("BEGIN" if self.dialect is Dialect.POSTGRESQL else "START TRANSACTION")

    begins_with_first_statement = False
    """Whether `begin_with` sends BEGIN and a file's first statement in one request."""

    async def begin_with(self, sql: str) -> None:
        """Open a transaction and run `sql`, one statement, as its first, in one request (only
        where `begins_with_first_statement`)."""
        raise NotImplementedError

    async def execute_and_commit(self, sql: str, params: Sequence[object] | None = None) -> None:
        """Run `sql`, one statement, as the open transaction's last, then commit. A failure of
        `sql` raises DatabaseError (the transaction is left open, to be rolled back); a failure
        of the commit raises CommitFailedError."""
        await self.execute(sql, params)
        try:
            await self.commit()
        except DatabaseError as exc:
            raise CommitFailedError(exc.error_class) from None

    async def commit(self) -> None:
        await self.execute("COMMIT")

    async def rollback(self) -> None:
        await self.execute("ROLLBACK")

    def take_warnings(self) -> list[str]:
        """The codes (SQLSTATE or MySQL error number) of the warnings the server raised since
        the last call, oldest first; never their text."""
        taken: list[str] = getattr(self, "_warning_codes", [])
        self._warning_codes = []
        return taken

    def _note_warning(self, code: str) -> None:
        self._warning_codes = [*getattr(self, "_warning_codes", []), code]

    @abstractmethod
    async def try_lock(self, wait_seconds: float) -> bool:
        """Take the database's advisory lock for this session, waiting up to `wait_seconds`."""

    @abstractmethod
    async def unlock(self) -> None: ...

    @abstractmethod
    async def identity(self) -> dict[str, object]:
        """A stable description of the database opened, with no credentials."""

    async def identity_digest(self) -> str:
        encoded = json.dumps(await self.identity(), sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(encoded.encode()).hexdigest()

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    def terminate(self) -> None:
        """Drop the session without a goodbye (after it was lost or while it hangs)."""

    @abstractmethod
    async def session_id(self) -> int:
        """The server's id for this session (a backend pid or a connection id)."""


class PostgresDatabase(Database):
    engine = Engine.POSTGRESQL

    def __init__(self, target: Target, conn: asyncpg.Connection) -> None:
        self.target = target
        self._conn = conn
        self._warning_codes: list[str] = []
        conn.add_log_listener(self._on_log_message)

    def _on_log_message(self, _conn: object, message: Any) -> None:
        # NOTICE and below are chatter (`... does not exist, skipping`); WARNING is kept.
        if getattr(message, "severity_en", None) == "WARNING" or (
            getattr(message, "severity", None) == "WARNING"
        ):
            self._note_warning(str(getattr(message, "sqlstate", None) or "01000"))

    def param(self, index: int) -> str:
        return f"${index}"

    async def execute(self, sql: str, params: Sequence[object] | None = None) -> None:
        try:
            if params:
                await self._conn.execute(sql, *params)
            else:
                await self._conn.execute(sql)
        except Exception as exc:
            raise _translate_pg(exc) from None

    begins_with_first_statement = True

    async def begin_with(self, sql: str) -> None:
        # One request, not two: a simple query of two statements runs them in order and stops
        # at the first error. BEGIN does not fail, so an error is the statement's; if the
        # statement does not parse, neither runs, and the caller's rollback finds no
        # transaction, as after a BEGIN of its own it would find an aborted one.
        await self.execute(f"BEGIN;\n{sql}")

    async def execute_and_commit(self, sql: str, params: Sequence[object] | None = None) -> None:
        if params:  # a parameterised statement is a request of its own
            await super().execute_and_commit(sql, params)
            return
        # One request, not two. Which of the two failed is the server's transaction status
        # after the error (its ReadyForQuery): still in the (now aborted) transaction means
        # `sql` failed and the COMMIT never ran; out of it means the COMMIT ran and failed.
        try:
            await self.execute(f"{sql};\nCOMMIT")
        except DatabaseError as exc:
            if self._conn.is_in_transaction():
                raise
            raise CommitFailedError(exc.error_class) from None

    async def fetch(
        self, sql: str, params: Sequence[object] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        try:
            statement = await self._conn.prepare(sql)
            records = await statement.fetch(*(params or ()))
            names = [attr.name for attr in statement.get_attributes()]
        except Exception as exc:
            raise _translate_pg(exc) from None
        return names, [tuple(r) for r in records]

    async def try_lock(self, wait_seconds: float) -> bool:
        deadline = time.monotonic() + wait_seconds
        while True:
            _, rows = await self.fetch("SELECT pg_try_advisory_lock($1)", [ADVISORY_LOCK_KEY])
            if rows[0][0]:
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(min(0.1, max(0.0, deadline - time.monotonic())))

    async def unlock(self) -> None:
        await self.execute(f"SELECT pg_advisory_unlock({ADVISORY_LOCK_KEY})")

    async def identity(self) -> dict[str, object]:
        _, rows = await self.fetch(
            "SELECT current_database(), host(inet_server_addr()), inet_server_port()"
        )
        dbname, addr, port = rows[0]
        try:
            _, ids = await self.fetch("SELECT system_identifier::text FROM pg_control_system()")
            system_id: str | None = ids[0][0]
        except DatabaseError:
            # pg_control_system() is not granted to every role; the address still names it.
            system_id = None
        return {
            "engine": self.engine.value,
            "systemIdentifier": system_id,
            "server": addr or self.target.host,
            "port": port or self.target.port,
            "database": dbname,
        }

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self._conn.close(), timeout=5)
        except Exception:
            self._conn.terminate()

    def terminate(self) -> None:
        self._conn.terminate()

    async def session_id(self) -> int:
        return int(self._conn.get_server_pid())


def _translate_pg(exc: Exception) -> Exception:
    import asyncpg

    if isinstance(exc, asyncpg.PostgresError) and not isinstance(
        exc, asyncpg.exceptions.ConnectionDoesNotExistError
    ):
        state = getattr(exc, "sqlstate", None)
        # Class 57P0x (admin shutdown, crash shutdown, terminated) ends the session.
        if isinstance(state, str) and state.startswith("57P0"):
            return ConnectionLostError(f"the server ended the session (SQLSTATE {state})")
        return DatabaseError(ErrorClass(sqlstate=state if isinstance(state, str) else None))
    if isinstance(
        exc,
        asyncpg.exceptions.ConnectionDoesNotExistError
        | asyncpg.exceptions.InterfaceError
        | OSError
        | ConnectionError
        | asyncio.TimeoutError,
    ):
        return ConnectionLostError(f"the session was lost ({type(exc).__name__})")
    return exc


class MySQLDatabase(Database):
    def __init__(self, target: Target, conn: aiomysql.Connection, engine: Engine) -> None:
        self.target = target
        self._conn = conn
        self.engine = engine
        self._lock_name = named_lock(target.database)
        self._warning_codes: list[str] = []

    def _collect(self, cur: Any) -> None:
        for code in getattr(cur, "ptah_warning_codes", ()):
            self._note_warning(code)

    def param(self, index: int) -> str:
        return "%s"

    async def execute(self, sql: str, params: Sequence[object] | None = None) -> None:
        try:
            async with self._conn.cursor() as cur:
                try:
                    await cur.execute(sql, tuple(params) if params else None)
                    # A statement that returns rows must be read to the end before the next.
                    while True:
                        await cur.fetchall()
                        if not await cur.nextset():
                            break
                finally:
                    self._collect(cur)
        except Exception as exc:
            raise _translate_mysql(exc) from None

    async def fetch(
        self, sql: str, params: Sequence[object] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        try:
            async with self._conn.cursor() as cur:
                try:
                    await cur.execute(sql, tuple(params) if params else None)
                    rows = await cur.fetchall()
                    names = [d[0] for d in cur.description or ()]
                finally:
                    self._collect(cur)
        except Exception as exc:
            raise _translate_mysql(exc) from None
        return names, [tuple(r) for r in rows]

    async def _multi_statements(self, on: bool) -> None:
        """Turn the session's multi-statement option on or off (COM_SET_OPTION: the server
        answers with an EOF packet, or an error packet, which raises)."""
        from pymysql.constants import COMMAND

        option = _MYSQL_OPTION_MULTI_STATEMENTS_ON if on else _MYSQL_OPTION_MULTI_STATEMENTS_OFF
        await self._conn._execute_command(COMMAND.COM_SET_OPTION, option.to_bytes(2, "little"))
        await self._conn._read_packet()

    async def _multi_statements_off(self) -> None:
        """Multi-statements off again after a batch; a session where that fails is closed (its
        next use reports it lost) rather than left taking several statements in one text, and
        the batch's own outcome is what the caller hears."""
        try:
            await self._multi_statements(False)
        except Exception:
            self._conn.close()

    async def execute_batch(self, items: Sequence[tuple[str, Sequence[object] | None]]) -> None:
        """One multi-statement request. The session opens with multi-statements off, so that a
        single execute is one statement whatever its text holds; they are on for this request
        only. The server runs the statements in order and stops at the first error, answering
        one result per statement before it, so the failing position is exact."""
        if len(items) < 2:
            await super().execute_batch(items)
            return
        answered = 0
        try:
            await self._multi_statements(True)
            try:
                async with self._conn.cursor() as cur:
                    texts = [
                        cur.mogrify(sql, tuple(params)) if params else sql for sql, params in items
                    ]
                    # A newline before each `;` so a trailing line comment cannot swallow it.
                    try:
                        await cur.execute("\n;\n".join(texts))
                        answered = 1
                        while await cur.nextset():
                            answered += 1
                    finally:
                        self._collect(cur)
            finally:
                await self._multi_statements_off()
        except Exception as exc:
            translated = _translate_mysql(exc)
            if isinstance(translated, DatabaseError):
                raise BatchError(answered + 1, translated.error_class) from None
            raise translated from None
        if answered != len(items):
            raise BatchCountError(len(items), answered)

    async def try_lock(self, wait_seconds: float) -> bool:
        _, rows = await self.fetch(
            "SELECT GET_LOCK(%s, %s)", [self._lock_name, int(wait_seconds + 0.999)]
        )
        return bool(rows[0][0] == 1)

    async def unlock(self) -> None:
        await self.execute("SELECT RELEASE_LOCK(%s)", [self._lock_name])

    async def identity(self) -> dict[str, object]:
        _, rows = await self.fetch("SELECT @@hostname, @@port, @@server_id, DATABASE()")
        hostname, port, server_id, database = rows[0]
        return {
            "engine": self.engine.value,
            "server": hostname,
            "port": int(port),
            "serverId": int(server_id),
            "database": database,
        }

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self._conn.ensure_closed(), timeout=5)
        except Exception:
            self._conn.close()

    def terminate(self) -> None:
        self._conn.close()

    async def session_id(self) -> int:
        _, rows = await self.fetch("SELECT CONNECTION_ID()")
        return int(rows[0][0])


def _translate_mysql(exc: Exception) -> Exception:
    import pymysql

    if isinstance(exc, pymysql.err.MySQLError):
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        if code is None or code in _MYSQL_CONNECTION_LOST or 2000 <= code < 3000:
            return ConnectionLostError(f"the session was lost (MySQL client error {code})")
        return DatabaseError(ErrorClass(mysql_errno=code))
    if isinstance(exc, OSError | ConnectionError | asyncio.TimeoutError | RuntimeError):
        return ConnectionLostError(f"the session was lost ({type(exc).__name__})")
    return exc


# COM_SET_OPTION's argument (enum_mysql_set_option).
_MYSQL_OPTION_MULTI_STATEMENTS_ON = 0
_MYSQL_OPTION_MULTI_STATEMENTS_OFF = 1

_QUIET_CURSOR: type | None = None


def _quiet_cursor_class() -> type:
    """aiomysql's cursor, except that a statement's warnings are kept as their codes
    (`ptah_warning_codes`) instead of being handed to Python's `warnings`, which prints the
    server's text (`Warning: Unknown table 'db.t'`) on stderr."""
    global _QUIET_CURSOR
    if _QUIET_CURSOR is None:
        import aiomysql

        class QuietCursor(aiomysql.Cursor):  # type: ignore[misc]
            ptah_warning_codes: tuple[str, ...] = ()

            async def _show_warnings(self, conn: Any) -> None:
                if self._result and self._result.has_next:
                    return  # as aiomysql: only the last result of a multi-statement request
                rows = await conn.show_warnings()
                codes = tuple(str(r[1]) for r in rows or () if str(r[0]) in ("Warning", "Error"))
                self.ptah_warning_codes = self.ptah_warning_codes + codes

        _QUIET_CURSOR = QuietCursor
    return _QUIET_CURSOR


async def connect(url: str, *, connect_seconds: float = 30.0) -> Database:
    """Open a session on the database `url` names. Raises BadURLError or ConnectionLostError."""
    target = parse_url(url)
    if target.dialect is Dialect.POSTGRESQL:
        import asyncpg

        try:
            conn = await asyncpg.connect(dsn=url, timeout=connect_seconds, statement_cache_size=0)
        except asyncpg.PostgresError as exc:
            state = getattr(exc, "sqlstate", None)
            raise ConnectionLostError(
                f"the server refused the session (SQLSTATE {state})"
            ) from None
        except Exception as exc:
            raise ConnectionLostError(
                f"cannot reach {target.display} ({type(exc).__name__})"
            ) from None
        return PostgresDatabase(target, conn)
    pymysql = mysql_driver.load()
    import aiomysql
    from pymysql.constants import CLIENT

    kwargs: dict[str, Any] = {
        "host": target.host,
        "port": target.port,
        "user": target.user or "root",
        "password": target.password,
        "db": target.database or None,
        "autocommit": True,
        "connect_timeout": connect_seconds,
        "charset": target.params.get("charset", "utf8mb4"),
        "cursorclass": _quiet_cursor_class(),
    }
    if "unix_socket" in target.params:
        kwargs["unix_socket"] = target.params["unix_socket"]
    try:
        myconn = aiomysql.Connection(**kwargs)
        # aiomysql always asks for CLIENT_MULTI_STATEMENTS: a single execute is one statement
        # (two merged into one text are refused, 1064); execute_batch turns them on for its
        # one request.
        myconn.client_flag &= ~CLIENT.MULTI_STATEMENTS
        await myconn._connect()
    except pymysql.err.MySQLError as exc:
        code = exc.args[0] if exc.args else None
        raise ConnectionLostError(f"the server refused the session (MySQL error {code})") from None
    except Exception as exc:
        raise ConnectionLostError(f"cannot reach {target.display} ({type(exc).__name__})") from None
    db = MySQLDatabase(target, myconn, Engine.MYSQL)
    try:
        _, rows = await db.fetch("SELECT VERSION()")
    except Exception:
        db.terminate()
        raise
    if "mariadb" in str(rows[0][0]).lower():
        db.engine = Engine.MARIADB
    # Statements must see the server's strict defaults and UTC, whatever the session had.
    await db.execute("SET time_zone = '+00:00'")
    return db
