"""How the webhooks read the resources and plans they check.

`ObjectLookup` is the seam: the manager serves it from its informer caches (`CachedLookup`,
handed the stores' `get`), tests and small installations from the API server
(`ApiObjectLookup`). Objects are raw manifests, as both the API server and the informer stores
hold them; the webhook reads them into the API models itself.

A cache can lag a write by a moment. Admitting on a stale cache is harmless (the reconcile
checks the approval again before it consumes it), but refusing on one would turn a person away
for nothing, so the webhook asks again with `fresh=True` before it refuses, and `CachedLookup`
answers that from the API server when it has a fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.constants import GROUP, VERSION, Kind
from ptah_operator.api.kinds import kind_info

Manifest = Mapping[str, Any]


class ObjectReadError(Exception):
    """An object could not be read (not its absence: that is None)."""


class ObjectLookup(Protocol):
    """Reads one namespaced object of group operator.ptah.run."""

    async def get(
        self, kind: Kind, namespace: str, name: str, *, fresh: bool = False
    ) -> Manifest | None:
        """The object's manifest, or None when it does not exist.

        `fresh` asks for a read that reflects every write acknowledged so far.
        Raises `ObjectReadError` when the object cannot be read.
        """
        ...


class ApiObjectLookup:
    """Reads objects from the API server, every time."""

    def __init__(self, api_client: client.ApiClient, *, request_timeout: float = 5.0) -> None:
        self._custom = client.CustomObjectsApi(api_client)
        self._timeout = request_timeout

    async def get(
        self, kind: Kind, namespace: str, name: str, *, fresh: bool = False
    ) -> Manifest | None:
        del fresh  # every read here is fresh
        plural = kind_info(kind).plural
        try:
            obj = await self._custom.get_namespaced_custom_object(
                GROUP, VERSION, namespace, plural, name, _request_timeout=self._timeout
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise ObjectReadError(f"reading {kind} {name} failed: HTTP {exc.status}") from exc
        except (OSError, TimeoutError) as exc:
            raise ObjectReadError(f"reading {kind} {name} failed: {type(exc).__name__}") from exc
        if not isinstance(obj, Mapping):
            raise ObjectReadError(f"reading {kind} {name} gave no object")
        return obj


StoreGet = Callable[[str], Manifest | None]
"""An informer store's get: the object under "namespace/name", or None."""


class CachedLookup:
    """Reads objects from informer stores, and fresh reads from a fallback when one is given.

    `CachedLookup({Kind.PTAH_MIGRATION: migrations.store.get, ...}, ApiObjectLookup(api))`.
    A kind without a store is read from the fallback.
    """

    def __init__(self, stores: Mapping[Kind, StoreGet], fallback: ObjectLookup | None) -> None:
        self._stores = dict(stores)
        self._fallback = fallback

    async def get(
        self, kind: Kind, namespace: str, name: str, *, fresh: bool = False
    ) -> Manifest | None:
        store = self._stores.get(kind)
        if self._fallback is not None and (fresh or store is None):
            return await self._fallback.get(kind, namespace, name, fresh=fresh)
        if store is None:
            raise ObjectReadError(f"no cache holds {kind} objects")
        return store(f"{namespace}/{name}")
