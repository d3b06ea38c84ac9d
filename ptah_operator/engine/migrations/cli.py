"""`ptah migrations <command>`: status, up, set, repair, baseline, hash, import.

Every command prints one JSON document with `--output json` (see output.py and
docs/engine-migrations.md) and readable text otherwise. Exit codes:

    0  done: a status whose verdict is NothingPending or Ready; up Applied or UpToDate;
       set, repair or baseline recorded; hash written or verified; import written
    1  an internal error (a bug: the message says where)
    2  the command line is wrong
    3  refused, nothing changed: a blocking verdict, a sequence mismatch, a lock not free,
       a transaction-mode refusal, a directory or ptah.sum refused, a baseline mismatch,
       an import refused (nothing written)
    4  up ran and a migration failed: outcome Failed or Partial after a statement ran
    5  up ended with outcome Unknown
    6  the database could not be reached, or the session was lost before anything ran

The database URL comes from --db-url or the PTAH_DB_URL environment variable (the shadow's
from --shadow-db or PTAH_SHADOW_DB_URL). It is never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations import output
from ptah_operator.engine.migrations.connection import (
    BadURLError,
    ConnectionLostError,
    Database,
    DatabaseError,
    connect,
)
from ptah_operator.engine.migrations.directory import (
    SUM_FILE,
    DirectoryError,
    MigrationDirectory,
    printable,
    read_directory,
    render_sum,
)
from ptah_operator.engine.migrations.revision_table import (
    DEFAULT_TABLE,
    RevisionTable,
    RevisionTableError,
)
from ptah_operator.engine.migrations.status import read_status

if TYPE_CHECKING:
    from ptah_operator.engine.migrations.apply import ExpectedMigration
    from ptah_operator.engine.migrations.maintenance import MaintenanceResult

# `status` is the command people wait on: what only `up`, `set`, `repair`, `baseline` and
# `import` run (apply.py, maintenance.py, baseline.py, tool_import.py, and through them the
# statement splitter) is imported by the command that runs it, not here. The choices below are
# those modules' enum values (TransactionMode, RepairMark, Tool), written out so the parser needs
# none of them; a unit test holds them equal.
TRANSACTION_MODES = ("file", "none")
REPAIR_MARKS = ("applied", "pending")
IMPORT_TOOLS = ("golang-migrate", "goose", "dbmate", "flyway")

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_RUN_FAILED = 4
EXIT_UNKNOWN = 5
EXIT_UNREACHABLE = 6


class _CommandError(Exception):
    def __init__(
        self, code: int, reason: str, message: str, details: list[str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details or []


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ptah migrations",
        description="Versioned SQL migrations: status, up, set, repair, baseline, hash, import.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser, *, db: bool = True) -> None:
        sub.add_argument(
            "--migrations-dir", required=True, type=Path, help="the migration directory"
        )
        sub.add_argument("--output", choices=("text", "json"), default="text")
        if db:
            sub.add_argument("--db-url", default=None, help="database URL (default: $PTAH_DB_URL)")
            sub.add_argument(
                "--revision-table",
                default=DEFAULT_TABLE,
                help="[schema.]name of the revision table (default: schema_migrations)",
            )
            sub.add_argument("--lock-timeout", type=float, default=30.0, help="seconds")

    status = commands.add_parser("status", help="read the history: one verdict of six")
    common(status)
    status.add_argument("--revisions", type=int, default=10, help="newest revision rows to show")

    up = commands.add_parser("up", help="apply the pending sequence")
    common(up)
    up.add_argument(
        "--expect",
        action="append",
        default=None,
        metavar="VERSION:CHECKSUM",
        help="the exact sequence to run; repeat in order",
    )
    up.add_argument("--expect-file", type=Path, help="JSON list of {version, checksum}")
    up.add_argument("--transaction-mode", choices=TRANSACTION_MODES, default=None)

    set_ = commands.add_parser("set", help="move the history boundary without running SQL")
    common(set_)
    set_.add_argument("--version", type=int, required=True)

    fix = commands.add_parser("repair", help="clear a dirty row after fixing the database by hand")
    common(fix)
    fix.add_argument("--version", type=int, required=True)
    fix.add_argument("--mark", choices=REPAIR_MARKS, required=True)

    base = commands.add_parser("baseline", help="record an existing schema's history")
    common(base)
    base.add_argument("--shadow-db", default=None, help="shadow URL (default: $PTAH_SHADOW_DB_URL)")

    digest = commands.add_parser("hash", help="compute (or write) the directory's ptah.sum")
    common(digest, db=False)
    digest.add_argument("--write", action="store_true", help=f"write {SUM_FILE}")

    bring = commands.add_parser(
        "import", help="write another tool's migration directory in Ptah's layout"
    )
    bring.add_argument("--from", dest="tool", required=True, choices=IMPORT_TOOLS)
    bring.add_argument("source", type=Path, metavar="SRC", help="the other tool's directory")
    bring.add_argument("--out", required=True, type=Path, help="a new (or empty) directory")
    bring.add_argument(
        "--engine",
        choices=("postgresql", "mysql", "mariadb"),
        default=None,
        help="the engine the files are for (needed only to keep some goose blocks whole)",
    )
    bring.add_argument("--output", choices=("text", "json"), default="text")
    return parser


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    command: str = args.command
    try:
        code, body, text = asyncio.run(_dispatch(args))
    except _CommandError as failure:
        _print_error(args, command, failure)
        return failure.code
    except Exception as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        _print_error(
            args,
            command,
            _CommandError(EXIT_INTERNAL, "InternalError", f"{type(exc).__name__} at {where}"),
        )
        return EXIT_INTERNAL
    if args.output == "json":
        print(output.document(command, body))
    else:
        print(text)
    return code


def _print_error(args: argparse.Namespace, command: str, failure: _CommandError) -> None:
    if args.output == "json":
        error: dict[str, Any] = {"reason": failure.reason, "message": failure.message}
        if failure.details:
            error["details"] = failure.details
        print(output.document(command, {"error": error}))
    else:
        lines = [f"ptah migrations {command}: {failure.reason}: {failure.message}"]
        lines += [f"  {d}" for d in failure.details]
        print("\n".join(lines), file=sys.stderr)


def _directory(args: argparse.Namespace) -> MigrationDirectory:
    try:
        return read_directory(args.migrations_dir)
    except DirectoryError as exc:
        raise _CommandError(EXIT_REFUSED, exc.reason, str(exc)) from None


def _url(value: str | None, env: str, what: str) -> str:
    url = value or os.environ.get(env)
    if not url:
        raise _CommandError(EXIT_USAGE, "MissingURL", f"no {what} URL: pass it or set {env}")
    return url


def _table(args: argparse.Namespace) -> RevisionTable:
    try:
        return RevisionTable.parse(args.revision_table)
    except ValueError as exc:
        raise _CommandError(EXIT_USAGE, "BadRevisionTable", str(exc)) from None


async def _open(url: str) -> Database:
    try:
        return await connect(url)
    except BadURLError as exc:
        raise _CommandError(EXIT_USAGE, "BadURLError", str(exc)) from None
    except ConnectionLostError as exc:
        raise _CommandError(EXIT_UNREACHABLE, "Unreachable", exc.detail) from None


Result = tuple[int, dict[str, Any], str]


async def _dispatch(args: argparse.Namespace) -> Result:
    handlers: dict[str, Callable[[argparse.Namespace], Awaitable[Result]]] = {
        "status": _status,
        "up": _up,
        "set": _set,
        "repair": _repair,
        "baseline": _baseline,
        "hash": _hash,
        "import": _import,
    }
    try:
        return await handlers[args.command](args)
    except ConnectionLostError as exc:
        raise _CommandError(EXIT_UNREACHABLE, "ConnectionLostError", exc.detail) from None
    except DatabaseError as exc:
        raise _CommandError(
            EXIT_REFUSED, "DatabaseError", f"the database answered {exc.error_class.describe()}"
        ) from None
    except RevisionTableError as exc:
        raise _CommandError(EXIT_REFUSED, exc.reason, str(exc)) from None


async def _status(args: argparse.Namespace) -> Result:
    directory = _directory(args)
    table = _table(args)
    db = await _open(_url(args.db_url, "PTAH_DB_URL", "database"))
    try:
        status, _ = await read_status(db, directory, table)
        identity = await db.identity_digest()
    finally:
        await db.close()
    body = {
        "engine": db.engine.value,
        "revisionTable": table.display(db.dialect),
        "targetIdentityDigest": identity,
        "directory": output.directory_json(directory),
        **output.status_json(status, newest=args.revisions),
    }
    text = output.status_text(status, db.engine.value, table.display(db.dialect), args.revisions)
    return (EXIT_REFUSED if status.verdict.blocks else EXIT_OK), body, text


def _expected(args: argparse.Namespace) -> list[ExpectedMigration] | None:
    from ptah_operator.engine.migrations.apply import ExpectedMigration

    if args.expect is not None and args.expect_file is not None:
        raise _CommandError(
            EXIT_USAGE, "BadExpectation", "pass --expect or --expect-file, not both"
        )
    items: list[ExpectedMigration] = []
    if args.expect_file is not None:
        try:
            loaded = json.loads(Path(args.expect_file).read_text())
            if isinstance(loaded, dict):
                loaded = loaded.get("migrations")
            if not isinstance(loaded, list):
                raise ValueError("not a list")
            for item in loaded:
                items.append(ExpectedMigration(int(item["version"]), str(item["checksum"]).lower()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise _CommandError(
                EXIT_USAGE,
                "BadExpectation",
                f"--expect-file is not a list of {{version, checksum}}: {exc}",
            ) from None
        return items
    if args.expect is None:
        return None
    for value in args.expect:
        version, sep, checksum = value.partition(":")
        if not sep or not version.isdigit() or len(checksum) != 64:
            raise _CommandError(
                EXIT_USAGE, "BadExpectation", f"--expect {value!r} is not VERSION:SHA256"
            )
        items.append(ExpectedMigration(int(version), checksum.lower()))
    return items


async def _up(args: argparse.Namespace) -> Result:
    from ptah_operator.engine.migrations.apply import Outcome, TransactionMode, apply

    directory = _directory(args)
    table = _table(args)
    expected = _expected(args)
    url = _url(args.db_url, "PTAH_DB_URL", "database")
    mode = TransactionMode(args.transaction_mode) if args.transaction_mode else None
    db = await _open(url)
    try:
        result = await apply(
            db,
            directory,
            table=table,
            expected=expected,
            mode=mode,
            lock_timeout=args.lock_timeout,
            reconnect=lambda: connect(url),
        )
    finally:
        await db.close()
    body = {
        "engine": db.engine.value,
        "revisionTable": table.display(db.dialect),
        **output.run_json(result),
    }
    if result.outcome in (Outcome.APPLIED, Outcome.UP_TO_DATE):
        code = EXIT_OK
    elif result.outcome is Outcome.UNKNOWN:
        code = EXIT_UNKNOWN
    elif not result.selected:
        code = EXIT_UNREACHABLE if result.reason == "ConnectionLostError" else EXIT_REFUSED
    else:
        code = EXIT_RUN_FAILED
    return code, body, output.run_text(result)


async def _maintain(
    args: argparse.Namespace,
    command: Callable[[Database, MigrationDirectory, RevisionTable], Awaitable[MaintenanceResult]],
) -> MaintenanceResult:
    """Run `set` or `repair` on the database: a refusal exits EXIT_REFUSED."""
    from ptah_operator.engine.migrations.maintenance import MaintenanceRefusedError

    directory = _directory(args)
    table = _table(args)
    db = await _open(_url(args.db_url, "PTAH_DB_URL", "database"))
    try:
        return await command(db, directory, table)
    except MaintenanceRefusedError as exc:
        raise _CommandError(EXIT_REFUSED, exc.reason, exc.message) from None
    finally:
        await db.close()


async def _set(args: argparse.Namespace) -> Result:
    from ptah_operator.engine.migrations.maintenance import set_version

    result = await _maintain(
        args,
        lambda db, directory, table: set_version(
            db, directory, table=table, version=args.version, lock_timeout=args.lock_timeout
        ),
    )
    body = output.maintenance_json(result)
    text = (
        "\n".join(f"version {c.version}: {c.change}" for c in result.changes) or "nothing to change"
    )
    return EXIT_OK, body, text


async def _repair(args: argparse.Namespace) -> Result:
    from ptah_operator.engine.migrations.maintenance import RepairMark, repair

    result = await _maintain(
        args,
        lambda db, directory, table: repair(
            db,
            directory,
            table=table,
            version=args.version,
            mark=RepairMark(args.mark),
            lock_timeout=args.lock_timeout,
        ),
    )
    body = output.maintenance_json(result)
    text = "\n".join(f"version {c.version}: {c.change}" for c in result.changes)
    return EXIT_OK, body, text


async def _baseline(args: argparse.Namespace) -> Result:
    from ptah_operator.engine.migrations.baseline import BaselineRefusedError, baseline

    directory = _directory(args)
    table = _table(args)
    target_url = _url(args.db_url, "PTAH_DB_URL", "database")
    shadow_url = _url(args.shadow_db, "PTAH_SHADOW_DB_URL", "shadow database")
    target = await _open(target_url)
    try:
        shadow = await _open(shadow_url)
        try:
            result = await baseline(
                target, shadow, directory, table=table, lock_timeout=args.lock_timeout
            )
        except BaselineRefusedError as exc:
            raise _CommandError(EXIT_REFUSED, exc.reason, exc.message, exc.details) from None
        finally:
            await shadow.close()
    finally:
        await target.close()
    body = output.baseline_json(result)
    text = f"recorded {len(result.recorded_versions)} version(s): " + ", ".join(
        str(v) for v in result.recorded_versions
    )
    return EXIT_OK, body, text


async def _hash(args: argparse.Namespace) -> Result:
    if not args.write:
        directory = _directory(args)
        return (
            EXIT_OK,
            output.directory_json(directory),
            render_sum(list(directory.sum_entries)).rstrip("\n"),
        )
    try:
        unchecked = read_directory(args.migrations_dir, verify_sum=False)
    except DirectoryError as exc:
        raise _CommandError(EXIT_REFUSED, exc.reason, str(exc)) from None
    text = render_sum(list(unchecked.sum_entries))
    sum_path = Path(args.migrations_dir) / SUM_FILE
    if sum_path.is_symlink():
        raise _CommandError(EXIT_REFUSED, "SymlinkRefused", f"{SUM_FILE} is a symbolic link")
    sum_path.write_text(text)
    directory = _directory(args)
    return EXIT_OK, output.directory_json(directory), text.rstrip("\n")


async def _import(args: argparse.Namespace) -> Result:
    from ptah_operator.engine.migrations.tool_import import (
        ImportRefusedError,
        Tool,
        plan_import,
        write_import,
    )

    dialect = None
    if args.engine is not None:
        dialect = Dialect.POSTGRESQL if args.engine == "postgresql" else Dialect.MYSQL
    try:
        plan = plan_import(Tool(args.tool), args.source, dialect)
        directory = write_import(plan, args.out)
    except ImportRefusedError as exc:
        raise _CommandError(EXIT_REFUSED, exc.reason, exc.message) from None
    body: dict[str, Any] = {
        "from": plan.tool.value,
        "files": [
            {
                "source": printable(f.source),
                "target": f.target,
                "version": f.version,
                "changes": list(f.changes),
            }
            for f in plan.files
        ],
        "skipped": [{"source": printable(s.source), "why": s.why} for s in plan.skipped],
        **output.directory_json(directory),
    }
    width = max(len(f.target) for f in plan.files)
    into = printable(str(args.out))
    lines = [f"imported {len(plan.files)} file(s) from {plan.tool.value} into {into}"]
    for f in plan.files:
        source = "" if f.source == f.target else f"  <- {printable(f.source)}"
        lines.append(f"  {f.target:<{width}}{source}".rstrip())
        lines += [f"      {change}" for change in f.changes]
    lines += [f"skipped {printable(s.source)}: {s.why}" for s in plan.skipped]
    lines.append(f"wrote {SUM_FILE}: sha256:{directory.directory_hash}")
    return EXIT_OK, body, "\n".join(lines)
