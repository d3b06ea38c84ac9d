"""A schema Apply's result that arrives while its Job still runs ends nothing yet: whoever holds
the operation's token could have posted it, and the proof must not read a database the Apply
may still be changing. The Job is followed to its end, then the result is the verdict (SUS-02,
docs/security.md "Result records")."""

from __future__ import annotations

from ptah_operator.api.constants import SchemaPhase
from ptah_operator.reconcile.decision import LeaseVerb
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.schema.worlds import applied, applying, phase, step, with_job


def test_a_result_that_arrives_while_its_apply_job_runs_ends_nothing_yet() -> None:
    world = applied(applying(), outcome="Failed", job=JobPhase.ACTIVE)
    decision = reconcile_schema(world)
    after = step(world)
    assert phase(after) == SchemaPhase.APPLYING
    assert not [a for a in decision.lease if a.verb == LeaseVerb.RELEASE]
    assert not decision.create


def test_once_that_job_ended_the_result_is_the_verdict() -> None:
    world = step(applied(applying(), job=JobPhase.ACTIVE))
    world = with_job(world, JobPhase.SUCCEEDED, finished_at=world.now, report_witnessed=True)
    assert phase(step(world)) == SchemaPhase.VERIFYING_CONVERGENCE
