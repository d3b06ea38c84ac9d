"""The MutatingWebhookConfiguration and ValidatingWebhookConfiguration of the approval webhooks.

Both act on CREATE of PtahMigrationApproval, PtahSchemaApproval and
PtahMigrationRunAcknowledgment (group operator.ptah.run); the mutating configuration also holds
the webhook that records who wrote the spec of a PtahMigration or PtahSchema (CREATE and
UPDATE, for `spec.policy.requireDistinctApprover`; it alone fails open, see
`mutating_webhook_configuration`). All declare `sideEffects: None` (dry runs
call them too), fail closed (`failurePolicy: Fail`: an approval nobody could check is never
admitted) and speak AdmissionReview v1. The API server reaches them either by URL (the local
stack: `https://127.0.0.1:PORT/...`, certificate with an IP SAN) or through a Service (a
cluster), and trusts the serving certificate through `caBundle`.

`python -m ptah_operator.webhook.registration` prints deploy/webhooks.yaml: the Service-based
pair and the Service, without caBundle (filled at install, see docs/install.md). A unit test
keeps the file and this module in step.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import yaml

from ptah_operator.api.constants import GROUP, VERSION, Kind
from ptah_operator.api.kinds import kind_info
from ptah_operator.webhook.app import (
    MUTATE_PATH,
    MUTATE_RESOURCES_PATH,
    VALIDATE_PATH,
    VALIDATE_RESOURCES_PATH,
)

CONFIGURATION_NAME: Final = "ptah-operator-approvals"
MUTATING_WEBHOOK_NAME: Final = "stamp.approvals.operator.ptah.run"
VALIDATING_WEBHOOK_NAME: Final = "check.approvals.operator.ptah.run"
WRITER_WEBHOOK_NAME: Final = "record.writers.operator.ptah.run"
IMAGE_WEBHOOK_NAME: Final = "check.resources.operator.ptah.run"
DEFAULT_TIMEOUT_SECONDS: Final = 10

DEPLOY_NAMESPACE: Final = "ptah-system"
DEPLOY_SERVICE: Final = "ptah-operator-webhook"
DEPLOY_SERVICE_PORT: Final = 443
# The manager's HTTPS port (webhooks and the result endpoint), by its container port name.
DEPLOY_TARGET_PORT: Final = "https"

ADMITTED_KINDS: Final = (
    Kind.PTAH_MIGRATION_APPROVAL,
    Kind.PTAH_SCHEMA_APPROVAL,
    Kind.PTAH_MIGRATION_RUN_ACKNOWLEDGMENT,
)
RECORDED_KINDS: Final = (Kind.PTAH_MIGRATION, Kind.PTAH_SCHEMA)
_LABELS: Final = {"app.kubernetes.io/name": "ptah-operator"}


@dataclass(frozen=True)
class UrlEndpoint:
    """The webhooks at a URL, e.g. https://127.0.0.1:9443 (the paths are appended)."""

    base_url: str


@dataclass(frozen=True)
class ServiceEndpoint:
    """The webhooks behind a Service."""

    namespace: str = DEPLOY_NAMESPACE
    name: str = DEPLOY_SERVICE
    port: int = DEPLOY_SERVICE_PORT


Endpoint = UrlEndpoint | ServiceEndpoint


def client_config(endpoint: Endpoint, path: str, ca_bundle: bytes | None) -> dict[str, Any]:
    """clientConfig for one webhook; `ca_bundle` is the PEM of the CA that signed the server."""
    config: dict[str, Any]
    if isinstance(endpoint, UrlEndpoint):
        config = {"url": endpoint.base_url.rstrip("/") + path}
    else:
        config = {
            "service": {
                "namespace": endpoint.namespace,
                "name": endpoint.name,
                "path": path,
                "port": endpoint.port,
            }
        }
    if ca_bundle is not None:
        config["caBundle"] = base64.b64encode(ca_bundle).decode("ascii")
    return config


def approval_rules() -> list[dict[str, Any]]:
    """CREATE of the three kinds admission stamps and checks."""
    return [
        {
            "apiGroups": [GROUP],
            "apiVersions": [VERSION],
            "operations": ["CREATE"],
            "resources": [kind_info(kind).plural for kind in ADMITTED_KINDS],
            "scope": "Namespaced",
        }
    ]


def writer_rules() -> list[dict[str, Any]]:
    """CREATE and UPDATE of the resources whose spec writer admission records (not their status
    subresource, which the operator writes)."""
    return [
        {
            "apiGroups": [GROUP],
            "apiVersions": [VERSION],
            "operations": ["CREATE", "UPDATE"],
            "resources": [kind_info(kind).plural for kind in RECORDED_KINDS],
            "scope": "Namespaced",
        }
    ]


def _webhook(
    name: str,
    endpoint: Endpoint,
    path: str,
    ca_bundle: bytes | None,
    timeout_seconds: int,
    namespace_selector: Mapping[str, Any] | None,
    rules: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    webhook: dict[str, Any] = {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": client_config(endpoint, path, ca_bundle),
        "rules": rules if rules is not None else approval_rules(),
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "timeoutSeconds": timeout_seconds,
    }
    if namespace_selector is not None:
        webhook["namespaceSelector"] = dict(namespace_selector)
    return webhook


def mutating_webhook_configuration(
    endpoint: Endpoint,
    ca_bundle: bytes | None = None,
    *,
    name: str = CONFIGURATION_NAME,
    webhook_name: str = MUTATING_WEBHOOK_NAME,
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS,
    namespace_selector: Mapping[str, Any] | None = None,
    writer_webhook_name: str = WRITER_WEBHOOK_NAME,
) -> dict[str, Any]:
    """The MutatingWebhookConfiguration that stamps the approver (APR-04) and records who wrote
    a resource's spec since its last Apply. The record's webhook fails open (`failurePolicy:
    Ignore`), so a manager that is down never blocks editing a resource; a spec written past it
    leaves no sealed record of its writer, and under requireDistinctApprover no approval is
    admitted until an Apply after that write."""
    webhook = _webhook(
        webhook_name, endpoint, MUTATE_PATH, ca_bundle, timeout_seconds, namespace_selector
    )
    writers = _webhook(
        writer_webhook_name,
        endpoint,
        MUTATE_RESOURCES_PATH,
        ca_bundle,
        timeout_seconds,
        namespace_selector,
        writer_rules(),
    )
    # The stamp depends on nothing another webhook could change. The record is sealed over the
    # spec: when a later webhook changes the spec, the API server calls this one again, which
    # seals the spec as it will be stored (else the record would not open, and under the
    # policy every approval would be refused).
    webhook["reinvocationPolicy"] = "Never"
    writers["reinvocationPolicy"] = "IfNeeded"
    writers["failurePolicy"] = "Ignore"
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name, "labels": dict(_LABELS)},
        "webhooks": [webhook, writers],
    }


def validating_webhook_configuration(
    endpoint: Endpoint,
    ca_bundle: bytes | None = None,
    *,
    name: str = CONFIGURATION_NAME,
    webhook_name: str = VALIDATING_WEBHOOK_NAME,
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS,
    namespace_selector: Mapping[str, Any] | None = None,
    image_webhook_name: str = IMAGE_WEBHOOK_NAME,
) -> dict[str, Any]:
    """The ValidatingWebhookConfiguration that refuses what the evidence no longer supports,
    and a resource's runner image the manager does not allow (issue #18). The image check
    fails open (`failurePolicy: Ignore`), so a manager that is down never blocks editing a
    resource: the manager builds no Job with an image it does not allow either way."""
    images = _webhook(
        image_webhook_name,
        endpoint,
        VALIDATE_RESOURCES_PATH,
        ca_bundle,
        timeout_seconds,
        namespace_selector,
        writer_rules(),
    )
    images["failurePolicy"] = "Ignore"
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name, "labels": dict(_LABELS)},
        "webhooks": [
            _webhook(
                webhook_name,
                endpoint,
                VALIDATE_PATH,
                ca_bundle,
                timeout_seconds,
                namespace_selector,
            ),
            images,
        ],
    }


def webhook_service(endpoint: ServiceEndpoint) -> dict[str, Any]:
    """The Service in front of the manager's HTTPS port."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": endpoint.name,
            "namespace": endpoint.namespace,
            "labels": dict(_LABELS),
        },
        "spec": {
            "selector": dict(_LABELS),
            "ports": [
                {
                    "name": "https",
                    "port": endpoint.port,
                    "targetPort": DEPLOY_TARGET_PORT,
                }
            ],
        },
    }


def deploy_manifests(endpoint: ServiceEndpoint | None = None) -> list[dict[str, Any]]:
    """What deploy/webhooks.yaml holds: the Service and the two configurations, no caBundle."""
    target = endpoint or ServiceEndpoint()
    return [
        webhook_service(target),
        mutating_webhook_configuration(target),
        validating_webhook_configuration(target),
    ]


_HEADER: Final = """\
# Generated by `python -m ptah_operator.webhook.registration`; do not edit.
# The admission webhooks: approvals and run acknowledgments are stamped with the authenticated
# user and refused when the evidence no longer supports them. The manager serves both paths on
# its HTTPS port (container port named "https"). caBundle is filled at install: see
# docs/install.md. failurePolicy is Fail, so apply this only once the manager serves them.
"""


def render_deploy_yaml(manifests: Sequence[Mapping[str, Any]] | None = None) -> str:
    """deploy/webhooks.yaml as text."""
    documents = manifests if manifests is not None else deploy_manifests()
    body = "---\n".join(yaml.safe_dump(dict(doc), sort_keys=False) for doc in documents)
    return _HEADER + body


def main() -> None:
    print(render_deploy_yaml(), end="")


if __name__ == "__main__":
    main()
