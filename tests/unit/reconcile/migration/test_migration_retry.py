"""A read that fails, runs again, or gives way (seed 000: "A read fails", the give-way table,
"A mutating claim never gives way")."""

from __future__ import annotations

import datetime as dt

import pytest

from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    JournalEntryType,
    MigrationPhase,
    Reason,
    RunOutcome,
)
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.worlds import (
    EDITED_FILES,
    annotated,
    applying,
    awaiting_approval,
    claim_id,
    entries_added,
    history_reported,
    job_of,
    later,
    nothing_pending,
    read_failed,
    reading,
    run_block,
    run_reported,
    source_files,
    status,
    status_of,
    step,
    with_job,
    with_source,
    with_status,
)

A_MINUTE = dt.timedelta(minutes=1)
TEN_MINUTES = dt.timedelta(minutes=10)
REQUEST = "operator.ptah.run/read-requested-at"
Entry = JournalEntryType


def failed_once(world: MigrationWorld | None = None) -> MigrationWorld:
    return step(read_failed(world or reading()))


def retried(world: MigrationWorld) -> MigrationWorld:
    """After the retry delay: the failed attempt's Job and record removed, the next created."""
    return step(step(later(world, A_MINUTE)))


def failed_twice() -> MigrationWorld:
    return read_failed(retried(failed_once()))


def failed_proof() -> MigrationWorld:
    world = step(run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"])))
    return failed_once(step(world))


def kept_retrying(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    claim = after.active_operation
    assert claim is not None
    assert claim.operation_id == claim_id(world)
    assert claim.retry_at == world.now + A_MINUTE
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.status.value == "True"
    assert failed.reason == "ConnectionFailed"
    assert decision.requeue_after == A_MINUTE


def folded(world: MigrationWorld, decision: Decision) -> None:
    journal = status_of(world, decision).journal
    assert journal is not None
    failures = [e for e in journal.entries if e.type == Entry.OPERATION_FAILED]
    assert len(failures) == 1
    assert failures[0].count == 2
    assert failures[0].time == world.now


def same_claim_same_snapshot(world: MigrationWorld, decision: Decision) -> None:
    before = status(world).active_operation
    after = status_of(world, decision).active_operation
    assert before is not None
    assert after is not None
    assert after.operation_id == before.operation_id
    assert after.attempt == 2
    assert after.retry_at is None
    assert after.source == before.source
    job = next(o for o in decision.create if isinstance(o, dict) and o["kind"] == "Job")
    volumes = job["spec"]["template"]["spec"]["volumes"]
    assert before.source is not None
    assert [v["configMap"]["name"] for v in volumes if "configMap" in v] == [
        before.source.snapshot_name
    ]


def cleans_up_first(world: MigrationWorld, decision: Decision) -> None:
    kinds = sorted(ref.kind for ref in decision.delete)
    assert kinds == ["ConfigMap", "Job"]
    assert job_of(decision) is None


def failure_stays(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.status.value == "True"
    assert after.active_operation is None


def plan_stays(world: MigrationWorld, decision: Decision) -> None:
    failure_stays(world, decision)
    assert status_of(world, decision).plan == status(world).plan
    assert status(world).plan is not None


def proof_keeps_its_snapshot(world: MigrationWorld, decision: Decision) -> None:
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.serves_proof is True
    assert claim.attempt == 2
    run = status(world).last_run
    assert run is not None
    assert claim.source == run.source


def failure_replaced(world: MigrationWorld, decision: Decision) -> None:
    assert status_of(world, decision).condition(ConditionType.RECONCILIATION_FAILED) is None


A_READ_FAILS = [
    Row(
        "a read whose Job failed stays in its phase, Progressing=True OperationFailed",
        lambda: read_failed(reading()),
        ("MIG-27", "RETRY-01", "RETRY-15", "JNL-12", "MIG-52"),
        phase=MigrationPhase.READING,
        ready=Reason.OPERATION_FAILED,
        progressing=(True, Reason.OPERATION_FAILED),
        job=None,
        entries=[Entry.OPERATION_FAILED],
        events=[EventReason.OPERATION_FAILED],
        lease=[],
        then=kept_retrying,
    ),
    Row(
        "the same failure again folds into one entry with a count",
        failed_twice,
        ("JNL-12", "MIG-27"),
        phase=MigrationPhase.READING,
        then=folded,
    ),
    Row(
        "inside its retry delay the failed read waits",
        lambda: later(failed_once(), dt.timedelta(seconds=30)),
        ("RETRY-01",),
        writes=False,
        job=None,
    ),
    Row(
        "when the delay ends, the failed attempt's Job and record go first",
        lambda: later(failed_once(), A_MINUTE),
        ("RETRY-01",),
        phase=MigrationPhase.READING,
        then=cleans_up_first,
    ),
    Row(
        "then the same read runs again under the same claim, on the same snapshot",
        lambda: step(later(failed_once(), A_MINUTE)),
        ("RETRY-01", "MIG-27", "RETRY-15"),
        phase=MigrationPhase.READING,
        progressing=(True, Reason.OPERATION_IN_PROGRESS),
        job="History",
        then=same_claim_same_snapshot,
    ),
    Row(
        "a retry that reads the history replaces the failure",
        lambda: history_reported(retried(failed_once()), nothing_pending()),
        ("RETRY-06", "MIG-27"),
        phase=MigrationPhase.IN_SYNC,
        then=failure_replaced,
    ),
    Row(
        "a Job that ended without a result, past the grace, is a failed attempt",
        lambda: with_job(
            later(reading(), dt.timedelta(minutes=2)),
            JobPhase.FAILED,
            finished_at=reading().now,
            reason="DeadlineExceeded",
        ),
        ("MIG-27", "JOB-08"),
        phase=MigrationPhase.READING,
        ready=Reason.OPERATION_FAILED,
        entries=[Entry.OPERATION_FAILED],
    ),
    Row(
        "a read under way is left to finish: the Job under the reserved name is an attempt",
        lambda: annotated(reading(), REQUEST, "2026-08-30T12:00:30Z"),
        ("RETRY-10", "RRQ-12"),
        writes=False,
        job=None,
        events=[],
    ),
]

GIVING_WAY = [
    Row(
        "between attempts, the source ConfigMap changed: it gives way at once",
        lambda: with_source(failed_once(), source_files(EDITED_FILES)),
        ("RETRY-02", "RETRY-05", "MIG-28"),
        phase=MigrationPhase.PENDING,
        job=None,
        events=[EventReason.READ_RESTARTED],
        then=failure_stays,
    ),
    Row(
        "between attempts, a person asked for a read: it waits for the delay to end",
        lambda: annotated(
            later(failed_once(), dt.timedelta(seconds=30)), REQUEST, "2026-08-30T12:00:20Z"
        ),
        ("RETRY-03", "RRQ-14", "RRQ-11"),
        writes=False,
        job=None,
    ),
    Row(
        "between attempts, a person asked for a read: at the end of the delay it gives way",
        lambda: annotated(later(failed_once(), A_MINUTE), REQUEST, "2026-08-30T12:00:20Z"),
        ("RETRY-03", "RETRY-05", "RETRY-06", "RRQ-14"),
        phase=MigrationPhase.PENDING,
        job=None,
        events=[EventReason.READ_RESTARTED],
        then=failure_stays,
    ),
    Row(
        "giving way keeps a plan that waits for approval",
        lambda: annotated(
            later(failed_once(step(later(awaiting_approval(), TEN_MINUTES))), A_MINUTE),
            REQUEST,
            "2026-08-30T12:10:20Z",
        ),
        ("RETRY-06", "RRQ-06"),
        phase=MigrationPhase.PENDING,
        then=plan_stays,
    ),
    Row(
        "the Pending pass after giving way starts the read, which answers the request",
        lambda: step(annotated(later(failed_once(), A_MINUTE), REQUEST, "2026-08-30T12:00:20Z")),
        ("RETRY-05", "RRQ-05"),
        phase=MigrationPhase.READING,
        job="History",
        events=[EventReason.READ_REQUESTED],
    ),
    Row(
        "a ConfigMap source does not give way when spec.interval passes (that is for Git, OCI)",
        lambda: later(failed_once(), TEN_MINUTES),
        ("RETRY-04",),
        phase=MigrationPhase.READING,
        then=cleans_up_first,
    ),
    Row(
        "the read that proves an Apply never gives way: it retries on the run's snapshot",
        lambda: step(later(with_source(failed_proof(), source_files(EDITED_FILES)), A_MINUTE)),
        ("RETRY-09", "RETRY-01"),
        phase=MigrationPhase.READING,
        job="History",
        then=proof_keeps_its_snapshot,
    ),
    Row(
        "the read that proves an Apply does not give way to a request either",
        lambda: annotated(later(failed_proof(), A_MINUTE), REQUEST, "2026-08-30T12:00:20Z"),
        ("RETRY-09", "RRQ-15"),
        phase=MigrationPhase.READING,
        then=cleans_up_first,
    ),
]


@pytest.mark.parametrize("row", params(A_READ_FAILS))
def test_a_read_fails_and_runs_again(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(GIVING_WAY))
def test_a_failed_read_gives_way(row: Row) -> None:
    check(row)


@pytest.mark.req("RETRY-15", "RETRY-01")
def test_a_read_that_keeps_failing_keeps_one_entry_and_runs_every_interval() -> None:
    world = failed_once()
    for attempt in range(2, 6):
        world = read_failed(retried(world))
        decision = reconcile_migration(world)
        world_after = step(world)
        claim = status(world_after).active_operation
        assert claim is not None
        assert claim.attempt == attempt
        added = entries_added(world, decision)
        assert [e.count for e in added] == [attempt]
        world = world_after
    journal = status(world).journal
    assert journal is not None
    assert [e.type for e in journal.entries] == [Entry.OPERATION_FAILED]


def test_a_failed_attempts_record_is_cleaned_up_under_the_name_it_was_read_under() -> None:
    """RETRY-01: the failed attempt's record goes first, under the name it was read under. A
    record stored under the endpoint's fallback name (its own name held by a record the
    endpoint did not write) is deleted under that name: deleting the other would leave it,
    and the retry would wait for it for ever (issue #18)."""
    import dataclasses

    world = later(failed_once(), A_MINUTE)
    op = claim_id(world)
    fallback = f"ptah-result-{op.removeprefix('op-')}-s{'0' * 20}"
    results = dict(world.results)
    results[op] = dataclasses.replace(results[op], record_name=fallback)
    decision = reconcile_migration(dataclasses.replace(world, results=results))
    deleted = sorted(ref.name for ref in decision.delete if ref.kind == "ConfigMap")
    assert deleted == [fallback]


@pytest.mark.req("RETRY-01")
def test_the_next_attempt_does_not_carry_the_report_digest_of_the_failed_one() -> None:
    """The endpoint writes the digest of an attempt's first report into the claim
    (status.activeOperation.report, issue #18); the next attempt under the same claim starts
    without it, or its own runner's report would be refused as a second one."""
    from ptah_operator.api.common import ReceivedReport

    world = failed_once()
    claim = status(world).active_operation
    assert claim is not None
    report = ReceivedReport(attempt=1, digest="sha256:" + "e" * 64)
    world = with_status(world, active_operation=claim.model_copy(update={"report": report}))
    after = status(retried(world)).active_operation
    assert after is not None
    assert after.attempt == 2
    assert after.report is None
