"""The installation manifests in deploy/ are accepted by a real API server."""

from __future__ import annotations

import time

import pytest
from localstack.controlplane import ControlPlane

pytestmark = pytest.mark.integration


def test_deploy_base_is_accepted_by_the_api_server(crds_installed: ControlPlane) -> None:
    # Really created (a server-side dry run cannot create into a namespace it has not made);
    # no Deployment controller runs here, so nothing starts.
    result = crds_installed.kubectl("apply", "-k", "deploy/")
    created = result.stdout
    crds_installed.kubectl("delete", "-k", "deploy/", "--wait=false")
    for expected in (
        "namespace/ptah-system",
        "serviceaccount/ptah-operator",
        "clusterrole.rbac.authorization.k8s.io/ptah-operator-manager",
        "deployment.apps/ptah-operator",
    ):
        assert expected in created


def test_viewers_read_every_kind_but_the_chunks_that_hold_sql(crds_installed: ControlPlane) -> None:
    """ptah-viewer aggregates into the built-in `view` role; a plan chunk holds SQL, which
    approvers review and viewers need not see."""
    cp = crds_installed
    cp.kubectl("apply", "-f", "deploy/rbac.yaml", "-n", "default")
    cp.kubectl(
        "create",
        "clusterrolebinding",
        "victor-views",
        "--clusterrole=ptah-viewer",
        "--user=victor@example.com",
        check=False,
    )
    victor = cp.user_kubeconfig("victor@example.com", ["viewers"])

    def can(verb: str, resource: str) -> bool:
        for _ in range(50):
            answer = cp.kubectl(
                "auth", "can-i", verb, resource, "-n", "default", check=False, kubeconfig=victor
            ).stdout.strip()
            if answer == "yes" or resource == "ptahschemaplanchunks":
                return answer == "yes"
            time.sleep(0.2)
        return False

    for resource in ("ptahschemas", "ptahmigrations", "ptahschemaplans", "ptahmigrationplans"):
        assert can("get", resource), resource
    assert not can("get", "ptahschemaplanchunks")
    assert not can("create", "ptahschemaapprovals")
