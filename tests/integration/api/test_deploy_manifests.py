"""The installation manifests in deploy/ are accepted by a real API server."""

from __future__ import annotations

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
