"""A read whose Pod cannot start ends as a failed attempt, named by its reason (both families).

Issue #11: a urlFrom Secret that does not exist left the resource "reading the revision table"
with Progressing=True and nothing naming the Secret. A Pod that cannot start (a missing Secret
or key, an image that cannot be pulled, no Pod created) is, once POD_START_GRACE has passed, a
failed attempt like any other (MIG-27, SCH-36, RETRY-01): ReconciliationFailed with the
Kubernetes reason and the missing Secret and key by name, an OperationFailed entry and a
Warning with the reason, the read run again after failureRetryInterval, and its Job removed
so it cannot start an attempt nobody follows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest

from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    JournalEntryType,
    MigrationPhase,
    Reason,
    SchemaPhase,
)
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.schedule import POD_START_GRACE
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.world import JobPhase, PodProblem
from tests.unit.reconcile.migration import worlds as migration
from tests.unit.reconcile.schema import worlds as schema

MISSING = PodProblem("CreateContainerConfigError", "Secret billing-database not found")


def stuck(world: Any, family: Any, problem: PodProblem, age: dt.timedelta) -> Any:
    claim = family.claim_of(world)
    jobs = dict(world.jobs)
    jobs[claim.job_name] = dataclasses.replace(
        jobs[claim.job_name],
        phase=JobPhase.ACTIVE,
        pod_problem=dataclasses.replace(problem, since=world.now - age),
    )
    return dataclasses.replace(world, jobs=jobs)


def deleted_jobs(decision: Decision) -> list[str]:
    return [ref.name for ref in decision.delete if ref.kind == "Job"]


FAMILIES = [
    pytest.param(
        (migration.MIGRATION, migration.reading, reconcile_migration, MigrationPhase.READING),
        id="migration History",
    ),
    pytest.param(
        (schema.SCHEMA, schema.observing, reconcile_schema, SchemaPhase.FAILED),
        id="schema Observe",
    ),
]


@pytest.mark.req("MIG-27", "SCH-36", "RETRY-01", "PRIV-04")
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    ("problem", "named"),
    [
        (MISSING, "CreateContainerConfigError (Secret billing-database not found)"),
        (
            PodProblem("CreateContainerConfigError", "Secret billing-database has no key url"),
            "CreateContainerConfigError (Secret billing-database has no key url)",
        ),
        (PodProblem("ImagePullBackOff"), "ImagePullBackOff"),
        (PodProblem("FailedCreate"), "FailedCreate"),
    ],
    ids=["missing Secret", "missing key", "image", "no Pod created"],
)
def test_a_read_whose_pod_cannot_start_is_a_failed_attempt(
    family: Any, problem: PodProblem, named: str
) -> None:
    worlds, start, reconcile, phase = family
    world = stuck(start(), worlds, problem, POD_START_GRACE + dt.timedelta(seconds=1))
    name = worlds.claim_of(world).job_name
    decision = reconcile(world)
    after = worlds.status_of(world, decision)
    assert after.phase == phase
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == problem.reason
    assert f"the Pod of Job {name} cannot start: {named}" in failed.message
    progressing = after.condition(ConditionType.PROGRESSING)
    assert progressing is not None
    assert progressing.reason == Reason.OPERATION_FAILED
    assert after.active_operation is not None
    assert after.active_operation.retry_at is not None
    assert after.active_operation.last_failure_reason == problem.reason
    (entry,) = worlds.entries_added(world, decision)
    assert (entry.type, entry.reason) == (JournalEntryType.OPERATION_FAILED, problem.reason)
    (event,) = decision.events
    assert event.reason == EventReason.OPERATION_FAILED
    assert problem.reason in event.message
    assert deleted_jobs(decision) == [name]


@pytest.mark.req("MIG-27", "SCH-36")
@pytest.mark.parametrize("family", FAMILIES)
def test_a_pod_gets_a_short_grace_to_start(family: Any) -> None:
    worlds, start, reconcile, _ = family
    world = stuck(start(), worlds, MISSING, dt.timedelta(seconds=30))
    decision = reconcile(world)
    after = worlds.status_of(world, decision)
    assert after.condition(ConditionType.RECONCILIATION_FAILED) is None
    assert deleted_jobs(decision) == []
    assert decision.requeue_after is not None
    assert decision.requeue_after <= POD_START_GRACE - dt.timedelta(seconds=30)


@pytest.mark.req("MIG-27")
def test_a_job_that_failed_because_its_pod_could_not_start_names_that_reason() -> None:
    world = migration.reading()
    name = migration.MIGRATION.claim_of(world).job_name
    assert name is not None
    jobs = dict(world.jobs)
    jobs[name] = dataclasses.replace(
        jobs[name],
        phase=JobPhase.FAILED,
        reason="BackoffLimitExceeded",
        finished_at=world.now - dt.timedelta(minutes=2),
        pod_problem=MISSING,
    )
    decision = reconcile_migration(dataclasses.replace(world, jobs=jobs))
    failed = migration.status_of(world, decision).condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == "CreateContainerConfigError"
    assert "Secret billing-database not found" in failed.message


APPLIES = [
    pytest.param((migration.MIGRATION, migration.applying, reconcile_migration), id="migration"),
    pytest.param((schema.SCHEMA, schema.applying, reconcile_schema), id="schema"),
]


@pytest.mark.req("RETRY-08", "SUS-02", "MIG-19", "SCH-22")
@pytest.mark.parametrize("family", APPLIES)
def test_an_apply_whose_pod_cannot_start_is_named_and_still_followed(family: Any) -> None:
    worlds, start, reconcile = family
    world = stuck(start(), worlds, MISSING, POD_START_GRACE + dt.timedelta(seconds=1))
    decision = reconcile(world)
    after = worlds.status_of(world, decision)
    # A Pod may still start once the Secret appears: the run is not ended, and its Job stays.
    assert after.phase in (MigrationPhase.APPLYING, SchemaPhase.APPLYING)
    assert after.active_operation is not None
    assert deleted_jobs(decision) == []
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == "CreateContainerConfigError"
    assert "Secret billing-database not found" in failed.message
    assert [e.reason for e in decision.events] == [EventReason.OPERATION_FAILED]
    # Said once: the next pass finds the same reason on record and writes no second Warning.
    again = worlds.carry_out(world, decision)
    assert reconcile(again).events == ()
