"""`ptah schema <command>`: inspect, diff, plan, apply, drift.

Every command prints one JSON object on stdout carrying `contractVersion`. SQL appears only in
the plan file `plan --out` writes, never on stdout or stderr; `apply` reports progress on
stderr as JSON lines (index, severity, category). The database URL comes from `--url` or
`PTAH_DATABASE_URL`, and is never printed.

Exit codes: 0 done (for `apply`: applied, or a dry run whose checks held); 1 error (nothing
changed); 2 usage; 3 refused by policy; 4 refused because the plan is stale, altered, for
another dialect, or the lock was held; 5 apply outcome unknown.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from ptah_operator.engine.schema.apply import apply_plan
from ptah_operator.engine.schema.connection import TargetError
from ptah_operator.engine.schema.diff import PlanError
from ptah_operator.engine.schema.drift import drift_report
from ptah_operator.engine.schema.normalize import NormalizationError
from ptah_operator.engine.schema.operations import inspect_url, plan_url
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.plan import Policy, policy_refusals, summarize
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.timeouts import Timeouts

CONTRACT_VERSION = "ptah.schema.cli/v1"

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_POLICY, EXIT_REFUSED, EXIT_UNKNOWN = 0, 1, 2, 3, 4, 5


def _seconds(text: str, *, zero: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number of seconds") from None
    if not (value >= 0 if zero else value > 0) or value > 365 * 86400:
        low = "0 (no limit)" if zero else "more than 0"
        raise argparse.ArgumentTypeError(f"seconds must be {low} and at most a year")
    return value


def _limit(text: str) -> float:
    return _seconds(text, zero=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ptah schema", description="Declarative schema engine.")
    commands = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, desired: bool) -> None:
        p.add_argument("--url", help="database URL (default: $PTAH_DATABASE_URL)")
        p.add_argument("--schema", action="append", default=[], help="PostgreSQL schema (repeat)")
        p.add_argument("--table", action="append", default=[], help="table glob to include")
        p.add_argument("--exclude", action="append", default=[], help="table glob to leave alone")
        if desired:
            p.add_argument(
                "--desired",
                action="append",
                type=Path,
                required=True,
                help="desired-schema file or directory of *.sql / *.hcl (repeat)",
            )

    def policy(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--protected-table",
            action="append",
            default=[],
            help="table glob no plan may touch (repeat)",
        )
        p.add_argument(
            "--allow-destructive", action="store_true", help="accept destructive statements"
        )

    common(commands.add_parser("inspect", help="print the normalized model of the database"), False)
    common(commands.add_parser("diff", help="list the changes, without SQL"), True)
    plan = commands.add_parser("plan", help="write a plan file")
    common(plan, True)
    policy(plan)
    plan.add_argument("--out", type=Path, required=True, help="where to write the plan file")
    common(commands.add_parser("drift", help="print the bounded drift report"), True)
    apply = commands.add_parser("apply", help="apply a plan file")
    apply.add_argument("--url", help="database URL (default: $PTAH_DATABASE_URL)")
    apply.add_argument("--plan", type=Path, required=True)
    apply.add_argument("--expect-digest", help="refuse a plan whose digest is not this one")
    apply.add_argument(
        "--dry-run",
        action="store_true",
        help="verify bytes, policy, statements and freshness, then try the plan without "
        "keeping anything: on PostgreSQL it runs in a transaction that is rolled back; on "
        "MySQL/MariaDB each statement is prepared and the rows are checked (the report says "
        "what was checked)",
    )
    apply.add_argument(
        "--lock-timeout",
        type=_seconds,
        default=30.0,
        help="seconds to wait for the engine's own database lock (default 30)",
    )
    apply.add_argument(
        "--ddl-lock-timeout",
        type=_limit,
        default=30.0,
        help="seconds one statement may wait for a lock on what it changes (default 30; 0: no limit)",
    )
    apply.add_argument(
        "--statement-timeout",
        type=_limit,
        default=None,
        help="seconds one statement may run (default or 0: no limit; MySQL has none for DDL)",
    )
    policy(apply)
    return parser


def _scope(args: argparse.Namespace) -> Scope:
    return Scope(
        schemas=tuple(args.schema) or ("public",),
        tables=tuple(args.table),
        exclude=tuple(args.exclude),
    )


def _url(args: argparse.Namespace) -> str:
    url = args.url or os.environ.get("PTAH_DATABASE_URL")
    if not url:
        raise TargetError("no database URL: pass --url or set PTAH_DATABASE_URL")
    return str(url)


def _print(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"contractVersion": CONTRACT_VERSION, **value}, sort_keys=True))
    sys.stdout.write("\n")


def _progress(event: dict[str, Any]) -> None:
    sys.stderr.write(json.dumps(event, sort_keys=True) + "\n")
    sys.stderr.flush()


async def _run(args: argparse.Namespace) -> int:
    command = args.command
    if command == "inspect":
        schema = await inspect_url(_url(args), _scope(args))
        _print(
            {
                "command": command,
                "fingerprint": schema.fingerprint(),
                "schema": schema.to_json(),
                # What the database holds that the engine cannot manage (planning refuses it).
                "unmanaged": list(schema.unmanaged),
            }
        )
        return EXIT_OK
    if command == "apply":
        result = await apply_plan(
            _url(args),
            args.plan.read_bytes(),
            policy=Policy(tuple(args.protected_table), args.allow_destructive),
            expected_digest=args.expect_digest,
            dry_run=args.dry_run,
            lock_timeout=args.lock_timeout,
            timeouts=Timeouts(lock=args.ddl_lock_timeout, statement=args.statement_timeout),
            progress=_progress,
        )
        _print({"command": command, **result.to_json()})
        if result.outcome in {"applied", "dryRun"}:
            return EXIT_OK
        if result.outcome == "unknown":
            return EXIT_UNKNOWN
        return EXIT_POLICY if result.reason == "PolicyRefused" else EXIT_REFUSED
    result_plan = await plan_url(_url(args), list(args.desired), _scope(args))
    statements = result_plan.statements
    dialect = result_plan.observed.dialect
    if command == "drift":
        _print({"command": command, **drift_report(dialect, statements)})
        return EXIT_OK
    if command == "diff":
        _print(
            {
                "command": command,
                "dialect": dialect.value,
                "summary": summarize(statements),
                "changes": [
                    {"severity": s.severity.value, "category": s.category, "reason": s.reason}
                    for s in statements
                ],
            }
        )
        return EXIT_OK
    refusals = policy_refusals(
        statements, Policy(tuple(args.protected_table), args.allow_destructive)
    )
    document = json.loads(result_plan.plan_bytes)
    output = {
        "command": command,
        "dialect": dialect.value,
        "noChange": not statements,
        "summary": document["summary"],
        "observedFingerprint": document["observedFingerprint"],
        "desiredFingerprint": document["desiredFingerprint"],
    }
    if refusals:
        _print({**output, "refused": True, "refusals": refusals})
        return EXIT_POLICY
    args.out.write_bytes(result_plan.plan_bytes)
    _print({**output, "refused": False, "digest": document["digest"], "planFile": str(args.out)})
    return EXIT_OK


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        return asyncio.run(_run(args))
    except (DesiredSchemaError, PlanError, TargetError, NormalizationError) as error:
        _print({"command": args.command, "error": type(error).__name__, "message": str(error)})
        return EXIT_ERROR
    except OSError as error:
        # Connection refused, unreadable plan file: the kind, never a server message.
        _print({"command": args.command, "error": type(error).__name__})
        return EXIT_ERROR
    except Exception as error:  # a database error: its kind and code only (PRIV-05)
        detail: dict[str, Any] = {"command": args.command, "error": type(error).__name__}
        sqlstate = getattr(error, "sqlstate", None)
        if sqlstate:
            detail["sqlstate"] = sqlstate
        _print(detail)
        return EXIT_ERROR
