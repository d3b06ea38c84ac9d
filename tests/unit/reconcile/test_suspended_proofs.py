"""A proof that keeps failing under spec.suspend (SUS-01 beside SUS-03), both families.

Decided in docs/design/lifecycle-decisions.md ("spec.suspend and a proof that must end"):
SUS-03 keeps an attempt already under way to its end; it does not license new ones. Once the
proof's attempt has ended (failed) and spec.suspend is set, no further attempt's Job is
created until the resource resumes, however long failureRetryInterval is. The proof is not
abandoned: it stays owed and resuming runs it again (SUS-07).
"""

from __future__ import annotations

import datetime as dt

import pytest

from ptah_operator.api.constants import MigrationPhase, OperationType, Reason, SchemaPhase
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.migration import worlds as migration
from tests.unit.reconcile.schema import worlds as schema
from tests.unit.reconcile.worlds import job_of

RETRIES = (dt.timedelta(minutes=2), dt.timedelta(hours=3))
PASSES = 4


def jobs_created(decision: Decision) -> list[str]:
    return [
        str(o["metadata"]["name"])
        for o in decision.create
        if isinstance(o, dict) and o.get("kind") == "Job"
    ]


def migration_proof_failed_under_suspend() -> MigrationWorld:
    world = migration.step(migration.verifying_history())
    claim = migration.MIGRATION.claim_of(world)
    assert claim.serves_proof
    failed = migration.step(migration.read_failed(migration.suspended(world)))
    held = migration.status(failed).active_operation
    assert held is not None
    assert held.retry_at is not None
    return failed


@pytest.mark.req("SUS-01", "SUS-03", "SUS-08")
@pytest.mark.parametrize("delay", RETRIES, ids=["after failureRetryInterval", "hours later"])
def test_a_migration_proof_that_failed_under_suspend_starts_no_new_job(
    delay: dt.timedelta,
) -> None:
    world = migration.later(migration_proof_failed_under_suspend(), delay)
    # Several passes: the first may clear the failed attempt's Job and record.
    for _ in range(PASSES):
        decision = reconcile_migration(world)
        assert jobs_created(decision) == []
        world = migration.carry_out(world, decision)
    decision = reconcile_migration(world)
    after = migration.status_of(world, decision)
    assert after.phase == MigrationPhase.SUSPENDED
    ready = after.condition("Ready")
    assert ready is not None
    assert ready.reason == Reason.SUSPENDED
    assert "proof" in ready.message
    # The proof is not given up: its claim, bound to what the run ran from, stays.
    assert after.active_operation is not None
    assert after.active_operation.serves_proof


@pytest.mark.req("SUS-07", "SUS-03", "RETRY-09")
def test_a_migration_proof_held_by_suspend_runs_again_when_resumed() -> None:
    failed = migration_proof_failed_under_suspend()
    waited = migration.resumed(migration.step(migration.later(failed, RETRIES[0])))
    for _ in range(PASSES):
        decision = reconcile_migration(waited)
        if job_of(decision) is not None:
            break
        waited = migration.carry_out(waited, decision)
    assert job_of(decision) == "History"
    after = migration.status_of(waited, decision)
    assert after.active_operation is not None
    assert after.active_operation.serves_proof
    assert after.active_operation.attempt == 2


def schema_proof_failed_under_suspend() -> SchemaWorld:
    world = schema.proving()
    assert schema.claim_of(world).serves_proof
    return schema.step(schema.read_failed(schema.suspended(world), OperationType.OBSERVE))


@pytest.mark.req("SUS-01", "SUS-03", "SCH-37")
@pytest.mark.parametrize("delay", RETRIES, ids=["after failureRetryInterval", "hours later"])
def test_a_schema_proof_that_failed_under_suspend_starts_no_new_job(delay: dt.timedelta) -> None:
    world = schema.later(schema_proof_failed_under_suspend(), delay)
    for _ in range(PASSES):
        decision = reconcile_schema(world)
        assert jobs_created(decision) == []
        assert LeaseVerb.ACQUIRE not in [a.verb for a in decision.lease]
        world = schema.carry_out(world, decision)
    decision = reconcile_schema(world)
    after = schema.status_of(world, decision)
    assert after.phase == SchemaPhase.SUSPENDED


@pytest.mark.req("SUS-07", "SCH-47")
def test_a_schema_proof_held_by_suspend_runs_again_when_resumed() -> None:
    failed = schema_proof_failed_under_suspend()
    waited = schema.resumed(schema.step(schema.later(failed, RETRIES[0])))
    for _ in range(PASSES):
        decision = reconcile_schema(waited)
        if job_of(decision) is not None:
            break
        waited = schema.carry_out(waited, decision)
    assert job_of(decision) == "Observe"
    after = schema.status_of(waited, decision)
    assert after.phase == SchemaPhase.VERIFYING_CONVERGENCE


def test_the_failed_attempt_ended_its_job() -> None:
    failed = migration_proof_failed_under_suspend()
    assert all(job.phase != JobPhase.ACTIVE for job in failed.jobs.values())
