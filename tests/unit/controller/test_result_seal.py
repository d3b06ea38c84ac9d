"""Result records are the endpoint's only: the controller takes as a result only a record whose
seal opens for its namespace, its operation, the resource that owns it and the text it holds.
Anyone allowed to write ConfigMaps can write the rest, which is ignored (MIG-19, MIG-47: no
outcome and no settled hold from a record the endpoint did not store)."""

from __future__ import annotations

import json
from typing import Any

from ptah_operator.api.common import ReceivedReport
from ptah_operator.api.result_seal import ResultSeal, body_digest
from ptah_operator.controller.world import Claimed, owned_records, unsealed_records
from ptah_operator.reconcile.reports import Unreadable, read_report
from ptah_operator.results.answers import canonical_json
from ptah_operator.results.endpoint import record_manifest

SEAL = ResultSeal.derived_from(b"r" * 32)
NS, OP, UID = "application", "op-3f9a2c7d1e", "u-1"


def _document(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "contract": "ptah.run/result/v1",
        "operationID": OP,
        "type": "History",
        "resource": {"kind": "PtahMigration", "namespace": NS, "name": "orders", "uid": UID},
        "history": {"verdict": "NothingPending", "pendingCount": 0},
    }
    doc.update(changes)
    return doc


def _claimed(attempt: int, doc: dict[str, Any] | None = None) -> Claimed:
    """The claim of OP at `attempt`, remembering the digest of `doc` (the endpoint's patch)."""
    text = canonical_json(doc or _document())
    return (OP, attempt, ReceivedReport(attempt=attempt, digest=body_digest(text)))


def _forged(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    forged: dict[str, Any] = json.loads(json.dumps(record))
    forged["metadata"].update(changes.pop("metadata", {}))
    forged.update(changes)
    return forged


def test_a_record_the_endpoint_sealed_is_a_result() -> None:
    record = record_manifest(_document(), OP, SEAL)
    _, results = owned_records([record], SEAL)
    assert list(results) == [OP]
    assert unsealed_records([record], SEAL) == []


def test_a_record_a_configmap_writer_made_is_ignored_and_named() -> None:
    genuine = record_manifest(_document(), OP, SEAL)
    unsealed = _forged(genuine, metadata={"annotations": {}})
    wrong_key = record_manifest(_document(), OP, ResultSeal())
    other_text = _forged(
        genuine, data={"result.json": json.dumps(_document(history={"verdict": "Dirty"}))}
    )
    for forged in (unsealed, wrong_key, other_text):
        _, results = owned_records([forged], SEAL)
        assert results == {}
        assert unsealed_records([forged], SEAL) == ["ptah-result-3f9a2c7d1e"]


def test_a_sealed_record_copied_to_another_resource_or_operation_does_not_open() -> None:
    genuine = record_manifest(_document(), OP, SEAL)
    other_owner = _forged(genuine)
    other_owner["metadata"]["ownerReferences"][0]["uid"] = "u-2"
    other_namespace = _forged(genuine, metadata={"namespace": "elsewhere"})
    other_op = record_manifest(_document(operationID="op-0000000001"), OP, SEAL)
    other_op["data"] = dict(genuine["data"])
    other_op["data"]["result.json"] = genuine["data"]["result.json"].replace(OP, "op-0000000001")
    for copied in (other_owner, other_namespace, other_op):
        assert owned_records([copied], SEAL)[1] == {}


# --- the record's name and attempt, a record being deleted, the previous key (issue #18) -------


def test_a_sealed_record_copied_under_another_name_is_no_result() -> None:
    """The seal covers the record's name, and only the operation's own names are read: a copy
    of a genuine record under another `ptah-result-*` name, or with another operation label,
    is no result (it would beat the conflict record, and nobody would clean it up)."""
    genuine = record_manifest(_document(), OP, SEAL)
    renamed = _forged(genuine, metadata={"name": "ptah-result-3f9a2c7d1e-z"})
    relabelled = _forged(genuine)
    relabelled["metadata"]["labels"]["operator.ptah.run/operation-id"] = "op-0000000001"
    for copied in (renamed, relabelled):
        assert owned_records([copied], SEAL)[1] == {}
        assert unsealed_records([copied], SEAL) == [copied["metadata"]["name"]]


def test_the_record_of_an_earlier_attempt_is_no_result_of_the_claimed_one() -> None:
    """A read retried under one claim: a saved record of the failed attempt, written back once
    its clean-up deleted it, does not open for the next attempt (the seal covers the attempt)."""
    first = record_manifest(_document(), OP, SEAL, attempt=1)
    assert list(owned_records([first], SEAL, claim=_claimed(1))[1]) == [OP]
    assert owned_records([first], SEAL, claim=_claimed(2))[1] == {}
    second = record_manifest(_document(), OP, SEAL, attempt=2)
    replayed = _forged(second, metadata={"annotations": first["metadata"]["annotations"]})
    assert owned_records([replayed], SEAL, claim=_claimed(2))[1] == {}
    assert list(owned_records([second], SEAL, claim=_claimed(2))[1]) == [OP]


def test_a_record_being_deleted_is_no_result() -> None:
    """A record held by a finalizer once deleted is gone for the controller: taking it would
    keep a retried read's clean-up waiting for it for ever."""
    genuine = record_manifest(_document(), OP, SEAL)
    held = _forged(genuine)
    held["metadata"]["deletionTimestamp"] = "2026-12-01T12:00:00Z"
    held["metadata"]["finalizers"] = ["example.com/hold"]
    assert owned_records([held], SEAL)[1] == {}


def test_the_fallback_record_is_a_result_under_its_own_name() -> None:
    fallback = SEAL.fallback_name(NS, OP, attempt=1)
    assert fallback.startswith("ptah-result-3f9a2c7d1e-")
    assert fallback != ResultSeal.derived_from(b"o" * 32).fallback_name(NS, OP, attempt=1)
    record = record_manifest(_document(), OP, SEAL, name=fallback)
    _, results = owned_records([record], SEAL)
    assert results[OP].record_name == fallback
    assert owned_records([record], ResultSeal())[1] == {}


def test_the_fallback_name_is_the_attempts_own() -> None:
    """A retried read's attempt 2 has a fallback name of its own: attempt 1's, sealed or
    held, is not among the names the controller reads attempt 2's record under."""
    first, second = SEAL.fallback_name(NS, OP, attempt=1), SEAL.fallback_name(NS, OP, attempt=2)
    assert first != second
    assert SEAL.record_names(NS, OP, 2) == ("ptah-result-3f9a2c7d1e", second)
    record = record_manifest(_document(), OP, SEAL, name=second, attempt=2)
    assert owned_records([record], SEAL, _claimed(2))[1][OP].record_name == second
    misnamed = record_manifest(_document(), OP, SEAL, name=first, attempt=2)
    assert owned_records([misnamed], SEAL, _claimed(2))[1] == {}


def test_two_different_sealed_records_of_one_attempt_are_a_conflict() -> None:
    """Two live sealed records of one operation and attempt that differ (its own name and the
    fallback): neither is believed, in whatever order the cache lists them; the result is a
    conflict, as the endpoint's conflict record is. Identical ones are the one result."""
    fallback = SEAL.fallback_name(NS, OP, attempt=1)
    first = record_manifest(_document(), OP, SEAL)
    second = record_manifest(_document(history={"verdict": "Dirty"}), OP, SEAL, name=fallback)
    for order in ([first, second], [second, first]):
        result = owned_records(order, SEAL, _claimed(1))[1][OP]
        assert set(result.payload["conflict"]) == {"recorded", "received"}
        assert result.record_name == "ptah-result-3f9a2c7d1e"
    same = record_manifest(_document(), OP, SEAL, name=fallback)
    result = owned_records([same, first], SEAL, _claimed(1))[1][OP]
    assert "conflict" not in result.payload
    assert result.record_name == "ptah-result-3f9a2c7d1e"


def test_a_record_sealed_under_the_previous_key_still_opens() -> None:
    """A result key replaced (`--previous-result-key-file`): records in flight, sealed under
    the old key, still open; every new seal is made under the new key only."""
    old = ResultSeal.derived_from(b"o" * 32)
    rotated = ResultSeal.derived_from(b"n" * 32, [b"o" * 32])
    in_flight = record_manifest(_document(), OP, old)
    fallback = record_manifest(_document(), OP, old, name=old.fallback_name(NS, OP, attempt=1))
    assert list(owned_records([in_flight], rotated)[1]) == [OP]
    assert list(owned_records([fallback], rotated)[1]) == [OP]
    new = record_manifest(_document(), OP, rotated)
    assert owned_records([new], old)[1] == {}
    assert rotated.fallback_name(NS, OP, attempt=1) == ResultSeal.derived_from(
        b"n" * 32
    ).fallback_name(NS, OP, attempt=1)


def test_unsealed_records_are_reported_once_each_in_bounded_memory() -> None:
    """The controller reports each unsealed record once per manager (log, count, Warning); it
    remembers only the records still there, per resource, for a bounded number of resources,
    and forgets a resource once it is deleted."""
    from ptah_operator.controller.world import UnsealedReports

    reports = UnsealedReports(max_resources=50)
    assert reports.new("ns/orders", "u-1", ["ptah-result-a", "ptah-result-b"]) == [
        "ptah-result-a",
        "ptah-result-b",
    ]
    assert reports.new("ns/orders", "u-1", ["ptah-result-a", "ptah-result-b"]) == []
    assert reports.new("ns/orders", "u-1", ["ptah-result-a"]) == []
    assert reports.new("ns/orders", "u-1", ["ptah-result-a", "ptah-result-b"]) == ["ptah-result-b"]
    assert reports.new("ns/orders", "u-2", ["ptah-result-a"]) == ["ptah-result-a"]
    for i in range(10_000):
        reports.new(f"ns/r-{i}", f"u-{i}", [f"ptah-result-{i}"])
    assert len(reports) == 50
    reports.forget("ns/r-9999")
    assert len(reports) == 49
    assert reports.new("ns/r-9999", "u-9999", ["ptah-result-9999"]) == ["ptah-result-9999"]
    assert reports.new("ns/r-9998", "u-9998", []) == []
    assert len(reports) == 49, "a resource with no unsealed record is not remembered"


# --- the claim remembers the report (issue #18, fourth review, finding 1) ----------------------


def test_a_record_whose_digest_the_claim_does_not_remember_is_no_result() -> None:
    """A ConfigMap writer with the operation's token deleted the stored report and had the
    endpoint store another (or the claim marks a conflict): the record left is sealed, but its
    digest is not the one the claim remembers for the attempt, so it is a conflict, no result.
    A record the claim remembers nothing of (the endpoint's patch not made yet, or a record the
    previous version stored) is unconfirmed, no result either (read back)."""
    from ptah_operator.api.constants import OperationType
    from ptah_operator.api.contracts.result import ResultEnvelope

    replaced = record_manifest(_document(history={"verdict": "Dirty"}), OP, SEAL)
    remembered = _claimed(1)
    result = owned_records([replaced], SEAL, remembered)[1][OP]
    assert result.payload["conflict"]["recorded"] == remembered[2].digest  # type: ignore[union-attr]
    why = read_report(result, ResultEnvelope, OP, OperationType.HISTORY, UID)
    assert isinstance(why, Unreadable)

    genuine = record_manifest(_document(), OP, SEAL)
    assert owned_records([genuine], SEAL, remembered)[1][OP].payload == _document()
    report = remembered[2]
    assert report is not None
    marked = (OP, 1, report.model_copy(update={"conflict": True}))
    assert "conflict" in owned_records([genuine], SEAL, marked)[1][OP].payload
    stale = (OP, 1, ReceivedReport(attempt=2, digest=report.digest))
    for unknown in ((OP, 1, None), stale):
        result = owned_records([genuine], SEAL, unknown)[1][OP]
        assert "unconfirmed" in result.payload
        why = read_report(result, ResultEnvelope, OP, OperationType.HISTORY, UID)
        assert isinstance(why, Unreadable)
