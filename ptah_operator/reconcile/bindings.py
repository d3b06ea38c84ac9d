"""What a published plan binds, and what of it changed: one rule for both families.

A plan binds its owner (by UID), its own fingerprint, the source it was made from
(PlanSourceBinding: plan contract 1 for OCI, 2 for ConfigMap and Git, Decision 21), the spec
fields its operations depend on and the execution binding (MIG-16, SCH-18, SCH-21, SCH-64).
Each family lists those it binds in a table of `Rule`s, in the order it reports them and in
its own words; `binding_changes(plan, now, rules)` gives every change (what admission would
list), and `first_change` the one a pass gives as the reason a plan went stale (`misfit`).
`plan_identity` checks that the object is still the plan status names, the same for both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ptah_operator.api.common import PlanReference
from ptah_operator.api.fingerprints import plan_fingerprint_matches
from ptah_operator.api.plans import PtahMigrationPlan, PtahSchemaPlan

BoundT = TypeVar("BoundT")


@dataclass(frozen=True)
class Rule(Generic[BoundT]):
    """One thing a plan binds: whether it differs between what the plan bound and what would
    be bound now, and the words for that change."""

    message: str
    differs: Callable[[BoundT, BoundT], bool]


def binding_changes(plan: BoundT, now: BoundT, rules: Sequence[Rule[BoundT]]) -> list[str]:
    """Every change between what the plan binds and what would be bound now, in table order."""
    return [rule.message for rule in rules if rule.differs(plan, now)]


def first_change(plan: BoundT, now: BoundT, rules: Sequence[Rule[BoundT]]) -> str | None:
    """The first change in table order, or None when nothing the plan binds moved."""
    return next((rule.message for rule in rules if rule.differs(plan, now)), None)


def plan_identity(
    plan: PtahMigrationPlan | PtahSchemaPlan | None,
    ref: PlanReference,
    owner_uid: str | None,
    owner_kind: str,
) -> str | None:
    """Why the object is no longer the plan `ref` names for its owner, or None: gone (once it
    was published), replaced under its name, its fingerprint not its own, another owner's."""
    if plan is None:
        return None if ref.uid is None else f"plan {ref.name} no longer exists"
    if ref.uid is not None and plan.metadata.uid != ref.uid:
        return f"plan {ref.name} was replaced by another object of that name"
    if plan.spec.fingerprint != ref.fingerprint or not plan_fingerprint_matches(plan.spec):
        return f"plan {ref.name} no longer has the fingerprint it was published with"
    owner = (
        plan.spec.migration_ref.uid
        if isinstance(plan, PtahMigrationPlan)
        else plan.spec.schema_ref.uid
    )
    if owner != owner_uid:
        return f"plan {ref.name} belongs to another {owner_kind}"
    return None
