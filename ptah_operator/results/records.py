"""Where result records live: a small protocol, and its implementation on the Kubernetes API.

The endpoint needs of the API server: the uid of the resource a result names and the operation
its claim names, the creation of a record ConfigMap (refused if one of that name exists), the
reading of an existing record to compare it, its replacement by a conflict record, and a Warning
Event on the resource; for a schema's plan text, the reading of an uploaded piece, the PtahSchema whose
claim (`status.activeOperation`) names an operation, and a PtahSchemaPlan or
PtahSchemaPlanChunk by name. `KubernetesResultStore` does them with kubernetes_asyncio; tests
of the endpoint's logic can give it any object with these methods.

`load_result_key` gives the manager its result key: from `--result-key-file` when given, else
from the Secret `ptah-operator-result-key` in the manager's namespace, created with a fresh
random key on first start (two managers starting at once agree: the loser of the create reads
the winner's key).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import secrets
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, ParamSpec, Protocol, TypeVar

import aiohttp
import structlog
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.constants import ANNOTATION_RESULT_SEAL, API_VERSION, GROUP, VERSION
from ptah_operator.api.kinds import kind_info
from ptah_operator.api.names import PIECE_KEY, RESULT_KEY
from ptah_operator.results.credentials import (
    RESULT_KEY_SECRET,
    key_from_secret,
    new_result_key,
    read_result_key_file,
    result_key_secret,
)
from ptah_operator.runtime.event_filter import EventSpamFilter, with_held_back

log = structlog.get_logger(__name__)

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


@dataclass(frozen=True)
class StoredRecord:
    """An existing record as the endpoint compares it: its `result.json`, its seal, and
    whether it is being deleted (a finalizer holds it)."""

    text: str
    seal: str | None
    terminating: bool = False


@dataclass(frozen=True)
class ClaimedReport:
    """What the claim says of the first report of its attempt (status.activeOperation.report):
    the digest the endpoint stored, and whether a second, different one arrived."""

    digest: str
    conflict: bool = False


class ResourceClaim(NamedTuple):
    """A resource as the endpoint checks a report against it: its uid, the operation its claim
    (status.activeOperation) names, the claim's attempt, the report the claim records for that
    attempt (None for none, or one of another attempt) and the resourceVersion read."""

    uid: str
    operation_id: str | None
    attempt: int
    report: ClaimedReport | None = None
    resource_version: str | None = None
    attempt_written: bool = True
    """Whether the claim holds its attempt (absent: the first, which a JSON patch cannot test)."""


class ResultStore(Protocol):
    async def resource_claim(self, kind: str, namespace: str, name: str) -> ResourceClaim | None:
        """The named resource and its claim, or None when it does not exist."""

    async def write_report(
        self,
        kind: str,
        namespace: str,
        name: str,
        claim: ResourceClaim,
        report: ClaimedReport,
    ) -> bool:
        """Write `report` into the claim (status.activeOperation.report, for `claim`'s
        attempt) by a JSON patch on /status that tests the claim's operation id and attempt,
        and, unless the report is a conflict, the resourceVersion `claim` was read at; False
        when a test failed (the claim is another's now, or changed: read it again)."""

    async def create_record(self, manifest: Mapping[str, Any]) -> bool:
        """Create the record ConfigMap; False when one of that name already exists.
        RecordRefusedError when the API server refuses the object itself."""

    async def replace_record(self, manifest: Mapping[str, Any]) -> bool:
        """Delete the record of that name, if any, and create `manifest` in its place; False
        when the create failed (a finalizer keeps the old one, being deleted)."""

    async def read_stored(self, namespace: str, name: str) -> StoredRecord | None:
        """An existing record's `result.json`, seal and whether it is being deleted, or None
        when there is none."""

    async def record_event(
        self, resource: Mapping[str, str], reason: str, message: str, *, late: bool = False
    ) -> None:
        """A Warning Event on the resource (kind, namespace, name, uid); best effort. `late`:
        about a report of an operation not in flight (rate-limited apart from the rest)."""

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


_UNREACHABLE = (aiohttp.ClientError, OSError, asyncio.TimeoutError)
"""What the client raises when the API server cannot be reached at all (down, restarting)."""

_T = TypeVar("_T")
_P = ParamSpec("_P")


def _reachable(
    method: Callable[_P, Awaitable[_T]],
) -> Callable[_P, Coroutine[Any, Any, _T]]:
    """An API server that cannot be reached is StoreUnavailableError (the endpoint's 503, which
    the runner retries), never an exception that escapes the handler as a 500."""

    @functools.wraps(method)
    async def asking(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return await method(*args, **kwargs)
        except _UNREACHABLE as exc:
            raise StoreUnavailableError(
                f"the API server could not be reached ({type(exc).__name__})"
            ) from None

    return asking


class KubernetesResultStore:
    """ResultStore on the API server the manager talks to."""

    def __init__(self, api_client: client.ApiClient, events: EventSpamFilter | None = None) -> None:
        # Typed as Any: these calls speak plain JSON dicts, which the client accepts.
        self._core: Any = client.CoreV1Api(api_client)
        self._custom: Any = client.CustomObjectsApi(api_client)
        self._events = events or EventSpamFilter()
        """Warnings per resource: anyone with a saved token can make them repeat."""

    async def resource_uid(self, kind: str, namespace: str, name: str) -> str | None:
        found = await self.resource_claim(kind, namespace, name)
        return found[0] if found is not None else None

    async def resource_claim(self, kind: str, namespace: str, name: str) -> ResourceClaim | None:
        obj = await self.read_object(kind, namespace, name)
        if obj is None:
            return None
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        claim = (obj.get("status") or {}).get("activeOperation") or {}
        if not isinstance(claim, Mapping):
            claim = {}
        claimed = claim.get("operationID")
        attempt = claim.get("attempt")
        attempt = attempt if isinstance(attempt, int) and attempt >= 1 else 1
        return ResourceClaim(
            str(uid) if uid else "",
            str(claimed) if claimed else None,
            attempt,
            _claimed_report(claim.get("report"), attempt),
            str(meta["resourceVersion"]) if meta.get("resourceVersion") else None,
            isinstance(claim.get("attempt"), int),
        )

    @_reachable
    async def write_report(
        self,
        kind: str,
        namespace: str,
        name: str,
        claim: ResourceClaim,
        report: ClaimedReport,
    ) -> bool:
        claimed = "/status/activeOperation"
        ops: list[dict[str, Any]] = [
            {"op": "test", "path": f"{claimed}/operationID", "value": claim.operation_id}
        ]
        if claim.attempt_written:
            ops.append({"op": "test", "path": f"{claimed}/attempt", "value": claim.attempt})
        if not report.conflict or not claim.attempt_written:
            # The first report of the attempt: only onto the claim as it was read, so that of
            # two reports stored at once only one digest lands (the other reads it back).
            ops.insert(
                0,
                {
                    "op": "test",
                    "path": "/metadata/resourceVersion",
                    "value": claim.resource_version,
                },
            )
        value: dict[str, Any] = {"attempt": claim.attempt, "digest": report.digest}
        if report.conflict:
            value["conflict"] = True
        ops.append({"op": "add", "path": f"{claimed}/report", "value": value})
        try:
            await self._custom.patch_namespaced_custom_object_status(
                GROUP,
                VERSION,
                namespace,
                kind_info(kind).plural,
                name,
                ops,
                _content_type="application/json-patch+json",
            )
        except ApiException as exc:
            if exc.status in (404, 409, 422):
                return False
            raise StoreUnavailableError(f"writing the claim's report: HTTP {exc.status}") from None
        return True

    @_reachable
    async def replace_record(self, manifest: Mapping[str, Any]) -> bool:
        meta = manifest["metadata"]
        try:
            await self._core.delete_namespaced_config_map(meta["name"], meta["namespace"])
        except ApiException as exc:
            if exc.status != 404:
                raise StoreUnavailableError(f"deleting the record: HTTP {exc.status}") from None
        return await self.create_record(manifest)

    @_reachable
    async def read_stored(self, namespace: str, name: str) -> StoredRecord | None:
        try:
            record = await self._core.read_namespaced_config_map(name, namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise StoreUnavailableError(f"reading the record: HTTP {exc.status}") from None
        text = (record.data or {}).get(RESULT_KEY)
        seal = (record.metadata.annotations or {}).get(ANNOTATION_RESULT_SEAL)
        return StoredRecord(
            text if isinstance(text, str) else "",
            seal if isinstance(seal, str) else None,
            record.metadata.deletion_timestamp is not None,
        )

    async def record_event(
        self, resource: Mapping[str, str], reason: str, message: str, *, late: bool = False
    ) -> None:
        # A bucket per resource and reason, and one for reports of operations not in flight:
        # a saved token's flood never spends the tokens of a genuine Warning.
        bucket = "late" if late else reason
        held_back = self._events.admit(f"{resource['namespace']}/{resource['uid']}/{bucket}")
        if held_back is None:
            log.info("event held back", reason=reason)
            return
        message = with_held_back(message, held_back)
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{resource['name']}.{secrets.token_hex(8)}",
                "namespace": resource["namespace"],
            },
            "involvedObject": {
                "apiVersion": API_VERSION,
                "kind": resource["kind"],
                "name": resource["name"],
                "namespace": resource["namespace"],
                "uid": resource["uid"],
            },
            "reason": reason,
            "message": message,
            "type": "Warning",
            "source": {"component": "ptah-operator"},
            "reportingComponent": "ptah-operator",
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            await self._core.create_namespaced_event(resource["namespace"], body)
        except (ApiException, OSError, aiohttp.ClientError):
            log.warning("event not written", reason=reason)

    @_reachable
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

    @_reachable
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

    @_reachable
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

    @_reachable
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


def _claimed_report(found: object, attempt: int) -> ClaimedReport | None:
    """The claim's report of `attempt`, when it records one (a report of another attempt is
    none: a new attempt does not carry the old one)."""
    if not isinstance(found, Mapping) or found.get("attempt") != attempt:
        return None
    digest = found.get("digest")
    if not isinstance(digest, str) or not digest:
        return None
    return ClaimedReport(digest, found.get("conflict") is True)


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
