"""deploy/webhooks.yaml is accepted by a real API server."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from localstack.controlplane import ControlPlane

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]


def test_the_webhook_configurations_pass_a_server_side_dry_run(kube: ControlPlane) -> None:
    documents = list(yaml.safe_load_all((REPO / "deploy" / "webhooks.yaml").read_text()))
    # A dry run changes nothing, so the configurations that fail closed can be checked
    # without taking every approval in the cluster down; the Service needs its namespace.
    configurations = [doc for doc in documents if doc["kind"] != "Service"]
    result = kube.kubectl(
        "apply", "--dry-run=server", "-f", "-", input=yaml.safe_dump_all(configurations)
    )
    assert "mutatingwebhookconfiguration.admissionregistration.k8s.io/ptah-operator-approvals" in (
        result.stdout
    )
    assert (
        "validatingwebhookconfiguration.admissionregistration.k8s.io/ptah-operator-approvals"
        in (result.stdout)
    )
