"""The Helm chart deploy/helm/ptah-operator: it lints, its default rendering is the kustomize base
(`kubectl kustomize deploy/`), each value changes what it names and nothing else, and its CRDs
are the generated ones.

helm comes from hack/helm-binary.sh and kubectl from hack/control-plane-binaries.sh (both
cached, built from the Go module proxy when absent); a missing binary fails these tests.
"""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from localstack.controlplane import control_plane_bindir

from ptah_operator.webhook.registration import render_deploy_yaml

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "deploy" / "helm" / "ptah-operator"
NAMESPACE = "ptah-system"

# The labels Helm charts put on their objects by convention (helm create's, the Kubernetes
# recommended labels); the kustomize base carries only app.kubernetes.io/name. The equality
# checks ignore exactly these, wherever labels are (an object's and its Pod template's).
HELM_LABELS = frozenset(
    {
        "helm.sh/chart",
        "app.kubernetes.io/instance",
        "app.kubernetes.io/version",
        "app.kubernetes.io/managed-by",
    }
)

Objects = dict[tuple[str, str], dict[str, Any]]


@cache
def helm() -> str:
    result = subprocess.run(
        ["bash", str(REPO / "hack" / "helm-binary.sh")],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"helm is needed (hack/helm-binary.sh failed):\n{result.stderr.strip()}")
    return result.stdout.strip().splitlines()[-1]


def run(*argv: str) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=REPO)
    assert result.returncode == 0, f"{' '.join(argv)}:\n{result.stderr}"
    return result.stdout


def without_helm_labels(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    holders = [obj.get("metadata", {}), obj.get("spec", {}).get("template", {}).get("metadata", {})]
    for metadata in holders:
        labels = metadata.get("labels")
        if labels is not None:
            for key in HELM_LABELS & labels.keys():
                del labels[key]
    return obj


def by_identity(documents: Iterable[Any]) -> Objects:
    objects: Objects = {}
    for doc in documents:
        if not doc:
            continue
        key = (doc["kind"], doc["metadata"]["name"])
        assert key not in objects, f"{key} rendered twice"
        objects[key] = without_helm_labels(doc)
    return dict(sorted(objects.items()))


def render(*sets: str, set_string: Iterable[str] = ()) -> Objects:
    argv = [helm(), "template", "ptah", str(CHART), "--namespace", NAMESPACE]
    for item in sets:
        argv += ["--set", item]
    for item in set_string:
        argv += ["--set-string", item]
    return by_identity(yaml.safe_load_all(run(*argv)))


def kustomize_base() -> Objects:
    kubectl = str(control_plane_bindir() / "kubectl")
    return by_identity(yaml.safe_load_all(run(kubectl, "kustomize", str(REPO / "deploy"))))


def container(objects: Objects) -> dict[str, Any]:
    pod = objects[("Deployment", "ptah-operator")]["spec"]["template"]["spec"]
    manager: dict[str, Any] = pod["containers"][0]
    return manager


# --- lint and CRDs ----------------------------------------------------------------------------


def test_chart_lints() -> None:
    out = run(helm(), "lint", "--strict", str(CHART))
    assert "0 chart(s) failed" in out


def test_chart_lints_with_every_optional_object_on() -> None:
    out = run(
        helm(),
        "lint",
        "--strict",
        str(CHART),
        "--set",
        "webhookCertificate.mode=certManager,webhooks.enabled=true,prometheusRule.enabled=true,"
        "namespace.create=true",
    )
    assert "0 chart(s) failed" in out


# --- the default rendering is the kustomize base ----------------------------------------------


def test_default_values_render_the_kustomize_base() -> None:
    """The kustomize base's Namespace is the one difference: `helm install` needs the namespace
    before it installs anything (namespace.create renders it for `helm template`)."""
    expected = kustomize_base()
    namespace = expected.pop(("Namespace", NAMESPACE))
    rendered = render()
    assert list(rendered) == list(expected)
    for key, obj in expected.items():
        assert rendered[key] == obj, key
    assert render("namespace.create=true")[("Namespace", NAMESPACE)] == namespace


def test_webhooks_render_deploy_webhooks_yaml() -> None:
    expected = by_identity(yaml.safe_load_all(render_deploy_yaml()))
    rendered = render("webhooks.enabled=true", set_string=["webhooks.caBundle=Q0E="])
    for key, obj in expected.items():
        if "webhooks" in obj:
            for hook in obj["webhooks"]:
                hook["clientConfig"]["caBundle"] = "Q0E="
        assert rendered[key] == obj, key


# --- each value changes what it names, and nothing else ---------------------------------------


def _args(objects: Objects) -> list[str]:
    args: list[str] = container(objects)["args"]
    return args


def _image(objects: Objects) -> None:
    container(objects)["image"] = "registry.internal/ptah/ptah-operator:0.2.0"


def _digest(objects: Objects) -> None:
    container(objects)["image"] = "ghcr.io/ptah-operator/ptah-operator@sha256:" + "a" * 64


def _pull_policy(objects: Objects) -> None:
    container(objects)["imagePullPolicy"] = "Always"


def _replicas(objects: Objects) -> None:
    objects[("Deployment", "ptah-operator")]["spec"]["replicas"] = 3


def _resources(objects: Objects) -> None:
    container(objects)["resources"]["limits"]["memory"] = "1Gi"


def _no_leader_election(objects: Objects) -> None:
    args = _args(objects)
    args.remove("--leader-elect")
    args.remove(f"--leader-election-namespace={NAMESPACE}")


def _leader_election_namespace(objects: Objects) -> None:
    args = _args(objects)
    args[args.index(f"--leader-election-namespace={NAMESPACE}")] = (
        "--leader-election-namespace=kube-system"
    )
    # The result key lives in the manager's namespace (--operator-namespace defaults to this).
    for kind in ("Role", "RoleBinding"):
        objects[(kind, "ptah-operator-result-key")]["metadata"]["namespace"] = "kube-system"


def _runner_image(objects: Objects) -> None:
    container(objects)["env"] = [
        {"name": "PTAH_RUNNER_IMAGE", "value": "mirror.internal/ptah@sha256:" + "b" * 64}
    ]


def _allowed_runner_images(objects: Objects) -> None:
    _args(objects).append(f"--allowed-runner-images=sha256:{'c' * 64},sha256:{'d' * 64}")


def _allowed_source_hosts(objects: Objects) -> None:
    _args(objects).append("--allowed-source-hosts=git.internal,registry.internal:5000")


def _insecure_registries(objects: Objects) -> None:
    _args(objects).extend(
        ["--insecure-registry=registry.local:5000", "--insecure-registry=10.0.0.9:5000"]
    )


def _extra_args(objects: Objects) -> None:
    _args(objects).append("--workers=8")


def _provided_secret(objects: Objects) -> None:
    pod = objects[("Deployment", "ptah-operator")]["spec"]["template"]["spec"]
    pod["volumes"][0]["secret"]["secretName"] = "my-webhook-tls"


def _cert_manager(objects: Objects) -> None:
    objects[("Issuer", "ptah-selfsigned")] = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": {
            "name": "ptah-selfsigned",
            "namespace": NAMESPACE,
            "labels": {"app.kubernetes.io/name": "ptah-operator"},
        },
        "spec": {"selfSigned": {}},
    }
    objects[("Certificate", "ptah-operator-webhook")] = _certificate(
        {"name": "ptah-selfsigned", "kind": "Issuer"}
    )


def _cert_manager_cluster_issuer(objects: Objects) -> None:
    objects[("Certificate", "ptah-operator-webhook")] = _certificate(
        {"name": "corporate-ca", "kind": "ClusterIssuer"}
    )


def _certificate(issuer_ref: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {
            "name": "ptah-operator-webhook",
            "namespace": NAMESPACE,
            "labels": {"app.kubernetes.io/name": "ptah-operator"},
        },
        "spec": {
            "secretName": "ptah-operator-webhook-tls",
            "dnsNames": [
                f"ptah-operator-webhook.{NAMESPACE}.svc",
                f"ptah-operator-webhook.{NAMESPACE}.svc.cluster.local",
            ],
            "issuerRef": issuer_ref,
        },
    }


def _no_metrics_service(objects: Objects) -> None:
    del objects[("Service", "ptah-operator-metrics")]


def _metrics_port(objects: Objects) -> None:
    objects[("Service", "ptah-operator-metrics")]["spec"]["ports"][0]["port"] = 9090


def _prometheus_rule(objects: Objects) -> None:
    rules = yaml.safe_load((CHART / "files" / "prometheus-rules.yaml").read_text("utf-8"))
    objects[("PrometheusRule", "ptah-operator")] = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "ptah-operator",
            "namespace": NAMESPACE,
            "labels": {"app.kubernetes.io/name": "ptah-operator", "release": "prometheus"},
        },
        "spec": {"groups": rules["groups"]},
    }


VALUE_ROWS: list[tuple[str, list[str], list[str], Callable[[Objects], None]]] = [
    # (row, --set, --set-string, what it changes in the default rendering)
    ("image", ["image.repository=registry.internal/ptah/ptah-operator,image.tag=0.2.0"], [], _image),
    ("image digest", [f"image.digest=sha256:{'a' * 64},image.tag=0.2.0"], [], _digest),
    ("image pull policy", ["image.pullPolicy=Always"], [], _pull_policy),
    ("replicas", ["replicas=3"], [], _replicas),
    ("resources", ["resources.limits.memory=1Gi"], [], _resources),
    ("leader election off", ["leaderElection.enabled=false"], [], _no_leader_election),
    ("leader election namespace", ["leaderElection.namespace=kube-system"], [], _leader_election_namespace),
    ("runner image", [f"runnerImage=mirror.internal/ptah@sha256:{'b' * 64}"], [], _runner_image),
    ("allowed runner images", [f"allowedRunnerImages={{sha256:{'c' * 64},sha256:{'d' * 64}}}"], [], _allowed_runner_images),
    ("allowed source hosts", ["allowedSourceHosts={git.internal,registry.internal:5000}"], [], _allowed_source_hosts),
    ("insecure registries", ["insecureRegistries={registry.local:5000,10.0.0.9:5000}"], [], _insecure_registries),
    ("extra args", ["extraArgs={--workers=8}"], [], _extra_args),
    ("certificate: a provided Secret", ["webhookCertificate.secretName=my-webhook-tls"], [], _provided_secret),
    ("certificate: cert-manager, self-signed", ["webhookCertificate.mode=certManager"], [], _cert_manager),
    ("certificate: cert-manager, an issuer of yours", ["webhookCertificate.mode=certManager,webhookCertificate.certManager.issuerRef.name=corporate-ca,webhookCertificate.certManager.issuerRef.kind=ClusterIssuer"], [], _cert_manager_cluster_issuer),
    ("metrics Service off", ["metrics.service.enabled=false"], [], _no_metrics_service),
    ("metrics Service port", ["metrics.service.port=9090"], [], _metrics_port),
    ("PrometheusRule on", ["prometheusRule.enabled=true,prometheusRule.labels.release=prometheus"], [], _prometheus_rule),
]  # fmt: skip


@pytest.mark.parametrize(
    ("sets", "set_string", "change"),
    [pytest.param(sets, strings, change, id=row) for row, sets, strings, change in VALUE_ROWS],
)
def test_a_value_changes_what_it_names(
    sets: list[str], set_string: list[str], change: Callable[[Objects], None]
) -> None:
    expected = render()
    change(expected)
    assert render(*sets, set_string=set_string) == dict(sorted(expected.items()))


def test_prometheus_rule_is_off_by_default() -> None:
    assert not [key for key in render() if key[0] == "PrometheusRule"]


def test_cert_manager_mode_has_the_ca_injected_into_the_webhooks() -> None:
    rendered = render("webhookCertificate.mode=certManager,webhooks.enabled=true")
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        config = rendered[(kind, "ptah-operator-approvals")]
        assert config["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": f"{NAMESPACE}/ptah-operator-webhook"
        }
        assert all("caBundle" not in hook["clientConfig"] for hook in config["webhooks"])


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (["webhookCertificate.mode=openssl"], "webhookCertificate.mode must be secret or certManager"),
        (["webhooks.enabled=true"], "needs webhooks.caBundle"),
        (["prometheusRule.enabled=true,prometheusRule.rulesFile=files/absent.yaml"], "holds no rule groups"),
    ],
)  # fmt: skip
def test_a_value_that_cannot_work_is_refused(sets: list[str], message: str) -> None:
    argv = [helm(), "template", "ptah", str(CHART), "--namespace", NAMESPACE]
    for item in sets:
        argv += ["--set", item]
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert message in result.stderr


def test_the_chart_ships_the_alert_rules_of_deploy_prometheus() -> None:
    """The chart's rule file is the project's (a copy: a chart reads only its own files), and
    its PrometheusRule holds the same groups as deploy/prometheus/prometheusrule.yaml."""
    deploy = CHART.parents[1] / "prometheus"
    ours = yaml.safe_load((CHART / "files" / "prometheus-rules.yaml").read_text("utf-8"))
    assert ours == yaml.safe_load((deploy / "ptah-rules.yaml").read_text("utf-8"))
    wrapped = yaml.safe_load((deploy / "prometheusrule.yaml").read_text("utf-8"))
    rendered = render("prometheusRule.enabled=true")
    [rule] = [value for key, value in rendered.items() if key[0] == "PrometheusRule"]
    assert rule["spec"]["groups"] == wrapped["spec"]["groups"] == ours["groups"]
