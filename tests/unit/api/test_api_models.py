"""The models: what they accept, what they refuse and how they say so, and the manifest round trip."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from ptah_operator.api import (
    PtahMigration,
    PtahMigrationApproval,
    PtahMigrationRunAcknowledgment,
    PtahRealm,
    PtahSchema,
    from_manifest,
    to_manifest,
)
from ptah_operator.api.common import (
    ActiveOperation,
    Condition,
    PlanReference,
    SourceRecord,
    UserInfo,
)
from ptah_operator.api.constants import (
    API_VERSION,
    GROUP,
    VERSION,
    ApplyPolicy,
    ConditionStatus,
    ConditionType,
    Engine,
    JournalEntryType,
    JournalOutcome,
    MigrationPhase,
    OperationType,
    Reason,
    RunOutcome,
    SourceKind,
)
from ptah_operator.api.fields import parse_duration
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.api.migration import (
    History,
    LastRun,
    PtahMigrationStatus,
    Revision,
    RunFailure,
    UnresolvedRun,
)
from ptah_operator.api.plans import PlannedVersion, split_plan_text

NOW = datetime(2026, 8, 30, 12, 0, tzinfo=UTC)

# The minimal resource of seed 002, verbatim.
SEED_MIGRATION: dict[str, Any] = {
    "apiVersion": "operator.ptah.run/v1alpha1",
    "kind": "PtahMigration",
    "metadata": {"name": "orders", "namespace": "application"},
    "spec": {
        "target": {
            "engine": "PostgreSQL",
            "coordinationKey": "prod/application/orders-primary",
            "urlFrom": {"name": "orders-database", "key": "url"},
        },
        "artifact": {
            "ociRef": "oci://registry.example/acme/orders-migrations:stable",
            "verificationPolicyFrom": {"name": "orders-verification", "key": "policy.yaml"},
        },
    },
}


def _migration(**spec_changes: Any) -> dict[str, Any]:
    manifest = copy.deepcopy(SEED_MIGRATION)
    manifest["spec"].update(spec_changes)
    return manifest


def _refusal(manifest: dict[str, Any], kind: str = "PtahMigration") -> str:
    with pytest.raises(ValidationError) as caught:
        from_manifest(kind, manifest)
    return str(caught.value)


def test_group_and_version() -> None:
    assert API_VERSION == f"{GROUP}/{VERSION}" == "operator.ptah.run/v1alpha1"
    assert PtahRealm.model_validate(
        {"spec": {"engine": "MySQL", "namespaces": ["a"]}}
    ).api_version == (API_VERSION)


@pytest.mark.req("MIG-66", "SRC-OCI-05", "LCK-01")
def test_the_seed_migration_parses() -> None:
    migration = from_manifest(PtahMigration, SEED_MIGRATION)
    assert migration.metadata.name == "orders"
    assert migration.spec.target.engine is Engine.POSTGRESQL
    assert migration.spec.target.coordination_key == "prod/application/orders-primary"
    assert migration.spec.target.url_from.name == "orders-database"
    assert migration.spec.target.url_from.key == "url"
    assert migration.spec.artifact is not None
    assert migration.spec.artifact.oci_ref.startswith("oci://")
    assert migration.spec.artifact.verification_policy_from.key == "policy.yaml"
    assert migration.spec.source_kind is SourceKind.ARTIFACT


@pytest.mark.req("APR-01", "MIG-54", "MIG-58", "LCK-02")
def test_defaults() -> None:
    spec = from_manifest(PtahMigration, SEED_MIGRATION).spec
    assert spec.policy.apply is ApplyPolicy.ON_APPROVAL
    assert spec.policy.transaction_mode is None
    assert spec.policy.revision_table.name == "schema_migrations"
    assert spec.target.shared_realm is False
    assert spec.interval == "10m"
    assert spec.execution.failure_retry_interval == "1m"
    assert spec.suspend is False
    assert (
        "transactionMode"
        not in to_manifest(from_manifest(PtahMigration, SEED_MIGRATION))["spec"]["policy"]
    )


def test_an_unsupported_engine_is_refused_readably() -> None:
    manifest = _migration()
    manifest["spec"]["target"]["engine"] = "oracle"
    message = _refusal(manifest)
    assert "spec.target.engine" in message
    assert "'PostgreSQL', 'MySQL' or 'MariaDB'" in message


@pytest.mark.parametrize(
    ("sources", "found"),
    [
        ({"configMap": {"name": "orders-migrations"}}, "artifact, configMap"),
        ({}, None),
    ],
)
def test_exactly_one_source(sources: dict[str, Any], found: str | None) -> None:
    manifest = _migration(**sources)
    if found is None:
        del manifest["spec"]["artifact"]
        found = "none"
    message = _refusal(manifest)
    assert "exactly one source must be set" in message
    assert f"found: {found}" in message


def test_each_source_alone_is_accepted() -> None:
    git = _migration(git={"repository": "https://git.example/acme/orders.git", "ref": "main"})
    del git["spec"]["artifact"]
    assert from_manifest(PtahMigration, git).spec.source_kind is SourceKind.GIT
    cm = _migration(configMap={"name": "orders-migrations", "keys": ["0001_init.sql"]})
    del cm["spec"]["artifact"]
    parsed = from_manifest(PtahMigration, cm).spec
    assert parsed.source_kind is SourceKind.CONFIG_MAP
    assert parsed.config_map is not None
    assert parsed.config_map.keys == ["0001_init.sql"]


def test_unknown_fields_are_refused() -> None:
    manifest = _migration(transactionMode="none")  # belongs under spec.policy
    message = _refusal(manifest)
    assert "spec.transactionMode" in message
    assert "Extra inputs are not permitted" in message


@pytest.mark.parametrize(
    ("path", "value", "fragment"),
    [
        (("artifact", "ociRef"), "https://registry.example/x", "^oci://"),
        (("interval",), "ten minutes", "spec.interval"),
        (("policy",), {"apply": "Sometimes"}, "'OnApproval', 'Always' or 'Never'"),
        (("policy",), {"transactionMode": "statement"}, "'file' or 'none'"),
        (("target", "urlFrom"), {"name": "Not_A_Name", "key": "url"}, "spec.target.urlFrom.name"),
    ],
)
def test_bad_values_are_refused_readably(path: tuple[str, ...], value: Any, fragment: str) -> None:
    manifest = _migration()
    node = manifest["spec"]
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    assert fragment in _refusal(manifest)


def test_durations() -> None:
    assert parse_duration("10m") == timedelta(minutes=10)
    assert parse_duration("1h30m") == timedelta(hours=1, minutes=30)
    assert parse_duration("1.5s") == timedelta(seconds=1.5)
    assert parse_duration("250ms") == timedelta(milliseconds=250)
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration("10")


def test_names_and_aliases_both_construct_the_same_model() -> None:
    by_alias = UserInfo.model_validate({"username": "ada", "uid": "1", "groups": ["dba"]})
    by_name = UserInfo(username="ada", uid="1", groups=["dba"])
    assert by_alias == by_name
    run = UnresolvedRun.model_validate(
        {"operationID": "apply-1", "outcome": "Partial", "plan": {"name": "orders-1"}}
    )
    assert run.operation_id == "apply-1"
    assert run.model_dump(by_alias=True, exclude_none=True)["operationID"] == "apply-1"


@pytest.mark.req("RUN-01")
def test_run_outcomes() -> None:
    assert [o.value for o in RunOutcome] == ["UpToDate", "Applied", "Failed", "Partial", "Unknown"]
    base = {"operationID": "apply-1", "plan": {"name": "orders-1"}}
    for outcome in RunOutcome:
        assert LastRun.model_validate({**base, "outcome": outcome.value}).outcome is outcome
    with pytest.raises(ValidationError, match="outcome"):
        LastRun.model_validate({**base, "outcome": "Succeeded"})


@pytest.mark.req("RUN-05", "MIG-46")
def test_an_unresolved_run_is_partial_or_unknown() -> None:
    base = {"operationID": "apply-1", "plan": {"name": "orders-1"}}
    for outcome in ("Partial", "Unknown"):
        UnresolvedRun.model_validate({**base, "outcome": outcome})
    with pytest.raises(ValidationError):
        UnresolvedRun.model_validate({**base, "outcome": "Failed"})


@pytest.mark.req("RUN-17", "PRIV-05")
def test_a_run_failure_carries_positions_and_codes_only() -> None:
    assert set(RunFailure.model_fields) == {"version", "statement_index", "sqlstate", "mysql_errno"}
    failure = RunFailure.model_validate(
        {"version": "20260830", "statementIndex": 2, "sqlstate": "23505", "mysqlErrno": 1062}
    )
    assert failure.mysql_errno == 1062
    with pytest.raises(ValidationError):
        RunFailure.model_validate({"version": "1", "sqlstate": "duplicate key"})


@pytest.mark.req("RUN-08", "RUN-09", "RUN-13")
def test_last_run_carries_the_claims_identity() -> None:
    aliases = {field.alias for field in LastRun.model_fields.values()}
    assert {
        "operationID",
        "outcome",
        "plan",
        "approval",
        "approver",
        "job",
        "authorization",
        "source",
        "targetIdentityDigest",
        "executionBinding",
        "verification",
        "failure",
        "appliedVersions",
        "startedAt",
        "finishedAt",
    } <= aliases


@pytest.mark.req("PATH-22")
def test_execution_millis_stays_absent_when_unknown() -> None:
    row = Revision.model_validate({"version": "1", "state": "Applied", "checksum": "abc"})
    assert row.execution_millis is None
    assert "executionMillis" not in row.model_dump(by_alias=True, exclude_none=True)
    timed = Revision.model_validate({"version": "1", "state": "Applied", "executionMillis": 0})
    assert timed.model_dump(by_alias=True, exclude_none=True)["executionMillis"] == 0


@pytest.mark.req("MIG-35", "MIG-37", "MIG-38", "MIG-39", "MIG-59")
def test_history_fields() -> None:
    history = History.model_validate(
        {
            "verdict": "Ahead",
            "currentVersion": "20260901",
            "checkpointVersion": "20260101",
            "appliedCount": 12,
            "pendingCount": 0,
            "modifiedVersions": ["20260201"],
            "outOfOrderVersions": ["20260115"],
            "ahead": {"databaseVersion": "20260901", "artifactVersion": "20260830"},
            "dirty": {"version": "20260901"},
            "readAt": "2026-08-30T12:00:00Z",
        }
    )
    assert history.ahead is not None
    assert history.ahead.database_version == "20260901"
    assert history.checkpoint_version == "20260101"
    with pytest.raises(ValidationError):
        History.model_validate({"pendingVersions": [str(i) for i in range(101)]})
    with pytest.raises(ValidationError):
        History.model_validate(
            {"revisions": [{"version": str(i), "state": "Applied"} for i in range(21)]}
        )


@pytest.mark.req("JNL-02")
def test_journal_entry_types() -> None:
    assert [t.value for t in JournalEntryType] == [
        "PlanPublished",
        "ApprovalAccepted",
        "ApplyFinished",
        "Verified",
        "RunFinished",
        "RunAcknowledged",
        "OperationFailed",
    ]
    with pytest.raises(ValidationError):
        JournalEntry.model_validate({"type": "Something", "time": "2026-08-30T12:00:00Z"})


@pytest.mark.req("JNL-21")
def test_the_journal_holds_at_most_64_entries() -> None:
    entry = {"type": "OperationFailed", "time": "2026-08-30T12:00:00Z", "count": 1}
    Journal.model_validate({"entries": [entry] * 64})
    with pytest.raises(ValidationError, match="at most 64"):
        Journal.model_validate({"entries": [entry] * 65})


@pytest.mark.req("JNL-04", "JNL-05", "JNL-12", "JNL-16", "JNL-17", "JNL-22")
def test_journal_entries_carry_the_fields_the_seeds_give() -> None:
    aliases = {field.alias for field in JournalEntry.model_fields.values()}
    assert {
        "type",
        "time",
        "planName",
        "planUID",
        "planFingerprint",
        "approvalName",
        "approvalUID",
        "approver",
        "jobName",
        "jobUID",
        "operationID",
        "authorization",
        "outcome",
        "reason",
        "count",
        "approvalRequired",
        "replaced",
        "versionsApplied",
        "stoppedAt",
    } <= aliases
    assert {field.alias for field in Journal.model_fields.values()} == {"coveredSince", "entries"}
    entry = JournalEntry.model_validate(
        {
            "type": "RunFinished",
            "time": "2026-08-30T12:00:00Z",
            "operationID": "apply-1",
            "planName": "orders-1",
            "planUID": "u-1",
            "approvalUID": "u-2",
            "authorization": "Approval",
            "outcome": "Partial",
            "versionsApplied": 1,
            "stoppedAt": "20260830",
        }
    )
    assert entry.model_dump(by_alias=True, exclude_none=True)["planUID"] == "u-1"
    with pytest.raises(ValidationError):
        JournalEntry.model_validate({**entry.model_dump(by_alias=True), "authorization": "Admin"})


@pytest.mark.req("PRIV-04")
def test_journal_reasons_are_reasons_not_messages() -> None:
    with pytest.raises(ValidationError):
        JournalEntry.model_validate(
            {"type": "OperationFailed", "time": NOW, "reason": "the job failed: ERROR at line 1"}
        )


@pytest.mark.req("PRIV-02")
def test_a_migration_plan_holds_no_sql() -> None:
    assert set(PlannedVersion.model_fields) == {"version", "description", "checksum"}
    with pytest.raises(ValidationError):
        PlannedVersion.model_validate({"version": "1", "checksum": "c", "sql": "DROP TABLE x"})


@pytest.mark.req("APR-02")
def test_a_migration_approval_names_the_migration_the_plan_and_its_fingerprint() -> None:
    approval = from_manifest(
        PtahMigrationApproval,
        {
            "apiVersion": API_VERSION,
            "kind": "PtahMigrationApproval",
            "metadata": {"name": "orders-to-20260830", "namespace": "application"},
            "spec": {
                "migrationRef": {"name": "orders", "uid": "m-1"},
                "planRef": {"name": "orders-1", "uid": "p-1"},
                "planFingerprint": "sha256:" + "a" * 64,
            },
        },
    )
    assert approval.spec.plan_ref.uid == "p-1"
    assert approval.spec.approved_by is None
    with pytest.raises(ValidationError, match="planFingerprint"):
        PtahMigrationApproval.model_validate(
            {
                "spec": {
                    "migrationRef": {"name": "orders", "uid": "m-1"},
                    "planRef": {"name": "orders-1", "uid": "p-1"},
                    "planFingerprint": "not-a-digest",
                }
            }
        )
    with pytest.raises(ValidationError, match="uid"):
        PtahMigrationApproval.model_validate(
            {
                "spec": {
                    "migrationRef": {"name": "orders"},
                    "planRef": {"name": "orders-1", "uid": "p-1"},
                    "planFingerprint": "sha256:" + "a" * 64,
                }
            }
        )


@pytest.mark.req("RUN-06")
def test_an_acknowledgment_names_the_run() -> None:
    spec = {
        "migrationRef": {"name": "orders", "uid": "m-1"},
        "operationID": "apply-1",
        "planRef": {"name": "orders-1", "uid": "p-1"},
        "jobRef": {"name": "ptah-apply-1", "uid": "j-1"},
        "outcome": "Unknown",
        "acknowledgedBy": {"username": "ada", "groups": ["dba"]},
        "acknowledgedAt": "2026-08-30T12:00:00Z",
    }
    ack = PtahMigrationRunAcknowledgment.model_validate({"spec": spec})
    assert ack.spec.acknowledged_by is not None
    assert ack.spec.acknowledged_by.username == "ada"
    with pytest.raises(ValidationError):
        PtahMigrationRunAcknowledgment.model_validate({"spec": {**spec, "outcome": "Applied"}})


@pytest.mark.req("LCK-04")
def test_realm_spec() -> None:
    realm = PtahRealm.model_validate(
        {"spec": {"engine": "PostgreSQL", "namespaces": ["application"], "sharing": "Shared"}}
    )
    assert realm.spec.namespaces == ["application"]
    assert PtahRealm.model_validate(
        {"spec": {"engine": "MySQL", "namespaces": ["a"]}}
    ).spec.sharing.value == ("Exclusive")
    with pytest.raises(ValidationError):
        PtahRealm.model_validate({"spec": {"engine": "MySQL", "namespaces": []}})
    with pytest.raises(ValidationError):
        PtahRealm.model_validate(
            {"spec": {"engine": "MySQL", "namespaces": [f"n{i}" for i in range(257)]}}
        )


def test_conditions_follow_metav1() -> None:
    condition = Condition(
        type=ConditionType.READY,
        status=ConditionStatus.FALSE,
        reason=Reason.APPLY_DISABLED,
        last_transition_time=NOW,
    )
    dumped = condition.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped == {
        "type": "Ready",
        "status": "False",
        "reason": "ApplyDisabled",
        "lastTransitionTime": "2026-08-30T12:00:00Z",
        "message": "",
    }
    with pytest.raises(ValidationError):
        Condition.model_validate({**dumped, "reason": "has spaces"})
    with pytest.raises(ValidationError, match="timezone"):
        Condition.model_validate({**dumped, "lastTransitionTime": "2026-08-30T12:00:00"})


def test_from_manifest_refuses_another_kind_and_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="not 'PtahSchema'"):
        from_manifest("PtahSchema", SEED_MIGRATION)
    with pytest.raises(ValueError, match="unknown kind 'PtahThing'"):
        from_manifest("PtahThing", SEED_MIGRATION)
    assert isinstance(from_manifest("PtahMigration", SEED_MIGRATION), PtahMigration)


def test_metadata_keeps_what_the_model_does_not_name() -> None:
    manifest = copy.deepcopy(SEED_MIGRATION)
    manifest["metadata"].update(
        {
            "uid": "m-1",
            "generation": 3,
            "resourceVersion": "42",
            "creationTimestamp": "2026-08-30T12:00:00Z",
            "annotations": {"operator.ptah.run/read-requested-at": "2026-08-30T12:00:00Z"},
            "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
        }
    )
    migration = from_manifest(PtahMigration, manifest)
    assert migration.metadata.generation == 3
    assert migration.metadata.annotation("operator.ptah.run/read-requested-at") is not None
    assert migration.metadata.label("anything") is None
    out = to_manifest(migration)
    assert out["metadata"]["managedFields"] == [{"manager": "kubectl", "operation": "Apply"}]
    assert "labels" not in out["metadata"]
    assert "finalizers" not in out["metadata"]


def _full_migration_status() -> PtahMigrationStatus:
    digest = "sha256:" + "b" * 64
    plan = PlanReference(name="orders-1", uid="p-1", fingerprint=digest)
    return PtahMigrationStatus(
        observed_generation=2,
        phase=MigrationPhase.BLOCKED,
        conditions=[
            Condition(
                type=ConditionType.READY,
                status=ConditionStatus.FALSE,
                reason=Reason.APPLY_OUTCOME_UNKNOWN,
                last_transition_time=NOW,
            )
        ],
        active_operation=ActiveOperation(
            operation_id="history-2",
            type=OperationType.HISTORY,
            job_name="ptah-history-2",
            started_at=NOW,
            source=SourceRecord(kind=SourceKind.ARTIFACT, oci_digest=digest),
        ),
        plan=plan,
        history=History(current_version="20260815", pending_count=1, read_at=NOW),
        last_run=LastRun(
            operation_id="apply-1",
            outcome=RunOutcome.PARTIAL,
            plan=plan,
            failure=RunFailure(version="20260830", statement_index=1, sqlstate="42P07"),
        ),
        unresolved_run=UnresolvedRun(
            operation_id="apply-1", outcome=RunOutcome.PARTIAL, plan=plan, finished_at=NOW
        ),
        journal=Journal(
            covered_since=NOW - timedelta(days=1),
            entries=[
                JournalEntry(
                    type=JournalEntryType.RUN_FINISHED,
                    time=NOW,
                    operation_id="apply-1",
                    outcome=JournalOutcome.PARTIAL,
                )
            ],
        ),
        last_read_request="sha256:" + "c" * 64,
        next_reconciliation_time=NOW + timedelta(minutes=10),
    )


def test_status_round_trips_through_a_manifest() -> None:
    migration = from_manifest(PtahMigration, SEED_MIGRATION)
    migration.status = _full_migration_status()
    manifest = to_manifest(migration)
    assert manifest["status"]["lastRun"]["failure"] == {
        "version": "20260830",
        "statementIndex": 1,
        "sqlstate": "42P07",
    }
    assert manifest["status"]["unresolvedRun"]["operationID"] == "apply-1"
    again = from_manifest(PtahMigration, manifest)
    assert again == migration
    assert again.status is not None
    assert again.status.condition("Ready") is not None
    assert again.status.condition("Progressing") is None


def test_every_example_kind_round_trips_with_defaults_filled() -> None:
    schema = from_manifest(
        PtahSchema,
        {
            "kind": "PtahSchema",
            "metadata": {"name": "catalog", "namespace": "application"},
            "spec": {
                "target": {
                    "engine": "MariaDB",
                    "coordinationKey": "k",
                    "urlFrom": {"name": "db", "key": "url"},
                },
                "git": {"repository": "git@git.example:acme/catalog.git", "ref": "v1.2.0"},
            },
        },
    )
    manifest = to_manifest(schema)
    assert manifest["apiVersion"] == API_VERSION
    assert manifest["spec"]["policy"] == {
        "apply": "OnApproval",
        "allowDestructive": False,
        "protectedTables": [],
        "lockTimeout": "30s",
        "requireDistinctApprover": False,
    }
    assert from_manifest(PtahSchema, manifest) == schema


def test_split_plan_text() -> None:
    text = "CREATE TABLE é (id int);\n" * 10
    pieces = split_plan_text(text, max_chars=7)
    assert "".join(pieces) == text
    assert all(len(piece) <= 7 for piece in pieces)
    assert split_plan_text("") == [""]
    with pytest.raises(ValueError, match="more than 64 chunks"):
        split_plan_text("x" * 65, max_chars=1)
