"""Counting the requests the manager makes of the API server.

Contract: `instrument(api_client, registry)` wraps the client's REST layer once so every
request (watches included) is counted in `ptah_api_requests_total{method,code}`, as
controller-runtime's `rest_client_requests_total` does. A request that raised before an answer
counts with code `error`. This is what tells how many requests a resource costs.
"""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from prometheus_client import CollectorRegistry, Counter


def instrument(api_client: client.ApiClient, registry: CollectorRegistry) -> Counter:
    requests = Counter(
        "ptah_api_requests",
        "Requests the manager made of the API server, by method and HTTP code.",
        ["method", "code"],
        registry=registry,
    )
    rest = api_client.rest_client
    original = rest.request

    async def counted(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        try:
            response = await original(method, url, *args, **kwargs)
        except ApiException as error:
            requests.labels(method, str(error.status)).inc()
            raise
        except Exception:
            requests.labels(method, "error").inc()
            raise
        status = getattr(response, "status", None)
        requests.labels(method, str(status) if status is not None else "unknown").inc()
        return response

    rest.request = counted  # type: ignore[method-assign]
    return requests
