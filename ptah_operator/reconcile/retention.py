"""How many plans and approvals a resource keeps: a bounded store, not an audit log (PATH-23).

Every plan a resource still names stays: the plan waiting (status.plan), the plan of a claim,
of the last run or Apply, of a held run, of status.applied. Beside them, the newest
`RETAINED_PLANS` others are kept for a person to look back at (`kubectl ptah plan`); older ones
are deleted (a schema plan's chunks go with it: they are owned by the plan). The journal still
names a deleted plan by name, UID and fingerprint, which is what it records.

An approval is spent once an Apply consumed it, or once the plan it names is gone. Spent
approvals beyond the newest `RETAINED_APPROVALS` are deleted; an approval a claim carries, or
one naming the plan that waits now, is never spent. Deleting consumed approvals also keeps
"one approval, one execution" from depending on how long the journal remembers the
ApprovalAccepted entry that consumed it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Protocol

RETAINED_PLANS = 5
RETAINED_APPROVALS = 5

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class _Meta(Protocol):
    @property
    def name(self) -> str | None: ...
    @property
    def uid(self) -> str | None: ...
    @property
    def creation_timestamp(self) -> dt.datetime | None: ...


class _Object(Protocol):
    @property
    def metadata(self) -> _Meta: ...


def _newest_first(objects: Iterable[_Object]) -> list[_Object]:
    return sorted(
        objects,
        key=lambda o: (o.metadata.creation_timestamp or _EPOCH, o.metadata.name or ""),
        reverse=True,
    )


def plans_to_delete(plans: Mapping[str, _Object], named: set[str]) -> list[str]:
    """Names of the plans beyond what the resource names and the newest few others."""
    others = _newest_first(p for name, p in plans.items() if name not in named)
    return sorted(str(p.metadata.name) for p in others[RETAINED_PLANS:])


def approvals_to_delete(
    approvals: Iterable[_Object],
    *,
    plan_of: Mapping[str, str],
    live_plans: set[str],
    consumed: set[str],
    protected: set[str],
) -> list[str]:
    """Names of the spent approvals beyond the newest few.

    `plan_of` maps an approval's UID to the plan name it names; `protected` holds the UIDs a
    claim carries and those naming the plan that waits now."""
    spent = [
        a
        for a in approvals
        if (uid := a.metadata.uid) is not None
        and uid not in protected
        and (uid in consumed or plan_of.get(uid) not in live_plans)
    ]
    return sorted(str(a.metadata.name) for a in _newest_first(spent)[RETAINED_APPROVALS:])
