"""A source credential goes only to a host the manager allows (issue #18, review finding 1):
`spec.git.secretRef` / `spec.artifact.secretRef` with a repository or registry the author
chose builds no Job unless that host is on `--allowed-source-hosts`; the resource fails with
JobNotBuilt, the refusal names the rule, never the host or the Secret (JOB-01, JOB-06)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ptah_operator.api.common import ArtifactSource, GitSource, LocalObjectReference
from ptah_operator.api.constants import MigrationPhase, Reason
from ptah_operator.api.source_hosts import credential_host, git_host, registry_host
from ptah_operator.reconcile.migration import reconcile_migration
from tests.unit.reconcile.migration.test_migration_sources import POLICY, _with_spec, oci_new
from tests.unit.reconcile.worlds import RUNNER, event_reasons, job_of

ATTACKER_GIT = "https://attacker.example/r.git"
ATTACKER_OCI = "oci://attacker.example:5000/r/m:latest"


def test_the_host_a_credential_would_go_to() -> None:
    assert git_host("https://Git.Example:8443/acme/r.git") == "git.example:8443"
    assert git_host("git@Git.Example:acme/r.git") == "git.example"
    assert git_host("ssh://git@Git.Example:2222/acme/r.git") == "git.example:2222"
    assert git_host("ssh://git.example/acme/r.git") == "git.example"
    assert git_host("ssh://git:pw@git.example/acme/r.git") is None
    assert git_host("git://git.example/acme/r.git") is None
    assert registry_host("oci://Registry.Example:5000/acme/m@sha256:ab") == "registry.example:5000"
    spec = {"git": {"repository": ATTACKER_GIT, "secretRef": {"name": "other-apps-db"}}}
    assert credential_host(spec) == ("spec.git.secretRef", "attacker.example")
    assert credential_host({"git": {"repository": ATTACKER_GIT}}) is None


def _refused(world: object) -> None:
    decision = reconcile_migration(world)  # type: ignore[arg-type]
    assert job_of(decision) is None
    assert decision.status is not None
    assert decision.status["phase"] == MigrationPhase.FAILED
    ready = next(c for c in decision.status["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == Reason.JOB_NOT_BUILT
    assert "SourceHostNotAllowed" in ready["message"]
    assert "attacker" not in str(decision.status)
    assert "other-apps-db" not in str(decision.status)
    assert "OperationFailed" in event_reasons(decision)


@pytest.mark.req("JOB-01", "JOB-06")
def test_a_git_credential_for_a_host_not_allowed_builds_no_job() -> None:
    from tests.unit.reconcile.migration.worlds import new

    git = GitSource(
        repository=ATTACKER_GIT,
        ref="main",
        secret_ref=LocalObjectReference(name="other-apps-db"),
    )
    world = _with_spec(new(), git=git)
    assert world.runner is RUNNER
    _refused(world)


@pytest.mark.req("JOB-01", "JOB-06")
def test_a_registry_credential_for_a_host_not_allowed_builds_no_job() -> None:
    world = oci_new()
    artifact = world.migration.spec.artifact
    assert artifact is not None
    artifact = ArtifactSource(
        oci_ref=ATTACKER_OCI,
        verification_policy_from=artifact.verification_policy_from,
        secret_ref=LocalObjectReference(name="other-apps-db"),
    )
    world = dataclasses.replace(_with_spec(world, artifact=artifact), verification_policy=POLICY)
    _refused(world)


@pytest.mark.req("JOB-01")
def test_without_a_credential_any_host_is_read_anonymously() -> None:
    from tests.unit.reconcile.migration.worlds import new

    world = _with_spec(new(), git=GitSource(repository=ATTACKER_GIT, ref="main"))
    assert job_of(reconcile_migration(world)) is not None


@pytest.mark.req("JOB-01", "JOB-06")
def test_an_ssh_credential_goes_only_to_an_allowed_host() -> None:
    from tests.unit.reconcile.migration.worlds import new

    secret = LocalObjectReference(name="deploy-key")
    for repository in ("ssh://git@attacker.example/r.git", "git@attacker.example:r.git"):
        world = _with_spec(
            new(), git=GitSource(repository=repository, ref="main", secret_ref=secret)
        )
        decision = reconcile_migration(world)
        assert job_of(decision) is None
        assert "SourceHostNotAllowed" in str(decision.status)
    for repository in ("ssh://git@git.example/acme/r.git", "git@git.example:acme/r.git"):
        world = _with_spec(
            new(), git=GitSource(repository=repository, ref="main", secret_ref=secret)
        )
        decision = reconcile_migration(world)
        assert job_of(decision) == "Resolve"
        jobs = [o for o in decision.create if isinstance(o, dict) and o.get("kind") == "Job"]
        assert '"secretName": "deploy-key"' in json.dumps(jobs)


@pytest.mark.req("JOB-01", "JOB-06")
def test_a_credential_goes_only_to_the_host_the_spec_names_not_a_recorded_one() -> None:
    """A fetch pinned to a recorded source (a proof read of the last run's) whose repository is
    another host than the spec's: the spec's Secret was allowed for the spec's host only, so
    the fetch gets no credential (found by review: an author reads from their own host, then
    names an allowed host and a victim's Secret; the proof read fetched the recorded host with
    the victim's Secret mounted)."""
    from ptah_operator.api.common import SourceRecord
    from ptah_operator.api.constants import SourceKind
    from ptah_operator.reconcile.migration.jobs import history_job
    from tests.unit.reconcile.migration.worlds import new

    git = GitSource(
        repository="https://git.example/acme/r.git",
        ref="main",
        secret_ref=LocalObjectReference(name="victim-creds"),
    )
    world = _with_spec(new(), git=git)
    assert "git.example" in RUNNER.allowed_source_hosts

    def fetch_of(repository: str) -> tuple[list[str], list[object]]:
        record = SourceRecord(
            kind=SourceKind.GIT,
            content_digest="sha256:" + "a" * 64,
            commit="b" * 40,
            repository=repository,
            ref="main",
        )
        job = history_job(world.migration, RUNNER, "op1", record)
        pod = job["spec"]["template"]["spec"]
        flags = [a for a in pod["initContainers"][0]["command"] if a.startswith("--cred")]
        return flags, [v for v in pod["volumes"] if v["name"] == "credentials"]

    flags, volumes = fetch_of(ATTACKER_GIT)
    assert flags == [], "the victim's Secret went with a fetch of another host"
    assert volumes == []
    flags, volumes = fetch_of("https://git.example/acme/r.git")
    assert flags, "the spec's own host keeps its credential"
    assert volumes
