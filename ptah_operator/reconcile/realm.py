"""The checks every pass makes before anything else: the engine, and the database realm.

LCK-06: the engine and the realm are checked before anything else in a pass, before a read
request is answered, and a resource they refuse is Blocked with no Job:

- `UnsupportedEngine`: the runner this manager runs cannot operate the engine. The engine is
  in the spec, so this waits for an edit (no periodic check, SCH-51).
- `RealmNotAuthorized` (Decision 18): spec.target.realm names a PtahRealm that does not list
  the resource's namespace. Choices where the seeds are silent: a named realm that does not
  exist admits nobody, and a realm of another engine than the resource's does not admit it.
- `RealmConflict` (Decision 18, LCK-02, LCK-03): more than one non-suspended claimant of the
  coordination key, and not all of them set sharedRealm, or the realm is Exclusive. A
  suspended resource is not a claimant, so it neither conflicts nor is refused for one.

Realm refusals are taken again at least once a minute (SCH-50). The message counts the other
claimants and names none of them: they may live in namespaces the reader cannot see.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from ptah_operator.api.constants import Engine, Reason, Sharing
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.realm import PtahRealm
from ptah_operator.api.schema import PtahSchema
from ptah_operator.reconcile.draft import Pass
from ptah_operator.reconcile.schedule import REALM_RECHECK
from ptah_operator.reconcile.world import Claimant


@dataclass(frozen=True)
class Refusal:
    """Why the engine or the realm refuses the resource, and when to look again."""

    reason: Reason
    message: str
    recheck: dt.timedelta | None


def refusal(draft: Pass) -> Refusal | None:
    """The engine or realm refusal of the pass's resource now, from its World's census, or None
    when both admit it."""
    world = draft.world
    return refusal_of(
        draft.resource,
        claimants=world.claimants,
        realm=world.realm,
        realm_missing=world.realm_missing,
        supported_engines=world.supported_engines,
    )


def refusal_of(
    resource: PtahMigration | PtahSchema,
    *,
    claimants: Iterable[Claimant],
    realm: PtahRealm | None,
    realm_missing: bool,
    supported_engines: frozenset[Engine],
) -> Refusal | None:
    """The engine or realm refusal of any resource (a PtahMigration or a PtahSchema), given
    the census of its coordination key, or None when both admit it."""
    target = resource.spec.target
    namespace = resource.metadata.namespace or ""
    if target.engine not in supported_engines:
        return Refusal(
            Reason.UNSUPPORTED_ENGINE,
            f"engine {target.engine.value} is not supported by this operator's runner",
            None,
        )
    if target.realm is not None:
        if realm_missing or realm is None:
            return Refusal(
                Reason.REALM_NOT_AUTHORIZED,
                f"PtahRealm {target.realm} does not exist, so it admits nobody",
                REALM_RECHECK,
            )
        if namespace not in realm.spec.namespaces:
            return Refusal(
                Reason.REALM_NOT_AUTHORIZED,
                f"PtahRealm {target.realm} does not admit namespace {namespace}",
                REALM_RECHECK,
            )
        if realm.spec.engine != target.engine:
            return Refusal(
                Reason.REALM_NOT_AUTHORIZED,
                f"PtahRealm {target.realm} is a {realm.spec.engine.value} realm, "
                f"not {target.engine.value}",
                REALM_RECHECK,
            )
    if resource.spec.suspend:
        return None
    uid = resource.metadata.uid
    others = [
        c for c in claimants if not c.suspended and not (c.kind == resource.kind and c.uid == uid)
    ]
    if not others:
        return None
    exclusive = realm is not None and realm.spec.sharing == Sharing.EXCLUSIVE
    all_shared = target.shared_realm and all(c.shared_realm for c in others)
    if exclusive or not all_shared:
        rule = (
            f"PtahRealm {target.realm} is Exclusive"
            if exclusive
            else "every claimant must set spec.target.sharedRealm: true"
        )
        return Refusal(
            Reason.REALM_CONFLICT,
            f"{len(others)} other resource(s) claim the database of this coordinationKey; {rule}",
            REALM_RECHECK,
        )
    return None
