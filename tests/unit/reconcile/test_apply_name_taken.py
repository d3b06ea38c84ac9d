"""An Apply Job's name taken by a Job Ptah did not make (issue #18), both families.

The Apply's Job name follows from its operation id, which status shows once the claim is
written; whoever may create Jobs could make one under that name before the executor's create.
The create then answers 409, and the executor reads the Job there: not the owner's, or not
running what the manifest's template runs, it is remembered as a refusal (`NAME_TAKEN`), and
the family never adopts it as the run's Job, nor takes its Pods or a result for a run begun.
Before this, the first pass after the 409 adopted whatever Job held the name.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ptah_operator.api.constants import ConditionType, JournalEntryType, OperationType, Reason
from ptah_operator.controller.executor import NAME_TAKEN
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.world import MadeJob
from tests.unit.reconcile.migration import worlds as mig
from tests.unit.reconcile.schema import worlds as sch

FAMILIES: list[tuple[Any, Any, Any]] = [
    (mig, mig.MIGRATION, reconcile_migration),
    (sch, sch.SCHEMA, reconcile_schema),
]


def _claimed(worlds: Any) -> Any:
    """The Apply claimed and its Job asked for; the World shows a Job under its name."""
    world = worlds.step(worlds.with_approval(worlds.awaiting_approval()))
    claim = worlds.status(world).active_operation
    assert claim is not None
    assert claim.type == OperationType.APPLY
    assert claim.job_uid is None
    assert claim.job_name in world.jobs
    return world, claim


@pytest.mark.parametrize(("worlds", "family", "reconcile"), FAMILIES, ids=["migration", "schema"])
@pytest.mark.parametrize("begun", [False, True], ids=["idle", "its Pod runs and it reported"])
def test_a_job_under_the_apply_name_that_ptah_did_not_make_is_not_the_runs(
    worlds: Any, family: Any, reconcile: Any, begun: bool
) -> None:
    world, claim = _claimed(worlds)
    foreign = dataclasses.replace(world.jobs[claim.job_name], uid="someone-elses")
    world = dataclasses.replace(
        world,
        jobs={**world.jobs, claim.job_name: foreign},
        job_refusals={claim.job_name: NAME_TAKEN},
        jobs_made={},
        running_pods=frozenset({claim.operation_id}) if begun else frozenset(),
    )
    if begun:
        world = worlds.with_result(
            world, worlds.report(world, OperationType.APPLY, error={"reason": "RunnerError"})
        )
    decision = reconcile(world)
    after = family.status_of(world, decision)
    assert str(after.phase) == "Failed"
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == Reason.JOB_REFUSED
    if after.active_operation is not None:  # (a schema's Apply keeps its claim to retry)
        assert after.active_operation.job_uid is None
        assert after.active_operation.retry_at is not None
    assert JournalEntryType.APPROVAL_ACCEPTED not in family.entry_types(world, decision)
    assert "someone-elses" not in after.model_dump_json()


@pytest.mark.parametrize(("worlds", "family", "reconcile"), FAMILIES, ids=["migration", "schema"])
def test_without_the_refusal_the_job_under_the_name_is_adopted(
    worlds: Any, family: Any, reconcile: Any
) -> None:
    """The control: the same World with no refusal adopts the Job (the cache showed it before
    the create's answer was remembered)."""
    world, claim = _claimed(worlds)
    decision = reconcile(dataclasses.replace(world, jobs_made={}))
    after = family.status_of(world, decision)
    assert after.active_operation is not None
    assert after.active_operation.job_uid == world.jobs[claim.job_name].uid


@pytest.mark.parametrize(("worlds", "family", "reconcile"), FAMILIES, ids=["migration", "schema"])
def test_a_refusal_beside_a_job_made_here_hides_nothing(
    worlds: Any, family: Any, reconcile: Any
) -> None:
    """From a review: an earlier attempt's refusal of the name, left beside a create this
    process asked for (its answer lost, so no UID), must not hide the Job the create made."""
    world, claim = _claimed(worlds)
    world = dataclasses.replace(
        world,
        job_refusals={claim.job_name: "an earlier attempt's refusal"},
        jobs_made={claim.job_name: MadeJob(None, None)},
    )
    decision = reconcile(world)
    after = family.status_of(world, decision)
    assert after.active_operation is not None
    assert after.active_operation.job_uid == world.jobs[claim.job_name].uid
