"""The parts of the family controllers that need no API server: reading the uploaded plan
pieces, expectations, remembered Job refusals, and the lifecycle metrics of a schema."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

import pytest
from kubernetes_asyncio.client.exceptions import ApiException
from prometheus_client import CollectorRegistry

from ptah_operator.controller.executor import JobRefusals, refusal_reason
from ptah_operator.controller.expectations import Expectations
from ptah_operator.controller.indexes import (
    index_job_owner_uid,
    index_owner_uid,
    index_schema_name,
    labelled_owner,
)
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.world import is_piece_record, plan_texts
from ptah_operator.runtime.clock import FakeClock

NOW = dt.datetime(2026, 11, 30, 12, 0, 30, tzinfo=dt.UTC)


def _configmap(name: str, **fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "catalog", **fields.pop("meta", {})}, **fields}


def test_uploaded_pieces_become_plan_texts_by_operation() -> None:
    records = [
        _configmap("ptah-result-00000000a1", data={"result.json": "{}"}),
        _configmap("ptah-result-00000000a1-1", data={"piece": "second"}),
        _configmap(
            "ptah-result-00000000a1-0",
            meta={"labels": {"operator.ptah.run/operation-id": "op-00000000a1"}},
            data={"piece": "first "},
        ),
        _configmap(
            "ptah-result-00000000b2-0",
            binaryData={"piece": base64.b64encode("bytes é".encode()).decode()},
        ),
        _configmap("ptah-result-00000000c3-0", data={"other": "1"}),
        _configmap("ptah-src-0123456789", data={"x": "y"}),
    ]
    texts = plan_texts(records)
    assert sorted(texts) == ["op-00000000a1", "op-00000000b2"]
    assert dict(texts["op-00000000a1"].pieces) == {0: "first ", 1: "second"}
    assert list(texts["op-00000000a1"].pieces) == [0, 1]
    assert dict(texts["op-00000000b2"].pieces) == {0: "bytes é"}
    assert is_piece_record(records[1])
    assert not is_piece_record(records[0])


def test_indexes_file_chunks_and_approvals_under_their_schema() -> None:
    chunk = {
        "metadata": {
            "name": "catalog-0123456789-c00",
            "namespace": "ns",
            "labels": {
                "operator.ptah.run/owner-kind": "PtahSchema",
                "operator.ptah.run/owner-name": "catalog",
                "operator.ptah.run/owner-uid": "s-uid",
            },
            "ownerReferences": [{"kind": "PtahSchemaPlan", "uid": "p-uid", "controller": True}],
        }
    }
    assert index_owner_uid(chunk) == ["s-uid"]
    assert labelled_owner(chunk, "PtahSchema") == "ns/catalog"
    assert labelled_owner(chunk, "PtahMigration") is None
    approval = {"metadata": {"namespace": "ns"}, "spec": {"schemaRef": {"name": "catalog"}}}
    assert index_schema_name(approval) == ["ns/catalog"]


def test_expectations_wait_for_the_caches_then_forget() -> None:
    clock = FakeClock()
    expectations = Expectations(clock, timeout=30)
    seen: set[str] = set()
    obj = {"metadata": {"resourceVersion": "10"}}
    assert not expectations.unmet("ns/a", obj, seen.__contains__)
    expectations.wrote("ns/a", "10")
    expectations.created_job("ns/a", "ns/ptah-apply-1")
    assert expectations.unmet("ns/a", obj, seen.__contains__)
    # The status write shows; the Job not yet.
    obj = {"metadata": {"resourceVersion": "11"}}
    assert expectations.unmet("ns/a", obj, seen.__contains__)
    seen.add("ns/ptah-apply-1")
    assert not expectations.unmet("ns/a", obj, seen.__contains__)
    # A Job that never shows is waited for no longer than the timeout.
    expectations.created_job("ns/a", "ns/ptah-plan-2")
    assert expectations.unmet("ns/a", obj, seen.__contains__)
    clock._now += 31
    assert not expectations.unmet("ns/a", obj, seen.__contains__)
    assert not expectations.unmet("ns/a", obj, seen.__contains__)


def test_a_refusal_is_remembered_until_the_next_create_of_that_job() -> None:
    refusals = JobRefusals()
    refusals.refused("ns/a", "uid-1", "ptah-observe-1", "denied")
    assert refusals.of("ns/a", "uid-1") == {"ptah-observe-1": "denied"}
    # Another object under the same name knows nothing of it.
    assert refusals.of("ns/a", "uid-2") == {}
    refusals.created("ns/a", "ptah-observe-1")
    assert refusals.of("ns/a", "uid-1") == {}
    refusals.refused("ns/a", "uid-1", "ptah-observe-1", "denied")
    refusals.forget("ns/a")
    assert refusals.of("ns/a", "uid-1") == {}


def test_the_refusal_reason_is_the_servers_message_on_one_bounded_line() -> None:
    error = ApiException(status=422, reason="Unprocessable Entity")
    error.body = b'{"message": "Job.batch \\"x\\" is invalid:\\n spec.template: Required"}'
    assert refusal_reason(error) == 'Job.batch "x" is invalid: spec.template: Required'
    error.body = ('{"message": "' + "y" * 400 + '"}').encode()
    assert len(refusal_reason(error)) == 300
    assert refusal_reason(ApiException(status=403, reason="Forbidden")) == "HTTP 403 Forbidden"


def _value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


@pytest.mark.parametrize(
    ("claim_type", "after", "result"),
    [
        ("Plan", {"phase": "Planning", "plan": {"operationID": "op-1"}}, "Changes"),
        ("Plan", {"phase": "InSync"}, "NoChanges"),
        ("Observe", {"phase": "Planning"}, "Completed"),
        ("Observe", {"phase": "Failed"}, "Failed"),
        ("Observe", {"phase": "Suspended"}, "Withdrawn"),
        (
            "Apply",
            {
                "phase": "VerifyingConvergence",
                "lastApply": {"operationID": "op-1", "outcome": "Succeeded"},
            },
            "Succeeded",
        ),
    ],
)
def test_a_schema_claim_ends_with_the_result_its_status_says(
    claim_type: str, after: dict[str, Any], result: str
) -> None:
    registry = CollectorRegistry()
    metrics = LifecycleMetrics(registry)
    claim = {"operationID": "op-1", "type": claim_type, "startedAt": "2026-11-30T12:00:00Z"}
    metrics.observe("PtahSchema", "ns/a", {"activeOperation": claim}, after, NOW)
    assert (
        _value(
            registry,
            "ptah_operations_finished_total",
            family="PtahSchema",
            type=claim_type,
            result=result,
        )
        == 1
    )


def test_a_schema_apply_that_finished_counts_as_a_run() -> None:
    registry = CollectorRegistry()
    metrics = LifecycleMetrics(registry)
    entry = {"type": "ApplyFinished", "time": "t", "outcome": "Unknown", "operationID": "op-1"}
    after = {"phase": "VerifyingConvergence", "journal": {"entries": [entry]}}
    metrics.observe("PtahSchema", "ns/a", {"phase": "Applying"}, after, NOW)
    assert _value(registry, "ptah_runs_finished_total", family="PtahSchema", outcome="Unknown") == 1
    assert (
        _value(registry, "ptah_resources", family="PtahSchema", phase="VerifyingConvergence") == 1
    )


def _job(labels: dict[str, str], owners: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {"name": "ptah-apply-0123456789", "labels": labels, "ownerReferences": owners}
    }


OWNED_BY_M = {"kind": "PtahMigration", "name": "orders", "uid": "m-uid", "controller": True}


def test_a_relabelled_job_stays_under_the_resource_that_controls_it() -> None:
    """Review of #18: a Job was found by its owner label only, so one relabelled by someone
    who may edit Jobs dropped out of its resource's World while its run went on."""
    as_made = _job({"operator.ptah.run/owner-uid": "m-uid"}, [OWNED_BY_M])
    assert index_job_owner_uid(as_made) == ["m-uid"]
    relabelled = _job({"operator.ptah.run/owner-uid": "another"}, [OWNED_BY_M])
    assert "m-uid" in index_job_owner_uid(relabelled)
    unlabelled = _job({}, [OWNED_BY_M])
    assert index_job_owner_uid(unlabelled) == ["m-uid"]
    # An owner that is not the controller (a reference someone added) places nothing.
    added = {**OWNED_BY_M, "uid": "x-uid", "controller": False}
    assert index_job_owner_uid(_job({}, [OWNED_BY_M, added])) == ["m-uid"]
    # A label alone still places the Job (a Job made before its owner reference was set).
    assert index_job_owner_uid(_job({"operator.ptah.run/owner-uid": "m-uid"}, [])) == ["m-uid"]
