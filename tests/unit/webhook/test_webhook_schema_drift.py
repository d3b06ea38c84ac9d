"""Admission refuses a schema approval once the schema's status records another observation of
the database than the one its plan was computed after (APR-07: the evidence moved)."""

from __future__ import annotations

import pytest

from ptah_operator.api.approvals import PtahSchemaApprovalSpec
from ptah_operator.api.common import ObjectReference
from ptah_operator.api.schema import DriftSummary, PtahSchema, PtahSchemaStatus
from ptah_operator.webhook import validators as checks
from ptah_operator.webhook.validators import check_schema_approval, short_digest
from tests.support.migration_objects import d
from tests.support.schema_objects import (
    awaiting_approval,
    catalog_schema,
    schema_plan,
    schema_plan_spec,
)

NS = "application"
S_REF = ObjectReference(name="catalog", uid="s-uid-1")


def _schema(
    planned_after: str | None, latest: str | None
) -> tuple[PtahSchema, PtahSchemaApprovalSpec]:
    p = schema_plan(schema_plan_spec(S_REF))
    status: PtahSchemaStatus = awaiting_approval(p)
    assert status.plan is not None
    status.plan = status.plan.model_copy(update={"drift_digest": planned_after})
    if latest is None:
        status.drift = None
    else:
        drift = status.drift or DriftSummary(digest=latest, dialect="postgresql", total=1)
        status.drift = drift.model_copy(update={"digest": latest})
    spec = PtahSchemaApprovalSpec(
        schema_ref=S_REF,
        plan_ref=ObjectReference(name=status.plan.name, uid=status.plan.uid or ""),
        plan_fingerprint=p.spec.fingerprint,
        plan_operation_id=status.plan.operation_id,
    )
    return catalog_schema(status=status), spec


@pytest.mark.req("APR-07")
def test_an_approval_after_the_database_structure_moved_is_refused() -> None:
    schema, spec = _schema(d("drift 1"), d("drift 3"))
    p = schema_plan(schema_plan_spec(S_REF))
    findings = check_schema_approval(spec, NS, schema, p)
    assert [f.code for f in findings] == [checks.DATABASE_MOVED]
    assert findings[0].message == (
        f"the database's structure moved since plan {p.metadata.name} was made: the plan was "
        f"computed after observation {short_digest(d('drift 1'))}, the latest is "
        f"{short_digest(d('drift 3'))}"
    )


@pytest.mark.req("APR-07")
def test_an_approval_of_a_plan_made_from_the_latest_observation_is_admitted() -> None:
    p = schema_plan(schema_plan_spec(S_REF))
    schema, spec = _schema(d("drift 1"), d("drift 1"))
    assert check_schema_approval(spec, NS, schema, p) == []
    schema, spec = _schema(None, d("drift 3"))
    assert check_schema_approval(spec, NS, schema, p) == [], "an older status is not compared"
    schema, spec = _schema(d("drift 1"), None)
    assert [f.code for f in check_schema_approval(spec, NS, schema, p)] == [checks.DATABASE_MOVED]
