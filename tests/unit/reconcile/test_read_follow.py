"""Following a read under way (reconcile/reads.py `observe` and the rules under it), in both
families, by what the cluster and a person see: which objects a pass deletes (by API version,
namespace and name), what the claim records of its Job and attempt, and the words of a failure.

Written against the survivors of `make mutate` on reads.py (issue #11): each test pins a value
a one-line change of that module would alter. A migration's read is its History, a schema's
its Observe; the rule is the same.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    JournalEntryType,
    OperationType,
    Reason,
)
from ptah_operator.api.names import job_name, result_record_name
from ptah_operator.api.source_policy import parse_source_policy
from ptah_operator.reconcile import resolutions
from ptah_operator.reconcile.decision import Decision, LeaseVerb, ObjectRef, OperationCredentials
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.schedule import (
    CLEANUP_CHECK,
    LEASE_WAIT,
    POD_START_GRACE,
    RESULT_GRACE,
    RUN_CAP,
)
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.world import JobPhase, OperationResult, PodProblem
from tests.unit.reconcile.migration import worlds as migration
from tests.unit.reconcile.schema import worlds as schema
from tests.unit.reconcile.worlds import ROLLED_OUT, created, with_runner, with_source

A_SECOND = dt.timedelta(seconds=1)


@dataclasses.dataclass(frozen=True)
class Family:
    name: str
    worlds: Any
    reconcile: Callable[[Any], Decision]
    reading: Callable[[], Any]
    operation: OperationType

    def claim(self, world: Any) -> ActiveOperation:
        claim: ActiveOperation | None = self.worlds.status(world).active_operation
        assert claim is not None
        return claim

    def job(self, world: Any) -> str:
        name = self.claim(world).job_name
        assert name is not None
        return name

    def after(self, world: Any) -> tuple[Decision, Any]:
        decision = self.reconcile(world)
        return decision, self.worlds.status_of(world, decision)

    def with_claim(self, world: Any, **changes: Any) -> Any:
        claim = self.claim(world).model_copy(update=changes)
        return self.worlds.with_status(world, active_operation=claim)

    def job_ref(self, name: str) -> ObjectRef:
        return ObjectRef("batch/v1", "Job", self.worlds.NAMESPACE, name)

    def record_ref(self, name: str) -> ObjectRef:
        return ObjectRef("v1", "ConfigMap", self.worlds.NAMESPACE, name)


FAMILIES = [
    Family("migration", migration, reconcile_migration, migration.reading, OperationType.HISTORY),
    Family("schema", schema, reconcile_schema, schema.observing, OperationType.OBSERVE),
]
each = pytest.mark.parametrize("f", FAMILIES, ids=[f.name for f in FAMILIES])


def _failed_attempt(f: Family, world: Any, **changes: Any) -> Any:
    """The read's first attempt failed; its retry time has come."""
    return f.with_claim(
        world,
        retry_at=world.now - A_SECOND,
        last_failure_reason=Reason.OPERATION_FAILED,
        **changes,
    )


def _with_record(world: Any, operation_id: str, record_name: str | None = None) -> Any:
    result = OperationResult(operation_id, "History", world.now, {}, record_name=record_name)
    return dataclasses.replace(world, results={**world.results, operation_id: result})


def _left_running(decision: Decision, after: Any) -> None:
    """The attempt goes on: no Job made or deleted, the claim kept, no retry set."""
    assert created(decision, "Job") == []
    assert decision.delete == ()
    assert after.active_operation is not None
    assert after.active_operation.retry_at is None


def _without_jobs(world: Any) -> Any:
    return dataclasses.replace(world, jobs={})


def _failed(status: Any, reason: str, words: str) -> None:
    """ReconciliationFailed names `reason` and ends with `words` (a schema's message opens
    with the operation and its id)."""
    failed = status.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == reason
    assert failed.message.endswith(words), failed.message


# --- between attempts: the failed attempt's leftovers go first ---------------------------------


@each
@pytest.mark.req("RETRY-01")
def test_the_failed_attempts_job_and_record_are_deleted_by_their_names_before_the_next(
    f: Family,
) -> None:
    world = f.reading()
    claim = f.claim(world)
    world = _with_record(_failed_attempt(f, world), claim.operation_id)
    decision, _ = f.after(world)
    assert f.job_ref(f.job(world)) in decision.delete
    assert f.record_ref(result_record_name(claim.operation_id)) in decision.delete
    assert created(decision, "Job") == []
    assert decision.requeue_after == CLEANUP_CHECK


@each
def test_leftovers_of_a_claim_with_no_job_name_are_found_by_the_name_its_id_gives(
    f: Family,
) -> None:
    world = f.reading()
    claim = f.claim(world)
    world = _failed_attempt(f, world, job_name=None)
    decision, _ = f.after(world)
    assert decision.delete == (f.job_ref(job_name(claim.type, claim.operation_id)),)
    assert decision.requeue_after == CLEANUP_CHECK


@each
def test_a_record_kept_under_another_name_is_deleted_by_that_name(f: Family) -> None:
    world = f.reading()
    claim = f.claim(world)
    world = _with_record(_without_jobs(_failed_attempt(f, world)), claim.operation_id, "elsewhere")
    decision, _ = f.after(world)
    assert decision.delete == (f.record_ref("elsewhere"),)
    assert created(decision, "Job") == []


@each
def test_the_next_attempt_starts_with_a_new_job_and_forgets_the_last_ones(f: Family) -> None:
    world = f.reading()
    gone_at = world.now - dt.timedelta(minutes=1)
    world = _without_jobs(
        _failed_attempt(
            f,
            world,
            job_uid="uid-of-the-failed-attempt",
            job_created_at=world.now - dt.timedelta(minutes=5),
            job_gone_at=gone_at,
        )
    )
    before = f.claim(world)
    decision, after = f.after(world)
    assert [j["metadata"]["name"] for j in created(decision, "Job")] == [f.job(world)]
    claim = after.active_operation
    assert claim is not None
    assert claim.attempt == before.attempt + 1
    assert claim.retry_at is None
    assert claim.job_uid is None
    assert claim.job_created_at == world.now
    assert claim.job_gone_at is None


@each
def test_before_its_retry_time_the_read_waits_for_exactly_that_time(f: Family) -> None:
    world = f.reading()
    retry_at = world.now + dt.timedelta(seconds=42)
    world = f.with_claim(world, retry_at=retry_at, last_failure_reason=Reason.OPERATION_FAILED)
    decision, _ = f.after(world)
    assert decision.delete == ()
    assert decision.requeue_after == retry_at - world.now


@each
@pytest.mark.req("RRQ-17")
def test_an_invalid_read_request_is_answered_and_the_next_attempt_still_starts(f: Family) -> None:
    from ptah_operator.api.constants import ANNOTATION_READ_REQUESTED_AT

    world = _without_jobs(_failed_attempt(f, f.reading()))
    world = f.worlds.annotated(world, ANNOTATION_READ_REQUESTED_AT, "not a time")
    decision, after = f.after(world)
    assert [j["metadata"]["name"] for j in created(decision, "Job")] == [f.job(world)]
    assert after.active_operation is not None
    assert after.active_operation.attempt == 2
    assert EventReason.READ_RESTARTED not in [e.reason for e in decision.events]


@each
@pytest.mark.req("RETRY-05")
def test_a_read_request_after_the_retry_time_makes_the_read_give_way_saying_when_it_was_asked(
    f: Family,
) -> None:
    from ptah_operator.api.constants import ANNOTATION_READ_REQUESTED_AT

    world = _without_jobs(_failed_attempt(f, f.reading()))
    asked = "2026-08-30T12:00:00Z"
    world = f.worlds.annotated(world, ANNOTATION_READ_REQUESTED_AT, asked)
    decision, after = f.after(world)
    restarted = [e.message for e in decision.events if e.reason == EventReason.READ_RESTARTED]
    assert len(restarted) == 1
    assert restarted[0].endswith(f"gave way to a new read: a read was requested at {asked}")
    assert after.active_operation is None


# --- a Job that holds no result --------------------------------------------------------------


@each
def test_a_job_of_another_uid_under_the_name_is_left_running_and_none_is_made_over_it(
    f: Family,
) -> None:
    world = f.with_claim(f.reading(), job_uid="uid-of-our-job")
    name = f.job(world)
    assert world.jobs[name].uid != "uid-of-our-job"
    _left_running(*f.after(world))


@each
def test_a_job_made_again_keeps_when_the_attempts_first_job_was_made(f: Family) -> None:
    world = f.reading()
    first = world.now - dt.timedelta(minutes=3)
    world = _without_jobs(f.with_claim(world, job_uid="uid-of-the-gone-job", job_created_at=first))
    decision, after = f.after(world)
    assert [j["metadata"]["name"] for j in created(decision, "Job")] == [f.job(world)]
    claim = after.active_operation
    assert claim is not None
    assert claim.job_uid is None
    assert claim.job_created_at == first


@each
def test_a_suspended_job_with_no_pod_running_is_deleted_and_fails_the_attempt(f: Family) -> None:
    world = f.worlds.with_job(f.reading(), JobPhase.ACTIVE, suspended=True)
    name = f.job(world)
    decision, after = f.after(world)
    assert decision.delete == (f.job_ref(name),)
    _failed(after, Reason.OPERATION_FAILED, f"Job {name} was suspended")


@each
def test_a_pod_that_cannot_start_fails_the_attempt_once_the_grace_is_over_not_before(
    f: Family,
) -> None:
    world = f.reading()
    since = world.now - POD_START_GRACE
    problem = PodProblem("CreateContainerConfigError", "Secret orders-db not found", since)
    stuck = f.worlds.with_job(world, JobPhase.ACTIVE, pod_problem=problem)
    name = f.job(stuck)
    decision, after = f.after(stuck)
    assert decision.delete == (f.job_ref(name),)
    _failed(
        after,
        "CreateContainerConfigError",
        f"the Pod of Job {name} cannot start: CreateContainerConfigError "
        "(Secret orders-db not found)",
    )
    early = f.worlds.with_job(
        world, JobPhase.ACTIVE, pod_problem=dataclasses.replace(problem, since=since + A_SECOND)
    )
    decision, after = f.after(early)
    assert decision.delete == ()
    assert decision.requeue_after == A_SECOND


@each
def test_a_pod_problem_without_detail_or_a_reason_word_is_worded_plainly(f: Family) -> None:
    world = f.reading()
    problem = PodProblem("not a reason word", None, world.now - POD_START_GRACE)
    stuck = f.worlds.with_job(world, JobPhase.ACTIVE, pod_problem=problem)
    _, after = f.after(stuck)
    _failed(
        after,
        Reason.OPERATION_FAILED,
        f"the Pod of Job {f.job(stuck)} cannot start: not a reason word",
    )


@each
def test_an_ended_job_without_a_result_fails_the_attempt_at_its_end_after_the_grace(
    f: Family,
) -> None:
    world = f.reading()
    ended = world.now - RESULT_GRACE
    gone = f.worlds.with_job(world, JobPhase.FAILED, finished_at=ended, reason="DeadlineExceeded")
    decision, after = f.after(gone)
    name = f.job(gone)
    _failed(after, "DeadlineExceeded", f"Job {name} ended without a readable result")
    entries = f.worlds.entries_added(gone, decision)
    failed = [e for e in entries if e.type == JournalEntryType.OPERATION_FAILED]
    assert [e.time for e in failed] == [ended]


@each
def test_an_ended_job_whose_pod_never_started_names_the_pod_problem(f: Family) -> None:
    world = f.reading()
    problem = PodProblem("not a reason word", None, world.now - POD_START_GRACE)
    ended = world.now - RESULT_GRACE
    gone = f.worlds.with_job(world, JobPhase.FAILED, finished_at=ended, pod_problem=problem)
    _, after = f.after(gone)
    _failed(
        after,
        Reason.OPERATION_FAILED,
        f"the Pod of Job {f.job(gone)} cannot start: not a reason word",
    )


# --- the read's hard cap ---------------------------------------------------------------------


@each
def test_at_its_cap_the_job_is_deleted_and_the_claim_records_it_with_its_first_creation(
    f: Family,
) -> None:
    world = f.reading()
    job = world.jobs[f.job(world)]
    first = job.created_at - dt.timedelta(minutes=1) if job.created_at else world.now
    world = f.with_claim(world, job_uid=None, job_created_at=first)
    late = f.worlds.later(world, RUN_CAP + A_SECOND)
    decision, after = f.after(late)
    assert f.job_ref(f.job(late)) in decision.delete
    claim = after.active_operation
    assert claim is not None
    assert claim.job_uid == job.uid
    assert claim.job_created_at == first


@each
def test_a_capped_attempt_whose_job_is_gone_fails_naming_the_job_its_id_gives(f: Family) -> None:
    world = f.reading()
    claim = f.claim(world)
    world = _without_jobs(
        f.with_claim(world, job_name=None, job_uid="uid-of-the-gone-job", job_created_at=world.now)
    )
    late = f.worlds.later(world, RUN_CAP + dt.timedelta(minutes=5))
    decision, after = f.after(late)
    name = job_name(claim.type, claim.operation_id)
    minutes = int(RUN_CAP.total_seconds() // 60)
    assert minutes == 75
    _failed(
        after,
        Reason.OPERATION_FAILED,
        f"Job {name} was not over {minutes} minutes after it was made",
    )
    assert created(decision, "Job") == []


# --- giving way: the words of what moved --------------------------------------------------------


def _gave_way(f: Family, world: Any, why: str) -> None:
    decision, after = f.after(world)
    restarted = [e.message for e in decision.events if e.reason == EventReason.READ_RESTARTED]
    assert len(restarted) == 1, restarted
    assert restarted[0].endswith(f"gave way to a new read: {why}"), restarted[0]
    assert after.active_operation is None
    assert after.message == f"{why}: a new read starts"


@each
@pytest.mark.req("RETRY-02")
def test_a_plain_read_gives_way_when_its_files_change(f: Family) -> None:
    world = f.reading()
    files = {**f.worlds.FILES, "9999_added.sql": b"SELECT 1;\n"}
    _gave_way(f, with_source(world, f.worlds.source_files(files)), "the source changed")


@each
@pytest.mark.req("RETRY-02")
def test_a_plain_read_gives_way_when_the_runner_is_rolled_out(f: Family) -> None:
    _gave_way(f, with_runner(f.reading(), ROLLED_OUT), "the execution binding changed")


@pytest.mark.req("RETRY-02", "SRC-POL-07")
def test_a_resolve_gives_way_when_its_source_policy_is_replaced() -> None:
    from tests.unit.reconcile.migration.test_migration_sources import (
        REPLACED_SOURCE_POLICY,
        SOURCE_POLICY,
        git_new,
        under_source_policy,
        with_source_policy,
    )

    allowed = dataclasses.replace(
        SOURCE_POLICY, policy=parse_source_policy(b"version: 1\ngit: {hosts: [git.example]}\n")
    )
    world = migration.step(under_source_policy(git_new(), allowed))
    assert FAMILIES[0].claim(world).type == OperationType.RESOLVE
    replaced = dataclasses.replace(REPLACED_SOURCE_POLICY, policy=allowed.policy)
    _gave_way(FAMILIES[0], with_source_policy(world, replaced), "the source policy changed")


@each
def test_a_refused_read_job_is_named_in_the_failure(f: Family) -> None:
    world = f.reading()
    name = f.job(world)
    refused = dataclasses.replace(
        _without_jobs(world), job_refusals={name: "admission webhook denied the request"}
    )
    _, after = f.after(refused)
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == Reason.JOB_REFUSED
    assert f"Job {name}" in failed.message


# --- when a read is due with no claim ------------------------------------------------------------


@each
@pytest.mark.req("RETRY-12")
def test_in_sync_with_no_next_reconciliation_time_a_read_is_due_at_once(f: Family) -> None:
    world = f.worlds.with_status(f.worlds.in_sync(), next_reconciliation_time=None)
    decision, _ = f.after(world)
    assert len(created(decision, "Job")) == 1


@pytest.mark.req("SCH-50")
def test_a_realm_refusal_that_ended_starts_the_read_at_once_not_at_its_recheck() -> None:
    from tests.unit.reconcile.schema.test_schema_blocked import realm_refused

    refused = realm_refused()
    assert refused.realm is not None
    realm = refused.realm.model_copy(
        update={"spec": refused.realm.spec.model_copy(update={"namespaces": [schema.NAMESPACE]})}
    )
    # The interval's read is an hour away: only the lifted gate can start one now.
    world = schema.with_status(
        refused, next_reconciliation_time=refused.now + dt.timedelta(hours=1)
    )
    decision, _ = FAMILIES[1].after(dataclasses.replace(world, realm=realm))
    assert len(created(decision, "Job")) == 1


# --- reads that only a Git or OCI source has ----------------------------------------------------


def _sources() -> Any:
    from tests.unit.reconcile.migration import test_migration_sources

    return test_migration_sources


@pytest.mark.req("RETRY-04")
def test_a_failing_git_history_read_gives_way_once_the_interval_passed_saying_so() -> None:
    world = _without_jobs(_failed_attempt(FAMILIES[0], _sources().git_reading()))
    record = migration.status(world).source
    assert record is not None
    read_at = world.now - dt.timedelta(hours=1)
    world = migration.with_status(world, source=record.model_copy(update={"resolved_at": read_at}))
    _gave_way(FAMILIES[0], world, "spec.interval passed since the source was last read")


@pytest.mark.req("RETRY-04")
def test_a_failing_verify_with_no_source_on_record_gives_way_at_its_retry_time() -> None:
    src = _sources()
    world = migration.step(migration.step(src.resolved_oci(migration.step(src.oci_new()))))
    assert FAMILIES[0].claim(world).type == OperationType.VERIFY
    world = migration.with_status(_without_jobs(_failed_attempt(FAMILIES[0], world)), source=None)
    _gave_way(FAMILIES[0], world, "spec.interval passed since the source was last read")


@pytest.mark.req("RETRY-02")
def test_a_verify_gives_way_when_the_spec_names_another_artifact() -> None:
    src = _sources()
    world = migration.step(migration.step(src.resolved_oci(migration.step(src.oci_new()))))
    assert FAMILIES[0].claim(world).type == OperationType.VERIFY
    spec = world.migration.spec
    assert spec.artifact is not None
    other = spec.artifact.model_copy(update={"oci_ref": spec.artifact.oci_ref + "-other"})
    resource = world.migration.model_copy(
        update={"spec": spec.model_copy(update={"artifact": other})}
    )
    _gave_way(FAMILIES[0], dataclasses.replace(world, migration=resource), "the source changed")


# --- a claim's Job fields at the cap and without a name --------------------------------------------


@each
def test_a_running_job_of_a_claim_with_no_job_name_is_found_by_the_name_its_id_gives(
    f: Family,
) -> None:
    world = f.with_claim(f.reading(), job_name=None)
    _left_running(*f.after(world))


@each
@pytest.mark.parametrize("created_at", [True, False], ids=["job time", "no job time"])
def test_at_its_cap_a_claim_made_with_no_time_takes_its_jobs(f: Family, created_at: bool) -> None:
    world = f.reading()
    name = f.job(world)
    made = world.now - dt.timedelta(minutes=1)
    jobs = {name: dataclasses.replace(world.jobs[name], created_at=made if created_at else None)}
    world = f.with_claim(dataclasses.replace(world, jobs=jobs), job_uid=None, job_created_at=None)
    _, after = f.after(f.worlds.later(world, RUN_CAP + A_SECOND))
    claim = after.active_operation
    assert claim is not None
    assert claim.job_uid == jobs[name].uid
    assert claim.job_created_at == (made if created_at else None)


@each
def test_past_its_cap_a_job_made_again_and_gone_fails_the_attempt_and_is_not_made_again(
    f: Family,
) -> None:
    world = f.reading()
    world = _without_jobs(f.with_claim(world, job_uid=None, job_created_at=world.now))
    decision, after = f.after(f.worlds.later(world, RUN_CAP + dt.timedelta(minutes=5)))
    assert created(decision, "Job") == []
    _failed(after, Reason.OPERATION_FAILED, "minutes after it was made")


@each
def test_past_its_cap_a_claim_whose_job_was_never_made_has_it_made(f: Family) -> None:
    world = f.reading()
    world = _without_jobs(f.with_claim(world, job_uid=None, job_created_at=None))
    decision, after = f.after(f.worlds.later(world, RUN_CAP + dt.timedelta(minutes=5)))
    assert [j["metadata"]["name"] for j in created(decision, "Job")] == [f.job(world)]
    assert after.active_operation is not None
    assert after.active_operation.retry_at is None


# --- a dispatched Apply whose Pod cannot start (reads.apply_cannot_start) ------------------------


@each
def test_an_apply_whose_pod_cannot_start_says_so_once_per_cause_and_is_followed_on(
    f: Family,
) -> None:
    world = f.worlds.applying(dispatched=True)
    since = world.now - POD_START_GRACE
    first = PodProblem("CreateContainerConfigError", "Secret orders-db not found", since)
    stuck = f.worlds.with_job(world, JobPhase.ACTIVE, pod_problem=first)
    name = f.job(stuck)
    decision, after = f.after(stuck)
    follow = "; the Apply is followed to its end, its Job's deadline at the latest"
    said = (
        f"the Pod of Job {name} cannot start: CreateContainerConfigError "
        f"(Secret orders-db not found){follow}"
    )
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert (failed.reason, failed.message) == ("CreateContainerConfigError", said)
    assert [e.message for e in decision.events if e.reason == EventReason.OPERATION_FAILED] == [
        said
    ]
    assert after.active_operation is not None
    # The same cause on the next pass says nothing new.
    again = f.worlds.carry_out(stuck, decision)
    decision, _ = f.after(again)
    assert EventReason.OPERATION_FAILED not in [e.reason for e in decision.events]
    # The same reason for another missing name is a new cause: said again.
    other = dataclasses.replace(first, detail="Secret orders-db has no key url")
    decision, after = f.after(f.worlds.with_job(again, JobPhase.ACTIVE, pod_problem=other))
    warned = [e.message for e in decision.events if e.reason == EventReason.OPERATION_FAILED]
    assert warned == [
        f"the Pod of Job {name} cannot start: CreateContainerConfigError "
        f"(Secret orders-db has no key url){follow}"
    ]


# --- what a read's result says, and a retry whose files are gone ----------------------------------


@each
def test_a_result_that_cannot_be_read_fails_the_attempt_when_it_came(f: Family) -> None:
    world = f.reading()
    claim = f.claim(world)
    came = world.now - dt.timedelta(seconds=5)
    garbage = OperationResult(claim.operation_id, claim.type.value, came, {"contract": "x"})
    world = f.worlds.with_result(world, garbage)
    decision, after = f.after(world)
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == Reason.OPERATION_FAILED
    assert after.active_operation is not None
    assert after.active_operation.last_failure_reason == Reason.OPERATION_FAILED
    entries = f.worlds.entries_added(world, decision)
    assert [e.time for e in entries if e.type == JournalEntryType.OPERATION_FAILED] == [came]


@each
def test_a_reported_failure_is_recorded_at_the_time_the_runner_gives(f: Family) -> None:
    world = f.reading()
    error = {"reason": "ConnectionFailed", "message": "the server answered 503"}
    result = f.worlds.report(world, f.operation, target=None, error=error)
    finished = world.now - dt.timedelta(seconds=30)
    payload = {**result.payload, "finishedAt": finished.isoformat()}
    world = f.worlds.with_result(world, dataclasses.replace(result, payload=payload))
    decision, after = f.after(world)
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == "ConnectionFailed"
    entries = f.worlds.entries_added(world, decision)
    assert [e.time for e in entries if e.type == JournalEntryType.OPERATION_FAILED] == [finished]


def test_a_history_result_with_no_reading_fails_the_attempt_saying_so() -> None:
    world = migration.reading()
    world = migration.with_result(world, migration.report(world, OperationType.HISTORY))
    decision, after = FAMILIES[0].after(world)
    _failed(after, Reason.OPERATION_FAILED, "the result holds no reading")
    assert after.active_operation is not None
    assert after.active_operation.retry_at is not None
    entries = migration.entries_added(world, decision)
    assert [e.time for e in entries if e.type == JournalEntryType.OPERATION_FAILED] == [world.now]


@pytest.mark.req("SRC-CM-16", "SRC-CM-17", "RETRY-09")
@pytest.mark.parametrize(
    ("f", "proving", "words", "claim_kept"),
    [
        (
            FAMILIES[0],
            lambda: migration.step(migration.verifying_history()),
            "the history read was refused: the files the read is bound to ({}) are gone",
            False,
        ),
        (
            FAMILIES[1],
            schema.proving,
            "failed: its files were refused: the files it is bound to ({}) are gone",
            True,
        ),
    ],
    ids=["migration", "schema"],
)
def test_a_proofs_retry_whose_files_are_gone_makes_no_job_and_says_which_files(
    f: Family, proving: Callable[[], Any], words: str, claim_kept: bool
) -> None:
    """A plain read whose snapshot and source are gone gives way first; a proof never gives
    way, so its retry finds the files it is bound to gone: a migration's read ends Failed
    (MIG-29), a schema's proof keeps its claim and tries again (SRC-CM-17)."""
    world = _without_jobs(_failed_attempt(f, proving()))
    claim = f.claim(world)
    assert claim.serves_proof
    assert claim.source is not None
    gone = dataclasses.replace(world, snapshots=frozenset(), source=None)
    decision, after = f.after(gone)
    assert created(decision, "Job") == []
    _failed(after, Reason.SNAPSHOT_MISSING, words.format(resolutions.describe(claim.source)))
    assert (after.active_operation is not None) == claim_kept


@each
def test_a_job_made_again_comes_with_the_credentials_of_its_operation(f: Family) -> None:
    world = f.reading()
    claim = f.claim(world)
    decision, _ = f.after(_without_jobs(world))
    credentials = [c for c in decision.create if isinstance(c, OperationCredentials)]
    assert [(c.operation_id, c.namespace) for c in credentials] == [
        (claim.operation_id, f.worlds.NAMESPACE)
    ]
    resource = f.worlds.MIGRATION if f.name == "migration" else f.worlds.SCHEMA
    assert credentials[0].owner["uid"] == resource.resource(world).metadata.uid


# --- a schema Plan's attempts and the realm Lease ---------------------------------------------------


def _plan_failed(world: Any, **changes: Any) -> Any:
    """A Plan's attempt failed: its Job gone, its retry due, the Lease given back (LCK-08)."""
    failed = _without_jobs(_failed_attempt(FAMILIES[1], world, **changes))
    return dataclasses.replace(failed, lease=None)


@pytest.mark.req("LCK-08")
def test_a_plain_plans_next_attempt_takes_the_lease_afresh() -> None:
    world = _plan_failed(schema.planning(), lease_epoch=7, lease_continuity_lost=True)
    decision, after = FAMILIES[1].after(world)
    assert [a.verb for a in decision.lease] == [LeaseVerb.ACQUIRE]
    assert len(created(decision, "Job")) == 1
    claim = after.active_operation
    assert claim is not None
    assert claim.attempt == 2
    assert claim.lease_epoch is None
    assert claim.lease_continuity_lost is None


@pytest.mark.req("LCK-08")
def test_a_plain_plans_next_attempt_waits_while_another_holds_the_lease() -> None:
    failed = _plan_failed(schema.planning())
    world = schema.lease_taken_by_another(failed)
    before = FAMILIES[1].claim(world)
    decision, after = FAMILIES[1].after(world)
    assert created(decision, "Job") == []
    assert decision.lease == ()
    assert decision.requeue_after == LEASE_WAIT
    claim = after.active_operation
    assert claim is not None
    assert (claim.attempt, claim.retry_at) == (before.attempt, before.retry_at)
    assert after.phase == "Failed"


@pytest.mark.req("LCK-10", "RETRY-09")
def test_a_proofs_next_attempt_keeps_the_lease_epoch_it_holds() -> None:
    proving = schema.proving()
    assert proving.lease is not None
    epoch = proving.lease.epoch
    world = _without_jobs(_failed_attempt(FAMILIES[1], proving, lease_epoch=epoch))
    before = FAMILIES[1].claim(world)
    decision, after = FAMILIES[1].after(world)
    assert len(created(decision, "Job")) == 1
    claim = after.active_operation
    assert claim is not None
    assert claim.attempt == before.attempt + 1
    assert claim.lease_epoch == before.lease_epoch


# --- what a schema Plan's result cannot be evidence of ----------------------------------------------


def _plan_lost_its_lock(world: Any) -> Any:
    error = {"reason": "LockLost", "message": "the session's lock went"}
    return schema.with_result(world, schema.report(world, OperationType.PLAN, error=error))


def test_a_plain_plan_that_lost_its_lock_is_discarded_and_the_database_observed_again() -> None:
    decision, after = FAMILIES[1].after(_plan_lost_its_lock(schema.planning()))
    why = "the lock was lost while it planned"
    restarted = [e.message for e in decision.events if e.reason == EventReason.READ_RESTARTED]
    assert len(restarted) == 1
    assert f"is discarded: {why}; the database is observed again" in restarted[0]
    assert after.message == f"{why}: the database is observed again"
    assert after.active_operation is None


def test_a_proof_plan_that_lost_its_lock_is_discarded_and_runs_again() -> None:
    world = schema.step(schema.proof_planning())
    assert FAMILIES[1].claim(world).type == OperationType.PLAN
    _, after = FAMILIES[1].after(_plan_lost_its_lock(world))
    assert after.active_operation is None
    assert "is discarded (it could not hold the database's lock); it runs again" in (
        after.message or ""
    )


def test_a_proof_result_across_a_change_of_lease_holder_is_discarded() -> None:
    world = schema.proving()
    world = schema.observed(FAMILIES[1].with_claim(world, lease_continuity_lost=True))
    _, after = FAMILIES[1].after(world)
    assert after.active_operation is None
    assert "is discarded (the database-realm Lease changed hands while it ran); it runs again" in (
        after.message or ""
    )
