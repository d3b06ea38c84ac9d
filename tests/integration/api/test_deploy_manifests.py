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
    try:
        # The one Secret the manager reads, its result key, in its own namespace only.
        assert _manager_can(crds_installed, "get", "secrets/ptah-operator-result-key")
        assert not _manager_can(crds_installed, "get", "secrets/someone-elses")
        assert not _manager_can(crds_installed, "list", "secrets")
    finally:
        crds_installed.kubectl("delete", "-k", "deploy/", "--wait=false")
    for expected in (
        "namespace/ptah-system",
        "serviceaccount/ptah-operator",
        "clusterrole.rbac.authorization.k8s.io/ptah-operator-manager",
        "role.rbac.authorization.k8s.io/ptah-operator-result-key",
        "rolebinding.rbac.authorization.k8s.io/ptah-operator-result-key",
        "deployment.apps/ptah-operator",
    ):
        assert expected in created


def _manager_can(cp: ControlPlane, verb: str, resource: str) -> bool:
    """`kubectl auth can-i` as the manager's ServiceAccount in ptah-system, once the RBAC
    objects just applied have reached the authorizer (a yes is waited for, a no is not)."""
    manager = "--as=system:serviceaccount:ptah-system:ptah-operator"
    for _ in range(50):
        answer = cp.kubectl(
            "auth", "can-i", verb, resource, "-n", "ptah-system", manager, check=False
        ).stdout.strip()
        if answer == "yes":
            return True
        time.sleep(0.2)
    return False


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
