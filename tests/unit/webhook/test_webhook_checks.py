"""The admission decisions as pure functions: the approver stamp and every evidence check."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ptah_operator.api.approvals import (
    PtahMigrationApprovalSpec,
    PtahMigrationRunAcknowledgmentSpec,
    PtahSchemaApprovalSpec,
)
from ptah_operator.api.common import (
    JobReference,
    ObjectReference,
    PlanReference,
    SourceRecord,
    UserInfo,
)
from ptah_operator.api.constants import MigrationPhase, RunOutcome, SchemaPhase, SourceKind
from ptah_operator.api.fingerprints import (
    plan_source_binding,
    repository_path_digest,
)
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.plans import (
    PtahMigrationPlan,
    PtahSchemaPlan,
)
from ptah_operator.api.schema import PtahSchema, SchemaPlanStatus
from ptah_operator.webhook import stamps
from ptah_operator.webhook import validators as checks
from ptah_operator.webhook.stamps import stamp, user_from_request
from ptah_operator.webhook.validators import (
    Finding,
    check_migration_approval,
    check_run_acknowledgment,
    check_schema_approval,
    refusal_message,
    short_digest,
)
from tests.support.migration_objects import (
    acknowledgment_spec,
    approval_spec,
    awaiting_approval,
    config_map_record,
    d,
    executor,
    migration,
    plan,
    plan_spec,
    unresolved_run,
)
from tests.support.schema_objects import (
    awaiting_approval as schema_awaiting_approval,
)
from tests.support.schema_objects import catalog_schema, schema_plan, schema_plan_spec

NS = "application"
NOW = datetime(2026, 8, 30, 12, 30, 5, 123456, tzinfo=UTC)
M_REF = ObjectReference(name="orders", uid="m-uid-1")


def _codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings]


def _setup(
    **status_changes: object,
) -> tuple[PtahMigration, PtahMigrationPlan, PtahMigrationApprovalSpec]:
    p = plan(plan_spec(M_REF))
    status = awaiting_approval(p).model_copy(update=status_changes)
    m = migration(status=status)
    return m, p, approval_spec(m, p)


# --- the stamp ---------------------------------------------------------------------------------


@pytest.mark.req("APR-04")
def test_stamp_replaces_a_forged_approver_and_time() -> None:
    user = UserInfo(username="alice@example.com", uid="u-1", groups=["approvers"])
    obj = {
        "spec": {
            "approvedBy": {"username": "mallory", "groups": ["system:masters"]},
            "approvedAt": "2020-01-01T00:00:00Z",
        }
    }
    result = stamp("PtahMigrationApproval", obj, user, NOW)
    assert result.patch == [
        {
            "op": "add",
            "path": "/spec/approvedBy",
            "value": {"username": "alice@example.com", "uid": "u-1", "groups": ["approvers"]},
        },
        {"op": "add", "path": "/spec/approvedAt", "value": "2026-08-30T12:30:05Z"},
    ]
    assert len(result.warnings) == 2
    assert "alice@example.com" in result.warnings[0]


@pytest.mark.req("APR-04")
def test_stamp_on_a_clean_approval_warns_of_nothing() -> None:
    result = stamp("PtahSchemaApproval", {"spec": {}}, UserInfo(username="bob"), NOW)
    assert result.warnings == []
    assert result.patch[0]["value"] == {"username": "bob", "groups": []}


@pytest.mark.req("RUN-06")
def test_stamp_of_an_acknowledgment_uses_its_own_fields() -> None:
    result = stamp("PtahMigrationRunAcknowledgment", {"spec": {}}, UserInfo(username="c"), NOW)
    assert [op["path"] for op in result.patch] == ["/spec/acknowledgedBy", "/spec/acknowledgedAt"]


def test_stamp_leaves_other_kinds_and_specless_objects_alone() -> None:
    user = UserInfo(username="c")
    assert stamp("PtahMigration", {"spec": {}}, user, NOW).patch == []
    assert stamp("PtahMigrationApproval", {}, user, NOW).patch == []


def test_user_from_request() -> None:
    user = user_from_request({"username": "alice", "uid": "", "groups": ["a", "", "b"]})
    assert user == UserInfo(username="alice", groups=["a", "b"])
    with pytest.raises(stamps.UnauthenticatedError):
        user_from_request({"groups": ["a"]})
    with pytest.raises(stamps.UnauthenticatedError):
        user_from_request(None)


# --- migration approvals -----------------------------------------------------------------------


@pytest.mark.req("APR-02")
def test_an_approval_of_the_current_plan_is_admitted() -> None:
    m, p, a = _setup()
    assert check_migration_approval(a, NS, m, p) == []


def test_a_migration_that_does_not_exist() -> None:
    _, p, a = _setup()
    findings = check_migration_approval(a, NS, None, p)
    assert _codes(findings) == [checks.OBJECT_NOT_FOUND]
    assert findings[0].message == "PtahMigration orders does not exist in application"


@pytest.mark.req("APR-02", "APR-15")
def test_a_recreated_migration_is_not_the_one_named() -> None:
    p = plan(plan_spec(M_REF))
    m = migration(uid="m-uid-2", status=awaiting_approval(p))
    a = approval_spec(migration(), p)
    findings = check_migration_approval(a, NS, m, p)
    assert _codes(findings) == [checks.OBJECT_REPLACED]
    assert "re-created" in findings[0].message


@pytest.mark.req("APR-10")
@pytest.mark.parametrize(
    "phase", [MigrationPhase.APPLYING, MigrationPhase.IN_SYNC, MigrationPhase.PLANNING, None]
)
def test_a_migration_not_waiting_for_a_decision(phase: MigrationPhase | None) -> None:
    m, p, a = _setup(phase=phase)
    findings = check_migration_approval(a, NS, m, p)
    assert _codes(findings) == [checks.NOT_AWAITING_APPROVAL]
    expected = phase.value if phase else "not set yet"
    assert findings[0].message == (
        f"migration orders is not waiting for a decision: its phase is {expected}, "
        "not AwaitingApproval"
    )


@pytest.mark.req("APR-05", "APR-12")
def test_an_approval_of_a_replaced_plan() -> None:
    old = plan(plan_spec(M_REF), uid="p-old")
    new = plan(plan_spec(M_REF, history="history-2"), uid="p-new")
    m = migration(status=awaiting_approval(new))
    findings = check_migration_approval(approval_spec(m, old), NS, m, old)
    assert _codes(findings) == [checks.PLAN_REPLACED]
    assert findings[0].message == (
        f"plan {old.metadata.name} was replaced: the current plan of migration orders is "
        f"{new.metadata.name}"
    )


@pytest.mark.req("APR-05", "APR-15")
def test_a_plan_replaced_under_the_same_name() -> None:
    p = plan(plan_spec(M_REF), uid="p-old")
    status = awaiting_approval(p)
    assert status.plan is not None
    status.plan = status.plan.model_copy(update={"uid": "p-new"})
    m = migration(status=status)
    findings = check_migration_approval(approval_spec(m, p), NS, m, p)
    assert _codes(findings) == [checks.PLAN_REPLACED]
    assert "same name" in findings[0].message


@pytest.mark.req("APR-05", "APR-10")
def test_a_replaced_plan_and_a_migration_not_waiting_are_both_named() -> None:
    old = plan(plan_spec(M_REF), uid="p-old")
    new = plan(plan_spec(M_REF, history="history-2"), uid="p-new")
    m = migration(
        status=awaiting_approval(new).model_copy(update={"phase": MigrationPhase.APPLYING})
    )
    findings = check_migration_approval(approval_spec(m, old), NS, m, old)
    assert _codes(findings) == [checks.NOT_AWAITING_APPROVAL, checks.PLAN_REPLACED]


def test_a_migration_without_a_plan() -> None:
    m, p, a = _setup(plan=None)
    assert _codes(check_migration_approval(a, NS, m, p)) == [checks.NO_PLAN]


def test_a_plan_object_that_is_gone_or_recreated() -> None:
    m, p, a = _setup()
    assert _codes(check_migration_approval(a, NS, m, None)) == [checks.OBJECT_NOT_FOUND]
    recreated = p.model_copy(update={"metadata": ObjectMeta(name=p.metadata.name, uid="p-2")})
    assert _codes(check_migration_approval(a, NS, m, recreated)) == [checks.PLAN_REPLACED]


@pytest.mark.req("APR-02", "APR-03")
def test_a_fingerprint_other_than_the_plans() -> None:
    m, p, a = _setup()
    forged = a.model_copy(update={"plan_fingerprint": d("something else")})
    findings = check_migration_approval(forged, NS, m, p)
    assert _codes(findings) == [checks.FINGERPRINT_MISMATCH]
    assert findings[0].message.startswith("planFingerprint sha256:")
    assert f"is not the fingerprint of plan {p.metadata.name}" in findings[0].message


@pytest.mark.req("APR-03")
def test_a_plan_of_another_migration_conflicts() -> None:
    other = plan(plan_spec(ObjectReference(name="billing", uid="b-uid")))
    m = migration(status=awaiting_approval(other))
    a = approval_spec(m, other)
    findings = check_migration_approval(a, NS, m, other)
    assert checks.PLAN_OF_ANOTHER_RESOURCE in _codes(findings)
    assert "belongs to PtahMigration billing" in findings[0].message


@pytest.mark.req("APR-06")
def test_the_history_moved() -> None:
    p = plan(plan_spec(M_REF))
    status = awaiting_approval(p)
    assert status.history is not None
    status.history = status.history.model_copy(
        update={"fingerprint": d("history-2"), "current_version": "0000000002"}
    )
    m = migration(status=status)
    findings = check_migration_approval(approval_spec(m, p), NS, m, p)
    assert _codes(findings) == [checks.HISTORY_MOVED]
    assert findings[0].message == (
        f"the history moved since plan {p.metadata.name} was made: the plan continues reading "
        f"{short_digest(d('history-1'))}, the latest reading is {short_digest(d('history-2'))} "
        "(current version 0000000002)"
    )


@pytest.mark.req("APR-06")
def test_no_reading_of_the_history_supports_no_plan() -> None:
    m, p, a = _setup(history=None)
    assert _codes(check_migration_approval(a, NS, m, p)) == [checks.HISTORY_MOVED]


@pytest.mark.req("APR-06")
def test_another_database_was_read() -> None:
    p = plan(plan_spec(M_REF))
    status = awaiting_approval(p)
    assert status.history is not None
    status.history = status.history.model_copy(update={"target_identity_digest": d("target-2")})
    m = migration(status=status)
    findings = check_migration_approval(approval_spec(m, p), NS, m, p)
    assert _codes(findings) == [checks.TARGET_CHANGED]


@pytest.mark.req("APR-07")
def test_the_files_changed() -> None:
    m, p, a = _setup(source=config_map_record(content="files-2"))
    findings = check_migration_approval(a, NS, m, p)
    assert _codes(findings) == [checks.SOURCE_CHANGED]
    assert findings[0].message == (
        f"the source changed since plan {p.metadata.name} was made: content of the selected "
        f"files {short_digest(d('files-1'))} -> {short_digest(d('files-2'))}"
    )


@pytest.mark.req("APR-07")
def test_the_source_configmap_was_recreated() -> None:
    m, p, a = _setup(source=config_map_record(config_map_uid="cm-uid-2"))
    findings = check_migration_approval(a, NS, m, p)
    assert _codes(findings) == [checks.SOURCE_CHANGED]
    assert "source ConfigMap (re-created) cm-uid-1 -> cm-uid-2" in findings[0].message


def _artifact(digest: str = "artifact-1", policy: str = "policy-1") -> SourceRecord:
    return SourceRecord(
        kind=SourceKind.ARTIFACT,
        oci_ref="oci://registry.example/orders:stable",
        oci_digest=d(digest),
        verification_policy_digest=d(policy),
    )


def _artifact_setup(
    record: SourceRecord,
) -> tuple[PtahMigration, PtahMigrationPlan, PtahMigrationApprovalSpec]:
    spec = plan_spec(M_REF)
    spec = spec.model_copy(
        update={"plan_contract_version": 1, "source": plan_source_binding(_artifact())}
    )
    p = plan(spec)
    m = migration(status=awaiting_approval(p, source=record))
    return m, p, approval_spec(m, p)


@pytest.mark.req("APR-07")
def test_a_re_resolved_artifact() -> None:
    m, p, a = _artifact_setup(_artifact())
    assert check_migration_approval(a, NS, m, p) == []
    m, p, a = _artifact_setup(_artifact(digest="artifact-2"))
    findings = check_migration_approval(a, NS, m, p)
    assert _codes(findings) == [checks.SOURCE_CHANGED]
    assert "artifact digest (re-resolved)" in findings[0].message


@pytest.mark.req("APR-08")
def test_a_changed_verification_policy() -> None:
    m, p, a = _artifact_setup(_artifact(policy="policy-2"))
    findings = check_migration_approval(a, NS, m, p)
    assert _codes(findings) == [checks.SOURCE_CHANGED]
    assert "verification policy" in findings[0].message


@pytest.mark.req("APR-08")
def test_a_changed_source_policy() -> None:
    record = config_map_record().model_copy(update={"source_policy_digest": d("policy")})
    m, p, a = _setup(source=record)
    findings = check_migration_approval(a, NS, m, p)
    assert _codes(findings) == [checks.SOURCE_CHANGED]
    assert "source policy none -> sha256:" in findings[0].message


@pytest.mark.req("APR-09")
def test_a_rolled_out_executor() -> None:
    m, p, a = _setup(execution_binding=executor(image="runner-2"))
    findings = check_migration_approval(a, NS, m, p)
    assert _codes(findings) == [checks.EXECUTOR_CHANGED]
    message = findings[0].message
    assert message.startswith(f"the executor was rolled out since plan {p.metadata.name}")
    assert "runner image registry.example/ptah@sha256:" in message


@pytest.mark.req("APR-09")
def test_no_executor_recorded() -> None:
    m, p, a = _setup(execution_binding=None)
    assert _codes(check_migration_approval(a, NS, m, p)) == [checks.EXECUTOR_CHANGED]


def test_plan_source_binding_of_each_source_kind() -> None:
    git = SourceRecord(
        kind=SourceKind.GIT,
        content_digest=d("files"),
        repository="https://git.example/a.git",
        path="db",
        commit="a" * 40,
    )
    binding = plan_source_binding(git)
    assert binding.repository_path_digest == repository_path_digest(
        "https://git.example/a.git", "db"
    )
    assert binding.content_digest == d("files")
    assert binding.oci_digest is None
    cm = plan_source_binding(config_map_record())
    assert cm.config_map_uid == "cm-uid-1"
    assert plan_source_binding(_artifact()).oci_digest == d("artifact-1")


def test_refusal_message_names_the_kind_and_every_reason() -> None:
    message = refusal_message(
        "PtahMigrationApproval", [Finding("A", "first reason"), Finding("B", "second")]
    )
    assert message == "PtahMigrationApproval refused: first reason; second"


# --- acknowledgments ---------------------------------------------------------------------------


def _ack_setup() -> tuple[PtahMigration, PtahMigrationRunAcknowledgmentSpec]:
    p = plan(plan_spec(M_REF))
    run = unresolved_run(p)
    status = PtahMigrationStatus(phase=MigrationPhase.BLOCKED, unresolved_run=run)
    m = migration(status=status)
    return m, acknowledgment_spec(m, run)


@pytest.mark.req("RUN-06")
def test_an_acknowledgment_of_the_unresolved_run_is_admitted() -> None:
    m, ack = _ack_setup()
    assert check_run_acknowledgment(ack, NS, m) == []


@pytest.mark.req("RUN-06")
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"operation_id": "op-0000000000"}, "operation op-3f9a2c7d1e, not op-0000000000"),
        ({"job_ref": ObjectReference(name="ptah-apply-x", uid="j")}, "Job ptah-apply-3f9a2c7d1e"),
        ({"plan_ref": ObjectReference(name="other", uid="p")}, "plan orders-"),
        ({"outcome": RunOutcome.UNKNOWN}, "outcome Partial, not Unknown"),
    ],
)
def test_an_acknowledgment_of_another_run_is_refused(
    change: dict[str, object], expected: str
) -> None:
    m, ack = _ack_setup()
    findings = check_run_acknowledgment(ack.model_copy(update=change), NS, m)
    assert _codes(findings) == [checks.RUN_MISMATCH]
    assert findings[0].message.startswith(
        "the unresolved run of migration orders is not the one named: it has "
    )
    assert expected in findings[0].message


@pytest.mark.req("RUN-06")
def test_a_job_uid_the_status_does_not_record_is_not_compared() -> None:
    m, ack = _ack_setup()
    assert m.status is not None
    run = m.status.unresolved_run
    assert run is not None
    assert run.job is not None
    run.job = JobReference(name=run.job.name)
    assert check_run_acknowledgment(ack, NS, m) == []


@pytest.mark.req("RUN-06")
def test_nothing_to_acknowledge() -> None:
    m, ack = _ack_setup()
    assert m.status is not None
    m.status.unresolved_run = None
    findings = check_run_acknowledgment(ack, NS, m)
    assert _codes(findings) == [checks.NO_UNRESOLVED_RUN]
    assert check_run_acknowledgment(ack, NS, None)[0].code == checks.OBJECT_NOT_FOUND


@pytest.mark.req("RUN-06")
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"plan_ref": ObjectReference(name="orders-445fa762d9", uid="p-other")},
            "plan orders-445fa762d9 (UID p-uid-1), not orders-445fa762d9 (UID p-other)",
        ),
        (
            {"job_ref": ObjectReference(name="ptah-apply-3f9a2c7d1e", uid="j-other")},
            "Job ptah-apply-3f9a2c7d1e (UID job-uid-1), not ptah-apply-3f9a2c7d1e (UID j-other)",
        ),
    ],
)
def test_an_acknowledgment_naming_the_run_under_another_uid_is_refused(
    change: dict[str, object], expected: str
) -> None:
    # The same names, another object: a recreated plan or Job is not the run that stopped.
    m, ack = _ack_setup()
    findings = check_run_acknowledgment(ack.model_copy(update=change), NS, m)
    assert _codes(findings) == [checks.RUN_MISMATCH]
    assert findings[0].message == (
        f"the unresolved run of migration orders is not the one named: it has {expected}"
    )


@pytest.mark.req("RUN-06")
def test_a_plan_uid_the_status_does_not_record_is_not_compared_but_shown_unrecorded() -> None:
    m, ack = _ack_setup()
    assert m.status is not None
    run = m.status.unresolved_run
    assert run is not None
    run.plan = run.plan.model_copy(update={"uid": None})
    assert run.job is not None
    run.job = JobReference(name=run.job.name)
    assert check_run_acknowledgment(ack, NS, m) == []
    other = ack.model_copy(
        update={
            "plan_ref": ObjectReference(name="other", uid="p"),
            "job_ref": ObjectReference(name="ptah-apply-x", uid="j"),
        }
    )
    findings = check_run_acknowledgment(other, NS, m)
    assert findings[0].message == (
        "the unresolved run of migration orders is not the one named: it has "
        "plan orders-445fa762d9 (UID unrecorded), not other (UID p); "
        "Job ptah-apply-3f9a2c7d1e (UID unrecorded), not ptah-apply-x (UID j)"
    )


@pytest.mark.req("RUN-06")
def test_every_difference_of_the_run_is_named() -> None:
    m, ack = _ack_setup()
    other = ack.model_copy(update={"operation_id": "op-0000000000", "outcome": RunOutcome.UNKNOWN})
    findings = check_run_acknowledgment(other, NS, m)
    assert len(findings) == 1
    assert findings[0].message.endswith(
        "it has operation op-3f9a2c7d1e, not op-0000000000; outcome Partial, not Unknown"
    )


@pytest.mark.req("RUN-06")
def test_a_run_that_left_no_job_is_not_compared_by_job() -> None:
    m, ack = _ack_setup()
    assert m.status is not None
    run = m.status.unresolved_run
    assert run is not None
    run.job = None
    assert check_run_acknowledgment(ack, NS, m) == []


@pytest.mark.req("RUN-06")
def test_nothing_to_acknowledge_says_why() -> None:
    m, ack = _ack_setup()
    assert m.status is not None
    m.status.unresolved_run = None
    assert [f.message for f in check_run_acknowledgment(ack, NS, m)] == [
        "migration orders holds no unresolved run: it was settled, or never held one"
    ]
    m.status = None
    assert _codes(check_run_acknowledgment(ack, NS, m)) == [checks.NO_UNRESOLVED_RUN]
    assert [f.message for f in check_run_acknowledgment(ack, NS, None)] == [
        "PtahMigration orders does not exist in application"
    ]


@pytest.mark.req("RUN-06")
def test_an_acknowledgment_of_a_recreated_migration_is_refused() -> None:
    m, ack = _ack_setup()
    recreated = m.model_copy(update={"metadata": m.metadata.model_copy(update={"uid": "m-2"})})
    assert _codes(check_run_acknowledgment(ack, NS, recreated)) == [checks.OBJECT_REPLACED]


# --- schema approvals --------------------------------------------------------------------------


def _schema_setup(
    **status_changes: object,
) -> tuple[PtahSchema, PtahSchemaPlan, PtahSchemaApprovalSpec]:
    s_ref = ObjectReference(name="catalog", uid="s-uid-1")
    p = schema_plan(schema_plan_spec(s_ref))
    status = schema_awaiting_approval(p).model_copy(update=status_changes)
    schema = catalog_schema(status=status)
    approval = PtahSchemaApprovalSpec(
        schema_ref=s_ref,
        plan_ref=ObjectReference(name="catalog-plan", uid="sp-uid-1"),
        plan_fingerprint=p.spec.fingerprint,
        plan_operation_id=status.plan.operation_id if status.plan else None,
    )
    return schema, p, approval


@pytest.mark.req("APR-02")
def test_an_exact_schema_approval_is_admitted() -> None:
    schema, p, a = _schema_setup()
    assert check_schema_approval(a, NS, schema, p) == []


@pytest.mark.req("APR-02", "APR-05", "APR-12")
def test_schema_approvals_check_the_plan_and_its_fingerprint() -> None:
    schema, p, a = _schema_setup()
    wrong = a.model_copy(update={"plan_fingerprint": d("x")})
    assert _codes(check_schema_approval(wrong, NS, schema, p)) == [checks.FINGERPRINT_MISMATCH]
    other_uid = a.model_copy(update={"plan_ref": ObjectReference(name="catalog-plan", uid="x")})
    assert _codes(check_schema_approval(other_uid, NS, schema, p)) == [checks.PLAN_REPLACED]
    assert schema.status is not None
    schema.status.plan = SchemaPlanStatus(name="catalog-2", uid="sp-2")
    findings = check_schema_approval(a, NS, schema, p)
    assert _codes(findings) == [checks.PLAN_REPLACED]
    assert findings[0].message == (
        "plan catalog-plan was replaced: the current plan of schema catalog is catalog-2"
    )
    assert _codes(check_schema_approval(a, NS, None, p)) == [checks.OBJECT_NOT_FOUND]
    assert _codes(check_schema_approval(a, NS, schema, None)) == [checks.PLAN_REPLACED]
    gone = catalog_schema(uid="s-uid-2", status=schema_awaiting_approval(p))
    assert _codes(check_schema_approval(a, NS, gone, p)) == [checks.OBJECT_REPLACED]


@pytest.mark.req("APR-10")
def test_a_schema_approval_needs_a_schema_waiting_for_a_decision() -> None:
    schema, p, a = _schema_setup(phase=SchemaPhase.APPLYING)
    findings = check_schema_approval(a, NS, schema, p)
    assert _codes(findings) == [checks.NOT_AWAITING_APPROVAL]
    assert findings[0].message == (
        "schema catalog is not waiting for a decision: its phase is Applying, not AwaitingApproval"
    )


def test_a_schema_approval_names_a_published_plan_with_its_digest() -> None:
    schema, p, a = _schema_setup()
    assert schema.status is not None
    assert schema.status.plan is not None
    schema.status.plan = schema.status.plan.model_copy(update={"digest": d("other sql")})
    findings = check_schema_approval(a, NS, schema, p)
    assert _codes(findings) == [checks.DIGEST_MISMATCH]
    assert "not the sha256:" in findings[0].message
    schema.status.plan = schema.status.plan.model_copy(update={"digest": None, "uid": None})
    assert _codes(check_schema_approval(a, NS, schema, p)) == [checks.NOT_PUBLISHED]


@pytest.mark.parametrize(
    ("changes", "code", "text"),
    [
        (
            {"source": config_map_record(content="files-2")},
            checks.SOURCE_CHANGED,
            "content of the selected files",
        ),
        (
            {"source": config_map_record(config_map_uid="cm-uid-2")},
            checks.SOURCE_CHANGED,
            "source ConfigMap (re-created)",
        ),
        ({"execution_binding": executor("runner-2")}, checks.EXECUTOR_CHANGED, "runner image"),
    ],
)
@pytest.mark.req("APR-07", "APR-08", "APR-09")
def test_a_schema_approval_is_refused_once_a_binding_moved(
    changes: dict[str, object], code: str, text: str
) -> None:
    schema, p, a = _schema_setup(**changes)
    findings = check_schema_approval(a, NS, schema, p)
    assert _codes(findings) == [code]
    assert text in findings[0].message


def test_a_schema_approval_is_refused_once_the_database_changed() -> None:
    schema, p, a = _schema_setup()
    assert schema.status is not None
    assert schema.status.drift is not None
    schema.status.drift.target_identity_digest = d("target-2")
    findings = check_schema_approval(a, NS, schema, p)
    assert _codes(findings) == [checks.TARGET_CHANGED]
    assert findings[0].message.startswith("the database changed since plan catalog-plan was made")


def test_short_digest() -> None:
    assert short_digest(d("x")) == "sha256:" + d("x")[7:19]
    assert short_digest("cm-uid") == "cm-uid"
    assert short_digest(None) == "none"
    assert PlanReference(name="x").uid is None
    assert short_digest("registry.example/ptah@" + d("x")) == "registry.example/ptah@" + d("x")[:19]
