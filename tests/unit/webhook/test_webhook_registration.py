"""The webhook configurations: what they match, how they fail, and deploy/webhooks.yaml."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from ptah_operator.webhook.registration import (
    ServiceEndpoint,
    UrlEndpoint,
    deploy_manifests,
    mutating_webhook_configuration,
    render_deploy_yaml,
    validating_webhook_configuration,
)

REPO = Path(__file__).resolve().parents[3]


def test_deploy_webhooks_yaml_is_generated_from_the_module() -> None:
    on_disk = (REPO / "deploy" / "webhooks.yaml").read_text()
    assert on_disk == render_deploy_yaml(), (
        "deploy/webhooks.yaml is out of date: "
        "python -m ptah_operator.webhook.registration > deploy/webhooks.yaml"
    )
    kinds = [doc["kind"] for doc in yaml.safe_load_all(on_disk)]
    assert kinds == ["Service", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]


def test_the_webhooks_act_on_create_of_the_three_kinds_and_fail_closed() -> None:
    for configuration in deploy_manifests()[1:]:
        webhook = configuration["webhooks"][0]
        assert webhook["rules"] == [
            {
                "apiGroups": ["operator.ptah.run"],
                "apiVersions": ["v1alpha1"],
                "operations": ["CREATE"],
                "resources": [
                    "ptahmigrationapprovals",
                    "ptahschemaapprovals",
                    "ptahmigrationrunacknowledgments",
                ],
                "scope": "Namespaced",
            }
        ]
        assert webhook["sideEffects"] == "None"
        assert webhook["failurePolicy"] == "Fail"
        assert webhook["admissionReviewVersions"] == ["v1"]
        assert webhook["timeoutSeconds"] == 10
        assert "caBundle" not in webhook["clientConfig"]
        assert webhook["clientConfig"]["service"]["namespace"] == "ptah-system"


def test_url_endpoints_carry_the_ca_bundle() -> None:
    pem = b"-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n"
    selector = {"matchLabels": {"kubernetes.io/metadata.name": "t"}}
    mutating = mutating_webhook_configuration(
        UrlEndpoint("https://127.0.0.1:9443/"),
        pem,
        name="t",
        timeout_seconds=5,
        namespace_selector=selector,
    )
    webhook, writers = mutating["webhooks"]
    assert webhook["clientConfig"] == {
        "url": "https://127.0.0.1:9443/mutate/approvals",
        "caBundle": base64.b64encode(pem).decode(),
    }
    assert writers["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate/resources"
    assert writers["namespaceSelector"] == selector
    assert webhook["namespaceSelector"] == selector
    assert webhook["timeoutSeconds"] == 5
    assert webhook["reinvocationPolicy"] == "Never"
    validating = validating_webhook_configuration(ServiceEndpoint("ns", "svc", 8443), pem)
    assert validating["webhooks"][0]["clientConfig"]["service"] == {
        "namespace": "ns",
        "name": "svc",
        "path": "/validate/approvals",
        "port": 8443,
    }


def test_the_writer_record_acts_on_every_write_of_the_two_resources_and_fails_open() -> None:
    mutating = deploy_manifests()[1]
    (writers,) = [
        w for w in mutating["webhooks"] if w["name"] == "record.writers.operator.ptah.run"
    ]
    assert writers["rules"] == [
        {
            "apiGroups": ["operator.ptah.run"],
            "apiVersions": ["v1alpha1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["ptahmigrations", "ptahschemas"],
            "scope": "Namespaced",
        }
    ]
    assert writers["failurePolicy"] == "Ignore"
    # Another mutating webhook may change the spec after the record is sealed: the API server
    # calls the record's webhook again, so the seal is over the spec that is stored.
    assert writers["reinvocationPolicy"] == "IfNeeded"
    assert writers["sideEffects"] == "None"
    assert writers["clientConfig"]["service"]["path"] == "/mutate/resources"


@pytest.mark.req("JOB-06")
def test_the_runner_image_check_acts_on_every_write_of_the_two_resources() -> None:
    """Issue #18: a resource's spec.execution.image is checked when written; it fails open, as
    the writer record does, since the manager builds no Job with an image it does not allow."""
    validating = deploy_manifests()[2]
    (check,) = [
        w for w in validating["webhooks"] if w["name"] == "check.resources.operator.ptah.run"
    ]
    assert check["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert check["rules"][0]["resources"] == ["ptahmigrations", "ptahschemas"]
    assert check["clientConfig"]["service"]["path"] == "/validate/resources"
    assert check["failurePolicy"] == "Ignore"


def test_the_documents_given_are_rendered_in_order_their_keys_as_written() -> None:
    text = render_deploy_yaml([{"kind": "B", "z": 1, "a": 2}, {"kind": "A"}])
    assert "kind: B\nz: 1\na: 2\n---\nkind: A\n" in text
    assert "Service" not in text
