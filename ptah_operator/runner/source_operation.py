"""The result of the source operations: Resolve and Verify Jobs, and the `fetch` init container
of History/Apply Jobs for Git and OCI sources. Pure: no I/O, no clock.

Operation document (`PTAH_OPERATION`, contract `ptah.run/operation/v1`):

    {"contract": "ptah.run/operation/v1", "operationID": "op-…", "type": "Resolve" | "Verify",
     "resource": {"kind": "PtahMigration" | "PtahSchema", "namespace", "name", "uid"},
     "source": {"kind": "Git", "repository": "https://…", "ref": "main", "path": "db" | null}
             | {"kind": "Artifact", "ociRef": "oci://…", "ociDigest": "sha256:…"},  # Verify: digest required
     "sourcePolicy": {"maxBytes": 1048576} | null}                                   # Resolve, Git only

Other keys are ignored. `fetch --source=JSON` takes the same `source` block with the recorded
`"commit"` (Git) or `"ociDigest"` (Artifact) set. Both are read and checked by
api/contracts/operation.py (`parse_source_operation`, `parse_source_argument`).

Result (contract `ptah.run/result/v1`): the envelope `contract, operationID, type, resource,
startedAt, finishedAt` plus `resolve` or `verify` (see `resolve_block`, `verify_block`), or
`error: {reason, message}` when the operation could not do its work.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ptah_operator.api.contracts.codes import RESULT_CONTRACT
from ptah_operator.api.contracts.operation import (
    ARTIFACT,
    GIT,
    ArtifactSource,
    GitSource,
    SourceDocument,
)
from ptah_operator.api.fields import format_time

Json = dict[str, Any]


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
    operation: SourceDocument,
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
