"""`ptah-runner resolve`, `verify` and `fetch`: the runner's side of Git and OCI sources.

These containers hold source credentials (`--credentials=DIR`: files `username`, `password`;
for an SSH repository `ssh-privatekey` and `known_hosts`) and never a database URL (JOB-01). See docs/engine-sources.md for the whole contract.

resolve (the Resolve Job's only container): reads the ref the operation names and reports it.
    Git: the commit the ref names and the content digest of the selected files (SRC-GIT-02,
    -03), refused over `sourcePolicy.maxBytes` (SRC-POL-04). Artifact: the manifest digest
    behind the reference (SRC-OCI-01).
verify (the Verify Job's only container): evaluates the verification policy (`--policy=FILE`)
    and, separately, the artifact type of the digest-pinned manifest (SRC-OCI-02..04). An
    accepted artifact's files are fetched by digest and their content digest reported. A
    refusal is a verdict (reported, exit 0); a registry that cannot be read is an `error`.
fetch (an init container of History/Apply for Git/OCI sources): fetches the recorded commit or
    digest again (Git: SRC-GIT-08's order), refuses files that do not give the bound content
    digest (SRC-GIT-06), and writes them in the snapshot layout, one flat file per name plus
    `ptah-manifest.json`, for `ptah-runner source` to check again (SRC-GIT-07).

Each returns an `Ending`: the exit code and the termination message (one line, never content,
a URL or a credential); main.py writes the message.

The operation document's `source` block and `fetch --source=JSON` are read and checked by
api/contracts/operation.py. The result (contract `ptah.run/result/v1`): the envelope `contract,
operationID, type, resource, startedAt, finishedAt` plus `resolve` or `verify` (built at the end
of this module), or `error: {reason, message}` when the operation could not do its work.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import structlog

from ptah_operator.api.content import MANIFEST_KEY, ContentError, digest_of_files
from ptah_operator.api.contracts.codes import ExitCode
from ptah_operator.api.contracts.operation import (
    ARTIFACT,
    GIT,
    ArtifactSource,
    GitSource,
    OperationError,
    Source,
    SourceDocument,
    parse_source_argument,
    parse_source_operation,
)
from ptah_operator.engine.sources import git, git_ssh, oci
from ptah_operator.engine.sources.errors import (
    SourceError,
    SourceRefusedError,
    SourceUnreachableError,
)
from ptah_operator.engine.sources.files import Credentials, read_credentials, total_bytes
from ptah_operator.engine.sources.git_ssh import SshCredentials
from ptah_operator.engine.sources.verification import decide, policy_digest
from ptah_operator.runner.envelope import envelope, present, report_code
from ptah_operator.runner.report import (
    DEFAULT_BUDGET_SECONDS,
    ReportConfigError,
    ReportTarget,
    encode,
    post_result,
)

log = structlog.get_logger("ptah.runner")

INSECURE_REGISTRIES_ENV = "PTAH_INSECURE_REGISTRIES"
MAX_POLICY_FILE_BYTES = 1024 * 1024

T = TypeVar("T")
Json = dict[str, Any]


@dataclass(frozen=True)
class Ending:
    code: int
    message: str


class _FailedError(Exception):
    """The operation could not do its work: the result's `error` block."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _oci_client(credentials: Credentials | None) -> oci.OciClient:
    return oci.OciClient(
        insecure_registries=oci.insecure_from_env(os.environ.get(INSECURE_REGISTRIES_ENV)),
        credentials=credentials,
    )


def _content_digest(files: dict[str, bytes]) -> tuple[str, bytes]:
    try:
        return digest_of_files(files)
    except ContentError as exc:
        raise SourceRefusedError(str(exc)) from None


def _guarded(work: Callable[[], T]) -> T:
    """Run engine work, turning what it raises into `_FailedError` with a reason the result names.
    An unexpected exception is reported by its class name only (its text might hold a URL)."""
    try:
        return work()
    except SourceError as exc:
        raise _FailedError(exc.reason, exc.message) from None
    except Exception as exc:
        log.error("source read failed unexpectedly", error=type(exc).__name__)
        raise _FailedError(
            SourceUnreachableError.reason,
            f"the source could not be read ({type(exc).__name__})",
        ) from None


# -- resolve -------------------------------------------------------------------------------


def source_credentials(
    source: Source, credentials_dir: Path | None
) -> Credentials | SshCredentials | None:
    """What the mounted Secret gives for this source: the key and the pinned host keys for an
    SSH repository (refused without them), else HTTP basic credentials (or none)."""
    if isinstance(source, GitSource) and git_ssh.is_ssh(source.repository):
        return git_ssh.read_ssh_credentials(credentials_dir)
    return read_credentials(credentials_dir)


def _resolve_work(operation: SourceDocument, credentials_dir: Path | None) -> Json:
    source = operation.source
    if isinstance(source, GitSource):
        found = git.resolve(
            source.repository,
            source.ref,
            source.path,
            credentials=source_credentials(source, credentials_dir),
            max_bytes=operation.max_bytes,
            limit_rule="the source policy's maxBytes",
        )
        digest, _ = _content_digest(found.files)
        log.info("commit resolved", commit=found.commit, files=len(found.files))
        return git_resolve_block(
            source, found.commit, digest, len(found.files), total_bytes(found.files)
        )
    ref = oci.parse_ref(source.oci_ref)
    digest = _oci_client(read_credentials(credentials_dir)).resolve(ref)
    log.info("artifact resolved", digest=digest)
    return artifact_resolve_block(source, digest)


def _describe_resolve(block: Json) -> str:
    if block["kind"] == "Git":
        return (
            f"resolved {block['ref']} to commit {block['commit']}"
            f" ({block['fileCount']} files, {block['contentDigest']})"
        )
    return f"resolved the artifact to {block['ociDigest']}"


# -- verify --------------------------------------------------------------------------------


def _read_policy(path: Path) -> bytes | None:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_POLICY_FILE_BYTES + 1)
    except OSError:
        return None
    return data


def _verify_work(
    operation: SourceDocument, policy_file: Path, credentials_dir: Path | None
) -> Json:
    source = operation.source
    assert isinstance(source, ArtifactSource)
    assert source.oci_digest is not None
    credentials = read_credentials(credentials_dir)
    ref = oci.parse_ref(source.oci_ref)
    client = _oci_client(credentials)
    manifest = client.manifest(ref, source.oci_digest)
    artifact_type = manifest.artifact_type
    policy = _read_policy(policy_file)
    if policy is None:
        refusal = "the verification policy is invalid: the policy file cannot be read"
        return verify_block(
            accepted=False, artifact_type=artifact_type, policy_digest=None, refusal=refusal
        )
    verdict = decide(policy, artifact_type)
    if not verdict.accepted:
        log.info("artifact refused", artifact_type=artifact_type)
        return verify_block(
            accepted=False,
            artifact_type=artifact_type,
            policy_digest=policy_digest(policy),
            refusal=verdict.refusal,
        )
    files = client.files(ref, manifest)
    digest, _ = _content_digest(files)
    log.info("artifact accepted", artifact_type=artifact_type, files=len(files))
    return verify_block(
        accepted=True,
        artifact_type=artifact_type,
        policy_digest=policy_digest(policy),
        content_digest=digest,
    )


def _describe_verify(block: Json) -> str:
    if block["accepted"]:
        return f"artifact accepted ({block['artifactType']}, {block['contentDigest']})"
    return f"artifact refused: {block['refusal']}"


# -- reporting operations (resolve, verify) --------------------------------------------------


def _budget() -> float:
    text = os.environ.get("PTAH_RESULT_RETRY_SECONDS")
    if not text:
        return DEFAULT_BUDGET_SECONDS
    value = float(text)
    if value < 0:
        raise ValueError("PTAH_RESULT_RETRY_SECONDS must not be negative")
    return value


async def _reporting(
    command: str,
    work: Callable[[SourceDocument], Json],
    describe: Callable[[Json], str],
) -> Ending:
    operation_type = command.capitalize()
    try:
        operation = parse_source_operation(os.environ.get("PTAH_OPERATION", ""), operation_type)
    except OperationError as exc:
        log.error("bad operation document", reason=str(exc))
        return Ending(ExitCode.USAGE, f"bad operation document: {exc}")
    structlog.contextvars.bind_contextvars(operationID=operation.operation_id)
    try:
        target = ReportTarget.from_env(
            os.environ.get("PTAH_RESULT_URL"),
            os.environ.get("PTAH_RESULT_TOKEN_FILE"),
            os.environ.get("PTAH_RESULT_CA_FILE"),
        )
        budget = _budget()
    except (ReportConfigError, ValueError) as exc:
        log.error("bad configuration", reason=str(exc))
        return Ending(ExitCode.USAGE, f"bad configuration: {exc}")
    started = _now()
    log.info("operation started", type=operation.type, kind=type(operation.source).__name__)
    error: tuple[str, str] | None = None
    block: Json | None = None
    try:
        block = await asyncio.to_thread(_guarded, lambda: work(operation))
    except _FailedError as failed:
        error = (failed.reason, failed.message)
        log.warning("operation failed", reason=failed.reason, message=failed.message)
    document = source_result(
        operation, started_at=started, finished_at=_now(), block=block, error=error
    )
    outcome = await post_result(
        target,
        operation.resource.namespace,
        operation.operation_id,
        encode(document),
        budget_seconds=budget,
    )
    if not outcome.reported:
        return Ending(ExitCode.NOT_REPORTED, "result not reported")
    if error is not None:
        return Ending(ExitCode.NOT_DONE, f"{operation_type}: {error[0]}: {error[1]}")
    assert block is not None
    return Ending(ExitCode.REPORTED, describe(block))


async def resolve_command(credentials: Path | None) -> Ending:
    return await _reporting("resolve", lambda op: _resolve_work(op, credentials), _describe_resolve)


async def verify_command(policy: Path, credentials: Path | None) -> Ending:
    return await _reporting(
        "verify", lambda op: _verify_work(op, policy, credentials), _describe_verify
    )


# -- fetch ---------------------------------------------------------------------------------


def fetch_files(
    source: Source, credentials: Credentials | SshCredentials | None
) -> dict[str, bytes]:
    """The files of a pinned source, fetched again (Git: SRC-GIT-08's order; OCI: by digest)."""
    if isinstance(source, GitSource):
        assert source.commit is not None
        return git.fetch_commit(
            source.repository, source.ref, source.commit, source.path, credentials=credentials
        ).files
    assert source.oci_digest is not None
    assert not isinstance(credentials, SshCredentials)
    ref = oci.parse_ref(source.oci_ref)
    return _oci_client(credentials).fetch(ref, source.oci_digest)


def write_snapshot(out: Path, files: dict[str, bytes], manifest: bytes) -> None:
    """The snapshot layout `ptah-runner source --snapshot` reads: one file per name plus the
    manifest. Never through a symbolic link."""
    out.mkdir(parents=True, exist_ok=True)
    for name, data in sorted({**files, MANIFEST_KEY: manifest}.items()):
        fd = os.open(out / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)


def fetch_command(source_text: str, digest: str, out: Path, credentials_dir: Path | None) -> Ending:
    try:
        source = parse_source_argument(source_text)
    except OperationError as exc:
        log.error("bad source", reason=str(exc))
        return Ending(ExitCode.USAGE, f"bad invocation: {exc}")

    def work() -> tuple[dict[str, bytes], bytes]:
        files = fetch_files(source, source_credentials(source, credentials_dir))
        got, manifest = _content_digest(files)
        if got != digest:
            raise SourceRefusedError(
                f"the fetched files give {got}, not the bound content digest {digest}"
            )
        return files, manifest

    try:
        files, manifest = _guarded(work)
    except _FailedError as failed:
        log.error("source not fetched", reason=failed.reason, message=failed.message)
        if failed.reason == SourceUnreachableError.reason:
            return Ending(ExitCode.NOT_DONE, f"source unavailable: {failed.message}")
        return Ending(ExitCode.REFUSED, f"source refused: {failed.message}")
    try:
        write_snapshot(out, files, manifest)
    except OSError as exc:
        log.error("files not written", error=type(exc).__name__)
        return Ending(
            ExitCode.NOT_DONE, f"source unavailable: the files cannot be written ({exc.strerror})"
        )
    log.info("source fetched", files=len(files), digest=digest)
    return Ending(ExitCode.REPORTED, "")


# -- results --------------------------------------------------------------------------------


def git_resolve_block(
    source: GitSource, commit: str, content_digest: str, file_count: int, total_bytes: int
) -> Json:
    return {
        "kind": GIT,
        "repository": source.repository,
        "ref": source.ref,
        "path": source.path,
        "commit": commit,
        "contentDigest": content_digest,
        "fileCount": file_count,
        "totalBytes": total_bytes,
    }


def artifact_resolve_block(source: ArtifactSource, digest: str) -> Json:
    return {"kind": ARTIFACT, "ociRef": source.oci_ref, "ociDigest": digest}


def verify_block(
    *,
    accepted: bool,
    artifact_type: str,
    policy_digest: str | None,
    content_digest: str | None = None,
    refusal: str | None = None,
) -> Json:
    """`contentDigest` only when accepted, `refusal` only when refused."""
    block: Json = {
        "accepted": accepted,
        "artifactType": artifact_type,
        "policyDigest": policy_digest,
    }
    if accepted:
        block["contentDigest"] = content_digest
    else:
        block["refusal"] = refusal
    return block


_TRAILING_CODE = re.compile(r"\(([A-Z][A-Za-z0-9]{0,63})\)$")


def _trailing_code(message: str) -> str | None:
    """The engine's finer code a source error's message ends with, as `(HostKeyNotPinned)`:
    the part of the message a report carries as `error.code` (issue #18)."""
    found = _TRAILING_CODE.search(message)
    return found.group(1) if found else None


def source_result(
    operation: SourceDocument,
    *,
    started_at: dt.datetime,
    finished_at: dt.datetime,
    block: Json | None = None,
    error: tuple[str, str] | None = None,
) -> Json:
    """The whole result document: the envelope plus `resolve`/`verify`, or `error`."""
    doc: Json = envelope(operation, started_at, finished_at)
    if error is not None:
        doc["error"] = {
            "reason": error[0],
            **present({"code": report_code(_trailing_code(error[1]))}),
            "message": error[1],
        }
    elif block is not None:
        doc[operation.type.lower()] = block
    return doc
