"""The result endpoint: where runners report, and where a report becomes a durable record.

`POST /v1/results/{namespace}/{operationID}`, served by the manager over TLS next to the
webhooks (`add_routes` on its aiohttp application), with a PtahSchema's plan text beside it
(`PUT …/plan/{index}`, `GET …/plan`: plan_text.py). The report, in order:

  401  no `Authorization: Bearer <token>`, or a token other than
       hex(HMAC-SHA256(result key, "<namespace>/<operationID>")) (compared in constant time);
  400  a namespace or operation id that is not well formed;
  413  a body over 1 MiB (refused from Content-Length before reading, or while reading);
  400  a body that is not a JSON object, of another contract, with an operationID other than
       the URL's, another type, or no resource (kind, namespace, name, uid);
  403  a resource in another namespace than the URL's (the token covers that one only);
  404  a resource that does not exist with that uid;
  409  an operation the resource's claim (status.activeOperation) does not name: its result
       was taken, or it never ran (200 while an identical record is still kept), with a
       ResultConflict Event;
  409  a report of the claim's attempt other than the one whose digest the claim remembers
       (status.activeOperation.report), or any once the claim marks a conflict, even when no
       record is left: a ResultConflict Event, the claim marked `conflict` (docs/security.md,
       "A deleted and replaced record");
  409  a schema Plan with changes whose pieces are not all stored as it says (422: pieces that
       do not give its plan's digest and size), unless the same record already exists;
  413  the API server refused the record itself (too large, invalid): final;
  201  the record ConfigMap `ptah-result-<hex>` was created (only once the create succeeded),
       or, when a record the endpoint did not seal for that name and the claim's attempt
       holds the name (a ConfigMap writer's, one a finalizer keeps, a saved one of an earlier
       attempt) or one is being deleted there, the fallback `ptah-result-<hex>-s<20 hex>`
       (api/result_seal.py), with a ResultBlocked Event; such a record is never adopted nor
       replaced;
  200  an identical record already exists (a runner's retry after a lost answer);
  409  a different record exists for the operation (under any name of the attempt): the record is replaced by one that holds
       only the envelope and the digests of both (`conflict`), which the controller takes for
       no result, and a ResultConflict Event names both digests (when the replacement cannot
       be created, the conflict record goes under the fallback);
  503  the API server could not be asked, or not reached at all, or no name is left to store
       the record under (a ResultBlocked Event), or the stored report's digest could not be
       written into the claim: the runner retries (its retry, 200, writes it).

A 201 or 200 is answered only once the claim holds the report's digest: the endpoint writes it
by a JSON patch on the resource's /status whose `test` ops check the claim's operation id,
attempt and resourceVersion; until then the controller does not believe the record.

Events are rate-limited per resource and reason, reports of operations not in flight apart
(runtime/event_filter.py): a saved token sent in a loop makes a burst, then one per interval
that counts the rest, and spends no token of a genuine Warning.

Every answer is a short JSON object (`{"error": "..."}` or `{"record": name, "result": ...}`)
that never echoes the body. The record: key `result.json` holding the canonical JSON of the
body (sorted keys, no whitespace), the labels of every operation object (managed-by, owner
kind/name/uid, operation id and type), an ownerReference to the resource (controller,
blockOwnerDeletion), the seal (annotation `operator.ptah.run/result-seal`, api/result_seal.py,
over the name and the claim's attempt too, which `operator.ptah.run/result-attempt` gives; the
controller takes no record as a result without it), and `immutable: true`. Tokens and records
made under a previous result key (`--previous-result-key-file`) still count. Its arrival wakes the reconcile through the
ConfigMap watch.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web

from ptah_operator.api.constants import (
    ANNOTATION_RESULT_ATTEMPT,
    ANNOTATION_RESULT_SEAL,
    API_VERSION,
    EventReason,
)
from ptah_operator.api.contracts.codes import RESULT_CONTRACT
from ptah_operator.api.names import RESULT_KEY, operation_labels, result_record_name
from ptah_operator.api.result_seal import ResultSeal, body_digest
from ptah_operator.results.answers import (
    NAME,
    Answer,
    bearer_token,
    canonical_json,
    error,
    malformed_path,
)
from ptah_operator.results.credentials import token_matches
from ptah_operator.results.plan_text import (
    MAX_PIECE_BYTES,
    check_pieces,
    needs_pieces,
    receive_piece,
    serve_plan,
)
from ptah_operator.results.records import (
    ClaimedReport,
    RecordRefusedError,
    ResourceClaim,
    ResultStore,
    StoreUnavailableError,
)

log = structlog.get_logger(__name__)

RESULTS_PATH = "/v1/results"
MAX_BODY_BYTES = 1024 * 1024
RESOURCE_KINDS = frozenset({"PtahMigration", "PtahSchema"})
OPERATION_TYPES = frozenset({"Resolve", "Verify", "Observe", "Plan", "Apply", "History"})
STORE_KEY: web.AppKey[ResultStore] = web.AppKey("ptah_result_store")
KEY_KEY: web.AppKey[bytes] = web.AppKey("ptah_result_key")
PREVIOUS_KEY: web.AppKey[Sequence[bytes]] = web.AppKey("ptah_previous_result_keys")

__all__ = [
    "MAX_BODY_BYTES",
    "RESULTS_PATH",
    "Answer",
    "add_routes",
    "bearer_token",
    "canonical_json",
    "check_document",
    "receive",
    "record_manifest",
    "server_ssl_context",
]


class BodyTooLargeError(Exception):
    """The body is over the route's limit."""


def record_manifest(
    document: dict[str, Any],
    operation_id: str,
    seal: ResultSeal,
    *,
    name: str | None = None,
    attempt: int = 1,
) -> dict[str, Any]:
    """The record ConfigMap of an accepted result, owned by the resource the result names and
    sealed for it, its name (`ptah-result-<hex>` unless given) and the claim's attempt
    (api/result_seal.py)."""
    resource = document["resource"]
    text = canonical_json(document)
    name = name or result_record_name(operation_id)
    sealed = seal.seal(
        resource["namespace"], operation_id, resource["uid"], text, name=name, attempt=attempt
    )
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": resource["namespace"],
            "labels": operation_labels(
                resource["kind"], resource["name"], resource["uid"], operation_id, document["type"]
            ),
            "annotations": {
                ANNOTATION_RESULT_SEAL: sealed,
                ANNOTATION_RESULT_ATTEMPT: str(attempt),
            },
            "ownerReferences": [
                {
                    "apiVersion": API_VERSION,
                    "kind": resource["kind"],
                    "name": resource["name"],
                    "uid": resource["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "immutable": True,
        "data": {RESULT_KEY: text},
    }


def check_document(body: bytes, namespace: str, operation_id: str) -> dict[str, Any] | Answer:
    """The result document in `body`, or the answer that refuses it."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return error(400, "the body is not JSON")
    if not isinstance(document, dict):
        return error(400, "the body is not a JSON object")
    if document.get("contract") != RESULT_CONTRACT:
        return error(400, f"the contract is not {RESULT_CONTRACT}")
    if document.get("operationID") != operation_id:
        return error(400, "the operationID differs from the URL's")
    if document.get("type") not in OPERATION_TYPES:
        return error(400, "the type is not an operation type")
    resource = document.get("resource")
    if not isinstance(resource, dict):
        return error(400, "the resource is missing")
    kind, res_ns = resource.get("kind"), resource.get("namespace")
    name, uid = resource.get("name"), resource.get("uid")
    if kind not in RESOURCE_KINDS:
        return error(400, "the resource kind is not one results are reported for")
    if not isinstance(name, str) or not NAME.match(name) or len(name) > 253:
        return error(400, "the resource name is not well formed")
    if not isinstance(uid, str) or not uid or len(uid) > 128:
        return error(400, "the resource uid is not well formed")
    if res_ns != namespace:
        return error(403, "the resource is not in the namespace the token is for")
    return document


async def receive(
    store: ResultStore,
    key: bytes,
    namespace: str,
    operation_id: str,
    authorization: str | None,
    body: bytes,
    *,
    previous: Sequence[bytes] = (),
) -> Answer:
    """Check and record one reported result; the answer to give the runner. `previous` are
    result keys replaced by `key`: their tokens and seals still count, nothing new is sealed
    under them."""
    token = bearer_token(authorization)
    if token is None or not any(
        token_matches(k, namespace, operation_id, token) for k in (key, *previous)
    ):
        return error(401, "the token is missing or wrong")
    malformed = malformed_path(namespace, operation_id)
    if malformed is not None:
        return malformed
    if len(body) > MAX_BODY_BYTES:
        return error(413, f"the body is over {MAX_BODY_BYTES} bytes")
    checked = check_document(body, namespace, operation_id)
    if isinstance(checked, Answer):
        return checked
    document = checked
    resource = document["resource"]
    seal = ResultSeal.derived_from(key, previous)
    name = result_record_name(operation_id)
    text = canonical_json(document)
    try:
        found = await store.resource_claim(resource["kind"], namespace, resource["name"])
        if found is None or found[0] != resource["uid"]:
            return error(404, f"the {resource['kind']} does not exist with that uid")
        if found[1] != operation_id:
            # Not in flight: its result was taken (the record may be gone), or it never ran.
            # The resource's claim is the tombstone: nothing is recorded for it any more. Its
            # attempt is not known here any more: a retry is looked for under attempt 1's names.
            for stored_name in seal.record_names(namespace, operation_id, 1):
                if await store.read_record(namespace, stored_name) == text:
                    return Answer(200, {"record": stored_name, "result": "exists"})
            existing = await store.read_record(namespace, name)
            await _conflict(store, resource, operation_id, existing, text, late=True)
            return error(409, "the operation is not in flight; no result is taken for it")
        attempt = found.attempt
        claimed = found.report
        if claimed is not None and (claimed.conflict or claimed.digest != body_digest(text)):
            # The claim remembers the attempt's first report: any other is refused, even when
            # a ConfigMap writer deleted every record of it (docs/security.md).
            return await _refuse_second(store, seal, document, found, claimed)
        if needs_pieces(document):
            live = await _live_records(
                store, seal, namespace, operation_id, resource["uid"], attempt
            )
            for stored_name, stored in live:
                if stored == text:
                    # A retry of a recorded report: its pieces may be gone, made into chunks.
                    # Only the endpoint's own live record of this attempt counts.
                    exists = Answer(200, {"record": stored_name, "result": "exists"})
                    return await _remembered(store, seal, document, found, exists)
            refused = await check_pieces(store, namespace, operation_id, document)
            if refused is not None:
                log.warning("plan report refused", namespace=namespace, operation_id=operation_id)
                return refused
        answer = await _store(store, seal, document, operation_id, attempt)
        return await _remembered(store, seal, document, found, answer)
    except StoreUnavailableError as exc:
        log.warning("result not recorded", operation_id=operation_id, error=str(exc))
        return error(503, "the record could not be stored; try again")
    except RecordRefusedError as exc:
        log.warning(
            "result refused by the API server", operation_id=operation_id, status=exc.status
        )
        return error(413, f"the record could not be stored: {exc}")


WRITE_REPORT_TRIES = 5
"""How often the endpoint reads the claim again when another write changed it under its patch."""


async def _remembered(
    store: ResultStore,
    seal: ResultSeal,
    document: dict[str, Any],
    claim: ResourceClaim,
    answer: Answer,
) -> Answer:
    """The answer to a report once the claim remembers it: the digest of a report stored (201)
    or found stored (200) written into the claim, a conflict (409) marked there. Until the
    claim holds the digest the record is not believed; when the patch cannot be made the
    runner gets 503 and its retry (200, the record found) patches again."""
    resource = document["resource"]
    text = canonical_json(document)
    digest = body_digest(text)
    if answer.status == 409:
        await _mark_conflict(store, resource, claim, digest)
        return answer
    if answer.status not in (200, 201) or claim.report is not None:
        return answer
    for _ in range(WRITE_REPORT_TRIES):
        kind, namespace, name = resource["kind"], resource["namespace"], resource["name"]
        if await store.write_report(kind, namespace, name, claim, ClaimedReport(digest)):
            return answer
        found = await store.resource_claim(kind, namespace, name)
        if (
            found is None
            or found.uid != resource["uid"]
            or found.operation_id != claim.operation_id
            or found.attempt != claim.attempt
        ):
            log.warning("result stored for a claim that moved on", operation_id=claim.operation_id)
            return error(409, "the operation is not in flight; no result is taken for it")
        if found.report is not None:
            if not found.report.conflict and found.report.digest == digest:
                return answer
            return await _refuse_second(store, seal, document, found, found.report)
        claim = found
    return error(503, "the record could not be stored; try again")


async def _mark_conflict(
    store: ResultStore, resource: dict[str, Any], claim: ResourceClaim, digest: str
) -> None:
    """Mark the claim's report a conflict (neither report believed), unless it is one."""
    if claim.report is not None and claim.report.conflict:
        return
    report = ClaimedReport(claim.report.digest if claim.report else digest, conflict=True)
    kind, namespace, name = resource["kind"], resource["namespace"], resource["name"]
    if not await store.write_report(kind, namespace, name, claim, report):
        # The claim is another's now: nothing will take this attempt's result.
        log.info("conflict not marked: the claim moved on", operation_id=claim.operation_id)


async def _refuse_second(
    store: ResultStore,
    seal: ResultSeal,
    document: dict[str, Any],
    claim: ResourceClaim,
    claimed: ClaimedReport,
) -> Answer:
    """A report of the attempt other than the one the claim remembers (or after a conflict):
    409 and a ResultConflict Event by digests, the claim marked a conflict, and the record
    left, if any, made the conflict record too."""
    resource = document["resource"]
    namespace, operation_id = resource["namespace"], document["operationID"]
    text = canonical_json(document)
    await _mark_conflict(store, resource, claim, claimed.digest)
    live = await _live_records(store, seal, namespace, operation_id, resource["uid"], claim.attempt)
    if any(stored != text and not _is_conflict_record(stored) for _, stored in live):
        # The record left becomes the conflict record (or, held, gives way to one under the
        # fallback), with its Event, as without the claim's memory; the answer is 409
        # whatever that found.
        await _store(store, seal, document, operation_id, claim.attempt)
    else:
        await _conflict(store, resource, operation_id, None, text, recorded_digest=claimed.digest)
    return error(409, "a different result is recorded for this operation")


async def _store(
    store: ResultStore, seal: ResultSeal, document: dict[str, Any], operation_id: str, attempt: int
) -> Answer:
    """Store the record of an operation in flight under its own name, else under the fallback
    (docs/security.md, "A record the endpoint cannot write"). A record there that the endpoint
    did not seal for this name and attempt (a ConfigMap writer's, a saved one of an earlier
    attempt) is never adopted nor replaced, and one being deleted is no record: the next name
    is tried. A different record of the endpoint's own makes the conflict record, in its place
    or, when it cannot be replaced, under the next name. No name left: 503 and a Warning."""
    resource = document["resource"]
    namespace, uid = resource["namespace"], resource["uid"]
    text = canonical_json(document)
    recorded: str | None = None
    """A different record of this operation found on the way: the answer is a conflict."""
    names = seal.record_names(namespace, operation_id, attempt)
    # First every name the attempt's record may have (a previous key's fallback too): a
    # name freed must not take a second report beside the first (docs/security.md).
    live = await _live_records(store, seal, namespace, operation_id, uid, attempt)
    different = [stored for _, stored in live if stored != text]
    if live and not different:
        return Answer(200, {"record": live[0][0], "result": "exists"})
    if different:
        recorded = different[0]
        await _conflict(store, resource, operation_id, recorded, text)
        if any(_is_conflict_record(stored) for stored in different):
            return error(409, "a different result is recorded for this operation")
    for name in names[:2]:
        if recorded is None:
            record = record_manifest(document, operation_id, seal, name=name, attempt=attempt)
        else:
            record = conflict_manifest(
                document, operation_id, seal, recorded, text, name=name, attempt=attempt
            )
        if await store.create_record(record):
            if recorded is not None:
                return error(409, "a different result is recorded for this operation")
            log.info("result recorded", namespace=namespace, operation_id=operation_id)
            return Answer(201, {"record": name, "result": "created"})
        found = await store.read_stored(namespace, name)
        if found is None:
            # Deleted between the refused create and the read: let the runner try again.
            return error(503, "the record could not be stored; try again")
        ours = seal.opens(
            found.seal, namespace, operation_id, uid, found.text, name=name, attempt=attempt
        )
        if not ours:
            await _blocked(store, resource, operation_id, name)
            continue
        if recorded is None and found.text == text and not found.terminating:
            return Answer(200, {"record": name, "result": "exists"})
        if recorded is None and found.text != text:
            recorded = found.text
            await _conflict(store, resource, operation_id, found.text, text)
        if found.terminating:
            continue
        if _is_conflict_record(found.text):
            return error(409, "a different result is recorded for this operation")
        if recorded is None:
            continue
        # Two different reports of one operation in flight: neither is believed. The record
        # becomes one that says so, which the controller reads as no result (docs/security.md).
        conflict = conflict_manifest(
            document, operation_id, seal, recorded, text, name=name, attempt=attempt
        )
        if await store.replace_record(conflict):
            return error(409, "a different result is recorded for this operation")
        # A finalizer keeps the record being deleted: the next name takes the conflict record.
    log.warning("result not recorded: no name free", namespace=namespace, operation_id=operation_id)
    await store.record_event(
        {k: str(resource[k]) for k in ("kind", "namespace", "name", "uid")},
        EventReason.RESULT_BLOCKED,
        f"the result of operation {operation_id} could not be stored: every name it may have "
        "is held by a record the result endpoint did not write; the runner tries again",
    )
    return error(503, "the record could not be stored; try again")


async def _live_records(
    store: ResultStore, seal: ResultSeal, namespace: str, operation_id: str, uid: str, attempt: int
) -> list[tuple[str, str]]:
    """The name and text of every record of the operation's attempt, under any of its names,
    that the endpoint sealed for that name and attempt and that is not being deleted."""
    live: list[tuple[str, str]] = []
    for name in seal.record_names(namespace, operation_id, attempt):
        found = await store.read_stored(namespace, name)
        if (
            found is not None
            and not found.terminating
            and seal.opens(
                found.seal, namespace, operation_id, uid, found.text, name=name, attempt=attempt
            )
        ):
            live.append((name, found.text))
    return live


async def _blocked(
    store: ResultStore, resource: dict[str, Any], operation_id: str, name: str
) -> None:
    """Log and raise an Event that a record the endpoint did not write holds `name`."""
    log.warning("result record name held", namespace=resource["namespace"], record=name)
    await store.record_event(
        {k: str(resource[k]) for k in ("kind", "namespace", "name", "uid")},
        EventReason.RESULT_BLOCKED,
        f"ConfigMap {name} is not a record the result endpoint wrote for operation "
        f"{operation_id}: it is left as it is, and the result goes under another name",
    )


def conflict_manifest(
    document: dict[str, Any],
    operation_id: str,
    seal: ResultSeal,
    recorded: str,
    received: str,
    *,
    name: str | None = None,
    attempt: int = 1,
) -> dict[str, Any]:
    """The record that takes the place of an operation's result once a second, different one
    arrived: the envelope and the digests of both, sealed like any record."""
    envelope = {k: document[k] for k in ("contract", "operationID", "type", "resource")}
    envelope["conflict"] = {"recorded": body_digest(recorded), "received": body_digest(received)}
    return record_manifest(envelope, operation_id, seal, name=name, attempt=attempt)


def _is_conflict_record(text: str) -> bool:
    try:
        stored = json.loads(text)
    except ValueError:
        return False
    return isinstance(stored, dict) and "conflict" in stored


async def _conflict(
    store: ResultStore,
    resource: dict[str, Any],
    operation_id: str,
    recorded: str | None,
    received: str,
    *,
    late: bool = False,
    recorded_digest: str | None = None,
) -> None:
    """Log and raise an Event that a second, different result arrived, by digests only;
    `late`: of an operation not in flight; `recorded_digest`: the first one's, as the claim
    remembers it."""
    if recorded is not None:
        recorded_digest = body_digest(recorded)
    if recorded_digest is None:
        message = (
            f"a result arrived for operation {operation_id}, which is not in flight (its "
            f"result was taken, or it never ran): received {body_digest(received)}; refused"
        )
    else:
        message = (
            f"a second, different result arrived for operation {operation_id}: recorded "
            f"{recorded_digest}, received {body_digest(received)}; refused"
        )
    log.warning("conflicting result", namespace=resource["namespace"], operation_id=operation_id)
    await store.record_event(
        {k: str(resource[k]) for k in ("kind", "namespace", "name", "uid")},
        EventReason.RESULT_CONFLICT,
        message,
        late=late,
    )


async def _read_body(request: web.Request, limit: int = MAX_BODY_BYTES) -> bytes:
    if request.content_length is not None and request.content_length > limit:
        raise BodyTooLargeError
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError
        chunks.append(chunk)
    return b"".join(chunks)


def _authorized(request: web.Request) -> tuple[str, str] | Answer:
    """The namespace and operation id of a request whose token is the operation's, or the
    refusal. The token is checked before the body is read: an unauthenticated caller gets
    nothing read."""
    namespace = request.match_info["namespace"]
    operation_id = request.match_info["operation_id"]
    token = bearer_token(request.headers.get("Authorization"))
    keys = (request.app[KEY_KEY], *request.app[PREVIOUS_KEY])
    if token is None or not any(token_matches(k, namespace, operation_id, token) for k in keys):
        return error(401, "the token is missing or wrong")
    return namespace, operation_id


def _respond(answer: Answer) -> web.Response:
    if answer.data is not None:
        return web.Response(body=answer.data, content_type="text/plain", charset="utf-8")
    headers = {"WWW-Authenticate": "Bearer"} if answer.status == 401 else None
    return web.json_response(answer.body, status=answer.status, headers=headers)


async def _handle(request: web.Request) -> web.Response:
    authorized = _authorized(request)
    if isinstance(authorized, Answer):
        return _respond(authorized)
    namespace, operation_id = authorized
    try:
        body = await _read_body(request)
    except BodyTooLargeError:
        return _respond(error(413, f"the body is over {MAX_BODY_BYTES} bytes"))
    authorization = request.headers.get("Authorization")
    answer = await receive(
        request.app[STORE_KEY],
        request.app[KEY_KEY],
        namespace,
        operation_id,
        authorization,
        body,
        previous=request.app[PREVIOUS_KEY],
    )
    return _respond(answer)


async def _handle_piece(request: web.Request) -> web.Response:
    authorized = _authorized(request)
    if isinstance(authorized, Answer):
        return _respond(authorized)
    namespace, operation_id = authorized
    malformed = malformed_path(namespace, operation_id)
    if malformed is not None:
        return _respond(malformed)
    try:
        body = await _read_body(request, MAX_PIECE_BYTES)
    except BodyTooLargeError:
        return _respond(error(413, f"a piece is over {MAX_PIECE_BYTES} bytes"))
    try:
        answer = await receive_piece(
            request.app[STORE_KEY], namespace, operation_id, request.match_info["index"], body
        )
    except StoreUnavailableError as exc:
        log.warning("plan piece not stored", operation_id=operation_id, error=str(exc))
        answer = error(503, "the piece could not be stored; try again")
    except RecordRefusedError as exc:
        log.warning(
            "plan piece refused by the API server", operation_id=operation_id, status=exc.status
        )
        answer = error(413, f"the piece could not be stored: {exc}")
    return _respond(answer)


async def _handle_plan(request: web.Request) -> web.Response:
    authorized = _authorized(request)
    if isinstance(authorized, Answer):
        return _respond(authorized)
    namespace, operation_id = authorized
    malformed = malformed_path(namespace, operation_id)
    if malformed is not None:
        return _respond(malformed)
    try:
        answer = await serve_plan(request.app[STORE_KEY], namespace, operation_id)
    except StoreUnavailableError as exc:
        log.warning("plan not served", operation_id=operation_id, error=str(exc))
        answer = error(503, "the plan could not be read; try again")
    if answer.data is None and answer.status != 200:
        log.warning("plan refused", operation_id=operation_id, status=answer.status)
    return _respond(answer)


def add_routes(
    app: web.Application, store: ResultStore, key: bytes, previous: Sequence[bytes] = ()
) -> None:
    """Serve on `app`, recording into `store`: `POST /v1/results/{namespace}/{operationID}`
    (a report), `PUT …/{operationID}/plan/{index}` (a piece of a schema Plan's plan file) and
    `GET …/{operationID}/plan` (the published plan of a schema Apply). `previous` are result
    keys `key` replaced: their tokens and seals still count."""
    app[STORE_KEY] = store
    app[KEY_KEY] = key
    app[PREVIOUS_KEY] = tuple(previous)
    base = RESULTS_PATH + "/{namespace}/{operation_id}"
    app.router.add_post(base, _handle)
    app.router.add_put(base + "/plan/{index}", _handle_piece)
    app.router.add_get(base + "/plan", _handle_plan)


def server_ssl_context(cert_file: Path, key_file: Path) -> ssl.SSLContext:
    """A TLS server context for the endpoint (TLS 1.2 or later) from a certificate and key."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(cert_file), str(key_file))
    return context
