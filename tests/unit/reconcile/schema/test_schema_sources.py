"""Git and OCI sources through the schema lifecycle: Resolve and Verify as Jobs.

Seed 000's "From the source to a plan's verdict" for the arrows a ConfigMap never takes:
Resolving → Verifying once the OCI digest is pinned, Resolving → Observing once the Git commit
is resolved, Verifying → Observing when the policy is satisfied and → Blocked when it refuses;
and the verification policy changing under a schema with no claim (Verifying, no Resolve).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from ptah_operator.api.common import ArtifactSource, GitSource, KeyReference, LocalObjectReference
from ptah_operator.api.constants import (
    PLAN_CONTRACT_CONFIGMAP_GIT,
    PLAN_CONTRACT_OCI,
    ApplyPolicy,
    ConditionType,
    EventReason,
    JournalEntryType,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.api.content import digest_of_files
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import JobPhase, PolicyFile
from tests.unit.reconcile.schema.table import Row, check, params
from tests.unit.reconcile.schema.worlds import (
    A_MINUTE,
    FILES,
    TEN_MINUTES,
    annotated,
    applied,
    claim_of,
    digest,
    job_manifest,
    later,
    new,
    observed,
    planned,
    publish,
    report,
    status,
    status_of,
    step,
    with_approval,
    with_result,
)

REPOSITORY = "https://git.example/acme/orders.git"
COMMIT = "c" * 40
OCI_REF = "oci://registry.example/acme/orders-schema:stable"
OCI_DIGEST = digest("manifest 1")
POLICY = PolicyFile("orders-verification", "policy.yaml", digest("policy v1"))
NEW_POLICY = dataclasses.replace(POLICY, digest=digest("policy v2"))
CONTENT, _ = digest_of_files(FILES)
SCHEMA_TYPE = "application/vnd.stokaro.ptah.schema.v1"
E = JournalEntryType
L = LeaseVerb


def _with_spec(world: SchemaWorld, **changes: Any) -> SchemaWorld:
    spec = world.schema.spec.model_copy(update={"config_map": None, **changes})
    return dataclasses.replace(
        world, schema=world.schema.model_copy(update={"spec": spec}), source=None
    )


def git_new() -> SchemaWorld:
    git = GitSource(
        repository=REPOSITORY,
        ref="main",
        path="schema",
        secret_ref=LocalObjectReference(name="orders-git"),
    )
    return _with_spec(new(), git=git)


def oci_new(**kwargs: Any) -> SchemaWorld:
    artifact = ArtifactSource(
        oci_ref=OCI_REF,
        verification_policy_from=KeyReference(name=POLICY.name, key=POLICY.key),
    )
    world = _with_spec(new(**kwargs), artifact=artifact)
    return dataclasses.replace(world, verification_policy=POLICY)


def resolved_git(world: SchemaWorld) -> SchemaWorld:
    block = {
        "kind": "Git",
        "repository": REPOSITORY,
        "ref": "main",
        "path": "schema",
        "commit": COMMIT,
        "contentDigest": CONTENT,
    }
    return with_result(world, report(world, OperationType.RESOLVE, target=None, resolve=block))


def resolved_oci(world: SchemaWorld) -> SchemaWorld:
    block = {"kind": "Artifact", "ociRef": OCI_REF, "ociDigest": OCI_DIGEST}
    return with_result(world, report(world, OperationType.RESOLVE, target=None, resolve=block))


def verified(world: SchemaWorld, *, accepted: bool = True) -> SchemaWorld:
    block: dict[str, Any] = {
        "accepted": accepted,
        "artifactType": SCHEMA_TYPE if accepted else "application/vnd.stokaro.ptah.migrations.v1",
        "policyDigest": world.verification_policy.digest if world.verification_policy else None,
    }
    if accepted:
        block["contentDigest"] = CONTENT
    else:
        block["refusal"] = "artifact type application/vnd.stokaro.ptah.migrations.v1 is refused"
    return with_result(world, report(world, OperationType.VERIFY, target=None, verify=block))


def git_observing() -> SchemaWorld:
    return step(step(resolved_git(step(git_new()))))


def oci_verifying(**kwargs: Any) -> SchemaWorld:
    return step(step(resolved_oci(step(oci_new(**kwargs)))))


def oci_observing(**kwargs: Any) -> SchemaWorld:
    return step(step(verified(oci_verifying(**kwargs))))


def oci_in_sync() -> SchemaWorld:
    world = step(step(observed(oci_observing())))
    return step(planned(world, changes=False))


def oci_awaiting_approval(**kwargs: Any) -> SchemaWorld:
    world = step(step(observed(oci_observing(**kwargs))))
    return publish(step(planned(world)))


def git_awaiting_approval() -> SchemaWorld:
    world = step(step(observed(git_observing())))
    return publish(step(planned(world)))


def containers(decision: Decision) -> dict[str, dict[str, Any]]:
    pod = job_manifest(decision)["spec"]["template"]["spec"]
    return {c["name"]: c for c in [*pod.get("initContainers", []), *pod["containers"]]}


def env_names(container: dict[str, Any]) -> set[str]:
    return {e["name"] for e in container.get("env", [])}


def mounts(container: dict[str, Any]) -> set[str]:
    return {m["name"] for m in container.get("volumeMounts", [])}


def resolve_holds_the_credential_not_the_url(world: SchemaWorld, decision: Decision) -> None:
    found = containers(decision)
    assert list(found) == ["resolve"]
    assert "PTAH_DATABASE_URL" not in env_names(found["resolve"])
    assert "credentials" in mounts(found["resolve"])
    document = json.loads(
        next(e for e in found["resolve"]["env"] if e["name"] == "PTAH_OPERATION")["value"]
    )
    assert document["resource"]["kind"] == "PtahSchema"
    assert document["artifactType"] == SCHEMA_TYPE


def observe_fetches_the_commit_apart_from_the_url(world: SchemaWorld, decision: Decision) -> None:
    found = containers(decision)
    assert list(found) == ["fetch", "source", "run"]
    assert "credentials" in mounts(found["fetch"])
    assert "PTAH_DATABASE_URL" not in env_names(found["fetch"])
    assert "credentials" not in mounts(found["run"])
    assert "PTAH_DATABASE_URL" in env_names(found["run"])
    source = json.loads(found["fetch"]["command"][2].removeprefix("--source="))
    assert source["commit"] == COMMIT


def observe_fetches_by_digest(world: SchemaWorld, decision: Decision) -> None:
    found = containers(decision)
    source = json.loads(found["fetch"]["command"][2].removeprefix("--source="))
    assert source["ociDigest"] == OCI_DIGEST
    assert "PTAH_DATABASE_URL" not in env_names(found["fetch"])


def verify_claimed_on_the_pinned_digest(world: SchemaWorld, decision: Decision) -> None:
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.type == OperationType.VERIFY
    assert claim.source is not None
    assert claim.source.oci_digest == OCI_DIGEST


def plan_kept(world: SchemaWorld, decision: Decision) -> None:
    assert status_of(world, decision).plan == status(world).plan


def plan_retired(world: SchemaWorld, decision: Decision) -> None:
    assert status(world).plan is not None
    assert status_of(world, decision).plan is None


ROWS = [
    Row(
        "New, Git: Resolving, a Job reads the source",
        git_new,
        ("SCH-04", "PATH-06", "SRC-GIT-01", "JOB-01"),
        phase=SchemaPhase.RESOLVING,
        job="Resolve",
        lease=[],
        then=resolve_holds_the_credential_not_the_url,
    ),
    Row(
        "New, OCI: Resolving, a Job reads the source",
        oci_new,
        ("SCH-04", "PATH-06"),
        phase=SchemaPhase.RESOLVING,
        job="Resolve",
    ),
    Row(
        "Resolving -> Verifying: OCI digest pinned",
        lambda: resolved_oci(step(oci_new())),
        ("SCH-06", "SRC-OCI-01"),
        phase=SchemaPhase.VERIFYING,
        job=None,
        events=[EventReason.SOURCE_RESOLVED],
    ),
    Row(
        "Verifying: the Verify Job is claimed on the pinned digest",
        lambda: step(resolved_oci(step(oci_new()))),
        ("SCH-06", "SRC-OCI-02"),
        phase=SchemaPhase.VERIFYING,
        job="Verify",
        then=verify_claimed_on_the_pinned_digest,
    ),
    Row(
        "Resolving -> Observing: Git commit resolved",
        lambda: resolved_git(step(git_new())),
        ("SCH-07", "SRC-GIT-03", "SRC-GIT-04", "SRC-GIT-05"),
        phase=SchemaPhase.OBSERVING,
        job=None,
        events=[EventReason.SOURCE_RESOLVED],
    ),
    Row(
        "Observing (Git): the commit is fetched again in an init container that holds the key",
        lambda: step(resolved_git(step(git_new()))),
        ("SCH-07", "SRC-GIT-06", "JOB-01", "JOB-02"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
        then=observe_fetches_the_commit_apart_from_the_url,
    ),
    Row(
        "Verifying -> Observing: policy satisfied",
        lambda: verified(oci_verifying()),
        ("SCH-08",),
        phase=SchemaPhase.OBSERVING,
        job=None,
        events=[EventReason.ARTIFACT_VERIFIED],
    ),
    Row(
        "Observing (OCI): the schema is fetched by digest",
        lambda: step(verified(oci_verifying())),
        ("SCH-08", "SRC-OCI-06"),
        phase=SchemaPhase.OBSERVING,
        job="Observe",
        then=observe_fetches_by_digest,
    ),
    Row(
        "Verifying -> Blocked: policy refused the artifact",
        lambda: verified(oci_verifying(), accepted=False),
        ("SCH-09", "SCH-48", "SRC-OCI-03", "SRC-OCI-04"),
        phase=SchemaPhase.BLOCKED,
        ready=Reason.POLICY_REFUSED,
        progressing=(False, Reason.POLICY_REFUSED),
        job=None,
        events=[EventReason.ARTIFACT_REFUSED],
    ),
    Row(
        "No claim -> Verifying: the verification policy changed (no new Resolve)",
        lambda: dataclasses.replace(oci_in_sync(), verification_policy=NEW_POLICY),
        ("SCH-34", "SRC-OCI-08"),
        phase=SchemaPhase.VERIFYING,
        job="Verify",
        then=verify_claimed_on_the_pinned_digest,
    ),
    Row(
        "AwaitingApproval -> Verifying: the verification policy changed; the plan retires",
        lambda: dataclasses.replace(oci_awaiting_approval(), verification_policy=NEW_POLICY),
        ("SCH-34", "SCH-64", "SCH-66"),
        phase=SchemaPhase.VERIFYING,
        job="Verify",
        events=[EventReason.PLAN_STALE],
        then=plan_retired,
    ),
    Row(
        "AwaitingApproval (Git) -> Resolving: the interval ended first",
        lambda: later(git_awaiting_approval(), TEN_MINUTES),
        ("SCH-20", "SCH-65", "SRC-GIT-15"),
        phase=SchemaPhase.RESOLVING,
        job="Resolve",
        then=plan_kept,
    ),
    Row(
        "InSync (OCI) -> Resolving: the interval ended",
        lambda: later(oci_in_sync(), TEN_MINUTES),
        ("SCH-30", "SRC-OCI-07"),
        phase=SchemaPhase.RESOLVING,
        job="Resolve",
    ),
    Row(
        "Blocked (refused artifact) -> Resolving: the interval ended, the full pipeline again",
        lambda: later(step(verified(oci_verifying(), accepted=False)), TEN_MINUTES),
        ("SCH-39", "SCH-49"),
        phase=SchemaPhase.RESOLVING,
        job="Resolve",
    ),
    Row(
        "Blocked (refused artifact) -> Verifying: the verification policy was replaced",
        lambda: dataclasses.replace(
            step(verified(oci_verifying(), accepted=False)), verification_policy=NEW_POLICY
        ),
        ("SCH-39", "SCH-49"),
        phase=SchemaPhase.VERIFYING,
        job="Verify",
    ),
]


@pytest.mark.parametrize("row", params(ROWS))
def test_git_and_oci_sources(row: Row) -> None:
    check(row)


@pytest.mark.req("SRC-GIT-17", "SRC-OCI-03", "PATH-05")
def test_plans_bind_the_source_under_their_contract_version() -> None:
    for world, contract in (
        (git_awaiting_approval(), PLAN_CONTRACT_CONFIGMAP_GIT),
        (oci_awaiting_approval(), PLAN_CONTRACT_OCI),
    ):
        ref = status(world).plan
        assert ref is not None
        plan = world.plans[ref.name]
        assert plan.spec.plan_contract_version == contract
        if contract == PLAN_CONTRACT_OCI:
            assert plan.spec.source.oci_digest == OCI_DIGEST
            assert plan.spec.source.verification_policy_digest == POLICY.digest
        else:
            assert plan.spec.source.content_digest == CONTENT
            assert plan.spec.source.repository_path_digest is not None


@pytest.mark.req("SCH-49", "SCH-14")
def test_a_blocked_plan_refreshes_through_resolve_verify_observe_and_plan() -> None:
    world = oci_awaiting_approval(apply=ApplyPolicy.NEVER)
    assert status(world).phase == SchemaPhase.BLOCKED
    seen: list[str] = []
    world = later(world, TEN_MINUTES)
    for change in (
        lambda w: w,
        resolved_oci,
        lambda w: w,
        verified,
        lambda w: w,
        observed,
        lambda w: w,
    ):
        world = change(world)
        decision = reconcile_schema(world)
        for obj in decision.create:
            if isinstance(obj, dict) and obj.get("kind") == "Job":
                seen.append(obj["metadata"]["labels"]["operator.ptah.run/operation"])
        world = step(world)
    assert seen == ["Resolve", "Verify", "Observe", "Plan"]


@pytest.mark.req("RETRY-04", "RETRY-07", "SCH-43")
def test_a_failing_git_observe_gives_way_once_the_interval_passed_but_a_resolve_does_not() -> None:
    world = git_observing()
    error = {"reason": "ConnectionFailed", "message": "refused"}
    failed = step(with_result(world, report(world, OperationType.OBSERVE, error=error)))
    assert status(failed).phase == SchemaPhase.FAILED
    decision = reconcile_schema(later(failed, TEN_MINUTES))
    after = status_of(failed, decision)
    assert after.phase == SchemaPhase.PENDING
    assert [e.reason for e in decision.events] == [EventReason.READ_RESTARTED]
    resolving = step(git_new())
    failed_resolve = step(
        with_result(resolving, report(resolving, OperationType.RESOLVE, error=error))
    )
    retried = step(step(later(failed_resolve, TEN_MINUTES)))
    assert status(retried).phase == SchemaPhase.FAILED
    assert claim_of(retried).attempt == 2
    requested = annotated(
        failed_resolve, "operator.ptah.run/read-requested-at", "2026-09-01T12:00:10Z"
    )
    gave_way = reconcile_schema(later(requested, A_MINUTE))
    assert status_of(requested, gave_way).phase == SchemaPhase.PENDING


@pytest.mark.req("SRC-GIT-05", "SRC-CM-05")
def test_artifact_resolved_says_how_the_source_was_pinned() -> None:
    git = status(git_observing()).condition(ConditionType.ARTIFACT_RESOLVED)
    assert git is not None
    assert git.reason == Reason.COMMIT_RESOLVED
    assert COMMIT in git.message
    cm = status(step(new())).condition(ConditionType.ARTIFACT_RESOLVED)
    assert cm is not None
    assert cm.reason == Reason.SNAPSHOT_TAKEN
    assert status(step(new())).condition(ConditionType.ARTIFACT_VERIFIED) is None


@pytest.mark.req("SCH-28")
def test_a_proof_under_a_replaced_verification_policy_is_superseded_to_verifying() -> None:
    world = with_approval_applied(oci_awaiting_approval())
    world = dataclasses.replace(world, verification_policy=NEW_POLICY)
    decision = reconcile_schema(world)
    after = status_of(world, decision)
    assert after.phase == SchemaPhase.VERIFYING
    assert after.last_apply is not None
    assert after.last_apply.verification is not None
    assert after.last_apply.verification.outcome == "Superseded"
    assert after.journal is not None
    assert after.journal.entries[-1].type == E.VERIFIED
    assert [a.verb for a in decision.lease] == [L.RELEASE]


def with_approval_applied(world: SchemaWorld) -> SchemaWorld:
    world = step(step(with_approval(world)))
    return step(applied(world, job=JobPhase.SUCCEEDED))
