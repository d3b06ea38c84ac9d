"""The table of kinds, and the conversion between models and the manifests the API server speaks.

Everything that needs a kind's plural, short names, scope or model (the CRD generator, the
controller's watches, the kubectl plugin) reads it from KINDS, so a kind is described once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from ptah_operator.api.approvals import (
    PtahMigrationApproval,
    PtahMigrationRunAcknowledgment,
    PtahSchemaApproval,
)
from ptah_operator.api.constants import Kind
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.objectmeta import Resource
from ptah_operator.api.plans import PtahMigrationPlan, PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.api.realm import PtahRealm
from ptah_operator.api.schema import PtahSchema

R = TypeVar("R", bound=Resource)


@dataclass(frozen=True)
class KindInfo:
    """How one kind is named and served."""

    kind: Kind
    plural: str
    short_names: tuple[str, ...]
    namespaced: bool
    model: type[Resource]
    has_status: bool

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"


KINDS: tuple[KindInfo, ...] = (
    KindInfo(Kind.PTAH_SCHEMA, "ptahschemas", ("psch",), True, PtahSchema, True),
    KindInfo(Kind.PTAH_MIGRATION, "ptahmigrations", ("pmig",), True, PtahMigration, True),
    KindInfo(Kind.PTAH_SCHEMA_PLAN, "ptahschemaplans", ("pschplan",), True, PtahSchemaPlan, False),
    KindInfo(
        Kind.PTAH_SCHEMA_PLAN_CHUNK,
        "ptahschemaplanchunks",
        ("pschchunk",),
        True,
        PtahSchemaPlanChunk,
        False,
    ),
    KindInfo(
        Kind.PTAH_MIGRATION_PLAN,
        "ptahmigrationplans",
        ("pmigplan",),
        True,
        PtahMigrationPlan,
        False,
    ),
    KindInfo(
        Kind.PTAH_SCHEMA_APPROVAL,
        "ptahschemaapprovals",
        ("pschappr",),
        True,
        PtahSchemaApproval,
        False,
    ),
    KindInfo(
        Kind.PTAH_MIGRATION_APPROVAL,
        "ptahmigrationapprovals",
        ("pmigappr",),
        True,
        PtahMigrationApproval,
        False,
    ),
    KindInfo(
        Kind.PTAH_MIGRATION_RUN_ACKNOWLEDGMENT,
        "ptahmigrationrunacknowledgments",
        ("pmigack",),
        True,
        PtahMigrationRunAcknowledgment,
        False,
    ),
    KindInfo(Kind.PTAH_REALM, "ptahrealms", ("prealm",), False, PtahRealm, False),
)

KIND_BY_NAME: Mapping[str, KindInfo] = {info.kind.value: info for info in KINDS}


def kind_info(kind: str | type[Resource]) -> KindInfo:
    """The table row of a kind, by its name or its model."""
    if isinstance(kind, str):
        try:
            return KIND_BY_NAME[kind]
        except KeyError:
            known = ", ".join(KIND_BY_NAME)
            raise ValueError(f"unknown kind {kind!r}; known kinds: {known}") from None
    for info in KINDS:
        if info.model is kind:
            return info
    raise ValueError(f"{kind.__name__} is not a kind of this API")


def to_manifest(model: Resource) -> dict[str, Any]:
    """A model as the API server takes it: camelCase keys, JSON values, absent fields left out."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


@overload
def from_manifest(kind: type[R], manifest: Mapping[str, Any]) -> R: ...
@overload
def from_manifest(kind: str, manifest: Mapping[str, Any]) -> Resource: ...
def from_manifest(kind: str | type[Resource], manifest: Mapping[str, Any]) -> Resource:
    """Read a manifest of the given kind (its name or its model) into its model.

    Raises pydantic.ValidationError for content the model refuses, and ValueError when the
    manifest says it is of another kind.
    """
    info = kind_info(kind)
    declared = manifest.get("kind")
    if declared is not None and declared != info.kind.value:
        raise ValueError(f"manifest is of kind {declared!r}, not {info.kind.value!r}")
    return info.model.model_validate(dict(manifest))
