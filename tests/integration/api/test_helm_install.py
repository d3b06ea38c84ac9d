"""The Helm chart installs into a real API server as docs/install.md says, and what it grants the
manager's ServiceAccount is what the manager needs (a missing permission shows up here).

A control plane of its own: the chart's cluster-scoped objects (ClusterRoles, CRDs) carry Helm's
ownership, which another test's `kubectl apply -f deploy/rbac.yaml` on a shared server would
refuse. No kubelet runs here, so the manager's Pods are never started: the test is about what
the API server accepts and stores."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config
from localstack.controlplane import ControlPlane

from ptah_operator.results.credentials import RESULT_KEY_SECRET
from ptah_operator.results.records import load_or_create_result_key
from tests.unit.deploy.test_helm_chart import CHART, NAMESPACE, helm

pytestmark = pytest.mark.integration

MANAGER = f"system:serviceaccount:{NAMESPACE}:ptah-operator"


@pytest.fixture(scope="module")
def cluster() -> Iterator[ControlPlane]:
    with tempfile.TemporaryDirectory(prefix="ptah-helm-") as workdir:
        plane = ControlPlane(Path(workdir))
        try:
            plane.start(controller_manager=False)
            yield plane
        finally:
            plane.stop()


def _helm(cluster: ControlPlane, *argv: str) -> str:
    result = subprocess.run(
        [helm(), "--kubeconfig", str(cluster.kubeconfig), *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"helm {' '.join(argv)}:\n{result.stderr}"
    return result.stdout


def _can(cluster: ControlPlane, verb: str, resource: str, namespace: str = "default") -> bool:
    answer = cluster.kubectl(
        "auth", "can-i", verb, resource, "-n", namespace, f"--as={MANAGER}", check=False
    )
    return answer.stdout.strip() == "yes"


async def _as_the_manager(cluster: ControlPlane) -> k8s_client.ApiClient:
    """A client that authenticates as the manager's ServiceAccount (a client certificate whose
    name is the ServiceAccount's user name: RBAC binds a ServiceAccount subject by that name)."""
    kubeconfig = cluster.user_kubeconfig(
        MANAGER, ["system:serviceaccounts", f"system:serviceaccounts:{NAMESPACE}"]
    )
    configuration = k8s_client.Configuration()
    await k8s_config.load_kube_config(
        config_file=str(kubeconfig), client_configuration=configuration
    )
    return k8s_client.ApiClient(configuration)


async def _the_manager_makes_and_then_reads_its_result_key(cluster: ControlPlane) -> None:
    """What the manager does at every start (cli/manager.py), with only the chart's grants:
    the first start makes the Secret, every later one reads it and gets the same key."""
    async with await _as_the_manager(cluster) as api:
        made = await load_or_create_result_key(api, NAMESPACE)
        again = await load_or_create_result_key(api, NAMESPACE)
        assert made == again
        assert len(made) >= 32
        core: Any = k8s_client.CoreV1Api(api)
        cluster.kubectl(
            "create", "secret", "generic", "someone-elses", "-n", NAMESPACE, "--from-literal=k=v"
        )
        with pytest.raises(k8s_client.ApiException) as refused:
            await core.read_namespaced_secret("someone-elses", NAMESPACE)
        assert refused.value.status == 403
    stored = cluster.kubectl(
        "get", "secret", RESULT_KEY_SECRET, "-n", NAMESPACE, "-o", "name"
    ).stdout.strip()
    assert stored == f"secret/{RESULT_KEY_SECRET}"


async def test_the_chart_installs_upgrades_and_uninstalls(cluster: ControlPlane) -> None:
    cluster.kubectl("create", "namespace", NAMESPACE)
    cluster.kubectl(
        "label", "namespace", NAMESPACE, "pod-security.kubernetes.io/enforce=restricted"
    )
    _helm(cluster, "install", "ptah-operator", str(CHART), "-n", NAMESPACE)

    release = json.loads(_helm(cluster, "status", "ptah-operator", "-n", NAMESPACE, "-o", "json"))
    assert release["info"]["status"] == "deployed"
    crds = cluster.kubectl("get", "crd", "-o", "name").stdout.split()
    for kind in ("ptahmigrations", "ptahschemas", "ptahmigrationplans", "ptahschemaplans"):
        assert f"customresourcedefinition.apiextensions.k8s.io/{kind}.operator.ptah.run" in crds
    deployment = json.loads(
        cluster.kubectl("get", "deployment", "ptah-operator", "-n", NAMESPACE, "-o", "json").stdout
    )
    assert deployment["spec"]["replicas"] == 2  # two, for leader election (deploy/manager.yaml)
    # The Deployment's Pod template passed the namespace's restricted Pod Security level.
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True

    # What the chart's RBAC grants the manager, in a namespace the resources live in.
    for verb, resource in (
        ("watch", "ptahmigrations.operator.ptah.run"),
        ("patch", "ptahmigrations.operator.ptah.run/status"),
        ("patch", "ptahschemas.operator.ptah.run/status"),
        ("create", "jobs.batch"),
        ("create", "configmaps"),
        ("create", "events.events.k8s.io"),
    ):
        assert _can(cluster, verb, resource), (verb, resource)
    assert _can(cluster, "update", "leases.coordination.k8s.io", NAMESPACE)
    # Nothing beyond: the manager only names Secrets to Jobs, it never reads one (a database
    # URL is read by the Job's container alone).
    assert not _can(cluster, "get", "secrets")
    assert not _can(cluster, "list", "secrets")
    # In its own namespace, the result key's Secret alone: it makes it on first start and
    # reads it on every start after (the manager refused to start in a cluster without it).
    assert _can(cluster, "get", f"secrets/{RESULT_KEY_SECRET}", NAMESPACE)
    assert not _can(cluster, "get", "secrets/someone-elses", NAMESPACE)
    assert not _can(cluster, "list", "secrets", NAMESPACE)
    await _the_manager_makes_and_then_reads_its_result_key(cluster)

    _helm(cluster, "upgrade", "ptah-operator", str(CHART), "-n", NAMESPACE, "--set", "replicas=3")
    replicas = cluster.kubectl(
        "get", "deployment", "ptah-operator", "-n", NAMESPACE, "-o", "jsonpath={.spec.replicas}"
    ).stdout
    assert replicas == "3"

    _helm(cluster, "uninstall", "ptah-operator", "-n", NAMESPACE)
    gone = cluster.kubectl(
        "get", "deployment", "ptah-operator", "-n", NAMESPACE, "--ignore-not-found", "-o", "name"
    )
    assert gone.stdout.strip() == ""
