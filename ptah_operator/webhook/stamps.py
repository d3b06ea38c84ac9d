"""What the mutating webhook decides, as pure functions: the approver stamp, the publication.

The mutating webhook replaces whatever a client wrote in the approver fields with the user the
API server authenticated (APR-04), so an approval can never claim to come from somebody else.
An approval that names no publication of its plan gets the one the resource's status.plan
records, when status.plan is the plan it names (APR-03, APR-12); a value the client wrote is
kept, for the validating webhook to compare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from ptah_operator.api.common import PublishedPlan, UserInfo
from ptah_operator.api.constants import Kind
from ptah_operator.api.fields import format_time


@dataclass(frozen=True)
class StampFields:
    """Where a kind records who decided and when."""

    by: str
    at: str


STAMPED_KINDS: Final[Mapping[str, StampFields]] = {
    Kind.PTAH_MIGRATION_APPROVAL.value: StampFields("approvedBy", "approvedAt"),
    Kind.PTAH_SCHEMA_APPROVAL.value: StampFields("approvedBy", "approvedAt"),
    Kind.PTAH_MIGRATION_RUN_ACKNOWLEDGMENT.value: StampFields("acknowledgedBy", "acknowledgedAt"),
}


class UnauthenticatedError(ValueError):
    """The admission request names no user to record."""


def user_from_request(user_info: Mapping[str, Any] | None) -> UserInfo:
    """The authenticated user of an AdmissionReview request (`request.userInfo`)."""
    info = user_info or {}
    username = info.get("username")
    if not isinstance(username, str) or not username:
        raise UnauthenticatedError("the request carries no authenticated user to record")
    uid = info.get("uid")
    groups = info.get("groups") or []
    return UserInfo(
        username=username,
        uid=uid if isinstance(uid, str) and uid else None,
        groups=[g for g in groups if isinstance(g, str) and g],
    )


@dataclass(frozen=True)
class Stamp:
    """The JSONPatch that records the decider, and warnings about what it overwrote."""

    patch: list[dict[str, Any]]
    warnings: list[str]


def stamp(kind: str, obj: Mapping[str, Any], user: UserInfo, now: datetime) -> Stamp:
    """Set `spec.<by>` to `user` and `spec.<at>` to `now`, replacing anything the client sent.

    JSONPatch `add` on an existing member replaces it, so one op covers both cases. An object
    without a spec gets no patch: the CRD's schema refuses it right after.
    """
    fields = STAMPED_KINDS.get(kind)
    spec = obj.get("spec")
    if fields is None or not isinstance(spec, Mapping):
        return Stamp([], [])
    user_value = user.model_dump(mode="json", by_alias=True, exclude_none=True)
    warnings: list[str] = []
    supplied = spec.get(fields.by)
    if supplied is not None and supplied != user_value:
        warnings.append(
            f"spec.{fields.by} was replaced: admission records the authenticated user "
            f"{user.username}"
        )
    if spec.get(fields.at) is not None:
        warnings.append(f"spec.{fields.at} was replaced with the time of admission")
    patch: list[dict[str, Any]] = [
        {"op": "add", "path": f"/spec/{fields.by}", "value": user_value},
        {"op": "add", "path": f"/spec/{fields.at}", "value": format_time(now)},
    ]
    return Stamp(patch, warnings)


PLAN_OWNER_FIELDS: Final[Mapping[str, str]] = {
    Kind.PTAH_MIGRATION_APPROVAL.value: "migrationRef",
    Kind.PTAH_SCHEMA_APPROVAL.value: "schemaRef",
}
"""Where an approval of each kind names the resource whose status.plan it approves."""


def publication_patch(
    obj: Mapping[str, Any], current: PublishedPlan | None
) -> list[dict[str, Any]]:
    """Set `spec.planOperationID` to status.plan's publication when the approval names none and
    status.plan is the plan it names (by name and UID); nothing otherwise."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping) or spec.get("planOperationID") is not None:
        return []
    named = spec.get("planRef")
    if (
        current is None
        or current.operation_id is None
        or not isinstance(named, Mapping)
        or named.get("name") != current.name
        or named.get("uid") != current.uid
    ):
        return []
    return [{"op": "add", "path": "/spec/planOperationID", "value": current.operation_id}]
