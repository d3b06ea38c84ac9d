"""The naming contract: the name of every object an operation makes or leaves behind.

A name made from an identity (an operation id, a plan's fingerprint, a resource's uid and its
content) means a pass that crashed after deciding and before creating creates the same object
again instead of a second one, and that a later pass can find (and delete) what an earlier one
made without remembering it. The manager makes these names, the result endpoint writes the
records under them and the shell reads them back; this module is the one place they are made.

    Job               ptah-<type, lower case>-<operation hex>
    operation Secret  ptah-op-<operation hex>            (the result token, mounted by the Job)
    result record     ptah-result-<operation hex>        (key `result.json`)
    piece record      ptah-result-<operation hex>-<index> (key `piece`: one piece of a plan file)
    snapshot          ptah-src-<20 hex of sha256(uid:content digest)>
    plan              <owner>-<first 10 hex of the plan fingerprint>
    plan chunk        <plan>-c<index, two digits>
    realm Lease       ptah-realm-<16 hex of sha256(coordination key)>

Every object the operator makes carries the labels of `owner_labels` (and, when an operation
makes it, those of `operation_labels`), so that the caches select it and an index finds its
owner without reading its content.
"""

from __future__ import annotations

import hashlib
import re

from ptah_operator.api.constants import (
    LABEL_MANAGED_BY,
    LABEL_OPERATION_ID,
    LABEL_OPERATION_TYPE,
    LABEL_OWNER_KIND,
    LABEL_OWNER_NAME,
    LABEL_OWNER_UID,
    MANAGED_BY,
    SNAPSHOT_NAME_PREFIX,
    OperationType,
)

MAX_NAME = 253
FINGERPRINT_CHARS = 10
CHUNK_SUFFIX = len("-c00")

RESULT_PREFIX = "ptah-result-"
RESULT_KEY = "result.json"
"""The one data key of a result record: the report, canonical JSON."""
PIECE_KEY = "piece"
"""The one data key of an uploaded piece of a plan file: the piece's text."""
PIECE_RECORD = re.compile(r"ptah-result-([0-9a-f]+)-([0-9]{1,2})")
"""A piece record's name (fullmatch): the operation hex and the piece's index."""


def operation_hex(operation_id: str) -> str:
    """The hex part of an operation id (`op-3f9a2c7d1e` → `3f9a2c7d1e`)."""
    return operation_id.removeprefix("op-")


def job_name(operation_type: OperationType, operation_id: str) -> str:
    return f"ptah-{operation_type.value.lower()}-{operation_hex(operation_id)}"


def operation_secret_name(operation_id: str) -> str:
    return f"ptah-op-{operation_hex(operation_id)}"


def result_record_name(operation_id: str) -> str:
    return f"{RESULT_PREFIX}{operation_hex(operation_id)}"


def plan_text_record_name(operation_id: str, index: int) -> str:
    """Where the result endpoint keeps one uploaded piece of a Plan's plan file until its
    chunk exists: `ptah-result-<operation hex>-<index>`, beside the report's own record."""
    return f"{RESULT_PREFIX}{operation_hex(operation_id)}-{index}"


def realm_lease_name(coordination_key: str) -> str:
    return "ptah-realm-" + hashlib.sha256(coordination_key.encode()).hexdigest()[:16]


def snapshot_name(resource_uid: str, digest: str) -> str:
    """`ptah-src-<hash>`: one snapshot per resource and content, so owners never share one."""
    return (
        SNAPSHOT_NAME_PREFIX + hashlib.sha256(f"{resource_uid}:{digest}".encode()).hexdigest()[:20]
    )


def migration_plan_name(migration_name: str, fingerprint: str) -> str:
    """`<migration>-<first 10 hex of the plan fingerprint>`: the same plan has the same name."""
    suffix = fingerprint.removeprefix("sha256:")[:FINGERPRINT_CHARS]
    return f"{migration_name[: MAX_NAME - FINGERPRINT_CHARS - 1]}-{suffix}"


def schema_plan_name(schema_name: str, fingerprint: str) -> str:
    """`<schema>-<first 10 hex of the plan fingerprint>`, short enough for its chunks' names."""
    suffix = fingerprint.removeprefix("sha256:")[:FINGERPRINT_CHARS]
    keep = MAX_NAME - FINGERPRINT_CHARS - 1 - CHUNK_SUFFIX
    return f"{schema_name[:keep]}-{suffix}"


def chunk_name(plan: str, index: int) -> str:
    """`<plan>-c<index, two digits>`: the chunks of a plan sort in their order."""
    return f"{plan}-c{index:02d}"


def owner_labels(kind: str, name: str, uid: str) -> dict[str, str]:
    """The labels of an object the operator makes for a resource: who made it, and for whom."""
    return {
        LABEL_MANAGED_BY: MANAGED_BY,
        LABEL_OWNER_KIND: kind,
        LABEL_OWNER_NAME: name,
        LABEL_OWNER_UID: uid,
    }


def operation_labels(
    kind: str, name: str, uid: str, operation_id: str, operation_type: str | None
) -> dict[str, str]:
    """`owner_labels` and the operation the object belongs to (its type when it is known)."""
    labels = {**owner_labels(kind, name, uid), LABEL_OPERATION_ID: operation_id}
    if operation_type is not None:
        labels[LABEL_OPERATION_TYPE] = operation_type
    return labels
