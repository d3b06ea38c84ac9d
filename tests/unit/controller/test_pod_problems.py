"""A Job whose Pod cannot start, as the controller reads it from the Job and its Pods.

Issue #11: "a Pod that cannot start (missing Secret or key for urlFrom, image not found,
quota) must surface in conditions and an Event with the reason". The controller reduces it to
`JobState.pod_problem`: the Kubernetes reason word, what is missing by kind, name and key, and
since when; never the server's message.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ptah_operator.controller.indexes import index_job_uid, job_pod_keys
from ptah_operator.controller.world import ProblemOnsets, job_state, missing_object
from ptah_operator.reconcile.world import JobPhase, PodProblem

CREATED = "2026-08-30T12:00:00Z"
SINCE = dt.datetime(2026, 8, 30, 12, 0, tzinfo=dt.UTC)


def job(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "ptah-history-00a0000001",
            "uid": "j-1",
            "labels": {"operator.ptah.run/operation-id": "op-00a0000001"},
        },
        "status": status,
    }


def pod(*, phase: str = "Pending", init: Any = (), run: Any = None, **status: Any) -> Any:
    body: dict[str, Any] = {"phase": phase, **status}
    if init:
        body["initContainerStatuses"] = list(init)
    if run is not None:
        body["containerStatuses"] = [run]
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "x", "uid": "j-1", "controller": True}
    meta = {"name": "p", "creationTimestamp": CREATED, "ownerReferences": [owner]}
    return {"metadata": meta, "status": body}


def waiting(reason: str, message: str | None = None, name: str = "run") -> dict[str, Any]:
    state: dict[str, Any] = {"reason": reason}
    if message is not None:
        state["message"] = message
    return {"name": name, "state": {"waiting": state}}


SOURCE_DONE = {"name": "source", "state": {"terminated": {"exitCode": 0}}}


@pytest.mark.parametrize(
    ("the_pod", "problem"),
    [
        (
            pod(
                init=[SOURCE_DONE],
                run=waiting("CreateContainerConfigError", 'secret "orders-database" not found'),
            ),
            PodProblem("CreateContainerConfigError", "Secret orders-database not found", SINCE),
        ),
        (
            pod(
                run=waiting(
                    "CreateContainerConfigError",
                    "couldn't find key url in Secret application/orders-database",
                )
            ),
            PodProblem(
                "CreateContainerConfigError", "Secret orders-database has no key url", SINCE
            ),
        ),
        (
            pod(init=[waiting("ImagePullBackOff", 'Back-off pulling image "x"', "source")]),
            PodProblem("ImagePullBackOff", None, SINCE),
        ),
        (
            pod(run=waiting("ErrImagePull", "rpc error: code = NotFound")),
            PodProblem("ErrImagePull", None, SINCE),
        ),
        (
            pod(run=waiting("InvalidImageName", "Failed to apply default image tag")),
            PodProblem("InvalidImageName", None, SINCE),
        ),
        (
            # hack/localstack/processpods.py fails the Pod at once.
            pod(
                phase="Failed",
                reason="CreateContainerConfigError",
                message="env PTAH_DATABASE_URL: secret orders-database: HTTP 404",
            ),
            PodProblem("CreateContainerConfigError", "Secret orders-database not found", SINCE),
        ),
        (
            pod(
                phase="Failed",
                reason="CreateContainerConfigError",
                message="env PTAH_DATABASE_URL: secret orders-database has no key url",
            ),
            PodProblem(
                "CreateContainerConfigError", "Secret orders-database has no key url", SINCE
            ),
        ),
    ],
    ids=[
        "missing Secret",
        "missing key",
        "image pull back-off",
        "image not found",
        "invalid image",
        "executor: missing Secret",
        "executor: missing key",
    ],
)
def test_a_pod_that_cannot_start_is_named_by_its_reason(the_pod: Any, problem: PodProblem) -> None:
    state = job_state(job(startTime=CREATED, active=1), [the_pod])
    assert state.phase == JobPhase.ACTIVE or the_pod["status"]["phase"] == "Failed"
    assert state.pod_problem == problem


def test_a_job_that_could_create_no_pod_is_failed_create() -> None:
    state = job_state(job(startTime=CREATED), [])
    assert state.pod_problem == PodProblem("FailedCreate", None, SINCE)


@pytest.mark.parametrize(
    ("the_job", "pods"),
    [
        (job(startTime=CREATED, active=1), [pod()]),
        (job(startTime=CREATED, active=1), [pod(run=waiting("ContainerCreating"))]),
        (job(startTime=CREATED, active=1), [pod(init=[waiting("PodInitializing", name="source")])]),
        (job(), []),
        (job(startTime=CREATED, active=1), []),
    ],
    ids=["pending", "creating", "initializing", "not started by the Job controller", "active"],
)
def test_a_pod_on_its_way_has_no_problem(the_job: Any, pods: list[Any]) -> None:
    assert job_state(the_job, pods).pod_problem is None


def test_nothing_but_names_is_taken_from_the_message() -> None:
    message = 'secret "orders-database" not found; url=postgresql://app:hunter2@db/orders'
    assert missing_object(message) == "Secret orders-database not found"
    assert missing_object("some other words: postgresql://app:hunter2@db") is None
    assert missing_object(None) is None
    assert (
        missing_object("configMap ptah-src-1 for volume snapshot: HTTP 404")
        == "ConfigMap ptah-src-1 not found"
    )


# --- whose Pods, and since when (issue #11, the review of session 5) -----------------------------

JOB_UID = "j-1"


def owned(the_pod: dict[str, Any], uid: str) -> dict[str, Any]:
    """The Pod as the Job controller makes it for the Job of UID `uid`."""
    meta = dict(the_pod["metadata"])
    meta["uid"] = f"pod-of-{uid}"
    meta["labels"] = {
        "job-name": "ptah-history-00a0000001",
        "batch.kubernetes.io/job-name": "ptah-history-00a0000001",
        "controller-uid": uid,
        "batch.kubernetes.io/controller-uid": uid,
    }
    meta["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "x", "uid": uid, "controller": True}
    ]
    return {**the_pod, "metadata": meta}


STUCK = pod(run=waiting("CreateContainerConfigError", 'secret "orders-database" not found'))


@pytest.mark.req("MIG-27")
def test_a_pod_of_an_earlier_job_of_the_same_name_is_not_blamed_on_this_one() -> None:
    lingering = owned(STUCK, "an-earlier-job")
    orphaned = {**lingering, "metadata": {**lingering["metadata"], "ownerReferences": []}}
    for the_pod in (lingering, orphaned):
        assert job_state(job(startTime=CREATED, active=1), [the_pod]).pod_problem is None
    assert job_state(job(startTime=CREATED, active=1), [owned(STUCK, JOB_UID)]).pod_problem
    assert index_job_uid(lingering) == ["an-earlier-job"]
    assert index_job_uid(orphaned) == []
    assert index_job_uid(owned(STUCK, JOB_UID)) == [JOB_UID]
    assert index_job_uid(unowned(STUCK)) == []


def unowned(the_pod: dict[str, Any]) -> dict[str, Any]:
    return {**the_pod, "metadata": {**the_pod["metadata"], "ownerReferences": []}}


@pytest.mark.req("MIG-27")
def test_a_pod_is_the_jobs_only_by_its_controlling_owner_reference() -> None:
    """Review finding 9: a Pod someone made with the Job's `job-name` or `controller-uid`
    label, its `source` container exiting with the snapshot-refused code, marked the real Job
    snapshot_refused (or gave it a pod problem). Only the controlling owner reference counts:
    the labels are anyone's to write, the reference a Job controller sets."""
    this = {**job(startTime=CREATED, active=1)}
    this["metadata"] = {**this["metadata"], "namespace": "application"}
    refusing = pod(
        phase="Failed", init=[{"name": "source", "state": {"terminated": {"exitCode": 3}}}]
    )
    forged_name = unowned(refusing)
    forged_name["metadata"]["labels"] = {"job-name": "ptah-history-00a0000001"}
    forged_uid = unowned(owned(refusing, JOB_UID))
    not_controller = owned(refusing, JOB_UID)
    not_controller["metadata"]["ownerReferences"] = [
        {**not_controller["metadata"]["ownerReferences"][0], "controller": False}
    ]
    keys = set(job_pod_keys(this))
    for forged in (forged_name, forged_uid, not_controller, unowned(STUCK)):
        assert not keys & set(index_job_uid(forged))
        state = job_state(this, [forged])
        assert not state.snapshot_refused
        assert state.pod_problem is None
    assert keys & set(index_job_uid(owned(refusing, JOB_UID)))
    assert job_state(this, [owned(refusing, JOB_UID)]).snapshot_refused


LATER = SINCE + dt.timedelta(minutes=3)


@pytest.mark.req("MIG-27")
def test_a_waiting_reason_is_timed_from_when_the_manager_first_saw_it() -> None:
    """The Pod API has no time on state.waiting: a Pod that pulled its image for three minutes
    and then could not be configured has its two minutes from then, not from its creation."""
    onsets = ProblemOnsets()
    pulling = owned(pod(run=waiting("ContainerCreating")), JOB_UID)
    the_job = job(startTime=CREATED, active=1)
    assert (
        job_state(the_job, [pulling], onsets, SINCE + dt.timedelta(minutes=1)).pod_problem is None
    )
    problem = job_state(the_job, [owned(STUCK, JOB_UID)], onsets, LATER).pod_problem
    assert problem == PodProblem(
        "CreateContainerConfigError", "Secret orders-database not found", LATER
    )
    again = job_state(the_job, [owned(STUCK, JOB_UID)], onsets, LATER + dt.timedelta(seconds=50))
    assert again.pod_problem == problem


@pytest.mark.req("MIG-27")
def test_an_image_that_flips_between_pull_reasons_keeps_its_first_time() -> None:
    onsets = ProblemOnsets()
    the_job = job(startTime=CREATED, active=1)
    times = [LATER + dt.timedelta(seconds=s) for s in (0, 20, 40, 90)]
    reasons = ["ErrImagePull", "ImagePullBackOff", "ErrImagePull", "ImagePullBackOff"]
    for at, reason in zip(times, reasons, strict=True):
        state = job_state(the_job, [owned(pod(run=waiting(reason)), JOB_UID)], onsets, at)
        assert state.pod_problem == PodProblem(reason, None, LATER)


@pytest.mark.req("MIG-27")
def test_a_pod_that_got_past_its_problem_starts_a_new_time_if_it_comes_back() -> None:
    onsets = ProblemOnsets()
    the_job = job(startTime=CREATED, active=1)
    job_state(the_job, [owned(STUCK, JOB_UID)], onsets, SINCE)
    job_state(the_job, [owned(pod(run=waiting("ContainerCreating")), JOB_UID)], onsets, LATER)
    back = LATER + dt.timedelta(seconds=30)
    state = job_state(the_job, [owned(STUCK, JOB_UID)], onsets, back)
    assert state.pod_problem is not None
    assert state.pod_problem.since == back


@pytest.mark.req("MIG-27")
def test_no_pod_created_is_timed_from_when_it_was_first_seen_not_from_the_job_start() -> None:
    """A Job that started long ago (its Pod evicted, a replacement refused) is not judged at
    once: FailedCreate is timed from when the manager first saw the Job with no Pod."""
    onsets = ProblemOnsets()
    the_job = job(startTime=CREATED)
    problem = job_state(the_job, [], onsets, LATER).pod_problem
    assert problem == PodProblem("FailedCreate", None, LATER)
    assert job_state(the_job, [], onsets, LATER + dt.timedelta(minutes=1)).pod_problem == problem


def test_the_memory_of_first_times_is_bounded() -> None:
    onsets = ProblemOnsets()
    for n in range(5):
        job_state(job(startTime=CREATED), [], onsets, SINCE)
        onsets.since(f"job-{n}", "FailedCreate", SINCE)
    assert len(onsets) == 6
    job_state(job(startTime=CREATED), [], onsets, SINCE + ProblemOnsets.MEMORY * 2)
    assert len(onsets) == 1
    job_state(job(startTime=CREATED, active=1), [pod()], onsets, SINCE + ProblemOnsets.MEMORY * 2)
    assert len(onsets) == 0


# --- what a container writes stays in the Pod (issue #18) --------------------------------------

MARKER = "s3cr3t-MARKER-postgres://app:hunter2@db/orders"


def terminated(name: str, code: int, reason: str = "Error") -> dict[str, Any]:
    state = {"exitCode": code, "reason": reason, "message": MARKER}
    return {"name": name, "state": {"terminated": state}}


@pytest.mark.req("PRIV-04", "PRIV-05")
@pytest.mark.parametrize(
    ("the_pod", "snapshot_refused", "words"),
    [
        (pod(phase="Failed", init=[SOURCE_DONE], run=terminated("run", 1)), False, "exited 1"),
        (pod(phase="Failed", init=[terminated("source", 3)]), True, "exited 3"),
        (pod(phase="Failed", init=[terminated("fetch", 3)]), True, "exited 3"),
        (pod(phase="Failed", run=terminated("run", 137, "OOMKilled")), False, "OOMKilled"),
        (pod(phase="Failed", run=terminated("run", 1, MARKER)), False, "exited 1"),
    ],
    ids=["run fails", "source refuses", "fetch refuses", "killed", "hostile reason"],
)
def test_a_termination_message_never_leaves_the_pod(
    the_pod: Any, snapshot_refused: bool, words: str
) -> None:
    """A container's termination message is its own text (a hostile image writes anything
    there: a Secret it was given): the state keeps the container, its exit code and Kubernetes'
    reason word, never the text."""
    failed = job(
        startTime=CREATED,
        failed=1,
        conditions=[
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": MARKER,
            }
        ],
    )
    state = job_state(failed, [the_pod])
    assert state.phase == JobPhase.FAILED
    assert state.snapshot_refused is snapshot_refused
    assert MARKER not in repr(state)
    assert "hunter2" not in repr(state)
    assert state.message is not None
    assert words in state.message
