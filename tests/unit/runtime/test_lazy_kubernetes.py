"""kubernetes_asyncio a module at a time (issue #17): the manager's process imports the four
APIs and the models it uses, not the 859 modules of the package's `__init__`; everything the
manager does with the client works as with the real package. Each probe runs in a fresh
interpreter, since the lazy packages must be in place before anything imports the real ones."""

from __future__ import annotations

import sys

from ptah_operator.runtime import lazy_kubernetes
from tests.support.fresh_interpreter import probe


def test_the_manager_loads_a_few_modules_of_the_client_not_the_whole_package() -> None:
    found = probe(
        """
        import json, sys
        import ptah_operator.cli.manager
        kube = [m for m in sys.modules if m.split(".")[0] == "kubernetes_asyncio"]
        print(json.dumps({"kube": len(kube), "all": len(sys.modules)}))
        """
    )
    # Measured (session 11): 16 of kubernetes_asyncio and 757 in all, against 859 and 1,602
    # with the real package's __init__.
    assert isinstance(found["kube"], int)
    assert isinstance(found["all"], int)
    assert found["kube"] <= 40
    assert found["all"] <= 1000


def test_what_the_manager_does_with_the_client_works_through_the_lazy_packages() -> None:
    found = probe(
        """
        import json, sys
        import ptah_operator.cli  # installs the lazy packages
        from kubernetes_asyncio import client, config
        from kubernetes_asyncio.client.exceptions import ApiException
        from kubernetes_asyncio.client.models.v1_pod import V1Pod
        import kubernetes_asyncio
        import asyncio

        async def read_back():
            async with client.ApiClient(client.Configuration()) as api:
                return api._ApiClient__deserialize(
                    {"metadata": {"name": "realm"}, "spec": {"holderIdentity": "op-1"}},
                    "V1Lease",
                )

        lease = asyncio.run(read_back())
        try:
            client.NoSuchThing
            missing = False
        except AttributeError:
            missing = True
        print(json.dumps({
            "lazy": type(sys.modules["kubernetes_asyncio.client"]).__name__,
            "apis": [c.__name__ for c in (client.CoreV1Api, client.BatchV1Api,
                     client.CoordinationV1Api, client.CustomObjectsApi)],
            "lease": [type(lease).__name__, lease.metadata.name, lease.spec.holder_identity],
            "pod": V1Pod is client.V1Pod is client.models.V1Pod,
            "exception": ApiException is client.ApiException,
            "config": callable(config.load_kube_config) and callable(config.load_incluster_config),
            "missing": missing,
            "version": kubernetes_asyncio.__version__,
        }))
        """
    )
    assert found == {
        "lazy": "LazyPackage",
        "apis": ["CoreV1Api", "BatchV1Api", "CoordinationV1Api", "CustomObjectsApi"],
        "lease": ["V1Lease", "realm", "op-1"],
        "pod": True,
        "exception": True,
        "config": True,
        "missing": True,
        "version": "36.1.0",
    }


def test_nothing_changes_once_the_real_package_is_imported() -> None:
    import kubernetes_asyncio.client  # noqa: F401 (what this test process has anyway)

    assert lazy_kubernetes.install() is False
    assert type(sys.modules["kubernetes_asyncio.client"]).__name__ == "module"
