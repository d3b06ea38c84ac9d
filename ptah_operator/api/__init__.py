"""The API of group operator.ptah.run, version v1alpha1: pydantic models of every kind, the
vocabulary they use, and the conversion to and from manifests.

The models are the single source of truth for the resources: crds/ is generated from them
(python -m ptah_operator.api.crdgen) and a test fails when the two drift apart.

The names below are loaded on first use (PEP 562), not when the package is imported: building
every pydantic model costs about a quarter of a second, which a runner process that needs only
`api.content` (the init container of every Job) should not pay.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ptah_operator.api.approvals import (
        PtahMigrationApproval,
        PtahMigrationApprovalSpec,
        PtahMigrationRunAcknowledgment,
        PtahMigrationRunAcknowledgmentSpec,
        PtahSchemaApproval,
        PtahSchemaApprovalSpec,
    )
    from ptah_operator.api.kinds import KINDS, KindInfo, from_manifest, kind_info, to_manifest
    from ptah_operator.api.migration import PtahMigration, PtahMigrationSpec, PtahMigrationStatus
    from ptah_operator.api.objectmeta import ObjectMeta, Resource
    from ptah_operator.api.plans import (
        PtahMigrationPlan,
        PtahMigrationPlanSpec,
        PtahSchemaPlan,
        PtahSchemaPlanChunk,
        PtahSchemaPlanChunkSpec,
        PtahSchemaPlanSpec,
    )
    from ptah_operator.api.realm import PtahRealm, PtahRealmSpec
    from ptah_operator.api.schema import PtahSchema, PtahSchemaSpec, PtahSchemaStatus

_WHERE = {
    "approvals": (
        "PtahMigrationApproval",
        "PtahMigrationApprovalSpec",
        "PtahMigrationRunAcknowledgment",
        "PtahMigrationRunAcknowledgmentSpec",
        "PtahSchemaApproval",
        "PtahSchemaApprovalSpec",
    ),
    "kinds": ("KINDS", "KindInfo", "from_manifest", "kind_info", "to_manifest"),
    "migration": ("PtahMigration", "PtahMigrationSpec", "PtahMigrationStatus"),
    "objectmeta": ("ObjectMeta", "Resource"),
    "plans": (
        "PtahMigrationPlan",
        "PtahMigrationPlanSpec",
        "PtahSchemaPlan",
        "PtahSchemaPlanChunk",
        "PtahSchemaPlanChunkSpec",
        "PtahSchemaPlanSpec",
    ),
    "realm": ("PtahRealm", "PtahRealmSpec"),
    "schema": ("PtahSchema", "PtahSchemaSpec", "PtahSchemaStatus"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "KINDS",
    "KindInfo",
    "ObjectMeta",
    "PtahMigration",
    "PtahMigrationApproval",
    "PtahMigrationApprovalSpec",
    "PtahMigrationPlan",
    "PtahMigrationPlanSpec",
    "PtahMigrationRunAcknowledgment",
    "PtahMigrationRunAcknowledgmentSpec",
    "PtahMigrationSpec",
    "PtahMigrationStatus",
    "PtahRealm",
    "PtahRealmSpec",
    "PtahSchema",
    "PtahSchemaApproval",
    "PtahSchemaApprovalSpec",
    "PtahSchemaPlan",
    "PtahSchemaPlanChunk",
    "PtahSchemaPlanChunkSpec",
    "PtahSchemaPlanSpec",
    "PtahSchemaSpec",
    "PtahSchemaStatus",
    "Resource",
    "from_manifest",
    "kind_info",
    "to_manifest",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
