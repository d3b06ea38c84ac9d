"""The image an operation Job runs is the manager's (issue #18): `spec.execution.image` is
taken only when its digest is on the manager's allowlist, and a Job is never built with any
other image, for both families (JOB-06)."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import pytest

from ptah_operator.api.constants import MigrationPhase, Reason
from ptah_operator.api.images import ImageRefusal, image_digest, pinned_image
from ptah_operator.api.migration import PtahMigration
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.jobs import history_job
from ptah_operator.reconcile.world import RunnerConfig
from tests.unit.reconcile.test_jobs import MIGRATION, RECORD, RUNNER
from tests.unit.reconcile.worlds import event_reasons, job_of

OWN = "sha256:" + hashlib.sha256(b"own").hexdigest()
ALLOWED = "sha256:" + hashlib.sha256(b"allowed").hexdigest()
OTHER = "sha256:" + hashlib.sha256(b"other").hexdigest()
ALLOWING = dataclasses.replace(RUNNER, allowed_images=frozenset({ALLOWED}))


def with_image(image: str | None, resource: PtahMigration = MIGRATION) -> PtahMigration:
    execution = resource.spec.execution.model_copy(update={"image": image})
    return resource.model_copy(
        update={"spec": resource.spec.model_copy(update={"execution": execution})}
    )


def images(job: dict[str, Any]) -> set[str]:
    pod = job["spec"]["template"]["spec"]
    return {c["image"] for c in [*pod.get("initContainers", []), *pod["containers"]]}


def test_a_pinned_reference_names_its_digest() -> None:
    assert image_digest(f"registry.example/ptah@{ALLOWED}") == ALLOWED
    assert image_digest(f"registry.example:5000/ptah:1.0@{ALLOWED}") == ALLOWED
    assert image_digest("registry.example/ptah:1.0") is None
    assert image_digest("registry.example/ptah@sha256:abc") is None
    assert pinned_image(f"registry.example/ptah@{ALLOWED}") is None
    assert pinned_image("registry.example/ptah:1.0") == ImageRefusal.NOT_PINNED


def test_without_an_image_of_its_own_a_job_runs_the_managers() -> None:
    assert images(history_job(MIGRATION, ALLOWING, "op-0123456789", RECORD)) == {RUNNER.image}


def test_an_allowed_digest_is_the_image_of_every_container() -> None:
    image = f"mirror.example/ptah@{ALLOWED}"
    job = history_job(with_image(image), ALLOWING, "op-0123456789", RECORD)
    assert images(job) == {image}


@pytest.mark.req("JOB-06")
@pytest.mark.parametrize(
    ("image", "runner"),
    [
        ("attacker.example/reader:latest", ALLOWING),
        (f"attacker.example/reader@{OTHER}", ALLOWING),
        (f"mirror.example/ptah@{ALLOWED}", RUNNER),
    ],
    ids=["a tag", "a digest not allowed", "no allowlist"],
)
def test_a_job_is_never_built_with_an_image_not_allowed(image: str, runner: RunnerConfig) -> None:
    with pytest.raises(ValueError, match=r"spec\.execution\.image") as refused:
        history_job(with_image(image), runner, "op-0123456789", RECORD)
    assert "attacker" not in str(refused.value)


@pytest.mark.req("JOB-06", "MIG-21")
def test_a_migration_whose_image_is_not_allowed_fails_and_no_job_exists() -> None:
    from tests.unit.reconcile.migration.worlds import new

    world = new()
    world = dataclasses.replace(
        world, migration=with_image(f"attacker.example/reader@{OTHER}", world.migration)
    )
    decision = reconcile_migration(world)
    assert job_of(decision) is None
    assert decision.status is not None
    assert decision.status["phase"] == MigrationPhase.FAILED
    ready = next(c for c in decision.status["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == Reason.JOB_NOT_BUILT
    assert "RunnerImageNotAllowed" in ready["message"]
    assert "attacker" not in str(decision.status)
    assert "OperationFailed" in event_reasons(decision)


@pytest.mark.req("JOB-06")
def test_a_schema_whose_image_is_not_allowed_fails_and_no_job_exists() -> None:
    from ptah_operator.api.constants import SchemaPhase
    from ptah_operator.reconcile.schema import reconcile_schema
    from tests.unit.reconcile.schema.worlds import new as new_schema

    world = new_schema()
    spec = world.schema.spec
    execution = spec.execution.model_copy(update={"image": "attacker.example/reader:latest"})
    resource = world.schema.model_copy(
        update={"spec": spec.model_copy(update={"execution": execution})}
    )
    decision = reconcile_schema(dataclasses.replace(world, schema=resource))
    assert job_of(decision) is None
    assert decision.status is not None
    assert decision.status["phase"] == SchemaPhase.FAILED
    ready = next(c for c in decision.status["conditions"] if c["type"] == "Ready")
    assert "JobNotBuilt" in ready["message"]
    said = [c["message"] for c in decision.status["conditions"]]
    assert any("RunnerImageNotPinned" in m for m in said)
    assert "attacker" not in str(decision.status) + repr(decision.events)


@pytest.mark.req("JOB-06")
def test_what_a_job_may_run_is_the_allowlist_and_the_managers_own_pinned_image() -> None:
    pinned = dataclasses.replace(ALLOWING, image=f"localhost/ptah-operator@{OWN}")
    assert pinned.allows() == frozenset({ALLOWED, OWN})
    # A manager run from a tag has no digest of its own to add: the allowlist alone.
    assert ALLOWING.allows() == frozenset({ALLOWED})
    assert dataclasses.replace(RUNNER, image=f"localhost/ptah-operator@{OWN}").allows() == {OWN}
