"""The API of group operator.ptah.run, version v1alpha1: pydantic models of every kind, the
vocabulary they use, and the conversion to and from manifests.

The models are the single source of truth for the resources: crds/ is generated from them
(python -m ptah_operator.api.crdgen) and a test fails when the two drift apart.
"""

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
