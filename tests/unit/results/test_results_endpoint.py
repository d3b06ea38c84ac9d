"""The result endpoint's rules: the token, the body, the contract, the resource, and a record
that is created once and answered idempotently after. A store in memory stands in for the
API server (the integration tests use the real one)."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from kubernetes_asyncio import client as k8s_client

from ptah_operator.api.common import ReceivedReport
from ptah_operator.api.result_seal import ResultSeal, body_digest
from ptah_operator.controller.world import Claimed, owned_records
from ptah_operator.results.credentials import operation_token, token_matches
from ptah_operator.results.endpoint import (
    MAX_BODY_BYTES,
    add_routes,
    canonical_json,
    receive,
    record_manifest,
)
from ptah_operator.results.records import (
    ClaimedReport,
    KubernetesResultStore,
    ResourceClaim,
    StoredRecord,
    StoreUnavailableError,
)

KEY = b"k" * 32
NS = "application"
OP = "op-3f9a2c7d1e"
TOKEN = operation_token(KEY, NS, OP)
BEARER = f"Bearer {TOKEN}"
RESOURCE = {"kind": "PtahMigration", "namespace": NS, "name": "orders", "uid": "u-1"}


def _document(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "contract": "ptah.run/result/v1",
        "operationID": OP,
        "type": "History",
        "resource": dict(RESOURCE),
        "startedAt": "2026-08-30T12:00:00Z",
        "finishedAt": "2026-08-30T12:00:01Z",
        "targetIdentityDigest": "sha256:" + "a" * 64,
        "history": {"verdict": "NothingPending", "pendingCount": 0},
    }
    doc.update(changes)
    return doc


def _body(doc: dict[str, Any] | None = None) -> bytes:
    return json.dumps(doc or _document()).encode()


class MemoryStore:
    """ResultStore over dicts: resources by (kind, namespace, name), records by name."""

    def __init__(self) -> None:
        self.resources: dict[tuple[str, str, str], str] = {("PtahMigration", NS, "orders"): "u-1"}
        self.records: dict[tuple[str, str], Mapping[str, Any]] = {}
        self.unavailable = False
        self.claims: dict[tuple[str, str, str], str | None] = {("PtahMigration", NS, "orders"): OP}
        """The operation each resource's status.activeOperation names."""
        self.attempt = 1
        """The attempt of every claim."""
        self.events: list[tuple[str, str, str]] = []
        self.held: set[str] = set()
        """Names of records a finalizer holds: a delete leaves them, being deleted."""
        self.terminating: set[str] = set()
        self.late: list[bool] = []
        """Per Event: whether it is about a report of an operation not in flight."""
        self.reports: dict[tuple[str, str, str], tuple[int, ClaimedReport]] = {}
        """status.activeOperation.report of each resource: the attempt and the report."""
        self.version = 1
        """The resourceVersion of every resource (one counter: enough for these tests)."""
        self.report_writes_fail = 0
        """How many of the next report writes find the API server away."""

    async def resource_uid(self, kind: str, namespace: str, name: str) -> str | None:
        if self.unavailable:
            raise StoreUnavailableError("HTTP 500")
        return self.resources.get((kind, namespace, name))

    async def resource_claim(self, kind: str, namespace: str, name: str) -> ResourceClaim | None:
        uid = await self.resource_uid(kind, namespace, name)
        if uid is None:
            return None
        key = (kind, namespace, name)
        attempt, report = self.reports.get(key, (0, None))
        return ResourceClaim(
            uid,
            self.claims.get(key),
            self.attempt,
            report if attempt == self.attempt else None,
            str(self.version),
        )

    async def write_report(
        self, kind: str, namespace: str, name: str, claim: ResourceClaim, report: ClaimedReport
    ) -> bool:
        if self.report_writes_fail:
            self.report_writes_fail -= 1
            raise StoreUnavailableError("HTTP 503")
        key = (kind, namespace, name)
        if self.claims.get(key) != claim.operation_id or self.attempt != claim.attempt:
            return False
        if not report.conflict and claim.resource_version != str(self.version):
            return False
        self.reports[key] = (claim.attempt, report)
        self.version += 1
        return True

    def report_of(self, name: str = "orders") -> ClaimedReport | None:
        attempt, report = self.reports.get(("PtahMigration", NS, name), (0, None))
        return report if attempt == self.attempt else None

    async def replace_record(self, manifest: Mapping[str, Any]) -> bool:
        name = manifest["metadata"]["name"]
        if name in self.held:
            self.terminating.add(name)
            return False
        self.records[(manifest["metadata"]["namespace"], name)] = manifest
        return True

    async def read_stored(self, namespace: str, name: str) -> StoredRecord | None:
        record = self.records.get((namespace, name))
        if record is None:
            return None
        seal = (record["metadata"].get("annotations") or {}).get("operator.ptah.run/result-seal")
        text = str(record["data"]["result.json"])
        return StoredRecord(text, seal, name in self.terminating)

    async def record_event(
        self, resource: Mapping[str, str], reason: str, message: str, *, late: bool = False
    ) -> None:
        self.events.append((resource["name"], reason, message))
        self.late.append(late)

    async def create_record(self, manifest: Mapping[str, Any]) -> bool:
        key = (manifest["metadata"]["namespace"], manifest["metadata"]["name"])
        if key in self.records:
            return False
        self.records[key] = manifest
        return True

    async def read_record(self, namespace: str, name: str) -> str | None:
        record = self.records.get((namespace, name))
        return None if record is None else str(record["data"]["result.json"])

    async def read_piece(self, namespace: str, name: str) -> str | None:
        record = self.records.get((namespace, name))
        return None if record is None else str(record["data"]["piece"])

    async def schema_with_claim(
        self, namespace: str, operation_id: str
    ) -> Mapping[str, Any] | None:
        return None

    async def read_object(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return None


def test_the_token_is_the_hmac_of_namespace_and_operation() -> None:
    expected = hmac.new(KEY, b"application/op-3f9a2c7d1e", hashlib.sha256).hexdigest()
    assert operation_token(KEY, NS, OP) == expected
    assert token_matches(KEY, NS, OP, expected)
    assert not token_matches(KEY, NS, "op-0000000000", expected)
    assert not token_matches(KEY, "other", OP, expected)
    assert not token_matches(b"x" * 32, NS, OP, expected)


async def test_a_result_is_recorded_once_then_answered_idempotently() -> None:
    store = MemoryStore()
    first = await receive(store, KEY, NS, OP, BEARER, _body())
    assert (first.status, first.body) == (
        201,
        {"record": "ptah-result-3f9a2c7d1e", "result": "created"},
    )
    # The same document with its keys in another order is the same record.
    again = await receive(
        store, KEY, NS, OP, BEARER, json.dumps(_document(), sort_keys=True, indent=2).encode()
    )
    assert (again.status, again.body["result"]) == (200, "exists")
    different = await receive(
        store, KEY, NS, OP, BEARER, _body(_document(history={"verdict": "Dirty"}))
    )
    assert different.status == 409
    assert len(store.records) == 1
    record = store.records[(NS, "ptah-result-3f9a2c7d1e")]
    # Two different reports of one operation in flight: the record says so, believing neither.
    assert json.loads(record["data"]["result.json"])["conflict"] == {
        "recorded": body_digest(canonical_json(_document())),
        "received": body_digest(canonical_json(_document(history={"verdict": "Dirty"}))),
    }


def test_the_record_is_owned_by_the_resource_and_labelled_as_an_operation_object() -> None:
    record = record_manifest(_document(), OP, ResultSeal.derived_from(KEY))
    assert record["metadata"]["name"] == "ptah-result-3f9a2c7d1e"
    assert record["metadata"]["namespace"] == NS
    assert record["immutable"] is True
    assert record["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "ptah-operator",
        "operator.ptah.run/owner-kind": "PtahMigration",
        "operator.ptah.run/owner-name": "orders",
        "operator.ptah.run/owner-uid": "u-1",
        "operator.ptah.run/operation-id": OP,
        "operator.ptah.run/operation": "History",
    }
    assert record["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahMigration",
            "name": "orders",
            "uid": "u-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert json.loads(record["data"]["result.json"]) == _document()


@pytest.mark.parametrize(
    ("authorization", "namespace", "operation_id"),
    [
        (None, NS, OP),
        ("Basic " + TOKEN, NS, OP),
        ("Bearer ", NS, OP),
        ("Bearer " + "0" * 64, NS, OP),
        (BEARER, "other", OP),  # this operation's token, another namespace's URL
        (BEARER, NS, "op-0000000000"),  # another operation's URL
    ],
)
async def test_a_wrong_token_is_401_and_nothing_is_stored(
    authorization: str | None, namespace: str, operation_id: str
) -> None:
    store = MemoryStore()
    answer = await receive(store, KEY, namespace, operation_id, authorization, _body())
    assert answer.status == 401
    assert set(answer.body) == {"error"}
    assert store.records == {}


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{", 400, "not JSON"),
        (b"[]", 400, "not a JSON object"),
        (_body(_document(contract="ptah.run/result/v2")), 400, "contract"),
        (_body(_document(operationID="op-0000000000")), 400, "operationID"),
        (_body(_document(type="Reboot")), 400, "type"),
        (_body(_document(resource=None)), 400, "resource"),
        (_body(_document(resource={**RESOURCE, "kind": "Secret"})), 400, "kind"),
        (_body(_document(resource={**RESOURCE, "name": "Not A Name"})), 400, "name"),
        (_body(_document(resource={**RESOURCE, "uid": ""})), 400, "uid"),
        (_body(_document(resource={**RESOURCE, "namespace": "kube-system"})), 403, "namespace"),
        (_body(_document(resource={**RESOURCE, "uid": "u-2"})), 404, "uid"),
        (_body(_document(resource={**RESOURCE, "name": "gone"})), 404, "uid"),
        (b" " * (MAX_BODY_BYTES + 1), 413, "over"),
    ],
)
async def test_a_bad_body_is_refused_with_a_short_error(
    body: bytes, status: int, says: str
) -> None:
    store = MemoryStore()
    answer = await receive(store, KEY, NS, OP, BEARER, body)
    assert answer.status == status
    assert says in answer.body["error"]
    assert store.records == {}


async def test_an_api_server_that_cannot_be_asked_is_503_so_the_runner_retries() -> None:
    store = MemoryStore()
    store.unavailable = True
    answer = await receive(store, KEY, NS, OP, BEARER, _body())
    assert answer.status == 503


async def test_a_malformed_url_is_400_once_the_token_matches() -> None:
    key_op = "op-NOT-HEX"
    answer = await receive(
        MemoryStore(), KEY, NS, key_op, f"Bearer {operation_token(KEY, NS, key_op)}", _body()
    )
    assert answer.status == 400


@pytest.fixture
async def http() -> AsyncIterator[tuple[TestClient[web.Request, web.Application], MemoryStore]]:
    store = MemoryStore()
    app = web.Application()
    add_routes(app, store, KEY)
    async with TestClient(TestServer(app)) as client:
        yield client, store


async def test_the_route_serves_the_rules_over_http(
    http: tuple[TestClient[web.Request, web.Application], MemoryStore],
) -> None:
    client, store = http
    path = f"/v1/results/{NS}/{OP}"
    response = await client.post(path, data=_body(), headers={"Authorization": BEARER})
    assert response.status == 201
    assert await response.json() == {"record": "ptah-result-3f9a2c7d1e", "result": "created"}
    response = await client.post(path, data=_body(), headers={"Authorization": BEARER})
    assert response.status == 200
    response = await client.post(path, data=_body())
    assert response.status == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    response = await client.post(
        path, data=b"x" * (MAX_BODY_BYTES + 10), headers={"Authorization": BEARER}
    )
    assert response.status == 413
    assert len(store.records) == 1


async def test_a_body_over_the_limit_is_refused_while_it_streams(
    http: tuple[TestClient[web.Request, web.Application], MemoryStore],
) -> None:
    client, store = http

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b"x" * 65536

    response = await client.post(
        f"/v1/results/{NS}/{OP}", data=chunks(), headers={"Authorization": BEARER}
    )
    assert response.status == 413
    assert store.records == {}


# --- a consumed operation, a token holder before the runner, an API server away ---------------


async def test_a_consumed_operation_takes_no_other_result_and_says_so() -> None:
    """The resource's claim is the tombstone: once it no longer names the operation, a second,
    different result is 409 with an Event; the same body while its record is kept is 200."""
    store = MemoryStore()
    assert (await receive(store, KEY, NS, OP, BEARER, _body())).status == 201
    store.claims[("PtahMigration", NS, "orders")] = "op-0000000002"  # the result was taken
    again = await receive(store, KEY, NS, OP, BEARER, _body())
    assert (again.status, again.body["result"]) == (200, "exists")
    del store.records[(NS, "ptah-result-3f9a2c7d1e")]  # ... and its record consumed
    other = _body(_document(history={"verdict": "Dirty"}))
    late = await receive(store, KEY, NS, OP, BEARER, other)
    assert late.status == 409
    assert "not in flight" in late.body["error"]
    assert store.records == {}
    assert store.late == [True], "the not-in-flight Warning has a rate-limit bucket of its own"
    assert [(name, reason) for name, reason, _ in store.events] == [("orders", "ResultConflict")]
    assert body_digest(canonical_json(json.loads(other))) in store.events[0][2]
    assert (await receive(store, KEY, NS, OP, BEARER, _body())).status == 409


async def test_a_token_holder_before_the_runner_wins_nothing() -> None:
    """A forged report first, the runner's real one second: the runner is told 409 (it exits
    NOT_REPORTED), an Event names both digests, and the record becomes one the controller reads
    as no result, so the run is held Unknown and read back rather than either believed."""
    store = MemoryStore()
    forged = _body(_document(history={"verdict": "NothingPending", "pendingCount": 0}))
    real = _body(_document(history={"verdict": "Dirty"}))
    assert (await receive(store, KEY, NS, OP, BEARER, forged)).status == 201
    answer = await receive(store, KEY, NS, OP, BEARER, real)
    assert answer.status == 409
    record = store.records[(NS, "ptah-result-3f9a2c7d1e")]
    stored = json.loads(record["data"]["result.json"])
    assert set(stored["conflict"]) == {"recorded", "received"}
    assert "history" not in stored
    (_, reason, message), *_ = store.events
    assert reason == "ResultConflict"
    assert stored["conflict"]["recorded"] in message
    assert stored["conflict"]["received"] in message
    # The conflict record is sealed like any, and a third report changes it no more.
    assert (await receive(store, KEY, NS, OP, BEARER, forged)).status == 409
    assert store.records[(NS, "ptah-result-3f9a2c7d1e")] == record


async def test_an_api_server_that_cannot_be_reached_is_503_not_a_traceback() -> None:
    configuration = k8s_client.Configuration(host="https://127.0.0.1:9")
    async with k8s_client.ApiClient(configuration) as api:
        answer = await receive(KubernetesResultStore(api), KEY, NS, OP, BEARER, _body())
    assert answer.status == 503
    assert answer.body == {"error": "the record could not be stored; try again"}


async def test_a_record_the_endpoint_did_not_seal_gives_way_to_the_runners() -> None:
    """A ConfigMap writer's record under the operation's name is no report: it is left alone
    (never replaced: a finalizer could keep it), the runner's goes under the fallback name
    (201), no conflict is raised over it, and a ResultBlocked Warning names the record."""
    store = MemoryStore()
    forged = record_manifest(_document(history={"verdict": "Dirty"}), OP, ResultSeal())
    store.records[(NS, forged["metadata"]["name"])] = forged
    answer = await receive(store, KEY, NS, OP, BEARER, _body())
    assert (answer.status, answer.body["result"]) == (201, "created")
    fallback = ResultSeal.derived_from(KEY).fallback_name(NS, OP, attempt=1)
    record = store.records[(NS, fallback)]
    assert record["data"]["result.json"] == canonical_json(_document())
    assert [reason for _, reason, _ in store.events] == ["ResultBlocked"]


# --- a record the endpoint cannot write, a replayed attempt, a replaced key (issue #18) --------

SEAL = ResultSeal.derived_from(KEY)
PRIMARY = "ptah-result-3f9a2c7d1e"
FALLBACK = SEAL.fallback_name(NS, OP, attempt=1)


async def test_a_record_held_under_the_operations_name_sends_the_report_to_the_fallback() -> None:
    """A ConfigMap writer's record under the operation's name, kept by a finalizer, is neither
    adopted nor replaced: the report goes under the fallback name (which only the result key
    gives), a Warning says so, and a retry finds it there."""
    store = MemoryStore()
    forged = record_manifest(_document(history={"verdict": "Dirty"}), OP, ResultSeal())
    store.records[(NS, PRIMARY)] = forged
    store.held.add(PRIMARY)
    answer = await receive(store, KEY, NS, OP, BEARER, _body())
    assert (answer.status, answer.body) == (201, {"record": FALLBACK, "result": "created"})
    assert store.records[(NS, PRIMARY)] == forged
    assert store.records[(NS, FALLBACK)]["data"]["result.json"] == canonical_json(_document())
    assert [(name, reason) for name, reason, _ in store.events] == [("orders", "ResultBlocked")]
    again = await receive(store, KEY, NS, OP, BEARER, _body())
    assert (again.status, again.body) == (200, {"record": FALLBACK, "result": "exists"})


async def test_a_report_no_name_takes_is_503_never_stored() -> None:
    """Both names held by records the endpoint did not write: 503 (the runner retries) and a
    Warning, never an answer that says stored."""
    store = MemoryStore()
    for name in (PRIMARY, FALLBACK):
        store.records[(NS, name)] = record_manifest(_document(), OP, ResultSeal(), name=name)
        store.held.add(name)
    answer = await receive(store, KEY, NS, OP, BEARER, _body())
    assert answer.status == 503
    assert {reason for _, reason, _ in store.events} == {"ResultBlocked"}


async def test_a_conflict_record_that_cannot_replace_a_held_record_takes_the_fallback() -> None:
    """The endpoint's own record, held by a finalizer, cannot become the conflict record: it
    is deleted (so no result for the controller), the conflict record goes under the fallback,
    and the second report is never taken, however often it is sent."""
    store = MemoryStore()
    assert (await receive(store, KEY, NS, OP, BEARER, _body())).status == 201
    store.held.add(PRIMARY)
    other = _body(_document(history={"verdict": "Dirty"}))
    assert (await receive(store, KEY, NS, OP, BEARER, other)).status == 409
    assert PRIMARY in store.terminating
    stored = json.loads(store.records[(NS, FALLBACK)]["data"]["result.json"])
    assert set(stored["conflict"]) == {"recorded", "received"}
    for _ in range(2):
        assert (await receive(store, KEY, NS, OP, BEARER, other)).status == 409
    assert json.loads(store.records[(NS, FALLBACK)]["data"]["result.json"]) == stored


async def test_a_saved_record_of_an_earlier_attempt_is_not_this_attempts() -> None:
    """A read retried under one claim: the failed attempt's record, written back by a
    ConfigMap writer, does not open for attempt 2; the runner's report takes the fallback."""
    store = MemoryStore()
    saved = record_manifest(_document(history={"verdict": "Dirty"}), OP, SEAL, attempt=1)
    store.records[(NS, PRIMARY)] = saved
    store.attempt = 2
    answer = await receive(store, KEY, NS, OP, BEARER, _body())
    second = SEAL.fallback_name(NS, OP, attempt=2)
    assert (answer.status, answer.body["record"]) == (201, second)
    stored = store.records[(NS, second)]
    assert stored["metadata"]["annotations"]["operator.ptah.run/result-attempt"] == "2"


async def test_a_held_fallback_of_one_attempt_does_not_block_the_next() -> None:
    """Both names of attempt 1 held by finalizers (a writer's record under the operation's
    name, the endpoint's own attempt-1 record under the fallback, left being deleted by the
    clean-up): attempt 2's fallback is another name (the attempt is in its HMAC), so its
    report is stored there, not refused with 503 for ever."""
    store = MemoryStore()
    store.records[(NS, PRIMARY)] = record_manifest(_document(), OP, ResultSeal())
    store.held.add(PRIMARY)
    first = await receive(store, KEY, NS, OP, BEARER, _body())
    assert (first.status, first.body["record"]) == (201, FALLBACK)
    store.held.add(FALLBACK)
    store.terminating.add(FALLBACK)
    store.attempt = 2
    second = SEAL.fallback_name(NS, OP, attempt=2)
    assert second != FALLBACK
    answer = await receive(store, KEY, NS, OP, BEARER, _body())
    assert (answer.status, answer.body["record"]) == (201, second)
    assert SEAL.record_names(NS, OP, 2) == (PRIMARY, second)


async def test_a_second_report_finds_the_first_under_any_of_the_operations_names() -> None:
    """The runner's report went to the fallback past a writer's record, which the writer then
    deletes: a second, different report (a token holder's) is not created under the freed
    name, it is a conflict (409, the conflict record, a ResultConflict Warning), and the
    controller takes neither; the runner's retry is still answered as stored."""
    store = MemoryStore()
    store.records[(NS, PRIMARY)] = record_manifest(_document(), OP, ResultSeal())
    real = _body(_document(history={"verdict": "Dirty"}))
    assert (await receive(store, KEY, NS, OP, BEARER, real)).body["record"] == FALLBACK
    retry = await receive(store, KEY, NS, OP, BEARER, real)
    assert (retry.status, retry.body["record"]) == (200, FALLBACK)
    del store.records[(NS, PRIMARY)]
    forged = _body(_document(history={"verdict": "NothingPending", "pendingCount": 0}))
    answer = await receive(store, KEY, NS, OP, BEARER, forged)
    assert answer.status == 409
    assert [reason for _, reason, _ in store.events] == ["ResultBlocked", "ResultConflict"]
    records = [dict(m) for m in store.records.values()]
    _, results = owned_records(records, SEAL, _claim_of(store))
    assert "conflict" in results[OP].payload


async def test_a_report_after_a_key_rotation_finds_the_record_under_the_old_fallback() -> None:
    """The runner's record sits under the previous key's fallback: a different report after
    the rotation is a conflict, never a second record the controller could take instead."""
    old, new = b"o" * 32, b"n" * 32
    token = f"Bearer {operation_token(old, NS, OP)}"
    store = MemoryStore()
    store.records[(NS, PRIMARY)] = record_manifest(_document(), OP, ResultSeal())
    store.held.add(PRIMARY)
    real = _body(_document(history={"verdict": "Dirty"}))
    assert (await receive(store, old, NS, OP, token, real)).status == 201
    forged = _body(_document(history={"verdict": "NothingPending", "pendingCount": 0}))
    answer = await receive(store, new, NS, OP, token, forged, previous=(old,))
    assert answer.status == 409
    rotated = ResultSeal.derived_from(new, (old,))
    records = [dict(m) for m in store.records.values()]
    for order in (records, records[::-1]):
        _, results = owned_records(order, rotated, _claim_of(store))
        assert "conflict" in results[OP].payload


async def test_a_plan_is_already_there_only_as_the_endpoints_live_record() -> None:
    """A schema Plan whose pieces are gone is answered as stored only when its record is the
    endpoint's, sealed for this attempt and not being deleted: a writer's unsealed copy of
    the body, or the endpoint's record once deleted, is no record, and the pieces are
    checked (here: not stored, 409)."""
    schema = {"kind": "PtahSchema", "namespace": NS, "name": "shop", "uid": "u-2"}
    plan = {"changes": True, "pieces": [{"index": 0, "digest": "sha256:" + "b" * 64, "size": 4}]}
    document = _document(type="Plan", resource=schema, plan=plan)
    for sealed_by, terminating in ((ResultSeal(), False), (SEAL, True)):
        store = MemoryStore()
        store.resources[("PtahSchema", NS, "shop")] = "u-2"
        store.claims[("PtahSchema", NS, "shop")] = OP
        store.records[(NS, PRIMARY)] = record_manifest(document, OP, sealed_by)
        if terminating:
            store.terminating.add(PRIMARY)
        answer = await receive(store, KEY, NS, OP, BEARER, _body(document))
        assert answer.status == 409, answer.body
        assert "piece 0" in answer.body["error"]
    store.terminating.clear()
    answer = await receive(store, KEY, NS, OP, BEARER, _body(document))
    assert (answer.status, answer.body) == (200, {"record": PRIMARY, "result": "exists"})


async def test_a_replaced_key_still_takes_the_reports_in_flight() -> None:
    """`--previous-result-key-file`: a runner started before the key was replaced holds a
    token of the old key, and its record may be sealed under it: both still count; new
    records are sealed under the new key only."""
    old, new = b"o" * 32, b"n" * 32
    store = MemoryStore()
    token = f"Bearer {operation_token(old, NS, OP)}"
    assert (await receive(store, old, NS, OP, token, _body())).status == 201
    again = await receive(store, new, NS, OP, token, _body(), previous=(old,))
    assert (again.status, again.body["result"]) == (200, "exists")
    assert (await receive(store, new, NS, OP, token, _body())).status == 401
    del store.records[(NS, PRIMARY)]
    assert (await receive(store, new, NS, OP, token, _body(), previous=(old,))).status == 201
    record = dict(store.records[(NS, PRIMARY)])
    _, results = owned_records([record], ResultSeal.derived_from(new))
    assert list(results) == [OP]


async def test_a_saved_token_floods_no_events() -> None:
    """Each report of an operation not in flight is refused with a ResultConflict Warning: a
    holder of a saved token sending them in a loop gets a burst of Events per resource, then
    one per interval that counts the rest (the store's spam filter)."""

    class Core:
        def __init__(self) -> None:
            self.events: list[dict[str, Any]] = []

        async def create_namespaced_event(self, namespace: str, body: dict[str, Any]) -> None:
            self.events.append(body)

    store = KubernetesResultStore(k8s_client.ApiClient(k8s_client.Configuration()))
    core = Core()
    store._core = core
    resource = dict(RESOURCE)
    for _ in range(200):
        await store.record_event(resource, "ResultConflict", "refused")
    assert 1 <= len(core.events) <= 10
    other = {**resource, "name": "invoices", "uid": "u-2"}
    await store.record_event(other, "ResultConflict", "refused")
    assert core.events[-1]["involvedObject"]["uid"] == "u-2"


async def test_a_saved_token_hides_no_genuine_warning() -> None:
    """The Warning buckets are per resource and reason, and reports of operations not in
    flight have one of their own: a flood of those, or of ResultBlocked, leaves a genuine
    ResultConflict (and ResultBlocked) of the operation in flight its Event."""

    class Core:
        def __init__(self) -> None:
            self.events: list[dict[str, Any]] = []

        async def create_namespaced_event(self, namespace: str, body: dict[str, Any]) -> None:
            self.events.append(body)

    store = KubernetesResultStore(k8s_client.ApiClient(k8s_client.Configuration()))
    core = Core()
    store._core = core
    resource = dict(RESOURCE)
    for _ in range(50):
        await store.record_event(resource, "ResultBlocked", "held")
    await store.record_event(resource, "ResultConflict", "genuine")
    assert core.events[-1]["message"] == "genuine"
    for _ in range(50):
        await store.record_event(resource, "ResultConflict", "late", late=True)
    await store.record_event(resource, "ResultConflict", "genuine again")
    assert core.events[-1]["message"] == "genuine again"


# --- a deleted and replaced record (issue #18, fourth review, finding 1) ------------------------


def _digest(doc: dict[str, Any]) -> str:
    return body_digest(canonical_json(doc))


FORGED = _document(history={"verdict": "Dirty"})


async def test_a_deleted_record_is_not_replaced_by_a_second_report() -> None:
    """Someone with ConfigMap rights and the operation's token deletes the stored report and
    posts another: the claim remembers the first one's digest, so the second is refused (409)
    even with no record left, and the claim says neither is believed."""
    store = MemoryStore()
    first = await receive(store, KEY, NS, OP, BEARER, _body())
    assert first.status == 201
    assert store.report_of() == ClaimedReport(_digest(_document()))
    store.records.clear()
    forged = await receive(store, KEY, NS, OP, BEARER, _body(FORGED))
    assert forged.status == 409
    assert store.records == {}, "nothing is stored for the second report"
    assert store.report_of() == ClaimedReport(_digest(_document()), conflict=True)
    reasons = [reason for _, reason, _ in store.events]
    assert reasons == ["ResultConflict"]
    assert _digest(_document()) in store.events[0][2]
    # Once a conflict is on record no report of the attempt is stored, the first one's either.
    assert (await receive(store, KEY, NS, OP, BEARER, _body())).status == 409
    assert (await receive(store, KEY, NS, OP, BEARER, _body(FORGED))).status == 409
    assert store.records == {}


async def test_a_deleted_conflict_record_lets_no_report_in() -> None:
    """The conflict record deleted, the second report posted again (or the first): 409, the
    claim still marks the conflict."""
    store = MemoryStore()
    assert (await receive(store, KEY, NS, OP, BEARER, _body(FORGED))).status == 201
    assert (await receive(store, KEY, NS, OP, BEARER, _body())).status == 409
    record = store.records[(NS, "ptah-result-3f9a2c7d1e")]
    assert "conflict" in json.loads(record["data"]["result.json"])
    store.records.clear()
    for doc in (FORGED, _document()):
        assert (await receive(store, KEY, NS, OP, BEARER, _body(doc))).status == 409
    assert store.records == {}
    report = store.report_of()
    assert report is not None
    assert report.conflict


async def test_the_same_report_after_its_record_was_deleted_is_the_retry_answer() -> None:
    """The runner's retry of the report the claim remembers is answered as stored, its record
    made again: it is the attempt's first report."""
    store = MemoryStore()
    assert (await receive(store, KEY, NS, OP, BEARER, _body())).status == 201
    store.records.clear()
    again = await receive(store, KEY, NS, OP, BEARER, _body())
    assert again.status in (200, 201)
    assert list(store.records) == [(NS, "ptah-result-3f9a2c7d1e")]
    assert store.report_of() == ClaimedReport(_digest(_document()))


async def test_a_report_whose_digest_could_not_be_written_is_503_and_the_retry_writes_it() -> None:
    """The record is stored but the claim could not be patched: 503 (the runner retries), the
    record not believed meanwhile; the retry finds the record and writes the digest."""
    store = MemoryStore()
    store.report_writes_fail = 1
    first = await receive(store, KEY, NS, OP, BEARER, _body())
    assert first.status == 503
    assert list(store.records) == [(NS, "ptah-result-3f9a2c7d1e")]
    assert store.report_of() is None
    _, results = owned_records(_all_records(store), SEAL, _claim_of(store))
    assert "conflict" in results[OP].payload or "unconfirmed" in results[OP].payload
    again = await receive(store, KEY, NS, OP, BEARER, _body())
    assert (again.status, again.body["result"]) == (200, "exists")
    report = store.report_of()
    assert report == ClaimedReport(_digest(_document()))
    _, results = owned_records(_all_records(store), SEAL, _claim_of(store))
    assert results[OP].payload == _document()


async def test_of_two_reports_stored_at_once_only_one_digest_lands() -> None:
    """Between the endpoint's reading of the claim and its patch, another report of the attempt
    wrote its digest (a record deleted and a second report posted, on another replica): the
    patch tests the resourceVersion, fails, and the claim read again makes it a conflict."""

    class Raced(MemoryStore):
        raced = False

        async def write_report(
            self, kind: str, namespace: str, name: str, claim: ResourceClaim, report: ClaimedReport
        ) -> bool:
            if not self.raced:
                self.raced = True
                self.reports[(kind, namespace, name)] = (1, ClaimedReport(_digest(FORGED)))
                self.version += 1
            return await super().write_report(kind, namespace, name, claim, report)

    store = Raced()
    answer = await receive(store, KEY, NS, OP, BEARER, _body())
    assert answer.status == 409
    assert store.report_of() == ClaimedReport(_digest(FORGED), conflict=True)
    _, results = owned_records(_all_records(store), SEAL, _claim_of(store))
    assert "conflict" in results[OP].payload


async def test_a_report_stored_for_a_claim_that_moved_on_is_not_answered_as_stored() -> None:
    class MovedOn(MemoryStore):
        async def write_report(
            self, kind: str, namespace: str, name: str, claim: ResourceClaim, report: ClaimedReport
        ) -> bool:
            self.claims[(kind, namespace, name)] = "op-0000000001"
            return await super().write_report(kind, namespace, name, claim, report)

    answer = await receive(MovedOn(), KEY, NS, OP, BEARER, _body())
    assert answer.status == 409


def _all_records(store: MemoryStore) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(dict(record))) for record in store.records.values()]


def _claim_of(store: MemoryStore) -> Claimed:
    """The claim as the controller reads it, with the report the endpoint wrote into it."""
    report = store.report_of()
    received = (
        ReceivedReport(
            attempt=store.attempt, digest=report.digest, conflict=report.conflict or None
        )
        if report is not None
        else None
    )
    return (OP, store.attempt, received)
