"""A Job the API server refuses to create (admission, a policy, a quota on Jobs), migration side.

Seed 000: "Applying → Failed: The Job could not be built, or held to its admission snapshot"
and "read → Failed: The Job could not be built". A refused Job will not exist as built, so
asking for it again every few seconds only hides the failure: the operation ends Failed, with
reason JobRefused on the conditions, an OperationFailed journal entry and a Warning, and the
resource starts over from resolution after failureRetryInterval (MIG-31). An Apply refused
before its Job existed gives its Lease back and spends no approval.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    JournalEntryType,
    MigrationPhase,
    OperationType,
    Reason,
)
from ptah_operator.reconcile.decision import LeaseVerb
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.test_migration_sources import git_new
from tests.unit.reconcile.migration.worlds import (
    MIGRATION,
    applying,
    later,
    read,
    reading,
    ready_to_plan,
    status,
    step,
)

A_MINUTE = dt.timedelta(minutes=1)
QUOTA = (
    'jobs.batch "ptah-apply" is forbidden: exceeded quota: no-jobs, requested: '
    "count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0"
)


def refused(world: MigrationWorld) -> MigrationWorld:
    """The claim's Job was refused by the API server: it does not exist, the refusal is known."""
    claim = MIGRATION.claim_of(world)
    assert claim.job_name is not None
    jobs = {k: v for k, v in world.jobs.items() if k != claim.job_name}
    return dataclasses.replace(world, jobs=jobs, job_refusals={claim.job_name: QUOTA})


def apply_refused() -> MigrationWorld:
    return refused(applying(dispatched=False))


def history_refused() -> MigrationWorld:
    world = reading()
    assert MIGRATION.claim_of(world).type == OperationType.HISTORY
    return refused(world)


def resolve_refused() -> MigrationWorld:
    world = step(git_new())
    assert MIGRATION.claim_of(world).type == OperationType.RESOLVE
    return refused(world)


def _no_claim(world: MigrationWorld, decision: object) -> None:
    after = MIGRATION.status_of(world, decision)  # type: ignore[arg-type]
    assert after.active_operation is None
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == Reason.JOB_REFUSED
    assert "exceeded quota" in failed.message


REFUSED = [
    Row(
        "Applying -> Failed: the API server refused the Apply Job; the Lease is given back",
        apply_refused,
        ("MIG-21", "JOB-06"),
        phase=MigrationPhase.FAILED,
        ready=Reason.JOB_REFUSED,
        job=None,
        lease=[LeaseVerb.RELEASE],
        entries=[JournalEntryType.OPERATION_FAILED],
        events=[EventReason.OPERATION_FAILED],
        then=_no_claim,
    ),
    Row(
        "Reading -> Failed: the API server refused the History Job",
        history_refused,
        ("MIG-29", "JOB-06"),
        phase=MigrationPhase.FAILED,
        ready=Reason.JOB_REFUSED,
        job=None,
        lease=[],
        entries=[JournalEntryType.OPERATION_FAILED],
        events=[EventReason.OPERATION_FAILED],
        then=_no_claim,
    ),
    Row(
        "Resolving -> Failed: the API server refused the Resolve Job",
        resolve_refused,
        ("MIG-29", "JOB-06"),
        phase=MigrationPhase.FAILED,
        ready=Reason.JOB_REFUSED,
        job=None,
        entries=[JournalEntryType.OPERATION_FAILED],
        then=_no_claim,
    ),
]


@pytest.mark.parametrize("row", params(REFUSED))
def test_a_refused_job_ends_its_operation_failed(row: Row) -> None:
    check(row)


@pytest.mark.req("MIG-21", "MIG-31", "JOB-06")
def test_a_refused_apply_is_not_asked_for_again_until_failure_retry_interval() -> None:
    failed = step(apply_refused())
    assert status(failed).phase == MigrationPhase.FAILED
    # The refusal is remembered; a pass inside the retry delay creates nothing.
    quiet = MIGRATION.reconcile(later(failed, dt.timedelta(seconds=10)))
    assert not [o for o in quiet.create if isinstance(o, dict) and o.get("kind") == "Job"]
    # After it, the resource starts over from resolution: a History read, then the same plan.
    again = step(later(failed, A_MINUTE))
    assert status(again).phase == MigrationPhase.READING


@pytest.mark.req("MIG-21", "APR-13")
def test_a_refused_apply_spends_no_approval() -> None:
    failed = step(apply_refused())
    journal = status(failed).journal
    assert journal is not None
    assert JournalEntryType.APPROVAL_ACCEPTED not in [e.type for e in journal.entries]


@pytest.mark.req("MIG-21", "APR-13", "APR-12")
def test_an_approval_a_refused_apply_did_not_use_authorizes_the_same_plan_again() -> None:
    """APR-13: an Apply that never started does not use up its approval; it stays available
    to the next claim. The refusal keeps the plan's publication, so the reading after
    failureRetryInterval that computes the same plan finds the approval still exact."""
    failed = step(apply_refused())
    again = step(later(failed, A_MINUTE))
    assert status(again).phase == MigrationPhase.READING
    # The reading computes the same plan; the approval given before the refusal still names
    # its publication and starts the Apply (in the pass of the reading or the one after).
    started = read(again, ready_to_plan())
    if status(started).phase != MigrationPhase.APPLYING:
        started = step(started)
    assert status(started).phase == MigrationPhase.APPLYING, status(started).phase


@pytest.mark.req("MIG-29", "JOB-06")
def test_a_refusal_left_from_an_earlier_create_does_not_fail_a_read_whose_job_exists() -> None:
    """A refusal is the answer to one create; a Job under the name is the later fact. While
    one exists the read follows it (reads.observe)."""
    world = reading()
    claim = MIGRATION.claim_of(world)
    assert claim.job_name is not None
    assert claim.job_name in world.jobs
    stale = dataclasses.replace(world, job_refusals={claim.job_name: QUOTA})
    after = MIGRATION.status_of(stale, MIGRATION.reconcile(stale))
    assert after.phase == MigrationPhase.READING
    assert after.active_operation is not None
    assert after.active_operation.retry_at is None
    assert after.condition(ConditionType.RECONCILIATION_FAILED) is None
