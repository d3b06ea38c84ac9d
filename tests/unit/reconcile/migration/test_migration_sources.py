"""Git and OCI sources through the migration lifecycle: Resolve and Verify as Jobs.

The seeds' "from the source to a plan" diagram for a migration (000): Resolving → Verifying
once the OCI digest is pinned, Resolving → Reading once the Git commit is resolved, Verifying →
Reading when the policy is satisfied and → Blocked when it refuses the artifact. Each step ends
in its own pass and the next operation starts in the next one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

import pytest

from ptah_operator.api.common import ArtifactSource, GitSource, KeyReference, LocalObjectReference
from ptah_operator.api.constants import (
    PLAN_CONTRACT_CONFIGMAP_GIT,
    PLAN_CONTRACT_OCI,
    ConditionType,
    EventReason,
    MigrationPhase,
    OperationType,
    Reason,
    SourceKind,
)
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.source_policy import parse_source_policy
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import JobPhase, PolicyFile
from tests.unit.reconcile.migration.worlds import (
    EDITED_FILES,
    FILES,
    annotated,
    claim_id,
    condition_reason,
    digest,
    edited,
    event_reasons,
    history_reported,
    in_sync,
    job_of,
    later,
    new,
    nothing_pending,
    ready_to_plan,
    report,
    status,
    status_of,
    step,
    with_approval,
    with_job,
    with_result,
)

REPOSITORY = "https://git.example/acme/billing.git"
COMMIT = "a" * 40
NEXT_COMMIT = "b" * 40
OCI_REF = "oci://registry.example/acme/billing-migrations:stable"
OCI_DIGEST = digest("manifest 1")
NEXT_OCI_DIGEST = digest("manifest 2")
POLICY = PolicyFile("billing-verification", "policy.yaml", digest("policy v1"))
NEW_POLICY = dataclasses.replace(POLICY, digest=digest("policy v2"))
CONTENT, _ = digest_of_files(FILES)
EDITED_CONTENT, _ = digest_of_files(EDITED_FILES)
MIGRATIONS_TYPE = "application/vnd.stokaro.ptah.migrations.v1"
REQUEST_ANNOTATION = "operator.ptah.run/read-requested-at"


# --- worlds ------------------------------------------------------------------------------------


def _with_spec(world: MigrationWorld, **changes: Any) -> MigrationWorld:
    spec = world.migration.spec.model_copy(update={"config_map": None, **changes})
    resource = world.migration.model_copy(update={"spec": spec})
    return dataclasses.replace(world, migration=resource, source=None)


def git_new(path: str | None = "migrations") -> MigrationWorld:
    git = GitSource(
        repository=REPOSITORY,
        ref="main",
        path=path,
        secret_ref=LocalObjectReference(name="billing-git"),
    )
    return _with_spec(new(), git=git)


def oci_new(policy: PolicyFile | None = POLICY) -> MigrationWorld:
    artifact = ArtifactSource(
        oci_ref=OCI_REF,
        verification_policy_from=KeyReference(name=POLICY.name, key=POLICY.key),
    )
    return dataclasses.replace(_with_spec(new(), artifact=artifact), verification_policy=policy)


def resolved_git(
    world: MigrationWorld, commit: str = COMMIT, content: str = CONTENT
) -> MigrationWorld:
    """The Resolve under way reported a commit and the content digest of its files."""
    git = world.migration.spec.git
    assert git is not None
    block = {
        "kind": "Git",
        "repository": git.repository,
        "ref": git.ref,
        "path": git.path,
        "commit": commit,
        "contentDigest": content,
        "fileCount": 2,
        "totalBytes": 100,
    }
    return with_result(world, report(world, OperationType.RESOLVE, target=None, resolve=block))


def resolved_oci(world: MigrationWorld, oci_digest: str = OCI_DIGEST) -> MigrationWorld:
    block = {"kind": "Artifact", "ociRef": OCI_REF, "ociDigest": oci_digest}
    return with_result(world, report(world, OperationType.RESOLVE, target=None, resolve=block))


def verified(
    world: MigrationWorld,
    *,
    accepted: bool = True,
    policy: str | None = POLICY.digest,
    artifact_type: str = MIGRATIONS_TYPE,
) -> MigrationWorld:
    block: dict[str, Any] = {
        "accepted": accepted,
        "artifactType": artifact_type,
        "policyDigest": policy,
    }
    if accepted:
        block["contentDigest"] = CONTENT
    else:
        block["refusal"] = f"artifact type {artifact_type} is not one the policy accepts"
    return with_result(world, report(world, OperationType.VERIFY, target=None, verify=block))


def failed(world: MigrationWorld, operation: OperationType, reason: str) -> MigrationWorld:
    error = {"reason": reason, "message": "the server answered 503"}
    return with_result(world, report(world, operation, target=None, error=error))


def git_reading() -> MigrationWorld:
    """Resolved, and the next pass claimed the History read."""
    return step(step(resolved_git(step(git_new()))))


def oci_reading() -> MigrationWorld:
    return step(step(verified(step(step(resolved_oci(step(oci_new())))))))


def git_in_sync() -> MigrationWorld:
    return step(history_reported(git_reading(), nothing_pending()))


def git_awaiting_approval() -> MigrationWorld:
    return step(step(history_reported(git_reading(), ready_to_plan())))


def oci_awaiting_approval() -> MigrationWorld:
    return step(step(history_reported(oci_reading(), ready_to_plan())))


def decide(world: MigrationWorld) -> tuple[MigrationWorld, Decision]:
    return world, reconcile_migration(world)


def created_job(decision: Decision) -> dict[str, Any]:
    jobs = [obj for obj in decision.create if isinstance(obj, dict) and obj["kind"] == "Job"]
    assert len(jobs) == 1, decision.create
    return jobs[0]


def containers(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    pod = job["spec"]["template"]["spec"]
    return {c["name"]: c for c in [*pod.get("initContainers", []), *pod["containers"]]}


def env_names(container: dict[str, Any]) -> set[str]:
    return {e["name"] for e in container.get("env", [])}


def mounts(container: dict[str, Any]) -> set[str]:
    return {m["name"] for m in container.get("volumeMounts", [])}


# --- from the source to a reading --------------------------------------------------------------


@pytest.mark.req("MIG-06", "SRC-GIT-01", "JOB-01")
def test_a_new_git_sourced_migration_starts_with_a_resolve_job() -> None:
    world, decision = decide(git_new())
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.RESOLVING
    claim = after.active_operation
    assert claim is not None
    assert claim.type == OperationType.RESOLVE
    job = created_job(decision)
    assert job_of(decision) == "Resolve"
    assert job["metadata"]["name"].startswith("ptah-resolve-")
    resolve = containers(job)["resolve"]
    assert "PTAH_DATABASE_URL" not in env_names(resolve)
    assert "credentials" in mounts(resolve)
    document = json.loads(next(e["value"] for e in resolve["env"] if e["name"] == "PTAH_OPERATION"))
    assert document["source"] == {
        "kind": "Git",
        "repository": REPOSITORY,
        "ref": "main",
        "path": "migrations",
    }
    assert not any(isinstance(o, dict) and o["kind"] == "ConfigMap" for o in decision.create)


@pytest.mark.req("MIG-06", "SRC-GIT-03", "SRC-GIT-04", "SRC-GIT-05")
def test_resolving_goes_to_reading_once_the_git_commit_is_resolved() -> None:
    world, decision = decide(resolved_git(step(git_new())))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.READING
    assert after.active_operation is None
    assert job_of(decision) is None
    source = after.source
    assert source is not None
    assert (source.kind, source.commit, source.content_digest) == (
        SourceKind.GIT,
        COMMIT,
        CONTENT,
    )
    assert (source.repository, source.ref, source.path) == (REPOSITORY, "main", "migrations")
    resolved = after.condition(ConditionType.ARTIFACT_RESOLVED)
    assert resolved is not None
    assert resolved.reason == Reason.COMMIT_RESOLVED
    assert COMMIT in resolved.message
    assert after.condition(ConditionType.ARTIFACT_VERIFIED) is None
    assert EventReason.SOURCE_RESOLVED in event_reasons(decision)

    reading = step(carry(world, decision))
    claim = status(reading).active_operation
    assert claim is not None
    assert claim.type == OperationType.HISTORY
    assert claim.source is not None
    assert claim.source.commit == COMMIT


@pytest.mark.req("SRC-GIT-06", "SRC-GIT-07", "JOB-01", "JOB-03")
def test_a_git_history_job_fetches_the_commit_again_in_an_init_container() -> None:
    world = step(resolved_git(step(git_new())))
    decision = reconcile_migration(world)
    job = created_job(decision)
    by_name = containers(job)
    assert list(by_name) == ["fetch", "source", "run"]
    fetch, check, run = by_name["fetch"], by_name["source"], by_name["run"]
    source = json.loads(next(a for a in fetch["command"] if a.startswith("--source="))[9:])
    assert source["commit"] == COMMIT
    assert f"--digest={CONTENT}" in fetch["command"]
    assert f"--digest={CONTENT}" in check["command"]
    assert "credentials" in mounts(fetch)
    assert "credentials" not in mounts(check) | mounts(run)
    assert "PTAH_DATABASE_URL" not in env_names(fetch) | env_names(check)
    assert "PTAH_DATABASE_URL" in env_names(run)
    volumes = {v["name"] for v in job["spec"]["template"]["spec"]["volumes"]}
    assert "snapshot" not in volumes


@pytest.mark.req("MIG-06", "SRC-OCI-01")
def test_resolving_goes_to_verifying_once_the_oci_digest_is_pinned() -> None:
    world, decision = decide(resolved_oci(step(oci_new())))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.VERIFYING
    assert after.active_operation is None
    assert after.source is not None
    assert after.source.oci_digest == OCI_DIGEST
    assert condition_reason(after, ConditionType.ARTIFACT_RESOLVED) == Reason.DIGEST_RESOLVED

    verifying = step(step(resolved_oci(step(oci_new()))))
    claim = status(verifying).active_operation
    assert claim is not None
    assert claim.type == OperationType.VERIFY
    assert status(verifying).phase == MigrationPhase.VERIFYING


@pytest.mark.req("SRC-OCI-02", "SRC-OCI-05", "JOB-01")
def test_the_verify_job_mounts_the_policy_key_and_inspects_the_pinned_digest() -> None:
    world = step(resolved_oci(step(oci_new())))
    job = created_job(reconcile_migration(world))
    verify = containers(job)["verify"]
    assert "PTAH_DATABASE_URL" not in env_names(verify)
    document = json.loads(next(e["value"] for e in verify["env"] if e["name"] == "PTAH_OPERATION"))
    assert document["type"] == "Verify"
    assert document["source"] == {"kind": "Artifact", "ociRef": OCI_REF, "ociDigest": OCI_DIGEST}
    policy = next(v for v in job["spec"]["template"]["spec"]["volumes"] if v["name"] == "policy")
    assert policy["configMap"] == {
        "name": POLICY.name,
        "items": [{"key": POLICY.key, "path": "policy.yaml"}],
    }


@pytest.mark.req("MIG-07", "SRC-OCI-03")
def test_verifying_goes_to_reading_when_the_policy_is_satisfied() -> None:
    world, decision = decide(verified(step(step(resolved_oci(step(oci_new()))))))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.READING
    assert condition_reason(after, ConditionType.ARTIFACT_VERIFIED) == Reason.POLICY_SATISFIED
    source = after.source
    assert source is not None
    assert source.verification_policy_digest == POLICY.digest
    assert source.content_digest == CONTENT
    assert source.artifact_type == MIGRATIONS_TYPE

    reading = oci_reading()
    claim = status(reading).active_operation
    assert claim is not None
    assert claim.type == OperationType.HISTORY
    job = created_job(reconcile_migration(carry(world, decision)))
    assert list(containers(job)) == ["fetch", "source", "run"]
    fetch = containers(job)["fetch"]
    source = json.loads(next(a for a in fetch["command"] if a.startswith("--source="))[9:])
    assert source == {"kind": "Artifact", "ociRef": OCI_REF, "ociDigest": OCI_DIGEST}


@pytest.mark.req("MIG-07", "SRC-OCI-03", "SRC-OCI-04")
def test_verifying_goes_to_blocked_with_no_plan_when_the_policy_refuses_the_artifact() -> None:
    schema_type = "application/vnd.stokaro.ptah.schema.v1"
    waiting = oci_awaiting_approval()
    assert status(waiting).plan is not None
    later_on = later(waiting, dt.timedelta(minutes=11))
    verifying = step(step(resolved_oci(step(later_on), NEXT_OCI_DIGEST)))
    assert status(verifying).phase == MigrationPhase.VERIFYING
    world, decision = decide(verified(verifying, accepted=False, artifact_type=schema_type))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.BLOCKED
    assert condition_reason(after, ConditionType.READY) == Reason.POLICY_REFUSED
    assert condition_reason(after, ConditionType.ARTIFACT_VERIFIED) == Reason.POLICY_REFUSED
    assert after.plan is None
    assert job_of(decision) is None
    assert EventReason.ARTIFACT_REFUSED in event_reasons(decision)
    progressing = after.condition(ConditionType.PROGRESSING)
    assert progressing is not None
    assert progressing.status == "False"


def test_a_missing_verification_policy_fails_before_any_job() -> None:
    world, decision = decide(oci_new(policy=dataclasses.replace(POLICY, digest=None)))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.FAILED
    assert condition_reason(after, ConditionType.READY) == Reason.CONFIGURATION_ERROR
    assert job_of(decision) is None


# --- refreshes, retries and giving way ---------------------------------------------------------


@pytest.mark.req("SRC-GIT-15", "SRC-OCI-07")
@pytest.mark.parametrize(
    "start", [git_in_sync, lambda: step(history_reported(oci_reading(), nothing_pending()))]
)
def test_an_in_sync_migration_resolves_its_source_again_at_the_interval(start: Any) -> None:
    world = start()
    assert status(world).phase == MigrationPhase.IN_SYNC
    assert reconcile_migration(later(world, dt.timedelta(minutes=5))).create == ()
    world, decision = decide(later(world, dt.timedelta(minutes=11)))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.RESOLVING
    assert job_of(decision) == "Resolve"


@pytest.mark.req("SRC-GIT-16")
def test_a_new_commit_that_leaves_the_selected_files_unchanged_keeps_the_plan() -> None:
    waiting = git_awaiting_approval()
    plan = status(waiting).plan
    assert plan is not None
    assert status(waiting).phase == MigrationPhase.AWAITING_APPROVAL
    world = step(later(waiting, dt.timedelta(minutes=11)))
    world = step(step(resolved_git(world, commit=NEXT_COMMIT)))
    world = step(step(history_reported(world, ready_to_plan())))
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL
    assert status(world).plan == plan
    source = status(world).source
    assert source is not None
    assert source.commit == NEXT_COMMIT


@pytest.mark.req("SRC-GIT-16")
def test_a_new_commit_that_changes_the_selected_files_retires_the_plan() -> None:
    waiting = git_awaiting_approval()
    plan = status(waiting).plan
    assert plan is not None
    world = step(later(waiting, dt.timedelta(minutes=11)))
    world = step(step(resolved_git(world, commit=NEXT_COMMIT, content=EDITED_CONTENT)))
    world = step(history_reported(world, ready_to_plan()))
    assert status(world).plan is not None
    assert status(world).plan != plan


@pytest.mark.req("SRC-GIT-17")
def test_git_plans_bind_repository_and_path_under_contract_2_and_oci_plans_the_digest_under_1() -> (
    None
):
    git_plan = next(iter(git_awaiting_approval().plans.values()))
    assert git_plan.spec.plan_contract_version == PLAN_CONTRACT_CONFIGMAP_GIT
    assert git_plan.spec.source.repository_path_digest is not None
    assert git_plan.spec.source.content_digest == CONTENT
    oci_plan = next(iter(oci_awaiting_approval().plans.values()))
    assert oci_plan.spec.plan_contract_version == PLAN_CONTRACT_OCI
    assert oci_plan.spec.source.oci_digest == OCI_DIGEST
    assert oci_plan.spec.source.verification_policy_digest == POLICY.digest


@pytest.mark.req("RETRY-07")
def test_a_failed_resolve_reads_the_source_again_on_every_attempt_and_gives_way_only_to_a_request() -> (
    None
):
    world = step(failed(step(git_new()), OperationType.RESOLVE, "SourceUnreachable"))
    first = claim_id(world)
    assert status(world).phase == MigrationPhase.RESOLVING
    assert (
        condition_reason(status(world), ConditionType.RECONCILIATION_FAILED) == "SourceUnreachable"
    )
    # Long past both the retry delay and the interval: the same claim tries again.
    world = step(later(world, dt.timedelta(minutes=30)))
    world = step(world)
    assert claim_id(world) == first
    claim = status(world).active_operation
    assert claim is not None
    assert claim.attempt == 2
    # A read request arriving between attempts makes it give way when the delay ends.
    world = step(failed(world, OperationType.RESOLVE, "SourceUnreachable"))
    requested = annotated(world, REQUEST_ANNOTATION, "2026-08-30T12:40:00Z")
    world, decision = decide(later(requested, dt.timedelta(minutes=2)))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.PENDING
    assert EventReason.READ_RESTARTED in event_reasons(decision)


@pytest.mark.req("RETRY-04")
def test_a_failing_git_history_read_gives_way_once_the_interval_passed_since_the_source_was_read() -> (
    None
):
    world = step(failed(git_reading(), OperationType.HISTORY, "ConnectionFailed"))
    first = claim_id(world)
    world = step(step(later(world, dt.timedelta(minutes=2))))
    assert claim_id(world) == first  # within the interval: the same read again
    world = step(failed(world, OperationType.HISTORY, "ConnectionFailed"))
    world, decision = decide(later(world, dt.timedelta(minutes=11)))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.PENDING
    assert EventReason.READ_RESTARTED in event_reasons(decision)
    resolving = step(carry(world, decision))
    assert status(resolving).phase == MigrationPhase.RESOLVING


@pytest.mark.req("SRC-GIT-09")
def test_a_commit_no_longer_reachable_fails_the_read_and_the_next_resolve_reads_the_ref_again() -> (
    None
):
    world = with_job(
        git_reading(),
        JobPhase.FAILED,
        snapshot_refused=True,
        message="source refused: commit unreachable",
    )
    world, decision = decide(world)
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.FAILED
    assert condition_reason(after, ConditionType.READY) == Reason.SOURCE_REFUSED
    world = step(later(carry(world, decision), dt.timedelta(minutes=2)))
    assert status(world).phase == MigrationPhase.RESOLVING


@pytest.mark.req("SRC-CM-15")
def test_a_source_moved_from_a_configmap_loses_its_snapshot_with_the_first_resolution() -> None:
    world = in_sync()
    record = status(world).source
    assert record is not None
    snapshot = record.snapshot_name
    assert snapshot is not None
    assert snapshot in world.snapshots
    git = GitSource(repository=REPOSITORY, ref="main", path="migrations")
    moved = edited(world, config_map=None, git=git)
    moved = dataclasses.replace(moved, source=None)
    resolving = step(moved)
    assert status(resolving).phase == MigrationPhase.RESOLVING
    assert snapshot in resolving.snapshots, "kept until a resolution of the new source is stored"
    world, decision = decide(resolved_git(resolving))
    assert snapshot in world.snapshots
    assert not any(ref.name == snapshot for ref in decision.delete)
    after_stored = carry(world, decision)
    decision = reconcile_migration(after_stored)
    assert any(ref.name == snapshot for ref in decision.delete)


@pytest.mark.req("SRC-OCI-08")
def test_a_replaced_verification_policy_starts_a_new_read_at_once() -> None:
    world = step(history_reported(oci_reading(), nothing_pending()))
    assert status(world).phase == MigrationPhase.IN_SYNC
    world, decision = decide(dataclasses.replace(world, verification_policy=NEW_POLICY))
    assert status_of(world, decision).phase == MigrationPhase.RESOLVING


def test_an_approved_git_plan_applies_from_the_fetched_commit() -> None:
    waiting = git_awaiting_approval()
    world, decision = decide(with_approval(waiting))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.APPLYING
    job = created_job(decision)
    assert list(containers(job)) == ["fetch", "source", "run"]


def carry(world: MigrationWorld, decision: Decision) -> MigrationWorld:
    from tests.unit.reconcile.migration.worlds import carry_out

    return carry_out(world, decision)


# --- the source policy -------------------------------------------------------------------------

SOURCE_POLICY_RAW = (
    b"version: 1\nconfigMaps: {names: [billing-*]}\ngit: {hosts: [git.example]}\nmaxBytes: 4096\n"
)
SOURCE_POLICY = PolicyFile(
    "source-rules",
    "policy.yaml",
    digest("source policy v1"),
    policy=parse_source_policy(SOURCE_POLICY_RAW),
)
REPLACED_SOURCE_POLICY = dataclasses.replace(SOURCE_POLICY, digest=digest("source policy v2"))
POLICY_REF = KeyReference(name="source-rules", key="policy.yaml")


def under_source_policy(
    world: MigrationWorld, held: PolicyFile | None = SOURCE_POLICY
) -> MigrationWorld:
    spec = world.migration.spec
    if spec.git is not None:
        spec = spec.model_copy(
            update={"git": spec.git.model_copy(update={"source_policy_from": POLICY_REF})}
        )
    else:
        assert spec.config_map is not None
        spec = spec.model_copy(
            update={
                "config_map": spec.config_map.model_copy(update={"source_policy_from": POLICY_REF})
            }
        )
    source = world.source
    if source is not None and held is not None:
        source = dataclasses.replace(source, source_policy_digest=held.digest)
    resource = world.migration.model_copy(update={"spec": spec})
    return dataclasses.replace(world, migration=resource, source=source, source_policy=held)


def with_source_policy(world: MigrationWorld, held: PolicyFile) -> MigrationWorld:
    source = world.source
    if source is not None:
        source = dataclasses.replace(source, source_policy_digest=held.digest)
    return dataclasses.replace(world, source_policy=held, source=source)


@pytest.mark.req("SRC-POL-01", "SRC-POL-02", "SRC-POL-05")
def test_a_configmap_the_source_policy_refuses_fails_naming_the_rule_before_any_snapshot() -> None:
    strict = dataclasses.replace(
        SOURCE_POLICY,
        policy=parse_source_policy(b"version: 1\nconfigMaps: {names: [orders-*]}\n"),
    )
    world, decision = decide(under_source_policy(new(), strict))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.FAILED
    assert condition_reason(after, ConditionType.READY) == Reason.SOURCE_REFUSED
    assert "configMaps.names" in (after.message or "")
    assert decision.create == ()
    small = dataclasses.replace(
        SOURCE_POLICY, policy=parse_source_policy(b"version: 1\nmaxBytes: 10\n")
    )
    world, decision = decide(under_source_policy(new(), small))
    assert "maxBytes" in (status_of(world, decision).message or "")
    assert decision.create == ()


@pytest.mark.req("SRC-POL-01", "SRC-POL-06")
def test_the_source_policy_is_recorded_beside_the_resolution_and_bound_into_the_plan() -> None:
    world = step(step(history_reported(step(under_source_policy(new())), ready_to_plan())))
    record = status(world).source
    assert record is not None
    assert record.source_policy_digest == SOURCE_POLICY.digest
    plan = next(iter(world.plans.values()))
    assert plan.spec.source.source_policy_digest == SOURCE_POLICY.digest


@pytest.mark.req("SRC-POL-07")
def test_a_replaced_source_policy_is_read_at_once_and_retires_the_plan() -> None:
    world = step(step(history_reported(step(under_source_policy(new())), ready_to_plan())))
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL
    world, decision = decide(with_source_policy(world, REPLACED_SOURCE_POLICY))
    after = status_of(world, decision)
    assert after.plan is None
    assert condition_reason(after, ConditionType.READY) == Reason.PLAN_STALE
    reread = step(carry(world, decision))
    record = status(reread).source
    assert status(reread).phase == MigrationPhase.READING
    assert record is not None
    assert record.source_policy_digest == REPLACED_SOURCE_POLICY.digest


@pytest.mark.req("SRC-POL-03", "SRC-POL-05")
def test_a_git_host_the_source_policy_refuses_fails_before_the_resolve_job() -> None:
    elsewhere = dataclasses.replace(
        SOURCE_POLICY, policy=parse_source_policy(b"version: 1\ngit: {hosts: [git.corp.test]}\n")
    )
    world, decision = decide(under_source_policy(git_new(), elsewhere))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.FAILED
    assert condition_reason(after, ConditionType.READY) == Reason.SOURCE_REFUSED
    assert "git.hosts" in (after.message or "")
    assert job_of(decision) is None


def _allowed_git_policy() -> PolicyFile:
    return dataclasses.replace(
        SOURCE_POLICY,
        policy=parse_source_policy(b"version: 1\ngit: {hosts: [git.example]}\nmaxBytes: 4096\n"),
    )


@pytest.mark.req("SRC-POL-04", "SRC-POL-06")
def test_the_resolve_job_carries_the_size_rule_and_the_commit_records_the_policy() -> None:
    world, decision = decide(under_source_policy(git_new(), _allowed_git_policy()))
    resolve = containers(created_job(decision))["resolve"]
    document = json.loads(next(e["value"] for e in resolve["env"] if e["name"] == "PTAH_OPERATION"))
    assert document["sourcePolicy"] == {"maxBytes": 4096}
    world = step(resolved_git(carry(world, decision)))
    record = status(world).source
    assert record is not None
    assert record.source_policy_digest == SOURCE_POLICY.digest


@pytest.mark.req("SRC-POL-07")
def test_a_replaced_source_policy_resolves_a_git_source_again_at_once() -> None:
    world = under_source_policy(git_new(), _allowed_git_policy())
    world = step(history_reported(step(step(resolved_git(step(world)))), nothing_pending()))
    assert status(world).phase == MigrationPhase.IN_SYNC
    replaced = dataclasses.replace(_allowed_git_policy(), digest=digest("source policy v2"))
    world, decision = decide(with_source_policy(world, replaced))
    assert status_of(world, decision).phase == MigrationPhase.RESOLVING


def test_a_missing_source_policy_is_a_configuration_error() -> None:
    missing = PolicyFile("source-rules", "policy.yaml", None)
    world, decision = decide(under_source_policy(new(), missing))
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.FAILED
    assert condition_reason(after, ConditionType.READY) == Reason.CONFIGURATION_ERROR
    assert decision.create == ()


@pytest.mark.req("SRC-GIT-12", "SRC-GIT-14")
def test_a_refused_resolve_leaves_alone_what_the_resource_applied() -> None:
    waiting = git_awaiting_approval()
    applied = step(step(with_approval(waiting)))
    applied = step(
        with_result(
            applied,
            report(
                applied,
                OperationType.APPLY,
                run={"outcome": "Applied", "selected": True, "appliedVersions": ["0002"]},
            ),
        )
    )
    applied = step(history_reported(step(applied), nothing_pending()))
    before = status(applied)
    assert before.phase == MigrationPhase.IN_SYNC
    assert before.last_run is not None
    resolving = step(later(applied, dt.timedelta(minutes=11)))
    assert status(resolving).phase == MigrationPhase.RESOLVING
    refused = {
        "reason": "CommitNotAdvertised",
        "message": "the server does not advertise commit " + COMMIT,
    }
    world, decision = decide(
        with_result(resolving, report(resolving, OperationType.RESOLVE, target=None, error=refused))
    )
    after = status_of(world, decision)
    failure = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failure is not None
    assert failure.reason == "CommitNotAdvertised"
    assert COMMIT in failure.message
    assert after.last_run == before.last_run
    assert after.history == before.history
    assert after.source == before.source
    assert decision.create == ()


@pytest.mark.req("JOB-01")
def test_registry_credentials_reach_only_the_containers_that_read_the_registry() -> None:
    world = oci_new()
    artifact = world.migration.spec.artifact
    assert artifact is not None
    with_secret = artifact.model_copy(
        update={"secret_ref": LocalObjectReference(name="registry-login")}
    )
    world = _with_spec(world, artifact=with_secret)
    world = dataclasses.replace(world, verification_policy=POLICY)
    resolving, decision = decide(world)
    resolve = containers(created_job(decision))["resolve"]
    assert "credentials" in mounts(resolve)
    assert "--credentials=/ptah/credentials" in resolve["command"]
    world = step(resolved_oci(carry(resolving, decision)))
    verifying, decision = decide(world)
    verify = containers(created_job(decision))["verify"]
    assert "credentials" in mounts(verify)
    world = step(verified(carry(verifying, decision)))
    job = created_job(reconcile_migration(world))
    by_name = containers(job)
    assert "credentials" in mounts(by_name["fetch"])
    assert "credentials" not in mounts(by_name["source"]) | mounts(by_name["run"])
    secret = next(
        v for v in job["spec"]["template"]["spec"]["volumes"] if v["name"] == "credentials"
    )
    assert secret == {"name": "credentials", "secret": {"secretName": "registry-login"}}


@pytest.mark.req("PRIV-05", "SRC-OCI-03")
@pytest.mark.parametrize("accepted", [True, False], ids=["accepted", "refused"])
def test_registry_text_never_reaches_status_or_events(accepted: bool) -> None:
    """Review finding 10: the manifest's artifactType and the policy's refusal text went into
    the ArtifactVerified condition and Event; an artifact type is the registry's text, so a
    verdict is reported by code."""
    hostile = "application/x.MARKER-from-the-registry"
    world = dataclasses.replace(oci_new(), verification_policy=POLICY)
    resolving, decision = decide(world)
    world = step(resolved_oci(carry(resolving, decision)))
    verifying, decision = decide(world)
    world = verified(carry(verifying, decision), accepted=accepted, artifact_type=hostile)
    after, decision = decide(world)
    assert decision.status is not None
    shown = str(decision.status["conditions"]) + str(decision.events)
    assert "MARKER" not in shown
    verified_condition = status_of(after, decision).condition(ConditionType.ARTIFACT_VERIFIED)
    assert verified_condition is not None
    code = "ArtifactTypeAccepted" if accepted else "ArtifactTypeNotAccepted"
    assert code in verified_condition.message


def test_a_resolve_refused_for_an_unpinned_ssh_host_key_names_the_code_on_reconciliation_failed() -> (
    None
):
    message = (
        "the SSH server git.example showed a host key the Secret's known_hosts does not pin"
        " (HostKeyNotPinned)"
    )
    world = step(git_new())
    # As the runner reports it (source_commands.source_result): the code beside the words.
    error = {"reason": "SourceUnreachable", "code": "HostKeyNotPinned", "message": message}
    world = step(with_result(world, report(world, OperationType.RESOLVE, target=None, error=error)))
    failed_condition = status(world).condition(ConditionType.RECONCILIATION_FAILED)
    assert failed_condition is not None
    assert failed_condition.reason == "SourceUnreachable"
    # The manager's words and the code; never the runner's text (issue #18).
    assert failed_condition.message == "the source could not be reached (HostKeyNotPinned)"


def test_a_failed_history_read_names_no_source_only_a_source_read_does() -> None:
    """The source last recorded is named beside a Resolve's or a Verify's failure (it names
    the commit a ref moved from); a History read's failure is the database's."""
    world = step(step(resolved_git(step(git_new()))))
    claim = status(world).active_operation
    assert claim is not None
    assert claim.type == OperationType.HISTORY
    assert status(world).source is not None
    error = {"reason": "ConnectionFailed", "message": "hostile"}
    world = step(with_result(world, report(world, OperationType.HISTORY, error=error)))
    failed = status(world).condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert "the database could not be reached" in failed.message
    assert "source last recorded" not in failed.message
