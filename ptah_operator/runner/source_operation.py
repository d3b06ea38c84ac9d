"""The inputs and the result of the source operations: Resolve and Verify Jobs, and the `fetch`
init container of History/Apply Jobs for Git and OCI sources. Pure: no I/O, no clock.

Operation document (`PTAH_OPERATION`, contract `ptah.run/operation/v1`):

    {"contract": "ptah.run/operation/v1", "operationID": "op-…", "type": "Resolve" | "Verify",
     "resource": {"kind": "PtahMigration" | "PtahSchema", "namespace", "name", "uid"},
     "source": {"kind": "Git", "repository": "https://…", "ref": "main", "path": "db" | null}
             | {"kind": "Artifact", "ociRef": "oci://…", "ociDigest": "sha256:…"},  # Verify: digest required
     "sourcePolicy": {"maxBytes": 1048576} | null}                                   # Resolve, Git only

Other keys are ignored. `fetch --source=JSON` takes the same `source` block with the recorded
`"commit"` (Git) or `"ociDigest"` (Artifact) set.

Result (contract `ptah.run/result/v1`): the envelope `contract, operationID, type, resource,
startedAt, finishedAt` plus `resolve` or `verify` (see `resolve_block`, `verify_block`), or
`error: {reason, message}` when the operation could not do its work.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from ptah_operator.api.contracts.codes import RESULT_CONTRACT
from ptah_operator.api.fields import format_time
from ptah_operator.runner.operation import OPERATION_CONTRACT, OperationError, ResourceRef

SOURCE_OPERATION_TYPES = ("Resolve", "Verify")
RESOURCE_KINDS = ("PtahMigration", "PtahSchema")
GIT = "Git"
ARTIFACT = "Artifact"

_OPERATION_ID = re.compile(r"^op-[0-9a-f]{10}$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")

Json = dict[str, Any]


@dataclass(frozen=True)
class GitSource:
    repository: str
    ref: str
    path: str | None
    commit: str | None = None


@dataclass(frozen=True)
class ArtifactSource:
    oci_ref: str
    oci_digest: str | None = None


Source = GitSource | ArtifactSource


@dataclass(frozen=True)
class SourceOperation:
    operation_id: str
    type: str
    resource: ResourceRef
    source: Source
    max_bytes: int | None = None
    """`sourcePolicy.maxBytes` (Resolve of a Git source): the selected files' size limit."""


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OperationError(f"{where} must be a JSON object")
    return value


def _string(doc: dict[str, Any], key: str, where: str, pattern: re.Pattern[str] | None) -> str:
    value = doc.get(key)
    if not isinstance(value, str) or not value:
        raise OperationError(f"{where}{key} must be a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise OperationError(f"{where}{key} is not well formed")
    return value


def _resource(value: Any) -> ResourceRef:
    doc = _object(value, "resource")
    kind = _string(doc, "kind", "resource.", None)
    if kind not in RESOURCE_KINDS:
        raise OperationError(f"resource.kind must be one of {', '.join(RESOURCE_KINDS)}")
    uid = _string(doc, "uid", "resource.", None)
    if len(uid) > 128:
        raise OperationError("resource.uid is too long")
    return ResourceRef(
        kind=kind,
        namespace=_string(doc, "namespace", "resource.", _DNS_LABEL),
        name=_string(doc, "name", "resource.", _DNS_SUBDOMAIN),
        uid=uid,
    )


def parse_source(value: Any, *, pinned: bool = False) -> Source:
    """A `source` block. `pinned`: the recorded commit / digest must be there (fetch, Verify).
    Messages name fields, never values (a mistaken value could hold a credential)."""
    doc = _object(value, "source")
    kind = doc.get("kind")
    if kind == GIT:
        path = doc.get("path")
        if path is not None and not isinstance(path, str):
            raise OperationError("source.path must be null or a string")
        commit = doc.get("commit")
        if commit is not None and (not isinstance(commit, str) or not _COMMIT.match(commit)):
            raise OperationError("source.commit must be 40 lowercase hex digits")
        if pinned and commit is None:
            raise OperationError("source.commit is required here")
        ref = _string(doc, "ref", "source.", None)
        if len(ref) > 255:
            raise OperationError("source.ref is too long")
        return GitSource(
            repository=_string(doc, "repository", "source.", None),
            ref=ref,
            path=path or None,
            commit=commit,
        )
    if kind == ARTIFACT:
        oci_ref = _string(doc, "ociRef", "source.", None)
        if not oci_ref.startswith("oci://"):
            raise OperationError("source.ociRef must be an oci:// reference")
        digest = doc.get("ociDigest")
        if digest is not None and (not isinstance(digest, str) or not DIGEST.match(digest)):
            raise OperationError("source.ociDigest must be sha256:<64 hex>")
        if pinned and digest is None:
            raise OperationError("source.ociDigest is required here")
        return ArtifactSource(oci_ref=oci_ref, oci_digest=digest)
    raise OperationError(f'source.kind must be "{GIT}" or "{ARTIFACT}"')


def _max_bytes(value: Any) -> int | None:
    if value is None:
        return None
    doc = _object(value, "sourcePolicy")
    limit = doc.get("maxBytes")
    if limit is None:
        return None
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise OperationError("sourcePolicy.maxBytes must be a non-negative integer")
    return limit


def parse_source_operation(text: str, expected_type: str) -> SourceOperation:
    """Read and check a Resolve or Verify operation document."""
    try:
        raw = json.loads(text)
    except (ValueError, TypeError):
        raise OperationError("PTAH_OPERATION is not JSON") from None
    doc = _object(raw, "the operation document")
    if doc.get("contract") != OPERATION_CONTRACT:
        raise OperationError(f"contract must be {OPERATION_CONTRACT}")
    if doc.get("type") != expected_type:
        raise OperationError(f"type must be {expected_type}")
    operation_id = _string(doc, "operationID", "", _OPERATION_ID)
    if "source" not in doc:
        raise OperationError("source is missing")
    source = parse_source(doc["source"], pinned=expected_type == "Verify")
    if expected_type == "Verify" and not isinstance(source, ArtifactSource):
        raise OperationError('a Verify reads an "Artifact" source')
    return SourceOperation(
        operation_id=operation_id,
        type=expected_type,
        resource=_resource(doc.get("resource")),
        source=source,
        max_bytes=_max_bytes(doc.get("sourcePolicy")),
    )


def parse_source_argument(text: str) -> Source:
    """`fetch --source=JSON`: a pinned source block."""
    try:
        raw = json.loads(text)
    except (ValueError, TypeError):
        raise OperationError("--source is not JSON") from None
    return parse_source(raw, pinned=True)


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


def source_result(
    operation: SourceOperation,
    *,
    started_at: dt.datetime,
    finished_at: dt.datetime,
    block: Json | None = None,
    error: tuple[str, str] | None = None,
) -> Json:
    """The whole result document: the envelope plus `resolve`/`verify`, or `error`."""
    doc: Json = {
        "contract": RESULT_CONTRACT,
        "operationID": operation.operation_id,
        "type": operation.type,
        "resource": operation.resource.as_json(),
        "startedAt": format_time(started_at),
        "finishedAt": format_time(finished_at),
    }
    if error is not None:
        doc["error"] = {"reason": error[0], "message": error[1]}
    elif block is not None:
        doc[operation.type.lower()] = block
    return doc
