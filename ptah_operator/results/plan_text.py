"""A PtahSchema plan's text at the result endpoint: the pieces a Plan uploads, the check that a
Plan's report names only stored pieces, and the published plan an Apply fetches.

    PUT {base}/{namespace}/{operationID}/plan/{index}    (the Plan's token; body: the piece, UTF-8)
    GET {base}/{namespace}/{operationID}/plan            (the Apply's token)

The token is the report's (`hex(HMAC-SHA256(result key, "<namespace>/<operationID>"))`),
checked before anything is read. Neither request says which resource it is for; the endpoint
finds it by its claim: the PtahSchema of the namespace whose `status.activeOperation` has this
operation id (the claim is written before its Job, JOB-04). So a piece can only be stored for,
and a plan only fetched by, an operation the lifecycle claimed.

A piece (at most 262,144 characters, index 0..63) is stored durably before the answer, as the
ConfigMap `ptah-result-<operation hex>-<index>` (key `piece`), owned by the schema like the
report's record and labelled with the owner labels, `operator.ptah.run/operation-id`,
`operator.ptah.run/operation: Plan` and `operator.ptah.run/plan-piece: "<index>"`, immutable.
201 created; 200 the same text is stored (a retry); 409 other text is stored for that index.

A Plan report with `plan.changes: true` is recorded only when every piece it lists is stored
with the digest and size it gives (409 otherwise) and the pieces joined give the plan's digest
and size (422 otherwise), so a report never names a plan whose text is not all there.

An Apply's fetch answers the published plan its claim names, never the uploaded pieces: the
claim must be an Apply's naming a plan (409); the PtahSchemaPlan must exist (404) with the
claim's UID, fingerprint and schema (409); every chunk it lists must exist (404), belong to it
at its index, and hold data giving its digest (409); the chunks joined must give the plan's
digest and size (409). The answer is that text, `text/plain; charset=utf-8`. Answers name what
did not fit, never content.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import structlog
from pydantic import ValidationError

from ptah_operator.api.constants import (
    API_VERSION,
    GROUP,
    MAX_CHUNK_CHARS,
    MAX_PLAN_CHUNKS,
)
from ptah_operator.api.fingerprints import sha256_digest, text_digest
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.names import PIECE_KEY, operation_labels, plan_text_record_name
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.results.answers import Answer, error
from ptah_operator.results.records import ResultStore

log = structlog.get_logger(__name__)

LABEL_PLAN_PIECE = f"{GROUP}/plan-piece"
"""On an uploaded piece's record: its index, so a reader tells it from a report's record."""
MAX_PIECE_CHARS = MAX_CHUNK_CHARS
MAX_PIECE_BYTES = 4 * MAX_PIECE_CHARS
"""The most bytes a piece of MAX_PIECE_CHARS characters can take in UTF-8."""
SCHEMA_KIND = "PtahSchema"

_INDEX = re.compile(r"^(0|[1-9][0-9]?)$")


def piece_index(text: str) -> int | None:
    """The index in the URL, or None when it is not 0..63 in plain decimal."""
    if not _INDEX.match(text):
        return None
    index = int(text)
    return index if index < MAX_PLAN_CHUNKS else None


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _claim(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    status = schema.get("status")
    claim = status.get("activeOperation") if isinstance(status, Mapping) else None
    return claim if isinstance(claim, Mapping) else {}


def piece_manifest(
    schema: Mapping[str, Any], namespace: str, operation_id: str, index: int, text: str
) -> dict[str, Any]:
    """The record of one uploaded piece, owned by the schema whose Plan uploaded it."""
    meta = _meta(schema)
    name, uid = str(meta.get("name")), str(meta.get("uid"))
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": plan_text_record_name(operation_id, index),
            "namespace": namespace,
            "labels": {
                **operation_labels(SCHEMA_KIND, name, uid, operation_id, "Plan"),
                LABEL_PLAN_PIECE: str(index),
            },
            "ownerReferences": [
                {
                    "apiVersion": API_VERSION,
                    "kind": SCHEMA_KIND,
                    "name": name,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "immutable": True,
        "data": {PIECE_KEY: text},
    }


def _stored(name: str, result: str, text: str) -> Answer:
    data = text.encode("utf-8")
    return Answer(
        201 if result == "created" else 200,
        {"record": name, "result": result, "digest": sha256_digest(data), "size": len(data)},
    )


async def receive_piece(
    store: ResultStore, namespace: str, operation_id: str, index_text: str, body: bytes
) -> Answer:
    """Store one piece of a Plan's plan file (the token was checked by the caller)."""
    index = piece_index(index_text)
    if index is None:
        return error(400, f"the piece index is not one of 0..{MAX_PLAN_CHUNKS - 1}")
    if len(body) > MAX_PIECE_BYTES:
        return error(413, f"a piece holds at most {MAX_PIECE_CHARS} characters")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return error(400, "the piece is not UTF-8 text")
    if len(text) > MAX_PIECE_CHARS:
        return error(413, f"a piece holds at most {MAX_PIECE_CHARS} characters")
    schema = await store.schema_with_claim(namespace, operation_id)
    if schema is None:
        return error(404, "no PtahSchema in the namespace has a claim with this operation id")
    if _claim(schema).get("type") != "Plan":
        return error(409, "the claim with this operation id is not a Plan's")
    record = piece_manifest(schema, namespace, operation_id, index, text)
    name = record["metadata"]["name"]
    if await store.create_record(record):
        log.info("plan piece stored", namespace=namespace, operation_id=operation_id, index=index)
        return _stored(name, "created", text)
    existing = await store.read_piece(namespace, name)
    if existing is None:
        return error(503, "the piece could not be stored; try again")
    if existing == text:
        return _stored(name, "exists", text)
    log.warning("conflicting plan piece", namespace=namespace, operation_id=operation_id)
    return error(409, f"another text is stored for piece {index} of this operation")


def _listed_pieces(plan: Mapping[str, Any]) -> list[tuple[int, str, int]] | None:
    pieces = plan.get("pieces")
    if not isinstance(pieces, list) or not 1 <= len(pieces) <= MAX_PLAN_CHUNKS:
        return None
    listed: list[tuple[int, str, int]] = []
    for position, piece in enumerate(pieces):
        if not isinstance(piece, Mapping):
            return None
        index, digest, size = piece.get("index"), piece.get("digest"), piece.get("size")
        if index != position or not isinstance(digest, str) or not isinstance(size, int):
            return None
        listed.append((position, digest, size))
    return listed


def needs_pieces(document: Mapping[str, Any]) -> bool:
    """Whether a report is a schema Plan that found changes (its plan text must be stored)."""
    resource = document.get("resource")
    plan = document.get("plan")
    return (
        document.get("type") == "Plan"
        and isinstance(resource, Mapping)
        and resource.get("kind") == SCHEMA_KIND
        and isinstance(plan, Mapping)
        and plan.get("changes") is True
    )


async def check_pieces(
    store: ResultStore, namespace: str, operation_id: str, document: Mapping[str, Any]
) -> Answer | None:
    """None when every piece a Plan report lists is stored as it says, else the refusal."""
    plan = document["plan"]
    listed = _listed_pieces(plan)
    if listed is None:
        return error(
            422, "the plan's pieces are not listed as 0, 1, 2 ... with a digest and a size"
        )
    texts: list[str] = []
    for index, digest, size in listed:
        text = await store.read_piece(namespace, plan_text_record_name(operation_id, index))
        if text is None:
            return error(409, f"piece {index} of the plan is not stored")
        data = text.encode("utf-8")
        if sha256_digest(data) != digest or len(data) != size:
            return error(409, f"piece {index} of the plan is stored with another digest or size")
        texts.append(text)
    whole = "".join(texts).encode("utf-8")
    if sha256_digest(whole) != plan.get("digest") or len(whole) != plan.get("size"):
        return error(422, "the plan's pieces do not give its digest and size")
    return None


async def serve_plan(store: ResultStore, namespace: str, operation_id: str) -> Answer:
    """The published plan the Apply claim with this operation id names, assembled from its
    chunks and checked (the token was checked by the caller)."""
    schema = await store.schema_with_claim(namespace, operation_id)
    if schema is None:
        return error(404, "no PtahSchema in the namespace has a claim with this operation id")
    claim = _claim(schema)
    if claim.get("type") != "Apply":
        return error(409, "the claim with this operation id is not an Apply's")
    ref = claim.get("plan")
    if not isinstance(ref, Mapping) or not ref.get("name") or not ref.get("uid"):
        return error(409, "the Apply claim names no published plan")
    name = str(ref["name"])
    found = await store.read_object("PtahSchemaPlan", namespace, name)
    if found is None:
        return error(404, f"plan {name} does not exist")
    try:
        plan = from_manifest(PtahSchemaPlan, found)
    except (ValidationError, ValueError):
        return error(409, f"plan {name} does not fit its model")
    if plan.metadata.uid != ref["uid"]:
        return error(409, f"plan {name} is not the one the claim names (another UID)")
    if ref.get("fingerprint") and plan.spec.fingerprint != ref["fingerprint"]:
        return error(409, f"plan {name} has another fingerprint than the claim names")
    if plan.spec.schema_ref.uid != _meta(schema).get("uid"):
        return error(409, f"plan {name} belongs to another schema")
    texts: list[str] = []
    for chunk_ref in plan.spec.chunks:
        raw = await store.read_object("PtahSchemaPlanChunk", namespace, chunk_ref.name)
        if raw is None:
            return error(404, f"chunk {chunk_ref.name} of plan {name} does not exist")
        try:
            chunk = from_manifest(PtahSchemaPlanChunk, raw)
        except (ValidationError, ValueError):
            return error(409, f"chunk {chunk_ref.name} does not fit its model")
        if chunk.spec.plan_ref.uid != plan.metadata.uid or chunk.spec.index != chunk_ref.index:
            return error(409, f"chunk {chunk_ref.name} is not chunk {chunk_ref.index} of {name}")
        if (
            chunk.spec.digest != chunk_ref.digest
            or text_digest(chunk.spec.data) != chunk_ref.digest
        ):
            return error(409, f"chunk {chunk_ref.name} does not hold data with its digest")
        texts.append(chunk.spec.data)
    data = "".join(texts).encode("utf-8")
    if sha256_digest(data) != plan.spec.digest or len(data) != plan.spec.size:
        return error(409, f"the chunks of plan {name} do not give its digest and size")
    log.info(
        "plan served",
        namespace=namespace,
        operation_id=operation_id,
        plan=name,
        chunks=len(texts),
    )
    return Answer(200, {}, data=data)
