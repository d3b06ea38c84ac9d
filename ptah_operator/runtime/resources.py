"""Which API resources informers can list and watch, and how to reach each through the client.

Contract: a `Resource` names a resource by group, version, plural and kind (plus whether it
is namespaced). `list_watch_for(api_client, resource, namespace)` gives an `ApiListWatch`:
core-group resources go through the typed `CoreV1Api` list functions (their path is
`/api/v1`), every other group (batch, coordination, our CRDs) through
`CustomObjectsApi.list_*_custom_object`, whose path `/apis/{group}/{version}/{plural}` is
right for any grouped resource. Either way the informer sees raw JSON dicts.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from kubernetes_asyncio import client

from ptah_operator.runtime.informer import ApiListWatch


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
SECRETS = Resource("", "v1", "secrets", "Secret")
PODS = Resource("", "v1", "pods", "Pod")
JOBS = Resource("batch", "v1", "jobs", "Job")
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")


def _snake(kind: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", kind).lower()


def list_function_for(
    api_client: client.ApiClient, resource: Resource, namespace: str | None
) -> tuple[Callable[..., Awaitable[Any]], tuple[Any, ...]]:
    """The kubernetes_asyncio list function and its positional arguments for `resource`."""
    if resource.namespaced is False and namespace is not None:
        raise ValueError(f"{resource} is cluster-scoped; no namespace applies")
    if not resource.group:
        core = client.CoreV1Api(api_client)
        snake = _snake(resource.kind)
        if not resource.namespaced:
            return getattr(core, f"list_{snake}"), ()
        if namespace is None:
            return getattr(core, f"list_{snake}_for_all_namespaces"), ()
        return getattr(core, f"list_namespaced_{snake}"), (namespace,)
    custom = client.CustomObjectsApi(api_client)
    if not resource.namespaced:
        return custom.list_cluster_custom_object, (
            resource.group,
            resource.version,
            resource.plural,
        )
    if namespace is None:
        return custom.list_custom_object_for_all_namespaces, (
            resource.group,
            resource.version,
            resource.plural,
        )
    return custom.list_namespaced_custom_object, (
        resource.group,
        resource.version,
        namespace,
        resource.plural,
    )


def list_watch_for(
    api_client: client.ApiClient,
    resource: Resource,
    namespace: str | None = None,
    *,
    label_selector: str | None = None,
    field_selector: str | None = None,
) -> ApiListWatch:
    """An `ApiListWatch` for `resource` (in `namespace`, or all), with label/field selectors."""
    function, args = list_function_for(api_client, resource, namespace)
    return ApiListWatch(
        function, *args, label_selector=label_selector, field_selector=field_selector
    )
