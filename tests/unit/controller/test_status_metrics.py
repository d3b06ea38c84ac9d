"""The alert rules' gauges are read from the caches at each scrape."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from prometheus_client import CollectorRegistry

from ptah_operator.controller.status_metrics import CertificateExpiry, StatusCollector
from ptah_operator.runtime.store import Store

NOW = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)
HOLDER_UID = "operator.ptah.run/holder-uid"


def _store(*objects: dict[str, Any]) -> Store:
    store = Store()
    for obj in objects:
        store.upsert(obj)
    return store


def _resource(name: str, uid: str, status: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"namespace": "shop", "name": name, "uid": uid}, "status": status}


def _lease(name: str, holder: str, owner: str, renewed: dt.datetime) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ptah-system", "name": name, "annotations": {HOLDER_UID: owner}},
        "spec": {
            "holderIdentity": holder,
            "renewTime": renewed.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "leaseDurationSeconds": 3900,
        },
    }


def _registry(migrations: Store, leases: Store) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(
        StatusCollector(
            {"PtahMigration": migrations, "PtahSchema": _store()},
            leases,
            HOLDER_UID,
            now=lambda: NOW,
        )
    )
    return registry


def test_a_held_run_an_upcoming_read_an_operation_and_a_waiting_plan_are_exported() -> None:
    held = _resource(
        "orders",
        "u-1",
        {
            "phase": "Blocked",
            "unresolvedRun": {"operationID": "op-1", "outcome": "Unknown"},
            "nextReconciliationTime": "2026-11-30T12:10:00Z",
        },
    )
    running = _resource(
        "billing",
        "u-2",
        {
            "phase": "Applying",
            "activeOperation": {
                "operationID": "op-2",
                "type": "Apply",
                "startedAt": "2026-11-30T11:00:00Z",
            },
        },
    )
    waiting = _resource(
        "stock",
        "u-3",
        {
            "phase": "AwaitingApproval",
            "plan": {"name": "stock-abc", "operationID": "op-3"},
            "journal": {
                "entries": [
                    {
                        "type": "PlanPublished",
                        "time": "2026-11-30T09:00:00Z",
                        "operationID": "op-0",
                    },
                    {
                        "type": "PlanPublished",
                        "time": "2026-11-30T10:00:00Z",
                        "operationID": "op-3",
                    },
                ]
            },
        },
    )
    registry = _registry(_store(held, running, waiting), _store())
    mig = {"family": "PtahMigration", "namespace": "shop"}
    assert (
        registry.get_sample_value(
            "ptah_resource_unresolved_run", {**mig, "name": "orders", "outcome": "Unknown"}
        )
        == 1
    )
    assert (
        registry.get_sample_value(
            "ptah_resource_unresolved_run", {**mig, "name": "billing", "outcome": "Unknown"}
        )
        is None
    )
    assert (
        registry.get_sample_value(
            "ptah_resource_next_reconciliation_timestamp_seconds", {**mig, "name": "orders"}
        )
        == dt.datetime(2026, 11, 30, 12, 10, tzinfo=dt.UTC).timestamp()
    )
    assert (
        registry.get_sample_value(
            "ptah_operation_deadline_timestamp_seconds", {**mig, "name": "billing", "type": "Apply"}
        )
        == dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC).timestamp()
    )
    assert (
        registry.get_sample_value(
            "ptah_plan_awaiting_approval_since_timestamp_seconds", {**mig, "name": "stock"}
        )
        == dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.UTC).timestamp()
    )
    assert (
        registry.get_sample_value(
            "ptah_plan_awaiting_approval_since_timestamp_seconds", {**mig, "name": "orders"}
        )
        is None
    )


def test_a_lease_no_operation_in_flight_accounts_for_is_held_past_its_run() -> None:
    running = _resource(
        "billing",
        "u-2",
        {"activeOperation": {"operationID": "op-2", "type": "Apply", "startedAt": "x"}},
    )
    proving = _resource(
        "stock",
        "u-3",
        {"activeOperation": {"operationID": "op-9", "type": "History", "startedAt": "x"}},
    )
    idle = _resource("orders", "u-1", {"phase": "InSync"})
    leases = _store(
        _lease("realm-a", "op-2", "u-2", NOW),  # its claim names it
        _lease("realm-b", "op-3", "u-3", NOW),  # its resource has a read in flight
        _lease("realm-c", "op-1", "u-1", NOW),  # the run ended: held past it
        _lease("realm-d", "op-4", "u-1", NOW - dt.timedelta(hours=2)),  # expired
    )
    registry = _registry(_store(running, proving, idle), leases)
    held = {
        lease: registry.get_sample_value("ptah_realm_lease_held_past_run", {"lease": lease})
        for lease in ("realm-a", "realm-b", "realm-c", "realm-d")
    }
    assert held == {"realm-a": None, "realm-b": None, "realm-c": 1, "realm-d": None}


def test_the_serving_certificate_expiry_is_read_from_the_file(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "ptah-operator")])
    not_after = dt.datetime(2027, 1, 1, tzinfo=dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(NOW)
        .not_valid_after(not_after)
        .sign(key, hashes.SHA256())
    )
    path = tmp_path / "tls.crt"
    from cryptography.hazmat.primitives.serialization import Encoding

    path.write_bytes(certificate.public_bytes(Encoding.PEM))
    registry = CollectorRegistry()
    registry.register(CertificateExpiry(path))
    expiry = "ptah_webhook_certificate_expiry_timestamp_seconds"
    assert registry.get_sample_value(expiry) == not_after.timestamp()
    path.write_text("not a certificate")
    assert registry.get_sample_value(expiry) is None


def test_an_operations_deadline_is_its_jobs_and_an_attempt_waiting_to_retry_has_none() -> None:
    claim = {"type": "Apply", "startedAt": "2026-11-30T10:00:00Z"}
    second = _resource(
        "billing",
        "u-2",
        {"activeOperation": {**claim, "operationID": "op-2", "attempt": 2, "jobName": "j-2"}},
    )
    waiting = _resource(
        "stock",
        "u-3",
        {
            "activeOperation": {
                **claim,
                "operationID": "op-3",
                "attempt": 2,
                "retryAt": "2026-11-30T12:05:00Z",
            }
        },
    )
    job = {
        "metadata": {"namespace": "shop", "name": "j-2"},
        "spec": {"activeDeadlineSeconds": 3600},
        "status": {"startTime": "2026-11-30T11:30:00Z"},
    }
    registry = CollectorRegistry()
    registry.register(
        StatusCollector(
            {"PtahMigration": _store(second, waiting)},
            _store(),
            HOLDER_UID,
            _store(job),
            now=lambda: NOW,
        )
    )
    name = "ptah_operation_deadline_timestamp_seconds"
    mig = {"family": "PtahMigration", "namespace": "shop", "type": "Apply"}
    assert (
        registry.get_sample_value(name, {**mig, "name": "billing"})
        == dt.datetime(2026, 11, 30, 12, 30, tzinfo=dt.UTC).timestamp()
    )
    assert registry.get_sample_value(name, {**mig, "name": "stock"}) is None
