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
7. `requeue`, when to look at the resource again (see `Requeue`).

What the controller then asks of its work queue, for every way a Decision can end (the style of
controller-runtime's pkg/reconcile/reconcile.go, whose four outcomes the queue mirrors):

- A step above fails with an error (an API error, a refused write): the rest of the Decision is
  not carried out and the key is retried rate-limited, whatever `requeue` says; a 409 Conflict
  is the same retry, counted as a conflict. The next pass decides again from what then exists.
- A release or a create answered by "not now" (the Lease held by another operation, a create
  the API server refused): the key comes back after a short fixed delay (the executor's
  RETRY_SOON), whatever `requeue` says.
- Every step done, `requeue` is `Requeue.after(delay)`: the key's failures are forgotten and it
  comes back after `delay` (always positive), unless a watch brings it back sooner.
- Every step done, `requeue` is `Requeue.AFTER_OWN_WRITE`: the key's failures are forgotten and
  the queue adds nothing. The pass wanted to run again at once, and counts on its own write
  (the status, an annotation, a create or a delete) coming back through a watch, which is
  sooner than any delay. A Decision that changes nothing and asks for this is never woken
  by it: the watch has nothing to report.
- Every step done, `requeue` is `Requeue.NONE`: the key's failures are forgotten and the next
  pass comes only when a watch reports a change.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

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


class RequeueKind(StrEnum):
    NONE = "None"
    AFTER_OWN_WRITE = "AfterOwnWrite"
    AFTER = "After"


@dataclass(frozen=True)
class Requeue:
    """When a pass asks to be run again, once every step of its Decision is done.

    - `Requeue.NONE`: not by itself; the next change comes through a watch.
    - `Requeue.AFTER_OWN_WRITE`: at once, through the watch event of what this Decision writes;
      the controller adds nothing to the queue (a zero delay means this, never "now").
    - `Requeue.after(delay)`: after `delay`, which is positive; a watch may come sooner.
    """

    kind: RequeueKind
    delay: dt.timedelta | None = None
    """The delay of an AFTER requeue; None for the other two."""

    NONE: ClassVar[Requeue]
    AFTER_OWN_WRITE: ClassVar[Requeue]

    def __post_init__(self) -> None:
        if (self.kind is RequeueKind.AFTER) != (self.delay is not None):
            raise ValueError("only an AFTER requeue has a delay")
        if self.delay is not None and self.delay <= dt.timedelta(0):
            raise ValueError("an AFTER requeue waits a positive delay")

    @classmethod
    def after(cls, delay: dt.timedelta) -> Requeue:
        return cls(RequeueKind.AFTER, delay)

    @classmethod
    def at(cls, when: dt.datetime, now: dt.datetime) -> Requeue:
        """Run again at `when`: a time not after `now` is due at once, which only the pass's
        own write brings about."""
        if when <= now:
            return cls.AFTER_OWN_WRITE
        return cls.after(when - now)


Requeue.NONE = Requeue(RequeueKind.NONE)
Requeue.AFTER_OWN_WRITE = Requeue(RequeueKind.AFTER_OWN_WRITE)


@dataclass(frozen=True)
class Decision:
    status: Mapping[str, Any] | None = None
    """The whole new status (wire form, camelCase), or None when nothing changes."""
    create: tuple[Mapping[str, Any] | OperationCredentials, ...] = ()
    """Manifests (wire form) to create: Jobs, plans, snapshot ConfigMaps, operation Secrets."""
    delete: tuple[ObjectRef, ...] = ()
    lease: tuple[LeaseAction, ...] = ()
    events: tuple[Event, ...] = ()
    requeue: Requeue = Requeue.NONE
    annotations: Mapping[str, str | None] = field(default_factory=dict)
    """metadata.annotations to set on the resource (None removes one)."""

    @property
    def requeue_after(self) -> dt.timedelta | None:
        """The delay the controller waits before the next pass, or None when it adds none
        (Requeue.NONE, or Requeue.AFTER_OWN_WRITE: the pass's own write brings it back)."""
        return self.requeue.delay

    @property
    def changes_nothing(self) -> bool:
        return self.status is None and not (
            self.create or self.delete or self.lease or self.events or self.annotations
        )
