"""Where result records live: a small protocol, and its implementation on the Kubernetes API.

The endpoint needs of the API server: the uid of the resource a result names, the creation of
a record ConfigMap (refused if one of that name exists), and the reading of an existing record
to compare it; for a schema's plan text, the reading of an uploaded piece, the PtahSchema whose
claim (`status.activeOperation`) names an operation, and a PtahSchemaPlan or
PtahSchemaPlanChunk by name. `KubernetesResultStore` does them with kubernetes_asyncio; tests
of the endpoint's logic can give it any object with these methods.

`load_result_key` gives the manager its result key: from `--result-key-file` when given, else
from the Secret `ptah-operator-result-key` in the manager's namespace, created with a fresh
random key on first start (two managers starting at once agree: the loser of the create reads
the winner's key).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.constants import GROUP, VERSION
from ptah_operator.api.kinds import kind_info
from ptah_operator.api.names import PIECE_KEY, RESULT_KEY
from ptah_operator.results.credentials import (
    RESULT_KEY_SECRET,
    key_from_secret,
    new_result_key,
    read_result_key_file,
    result_key_secret,
)

_REFUSED = frozenset({400, 413, 422})
"""The API server's answers that refuse an object for what it is (invalid, too large)."""


class StoreUnavailableError(Exception):
    """The API server could not be asked (an answer other than found / not found)."""


class RecordRefusedError(Exception):
    """The API server refused the record itself (too large, invalid): asking again would not
    change its answer."""

    def __init__(self, status: int) -> None:
        super().__init__(f"the API server refused the record (HTTP {status})")
        self.status = status


class ResultStore(Protocol):
    async def resource_uid(self, kind: str, namespace: str, name: str) -> str | None:
        """The uid of the named resource, or None when it does not exist."""

    async def create_record(self, manifest: Mapping[str, Any]) -> bool:
        """Create the record ConfigMap; False when one of that name already exists.
        RecordRefusedError when the API server refuses the object itself."""

    async def read_record(self, namespace: str, name: str) -> str | None:
        """The `result.json` of an existing record, or None when there is none."""

    async def read_piece(self, namespace: str, name: str) -> str | None:
        """The text of an uploaded piece record, or None when there is none."""

    async def schema_with_claim(
        self, namespace: str, operation_id: str
    ) -> Mapping[str, Any] | None:
        """The PtahSchema of the namespace whose status.activeOperation has this operation id,
        or None when none has."""

    async def read_object(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """A custom object of this API by kind and name, or None when it does not exist."""


class KubernetesResultStore:
    """ResultStore on the API server the manager talks to."""

    def __init__(self, api_client: client.ApiClient) -> None:
        # Typed as Any: these calls speak plain JSON dicts, which the client accepts.
        self._core: Any = client.CoreV1Api(api_client)
        self._custom: Any = client.CustomObjectsApi(api_client)

    async def resource_uid(self, kind: str, namespace: str, name: str) -> str | None:
        plural = kind_info(kind).plural
        try:
            obj = await self._custom.get_namespaced_custom_object(
                GROUP, VERSION, namespace, plural, name
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise StoreUnavailableError(f"reading the {kind}: HTTP {exc.status}") from None
        uid = (obj.get("metadata") or {}).get("uid")
        return str(uid) if uid else None

    async def create_record(self, manifest: Mapping[str, Any]) -> bool:
        namespace = manifest["metadata"]["namespace"]
        try:
            await self._core.create_namespaced_config_map(namespace, dict(manifest))
        except ApiException as exc:
            if exc.status == 409:
                return False
            if exc.status in _REFUSED:
                raise RecordRefusedError(exc.status) from None
            raise StoreUnavailableError(f"creating the record: HTTP {exc.status}") from None
        return True

    async def _read_key(self, namespace: str, name: str, key: str) -> str | None:
        try:
            record = await self._core.read_namespaced_config_map(name, namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise StoreUnavailableError(f"reading the record: HTTP {exc.status}") from None
        value = (record.data or {}).get(key)
        return value if isinstance(value, str) else ""

    async def read_record(self, namespace: str, name: str) -> str | None:
        return await self._read_key(namespace, name, RESULT_KEY)

    async def read_piece(self, namespace: str, name: str) -> str | None:
        return await self._read_key(namespace, name, PIECE_KEY)

    async def schema_with_claim(
        self, namespace: str, operation_id: str
    ) -> Mapping[str, Any] | None:
        plural = kind_info("PtahSchema").plural
        try:
            found = await self._custom.list_namespaced_custom_object(
                GROUP, VERSION, namespace, plural
            )
        except ApiException as exc:
            raise StoreUnavailableError(f"listing the PtahSchemas: HTTP {exc.status}") from None
        for item in found.get("items") or []:
            claim = (item.get("status") or {}).get("activeOperation") or {}
            if claim.get("operationID") == operation_id:
                return dict(item)
        return None

    async def read_object(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        plural = kind_info(kind).plural
        try:
            found = await self._custom.get_namespaced_custom_object(
                GROUP, VERSION, namespace, plural, name
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise StoreUnavailableError(f"reading the {kind}: HTTP {exc.status}") from None
        return dict(found)


async def load_or_create_result_key(api_client: client.ApiClient, namespace: str) -> bytes:
    """The key in Secret `ptah-operator-result-key` of `namespace`, made on first start."""
    core: Any = client.CoreV1Api(api_client)
    for _ in range(2):
        try:
            secret = await core.read_namespaced_secret(RESULT_KEY_SECRET, namespace)
            return key_from_secret({"data": secret.data})
        except ApiException as exc:
            if exc.status != 404:
                raise
        try:
            await core.create_namespaced_secret(
                namespace, result_key_secret(namespace, new_result_key())
            )
        except ApiException as exc:
            if exc.status != 409:
                raise
            # Another manager made it first: read theirs.
    raise StoreUnavailableError(f"Secret {RESULT_KEY_SECRET} could not be read or created")


async def load_result_key(
    api_client: client.ApiClient, namespace: str, *, key_file: Path | None = None
) -> bytes:
    """The manager's result key: `key_file` when given, else the Secret in `namespace`."""
    if key_file is not None:
        return read_result_key_file(key_file)
    return await load_or_create_result_key(api_client, namespace)
