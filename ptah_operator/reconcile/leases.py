"""The database-realm Lease, the rules both families share: its name and namespace, whether an
operation holds it or may take it, taking it, and giving back one that nothing records.

Taking is explicit: the pass that claims an operation asks for it (LeaseAction Acquire,
applied before the status write, decision.py). Which claim needs it, and when it is given back,
is each family's rule (migration/apply.py releases a run's Lease when its end is written and
again while lastRun names it; schema/leases.py settles it at the end of every pass), but both
ask for a release through `release`, so no pass asks twice for one.

A Lease taken but never recorded (the manager stopped between taking it and writing the claim
that names it) is given back at once by `release_orphan`: the Lease names the resource that
took it, and when no status of that resource names its holder, no claim, run or Job can exist
under it (the Job is created only after the claim), so every operation on the database would
wait for it to expire for nothing (LCK-10).
"""

from __future__ import annotations

from collections.abc import Iterable

from ptah_operator.api.names import realm_lease_name
from ptah_operator.reconcile.decision import LeaseAction, LeaseVerb
from ptah_operator.reconcile.draft import Pass


def name(draft: Pass) -> str:
    """The Lease of the spec's coordination key."""
    return realm_lease_name(draft.spec.target.coordination_key)


def namespace(draft: Pass) -> str:
    """Where the Lease lives: where it is, or the manager's namespace."""
    lease = draft.world.lease
    return lease.namespace if lease is not None else draft.world.manager_namespace


def held_by(draft: Pass, holder: str) -> bool:
    lease = draft.world.lease
    return lease is not None and lease.holder == holder and not lease.expired


def free_for(draft: Pass, holder: str) -> bool:
    """Whether `holder` holds the Lease or may take it now."""
    lease = draft.world.lease
    return lease is None or lease.holder in (None, holder) or lease.expired


def take(draft: Pass, holder: str) -> None:
    """Ask for the Lease under `holder`, unless it already holds it."""
    if held_by(draft, holder):
        return
    draft.leases.append(LeaseAction(LeaseVerb.ACQUIRE, name(draft), namespace(draft), holder))


def release_held(draft: Pass) -> bool:
    """Ask to release the Lease from its holder now, unless this pass already asks; False when
    no one holds it or the release was already asked for."""
    lease = draft.world.lease
    if lease is None or lease.holder is None:
        return False
    if any(a.verb is LeaseVerb.RELEASE and a.holder == lease.holder for a in draft.leases):
        return False
    draft.leases.append(LeaseAction(LeaseVerb.RELEASE, lease.name, lease.namespace, lease.holder))
    return True


def release_orphan(draft: Pass, recorded: Iterable[str | None]) -> bool:
    """Give back a Lease this resource took (its holder UID) whose holder none of the
    operation ids `recorded` (every one the stored and the new status name) is; True when the
    release is asked for."""
    lease = draft.world.lease
    if lease is None or lease.holder is None or lease.expired:
        return False
    if lease.holder_uid != draft.resource.metadata.uid:
        return False
    if lease.holder in set(recorded):
        return False
    return release_held(draft)
