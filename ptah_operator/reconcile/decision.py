"""What a reconcile pass decides: data the controller carries out, in a fixed order.

The controller applies a Decision in this order, and stops at the first failure (the next
pass decides again from what then exists):

0. `annotations`, a merge patch of the resource's metadata.annotations (a None value removes
   the key), sent with the World's resourceVersion as a precondition; the status write then
   uses the resourceVersion this patch returned. The hold of an unresolved run is kept here
   as well as in status, so a restore that loses status brings it back (MIG-24, RUN-21);
1. the `lease` actions that take the database-realm Lease (a take that loses means the
   status below is not written and the pass requeues), so the Lease is held before the claim
   that names it is on record;
2. `status`, written through the status subresource with the resourceVersion the World was
   built from, or the one step 0 returned (a conflict requeues, and gives back what step 1
   took) — so a claim is on record before its Job exists (JOB-04);
3. the `lease` actions that release it, only once the status write succeeded (the status write
   stages the release, SUS-04): a claim is never on record without its Lease, so a refused
   write or a manager that stops between the two can never make a run's own release look
   like the Lease changing hands under it (LCK-10). The release of a run's Lease left undone
   (the manager stopped after the write) is done by a later pass, which finds the run in
   status.lastRun (`migration/apply.release_ended`); that of a claim withdrawn before its Job
   existed waits for the Lease to expire, as a take whose claim was never written does;
4. `create`, in order, each idempotent by its deterministic name (AlreadyExists is success);
   an `OperationCredentials` entry is materialised by the controller as the Secret
   `ptah-op-<operation id>` with the operation's bearer token and the result endpoint's CA;
5. `delete`, each tolerant of NotFound (a Job with propagationPolicy Background, so its Pod
   goes with it: a failed read's Job is deleted before the retry reuses its name);
6. `events`, best effort (an Event that is lost is only an Event: the journal is the record);
7. `requeue_after`, or none when the next change will come through a watch.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ptah_operator.api.constants import EventType


class LeaseVerb(StrEnum):
    ACQUIRE = "Acquire"
    RELEASE = "Release"


@dataclass(frozen=True)
class LeaseAction:
    verb: LeaseVerb
    name: str
    namespace: str
    holder: str
    """The operation id that takes the Lease, or that must hold it for a release to happen."""


@dataclass(frozen=True)
class Event:
    type: EventType
    reason: str
    message: str
    """Readable, and never SQL, row data or a credential."""


@dataclass(frozen=True)
class OperationCredentials:
    """Ask the controller for the Secret holding an operation's result token and CA."""

    operation_id: str
    namespace: str
    owner: Mapping[str, Any]
    """The ownerReference (of the resource) the Secret carries, so it goes with the resource."""


@dataclass(frozen=True)
class ObjectRef:
    api_version: str
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True)
class Decision:
    status: Mapping[str, Any] | None = None
    """The whole new status (wire form, camelCase), or None when nothing changes."""
    create: tuple[Mapping[str, Any] | OperationCredentials, ...] = ()
    """Manifests (wire form) to create: Jobs, plans, snapshot ConfigMaps, operation Secrets."""
    delete: tuple[ObjectRef, ...] = ()
    lease: tuple[LeaseAction, ...] = ()
    events: tuple[Event, ...] = ()
    requeue_after: dt.timedelta | None = None
    annotations: Mapping[str, str | None] = field(default_factory=dict)
    """metadata.annotations to set on the resource (None removes one)."""

    @property
    def changes_nothing(self) -> bool:
        return self.status is None and not (
            self.create or self.delete or self.lease or self.events or self.annotations
        )
