"""A read whose claim ends with no result taken takes its unfinished Job with it, in both
families; a read that ended with its result, and an Apply, keep theirs.

Found on the real node (issue #13): the operation Secret goes with the claim, and a Pod that had
not mounted it yet waited for it until the Job's deadline, an hour, with its Job active; the
local executor had failed such a Pod at once, so nothing showed it before."""

from __future__ import annotations

import dataclasses

from ptah_operator.api.constants import OperationType, RunOutcome
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.migration import worlds as migration
from tests.unit.reconcile.schema import worlds as schema


def _deleted_jobs(decision: Decision) -> list[str]:
    return [ref.name for ref in decision.delete if ref.kind == "Job"]


def _job_names(world: MigrationWorld | SchemaWorld) -> list[str]:
    return [job.name for job in world.jobs.values()]


def test_a_read_dropped_by_a_realm_conflict_deletes_its_running_job() -> None:
    world = migration.reading()
    (job,) = _job_names(world)
    decision = reconcile_migration(migration.with_claimant(world, shared=False))
    assert decision.status is not None
    assert decision.status.get("activeOperation") is None
    assert _deleted_jobs(decision) == [job]


def test_a_schema_read_dropped_by_a_realm_conflict_deletes_its_running_job() -> None:
    world = schema.observing()
    (job,) = _job_names(world)
    decision = reconcile_schema(schema.with_claimant(world, shared=False))
    assert decision.status is not None
    assert decision.status.get("activeOperation") is None
    assert _deleted_jobs(decision) == [job]


def test_a_read_dropped_under_suspend_deletes_its_running_job() -> None:
    """SUS-04 drops a read under way; SUS-08's "finish" is read as "end"
    (docs/design/lifecycle-decisions.md): the dropped read's Job ends at once."""
    world = migration.reading()
    (job,) = _job_names(world)
    decision = reconcile_migration(migration.suspended(world))
    assert decision.status is not None
    assert decision.status.get("activeOperation") is None
    assert _deleted_jobs(decision) == [job]


def test_a_schema_read_dropped_under_suspend_deletes_its_running_job() -> None:
    world = schema.observing()
    (job,) = _job_names(world)
    decision = reconcile_schema(schema.suspended(world))
    assert decision.status is not None
    assert decision.status.get("activeOperation") is None
    assert _deleted_jobs(decision) == [job]


def test_a_read_that_ended_with_its_result_keeps_its_job() -> None:
    world = migration.history_reported(migration.reading(), migration.nothing_pending())
    decision = reconcile_migration(world)
    assert decision.status is not None
    assert decision.status.get("activeOperation") is None
    assert _deleted_jobs(decision) == []


def test_a_dropped_read_whose_job_finished_or_is_going_deletes_nothing() -> None:
    world = migration.reading()
    (name,) = _job_names(world)
    for change in (
        {"phase": JobPhase.SUCCEEDED, "finished_at": world.now},
        {"phase": JobPhase.FAILED},  # its end's time not (yet) known: still not running
        {"deleting": True},
    ):
        job = dataclasses.replace(world.jobs[name], **change)
        changed = dataclasses.replace(world, jobs={**world.jobs, name: job})
        decision = reconcile_migration(migration.with_claimant(changed, shared=False))
        assert decision.status is not None
        assert decision.status.get("activeOperation") is None
        assert _deleted_jobs(decision) == [], change


def test_an_apply_whose_claim_ends_keeps_its_job() -> None:
    world = migration.applying()
    decision = reconcile_migration(
        migration.run_reported(world, migration.run_block(RunOutcome.APPLIED, applied=["0001"]))
    )
    assert _deleted_jobs(decision) == []


def test_an_apply_claim_that_ends_with_no_result_keeps_its_running_job() -> None:
    """Whatever ends an Apply's claim, its Job is not deleted by the claim's clean-up: the run
    may still be at work, and its end is the run-end rules' (runs.py)."""
    from ptah_operator.reconcile.migration.draft import MigrationDraft

    world = migration.applying()
    assert world.jobs
    assert not world.results
    draft = MigrationDraft.begin(world)
    draft.status.active_operation = None
    assert _deleted_jobs(draft.finish()) == []


def test_a_claim_edited_to_a_read_type_does_not_delete_the_running_apply_job() -> None:
    """A restored or edited status whose claim says Observe where an Apply runs: the read's own
    Job (by the name its type gives) does not exist, and the Apply's Job is not touched."""
    world = migration.applying()
    (name,) = [n for n in _job_names(world) if n.startswith("ptah-apply-")]
    stored = world.migration.status
    assert stored is not None
    assert stored.active_operation is not None
    claim = stored.active_operation.model_copy(update={"type": OperationType.OBSERVE})
    edited = world.migration.model_copy(
        update={"status": stored.model_copy(update={"active_operation": claim})}
    )
    decision = reconcile_migration(dataclasses.replace(world, migration=edited))
    assert name not in _deleted_jobs(decision)
