"""`ptah-runner`: what runs inside an operation Job.

The contracts: docs/design/migration-path.md, docs/design/schema-path.md.

    ptah-runner source  --snapshot DIR --digest sha256:... --out DIR   (the init container)
    ptah-runner history --files DIR                  (a migration's History: the run container)
    ptah-runner apply   --files DIR                  (a migration's Apply: the run container)
    ptah-runner observe --files DIR                  (a schema's Observe: the run container)
    ptah-runner plan    --files DIR                  (a schema's Plan: the run container)
    ptah-runner apply                                (a schema's Apply: no files, the run container)
    ptah-runner resolve [--credentials DIR]              (a Resolve Job's only container)
    ptah-runner verify  --policy FILE [--credentials DIR]  (a Verify Job's only container)
    ptah-runner fetch   --source JSON --digest sha256:... --out DIR [--credentials DIR]
                        (the init container fetching a Git/OCI source before `source`)

The operation document's `resource.kind` decides which family runs: PtahMigration (History,
Apply) or PtahSchema (Observe, Plan, Apply); its `type` must be the command.

Environment of `history`, `apply`, `observe` and `plan`:
    PTAH_OPERATION          the operation document (contract ptah.run/operation/v1)
    PTAH_DATABASE_URL       the database (only here; never logged, reported or written)
    PTAH_RESULT_URL         the result endpoint's base, e.g. https://…:9443/v1/results
    PTAH_RESULT_TOKEN_FILE  the operation's bearer token
    PTAH_RESULT_CA_FILE     the only CA trusted for the endpoint
    PTAH_RESULT_RETRY_SECONDS  how long to keep trying each request to the endpoint (default 120)
    PTAH_LOCK_TIMEOUT_SECONDS  how long an Apply, or a schema Plan, waits for the database's
                               lock (default 30)
    PTAH_TERMINATION_LOG    where the termination message goes (default /dev/termination-log)

A schema's operations (schema.py): `observe` reports `drift` aggregates; `plan`
plans twice under the engine's schema lock, dry-runs the bytes on the Apply path, uploads the
plan file in pieces (`PUT {PTAH_RESULT_URL}/{namespace}/{operationID}/plan/{index}`) and
reports `plan`; `apply` fetches the published plan (`GET …/plan`), hashes it, and runs it with
`engine.schema.apply` only when it gives `plan.digest` on the database `plannedTargetDigest`
names, reporting `apply` {outcome Applied | Refused | Unknown, reason, planDigest,
statementsExecuted, failure {statementIndex, sqlstate, mysqlErrno}}. `error.reason` of a
schema operation: SnapshotRefused, BadURL, EngineMismatch, ConnectionFailed,
IntrospectionFailed, DesiredSchemaRefused, PlanRefused, LockNotAcquired, LockLost,
PlanIncoherent, DryRunRefused, PlanTooLarge, PlanNotUploaded, PlanUnavailable, Interrupted,
RunnerError.

Git and OCI sources (resolve, verify, fetch; docs/engine-sources.md). These hold the source
credentials (`--credentials DIR`: files `username` and `password`) and never a database URL.
    PTAH_OPERATION            resolve/verify: the operation document, type Resolve or Verify,
                              with its `source` block (and, Resolve of Git, `sourcePolicy`)
    PTAH_RESULT_*             resolve/verify: as for history and apply
    PTAH_INSECURE_REGISTRIES  comma-separated host[:port] reached over plain HTTP
`resolve` reports `resolve` {kind Git: repository, ref, path, commit, contentDigest,
fileCount, totalBytes | kind Artifact: ociRef, ociDigest}, or `error` {reason SourceUnreachable,
RefNotFound, CommitNotAdvertised, SourceRefused or CommitUnreachable, message}. `verify` reports
`verify` {accepted, artifactType, policyDigest, contentDigest (accepted) | refusal (refused)};
a refusal is a verdict (exit 0), a registry that cannot be read an `error` (exit 1). `fetch`
reports nothing: it writes the files and `ptah-manifest.json` into `--out` only when they give
`--digest`, for `ptah-runner source --snapshot` to check again.

Exit codes:
    0  the result was reported, whatever it says (a History reading, any migration Apply
       outcome; an Observe's drift, a Plan, a schema Apply's Applied, Unknown or Refused
       verdict such as StalePlan, PlanDigestMismatch or TargetIdentityChanged; a Resolve, a
       Verify verdict); `fetch`: the files are written
    1  the result was reported, and it says the operation could not do its work (its
       `error` block: the database unreachable, the history unreadable, the lock not free or
       lost, the files refused, two plans that differ, a dry run refused, the plan not
       uploaded or not fetched, the runner stopped; the source unreachable or refused);
       `fetch`: the source cannot be reached (`source unavailable: …`)
    2  the command line, the operation document or the result endpoint's configuration
       cannot be used (a migration's apply without --files, a schema's apply with them):
       nothing was run and nothing reported
    3  `source`: the snapshot does not match the bound digest (`snapshot refused: …`);
       `fetch`: the source refused, e.g. a digest that differs, a commit no longer reachable,
       a submodule or LFS pointer (`source refused: …`)
    4  the result could not be reported (`result not reported`)

The termination message is one short line: never SQL, a row, a URL or a token. A schema
operation's reads `Observe: 3 difference(s)`, `Plan: 4 statement(s) in 1 piece(s)`,
`Plan: no change`, `Apply Applied, 4 statement(s) executed`, `Apply Refused (StalePlan), 0
statement(s) executed`, followed by `: <reason>: <message>` when it carries an `error`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from ptah_operator.api.contracts.codes import ExitCode
from ptah_operator.runner.logs import configure_logging
from ptah_operator.runner.termination import write_termination_message

if TYPE_CHECKING:
    from ptah_operator.runner.source_commands import Ending

# Each command imports what it runs when it runs: the init container that checks a snapshot
# must not pay for loading the schema engine, the Git and OCI clients and every API model.

log = structlog.get_logger("ptah.runner")

_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ptah-runner", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    source = commands.add_parser("source", help="check the snapshot and copy its files")
    source.add_argument("--snapshot", required=True, type=Path)
    source.add_argument("--digest", required=True)
    source.add_argument("--out", required=True, type=Path)
    helps = {
        "history": "read the revision table against the files (a History operation)",
        "observe": "a schema's drift against the files (an Observe operation)",
        "plan": "a schema's plan against the files, uploaded in pieces (a Plan operation)",
    }
    for name, text in helps.items():
        command = commands.add_parser(name, help=text)
        command.add_argument("--files", required=True, type=Path)
    apply = commands.add_parser(
        "apply",
        help="a migration: run exactly the expected sequence of --files; "
        "a schema: run exactly the published plan (no files)",
    )
    apply.add_argument("--files", type=Path, default=None)
    resolve = commands.add_parser("resolve", help="resolve a Git or OCI source (a Resolve)")
    resolve.add_argument("--credentials", type=Path, default=None)
    verify = commands.add_parser("verify", help="verify an OCI artifact against a policy")
    verify.add_argument("--policy", required=True, type=Path)
    verify.add_argument("--credentials", type=Path, default=None)
    fetch = commands.add_parser("fetch", help="fetch a pinned Git/OCI source into a snapshot")
    fetch.add_argument("--source", required=True)
    fetch.add_argument("--digest", required=True)
    fetch.add_argument("--out", required=True, type=Path)
    fetch.add_argument("--credentials", type=Path, default=None)
    return parser


def _source(args: argparse.Namespace) -> int:
    if not _DIGEST.match(args.digest):
        log.error("bad digest")
        write_termination_message("bad invocation: --digest is not sha256:<64 hex>")
        return ExitCode.USAGE
    from ptah_operator.runner.source import SnapshotError, take_snapshot

    try:
        names = take_snapshot(args.snapshot, args.digest, args.out)
    except SnapshotError as exc:
        log.error("snapshot refused", reason=str(exc))
        write_termination_message(f"snapshot refused: {exc}")
        return ExitCode.REFUSED
    log.info("snapshot checked", files=len(names))
    return 0


def _ended(ending: Ending) -> int:
    if ending.message:
        write_termination_message(ending.message)
    return ending.code


def _fetch(args: argparse.Namespace) -> int:
    if not _DIGEST.match(args.digest):
        log.error("bad digest")
        write_termination_message("bad invocation: --digest is not sha256:<64 hex>")
        return ExitCode.USAGE
    from ptah_operator.runner.source_commands import fetch_command

    return _ended(fetch_command(args.source, args.digest, args.out, args.credentials))


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command. An error nothing expected ends it NOT_REPORTED (4), never Python's own
    exit code 1, which is NOT_DONE: the manager believes a result only from a container that
    exited 0 or 1 (issue #18), and a runner that crashed after someone else's report was
    stored has reported nothing."""
    configure_logging()
    args = build_parser().parse_args(argv)
    structlog.contextvars.bind_contextvars(command=args.command)
    try:
        return _command(args)
    except (Exception, asyncio.CancelledError) as error:
        structlog.get_logger(__name__).error("runner failed", error=type(error).__name__)
        write_termination_message("result not reported")
        return ExitCode.NOT_REPORTED


def _command(args: argparse.Namespace) -> int:
    if args.command == "source":
        return _source(args)
    if args.command == "fetch":
        return _fetch(args)
    if args.command == "resolve":
        from ptah_operator.runner.source_commands import resolve_command

        return _ended(asyncio.run(resolve_command(args.credentials)))
    if args.command == "verify":
        from ptah_operator.runner.source_commands import verify_command

        return _ended(asyncio.run(verify_command(args.policy, args.credentials)))
    # The schema engine is loaded only for a schema's document.
    from ptah_operator.api.contracts.operation import is_schema_document

    text = os.environ.get("PTAH_OPERATION", "")
    if is_schema_document(text):
        from ptah_operator.runner.schema import operate
    else:
        from ptah_operator.runner.migration import operate
    return asyncio.run(operate(args, text))


if __name__ == "__main__":
    sys.exit(main())
