"""Result records are the endpoint's only: the controller takes as a result only a record whose
seal opens for its namespace, its operation, the resource that owns it and the text it holds.
Anyone allowed to write ConfigMaps can write the rest, which is ignored (MIG-19, MIG-47: no
outcome and no settled hold from a record the endpoint did not store)."""

from __future__ import annotations

import json
from typing import Any

from ptah_operator.api.result_seal import ResultSeal
from ptah_operator.controller.world import owned_records, unsealed_records
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
