"""The realm Lease against the API server: taking it, renewing it, giving it back.

Contract (`RealmLease.carry_out(action, now, owner_uid)`, one `LeaseAction` of a Decision):
- ACQUIRE takes the Lease when it is absent (create), free or expired (replace, one more
  transition), and renews it when the action's holder already holds it; it answers False when
  another holder holds it unexpired or another writer won the race (409). Taking it records
  which resource took it (`ANNOTATION_LEASE_HOLDER_UID`), so a Lease no status names can be
  told from one a claim still holds.
- RELEASE empties `holderIdentity` when the action's holder holds it; an absent Lease or one
  held by someone else is already given back (True); a 409 answers False.
- A replace carries the resourceVersion it read (optimistic concurrency), and a taken Lease
  lasts `LEASE_DURATION_SECONDS`, longer than any run it covers.
- `give_back(taken, now)` releases Leases a pass took but could not put on record (its status
  write was refused), logging what it could not release.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import structlog
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.constants import ANNOTATION_LEASE_HOLDER_UID
from ptah_operator.controller.world import lease_state
from ptah_operator.reconcile.decision import LeaseAction, LeaseVerb

log = structlog.get_logger(__name__)

LEASE_DURATION_SECONDS = 3900
"""An Apply Job's deadline (3600 s) plus a margin: the Lease outlives any run it covers."""


class RealmLease:
    """Carries the realm Lease actions of Decisions out."""

    def __init__(self, api_client: client.ApiClient) -> None:
        # Typed as Any: the bodies are plain JSON dicts, which the client accepts although its
        # annotations name the generated model classes.
        self.coordination: Any = client.CoordinationV1Api(api_client)

    async def give_back(self, taken: list[LeaseAction], now: dt.datetime) -> None:
        for action in taken:
            release = LeaseAction(LeaseVerb.RELEASE, action.name, action.namespace, action.holder)
            try:
                await self.carry_out(release, now)
            except ApiException as error:
                log.warning("lease not released", lease=action.name, status=error.status)

    async def carry_out(self, action: LeaseAction, now: dt.datetime, owner_uid: str = "") -> bool:
        """Take or release the realm Lease; False when another operation holds it. Taking it
        also records which resource took it (ANNOTATION_LEASE_HOLDER_UID).

        Bodies are plain dicts with six-digit microseconds: the API server refuses the times the
        generated models write when the microseconds are zero.
        """
        stamp = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        lease = await self._read(action)
        if lease is None:
            if action.verb is LeaseVerb.RELEASE:
                return True
            return await self._create(action, stamp, owner_uid)
        spec: dict[str, Any] = lease.setdefault("spec", {})
        holder = spec.get("holderIdentity")
        if action.verb is LeaseVerb.RELEASE:
            if holder != action.holder:
                return True
            release(lease)
        elif holder == action.holder:
            renew(lease, stamp)
        elif lease_state(lease, now).expired:
            take(lease, action.holder, stamp, owner_uid)
        else:
            return False
        try:
            await self.coordination.replace_namespaced_lease(action.name, action.namespace, lease)
        except ApiException as error:
            if error.status == 409:
                return False
            raise
        return True

    async def _read(self, action: LeaseAction) -> dict[str, Any] | None:
        """The Lease as the API server holds it; None when there is none."""
        # Without preloading, a non-2xx answer raises nothing: the status is ours to check.
        response = await self.coordination.read_namespaced_lease(
            action.name, action.namespace, _preload_content=False
        )
        if response.status not in (200, 404):
            raise ApiException(status=response.status, reason="reading the realm Lease failed")
        lease: dict[str, Any] = await response.json()
        return lease if response.status == 200 else None

    async def _create(self, action: LeaseAction, stamp: str, owner_uid: str) -> bool:
        """Take an absent Lease by creating it; False when another writer created it first."""
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": action.name,
                "namespace": action.namespace,
                "annotations": {ANNOTATION_LEASE_HOLDER_UID: owner_uid},
            },
            "spec": {
                "holderIdentity": action.holder,
                "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                "acquireTime": stamp,
                "renewTime": stamp,
                "leaseTransitions": 1,
            },
        }
        try:
            await self.coordination.create_namespaced_lease(action.namespace, body)
        except ApiException as conflict:
            if conflict.status == 409:
                return False
            raise
        return True


def take(lease: dict[str, Any], holder: str, stamp: str, owner_uid: str) -> None:
    """A free or expired Lease becomes `holder`'s: one more transition, a full duration, and
    the resource that took it on record."""
    spec: dict[str, Any] = lease.setdefault("spec", {})
    spec.update(
        holderIdentity=holder,
        acquireTime=stamp,
        renewTime=stamp,
        leaseDurationSeconds=LEASE_DURATION_SECONDS,
        leaseTransitions=int(spec.get("leaseTransitions") or 0) + 1,
    )
    annotations = lease.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[ANNOTATION_LEASE_HOLDER_UID] = owner_uid


def renew(lease: dict[str, Any], stamp: str) -> None:
    lease.setdefault("spec", {})["renewTime"] = stamp


def release(lease: dict[str, Any]) -> None:
    lease.setdefault("spec", {})["holderIdentity"] = None
