"""Every state one object goes through, as the API server reports it: a list, then a watch.

`observe(...)` yields the object (a raw manifest) as listed, then after each change the watch
reports, and None while it does not exist. A watch the server ends is resumed from the last
resourceVersion; one that is too old (410) or breaks lists again. A watch sees every write,
so a short-lived state (an operation's claim) is not missed between two polls.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from kubernetes_asyncio import client

from ptah_operator.api.constants import GROUP, VERSION
from ptah_operator.runtime.informer import ApiListWatch, ApiStatusError, ResourceExpiredError

WATCH_SECONDS = 60
_RETRY_SECONDS = 1.0
# Answers that will not change by asking again: the caller must hear of them.
_FINAL_STATUSES = frozenset({401, 403, 404})


async def observe(
    api: client.ApiClient, plural: str, namespace: str, name: str
) -> AsyncIterator[dict[str, Any] | None]:
    """The object's states, oldest first; runs until the caller stops iterating."""
    list_watch = ApiListWatch(
        client.CustomObjectsApi(api).list_namespaced_custom_object,
        GROUP,
        VERSION,
        namespace,
        plural,
        field_selector=f"metadata.name={name}",
    )
    while True:
        try:
            listed = await list_watch.list()
        except ApiStatusError as exc:
            if exc.status in _FINAL_STATUSES:
                raise
            await asyncio.sleep(_RETRY_SECONDS)
            continue
        except (aiohttp.ClientError, TimeoutError):
            await asyncio.sleep(_RETRY_SECONDS)
            continue
        yield listed.items[0] if listed.items else None
        resource_version = listed.resource_version
        try:
            while True:
                async for event in list_watch.watch(resource_version, WATCH_SECONDS):
                    meta = event.object.get("metadata") or {}
                    resource_version = str(meta.get("resourceVersion") or resource_version)
                    if event.type == "BOOKMARK":
                        continue
                    yield None if event.type == "DELETED" else event.object
        except ResourceExpiredError:
            continue
        except ApiStatusError as exc:
            if exc.status in _FINAL_STATUSES:
                raise
        except (aiohttp.ClientError, TimeoutError):
            pass
        await asyncio.sleep(_RETRY_SECONDS)
