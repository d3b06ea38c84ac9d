"""PtahRealm: a cluster-scoped statement of which namespaces may claim a database realm.

A resource names a realm with spec.target.realm; a realm whose namespaces do not list the
resource's namespace blocks it with RealmNotAuthorized, and sharing: Exclusive admits one
claimant at a time (Decision 18). The engine cannot change once set.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ptah_operator.api.constants import MAX_REALM_NAMESPACES, Engine, Sharing
from ptah_operator.api.fields import ApiModel, LabelName
from ptah_operator.api.objectmeta import Resource


class PtahRealmSpec(ApiModel):
    """Who may claim the database realm."""

    engine: Engine = Field(
        json_schema_extra={
            "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "engine is immutable"}
            ]
        }
    )
    """The engine of the realm's database. Immutable."""
    namespaces: list[LabelName] = Field(
        min_length=1,
        max_length=MAX_REALM_NAMESPACES,
        json_schema_extra={"x-kubernetes-list-type": "set"},
    )
    """Namespaces whose resources the realm admits."""
    sharing: Sharing = Sharing.EXCLUSIVE
    """Exclusive admits one claimant; Shared admits every claimant that sets sharedRealm."""


class PtahRealm(Resource):
    """A database realm and the namespaces it admits."""

    kind: Literal["PtahRealm"] = "PtahRealm"
    spec: PtahRealmSpec
