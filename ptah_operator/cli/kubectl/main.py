"""`kubectl ptah`'s entry: the arguments read into one Command, the Command carried out by its
verb, and every failure said in one line with its exit code.

The verbs that only read (`migration`, `schema`, `plan`, `wait`) go through the small HTTP
client of `rest` and never import the Kubernetes client library, which alone takes longer to
import than they take to answer; the verbs that write keep the client library (`session`)."""

from __future__ import annotations

import argparse
import asyncio
import copy
import http.client
import io
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from ptah_operator.api.constants import Kind, MigrationPhase, SchemaPhase
from ptah_operator.cli.kubectl.approve import Reviewed, fingerprint_argument
from ptah_operator.cli.kubectl.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    UsageError,
    exit_codes_text,
)
from ptah_operator.cli.kubectl.lookup import Reads
from ptah_operator.cli.kubectl.manifest import parse_duration
from ptah_operator.cli.kubectl.show import show_applied, show_plan, show_status
from ptah_operator.cli.kubectl.targets import BY_ALIAS, BY_NOUN, TARGETS
from ptah_operator.cli.kubectl.wait import wait_for_phase

if TYPE_CHECKING:
    from ptah_operator.cli.kubectl.session import Session

DEFAULT_TIMEOUT = "30m"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}\n{self.format_usage().rstrip()}")


# --- arguments ---------------------------------------------------------------------------------


def _common(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument("--kubeconfig", default=default, help="kubeconfig file")
    parser.add_argument("--context", default=default, help="kubeconfig context")
    parser.add_argument("-n", "--namespace", default=default, help="namespace")


Argument = tuple[tuple[str, ...], dict[str, Any]]

_TARGET: Argument = (("target",), {"metavar": "KIND/NAME"})
_OUTPUT: Argument = (
    ("-o", "--output"),
    {"choices": ("json", "yaml"), "help": "print the object read, as JSON or YAML"},
)
_TIMEOUT: Argument = (("--timeout",), {"default": DEFAULT_TIMEOUT, "help": "how long --wait waits"})

# The verbs that take KIND/NAME, in the order --help lists them (after one `show` verb per kind).
_VERBS: tuple[tuple[str, str, tuple[Argument, ...]], ...] = (
    (
        "plan",
        "show the plan a migration (no SQL) or schema (with its SQL) published",
        (
            _TARGET,
            (
                ("--applied",),
                {"action": "store_true", "help": "a schema's last confirmed plan (status.applied)"},
            ),
            (("--no-sql",), {"action": "store_true", "help": "leave a schema plan's SQL out"}),
            _OUTPUT,
        ),
    ),
    (
        "approve",
        "approve the plan a migration or schema waits on",
        (
            _TARGET,
            (
                ("--plan",),
                {
                    "metavar": "NAME",
                    "help": "approve only if the plan waiting is this one (the plan you reviewed)",
                },
            ),
            (
                ("--fingerprint",),
                {
                    "metavar": "F",
                    "help": "approve only if the plan's fingerprint is (or starts with) F, "
                    "sha256: and at least 12 hex digits",
                },
            ),
            (("--wait",), {"action": "store_true", "help": "wait for the run's verdict"}),
            _TIMEOUT,
        ),
    ),
    (
        "wait",
        "wait for a migration or schema to reach a phase",
        (
            _TARGET,
            (
                ("--for",),
                {"dest": "phase", "default": MigrationPhase.IN_SYNC.value, "metavar": "PHASE"},
            ),
            (("--timeout",), {"default": DEFAULT_TIMEOUT}),
            _OUTPUT,
        ),
    ),
    (
        "set-source",
        "point a migration or schema at another OCI artifact",
        (
            _TARGET,
            (("reference",), {"metavar": "oci://REGISTRY/REPOSITORY[:TAG|@DIGEST]"}),
            (
                ("--verification-policy",),
                {
                    "metavar": "CONFIGMAP/KEY",
                    "help": "the ConfigMap key holding the verification policy (needed when the "
                    "resource does not read an OCI artifact yet)",
                },
            ),
        ),
    ),
    (
        "refresh",
        "ask for a read of the database now",
        (
            _TARGET,
            (("--wait",), {"action": "store_true", "help": "wait for the read it starts"}),
            _TIMEOUT,
        ),
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kubectl ptah",
        description="Read, approve and refresh Ptah resources.",
        epilog=exit_codes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(parser, None)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    verbs.required = True
    for target in TARGETS.values():
        name: Argument = (("name",), {"metavar": "NAME", "help": f"NAME or {target.noun}/NAME"})
        _verb(verbs, target.noun, f"show a {target.kind}'s status", (name, _OUTPUT))
    for verb, help_text, arguments in _VERBS:
        _verb(verbs, verb, help_text, arguments)
    return parser


def _verb(verbs: Any, verb: str, help_text: str, arguments: tuple[Argument, ...]) -> None:
    parser = verbs.add_parser(
        verb,
        help=help_text,
        epilog=exit_codes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for flags, options in arguments:
        parser.add_argument(*flags, **options)
    _common(parser, argparse.SUPPRESS)


def parse_target(text: str, default_kind: Kind | None = None) -> tuple[Kind, str]:
    """`kind/name` (kind by any of its names), or a bare name of `default_kind`."""
    kind_text, sep, name = text.partition("/")
    if not sep:
        if default_kind is None:
            raise UsageError(f"expected KIND/NAME, such as migration/orders, not {text!r}")
        return default_kind, text
    kind = BY_ALIAS.get(kind_text.lower())
    if kind is None:
        raise UsageError(f"unknown kind {kind_text!r}: use migration/NAME or schema/NAME")
    if not name:
        raise UsageError(f"{text!r} names no object")
    return kind, name


def _seconds(text: str) -> float:
    try:
        return parse_duration(text).total_seconds()
    except ValueError:
        raise UsageError(
            f"--timeout takes a duration such as 90s, 10m or 1h, not {text!r}"
        ) from None


def _phase(text: str, kind: Kind) -> MigrationPhase | SchemaPhase:
    phases = TARGETS[kind].phases
    try:
        return phases(text)
    except ValueError:
        known = ", ".join(p.value for p in phases)
        raise UsageError(f"--for takes a phase ({known}), not {text!r}") from None


# --- entry -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One verb with its arguments, checked before anything reaches the server."""

    verb: str
    kind: Kind
    name: str
    wait: bool = False
    wait_seconds: float = 0.0
    phase: str = MigrationPhase.IN_SYNC.value
    reference: str = ""
    policy: tuple[str, str] | None = None
    applied: bool = False
    sql: bool = True
    reviewed: Reviewed = field(default_factory=Reviewed)
    output: str | None = None
    """-o: json or yaml (the read verbs)."""


def parse_command(argv: Sequence[str]) -> tuple[Command, argparse.Namespace]:
    """The command and the connection flags; raises UsageError."""
    args = build_parser().parse_args(list(argv))
    verb = args.verb
    if verb in BY_NOUN:
        own = BY_NOUN[verb].kind
        kind, name = parse_target(args.name, own)
        if kind != own:
            raise UsageError(f"{verb} takes NAME or {verb}/NAME")
        command = Command(verb, kind, name, output=args.output)
    elif verb == "refresh":
        kind, name = parse_target(args.target)
        command = Command(verb, kind, name, args.wait, _seconds(args.timeout))
    elif verb == "set-source":
        from ptah_operator.cli.kubectl.set_source import oci_reference, policy_key

        kind, name = parse_target(args.target)
        reference, policy = oci_reference(args.reference), policy_key(args.verification_policy)
        command = Command(verb, kind, name, reference=reference, policy=policy)
    else:
        command = _on_a_plan(args)
    if not command.name:
        raise UsageError("a name is required")
    return command, args


def _on_a_plan(args: argparse.Namespace) -> Command:
    """`plan`, `approve` and `wait`, which take a bare NAME as a migration's."""
    kind, name = parse_target(args.target, Kind.PTAH_MIGRATION)
    if args.verb == "plan":
        if args.applied and kind != Kind.PTAH_SCHEMA:
            raise UsageError("--applied takes schema/NAME: status.applied is a schema's")
        return Command(
            "plan", kind, name, applied=args.applied, sql=not args.no_sql, output=args.output
        )
    if args.verb == "approve":
        try:
            fingerprint = fingerprint_argument(args.fingerprint)
        except ValueError:
            raise UsageError(
                "--fingerprint takes sha256: and 12 to 64 hex digits, as kubectl ptah plan "
                f"shows it, not {args.fingerprint!r}"
            ) from None
        reviewed = Reviewed(args.plan, fingerprint)
        return Command("approve", kind, name, args.wait, _seconds(args.timeout), reviewed=reviewed)
    phase = _phase(args.phase, kind).value
    return Command("wait", kind, name, True, _seconds(args.timeout), phase, output=args.output)


READ_VERBS = frozenset({*BY_NOUN, "plan", "wait"})
"""The verbs that only read: they run over `rest_session.RestSession`."""


async def execute_read(command: Command, session: Reads) -> int:
    name = command.name
    if command.output is not None:
        return await _execute_output(command, session, command.output)
    if command.verb in BY_NOUN:
        return await show_status(session, BY_NOUN[command.verb], name)
    target = TARGETS[command.kind]
    if command.verb == "plan" and command.applied:
        return await show_applied(session, name, command.sql)
    if command.verb == "plan":
        return await show_plan(session, target, name, command.sql)
    return await wait_for_phase(session, target, name, command.phase, command.wait_seconds)


async def _execute_output(command: Command, session: Reads, output: str) -> int:
    from ptah_operator.cli.kubectl.output import show_object, show_plan_object

    if command.verb == "plan":
        return await show_plan_object(session, command.kind, command.name, command.applied, output)
    if command.verb == "wait":
        # The phase lines would break the JSON or YAML: only the object reached is printed.
        quiet = copy.copy(session)
        quiet.out = io.StringIO()
        target = TARGETS[command.kind]
        await wait_for_phase(quiet, target, command.name, command.phase, command.wait_seconds)
    return await show_object(session, command.kind, command.name, output)


async def execute(command: Command, session: Session) -> int:
    from ptah_operator.cli.kubectl.approve import approve
    from ptah_operator.cli.kubectl.refresh import refresh
    from ptah_operator.cli.kubectl.set_source import set_source

    name = command.name
    if command.verb in READ_VERBS:
        return await execute_read(command, session)
    target = TARGETS[command.kind]
    if command.verb == "approve":
        return await approve(
            session, target, name, command.wait, command.wait_seconds, command.reviewed
        )
    if command.verb == "set-source":
        return await set_source(session, target, name, command.reference, command.policy)
    return await refresh(session, target, name, command.wait, command.wait_seconds)


async def run(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one command; returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        command, args = parse_command(argv)
        if command.verb in READ_VERBS:
            return await _read(command, args, out)
        return await _write(command, args, out)
    except UsageError as exc:
        return _said(err, str(exc), EXIT_USAGE)
    except CommandError as exc:
        return _said(err, str(exc))
    except (OSError, TimeoutError, http.client.HTTPException) as exc:
        return _said(err, f"cannot reach the API server: {exc or type(exc).__name__}")
    except SystemExit as exc:
        # --help prints and exits 0.
        return exc.code if isinstance(exc.code, int) else EXIT_OK


async def _read(command: Command, args: argparse.Namespace, out: TextIO) -> int:
    from ptah_operator.cli.kubectl import kubeconfig
    from ptah_operator.cli.kubectl.rest import Client
    from ptah_operator.cli.kubectl.rest_session import RestSession

    credentials = kubeconfig.load(args.kubeconfig, args.context)
    rest = Client(credentials)
    try:
        session = RestSession(rest, args.namespace or credentials.namespace, out)
        return await execute_read(command, session)
    finally:
        rest.close()


async def _write(command: Command, args: argparse.Namespace, out: TextIO) -> int:
    import aiohttp
    from kubernetes_asyncio import client
    from kubernetes_asyncio.client.exceptions import ApiException

    from ptah_operator.cli.kubectl.session import Session, api_message, load_configuration
    from ptah_operator.runtime.informer import ApiStatusError

    try:
        configuration, context_namespace = await load_configuration(args.kubeconfig, args.context)
        namespace = args.namespace or context_namespace
        async with client.ApiClient(configuration) as api:
            return await execute(command, Session(api, namespace, out))
    except ApiException as exc:
        raise CommandError(api_message(exc)) from None
    except ApiStatusError as exc:
        raise CommandError(str(exc.message or exc)) from None
    except aiohttp.ClientError as exc:
        raise OSError(str(exc) or type(exc).__name__) from None


def _said(err: TextIO, message: str, code: int = EXIT_FAILED) -> int:
    """The failure in one line, and its exit code."""
    err.write(f"error: {message}\n")
    return code


def main() -> None:
    # The client library logs warnings (a kubeconfig not found) that the error line says better.
    logging.getLogger("kubernetes_asyncio").setLevel(logging.ERROR)
    try:
        code = asyncio.run(run(sys.argv[1:]))
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except Exception as exc:
        # Whatever slipped past the handlers above is still said in one line.
        sys.stderr.write(f"error: {type(exc).__name__}: {exc}\n")
        code = EXIT_FAILED
    sys.exit(code)


if __name__ == "__main__":
    main()
