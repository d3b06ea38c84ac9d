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

from ptah_operator.controller.world import job_state, missing_object
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
    return {"metadata": {"name": "p", "creationTimestamp": CREATED}, "status": body}


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
            # The local executor fails the Pod at once.
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
