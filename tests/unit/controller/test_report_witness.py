"""A result record is the run's word only when the Job's own container says the runner
reported (issue #18; docs/security.md, "The run's own exit").

Whoever holds an operation's token can post the first report; the claim then remembers that
report's digest, and if the runner's Pod is deleted before it reports, nothing conflicts. The
second witness is the kubelet's: the reporting container (`run`, `resolve`, `verify`) exits 0
(REPORTED) or 1 (NOT_DONE) only after the endpoint stored or held its report.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ptah_operator.controller.world import JOB_END_SKEW, job_state, report_witnessed

ENDED = dt.datetime(2026, 12, 3, 7, 0, 0, tzinfo=dt.UTC)
ENDED_AT = "2026-12-03T07:00:00Z"
A_SECOND = dt.timedelta(seconds=1)


def _at(offset: dt.timedelta) -> str:
    return (ENDED + offset).strftime("%Y-%m-%dT%H:%M:%SZ")


def container(
    name: str = "run",
    code: Any = 0,
    *,
    finished: str = ENDED_AT,
    restarts: Any = 0,
    state: str = "terminated",
) -> dict[str, Any]:
    states: dict[str, Any] = {
        "terminated": {"exitCode": code, "reason": "Completed", "finishedAt": finished},
        "running": {"startedAt": ENDED_AT},
        "waiting": {"reason": "ContainerCreating"},
    }
    return {"name": name, "restartCount": restarts, "state": {state: states[state]}}


def pod(*containers: dict[str, Any], uid: str = "j-1") -> dict[str, Any]:
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "x", "uid": uid, "controller": True}
    return {
        "metadata": {"name": "p", "ownerReferences": [owner]},
        "status": {"phase": "Succeeded", "containerStatuses": list(containers)},
    }


@pytest.mark.parametrize("name", ["run", "resolve", "verify"])
@pytest.mark.parametrize("code", [0, 1])
def test_the_runners_exit_after_reporting_witnesses_the_result(name: str, code: int) -> None:
    assert report_witnessed([pod(container(name, code))], ENDED)


@pytest.mark.parametrize(
    ("why", "pods"),
    [
        ("killed by SIGKILL", [pod(container(code=137))]),
        ("killed by SIGTERM (its Pod deleted)", [pod(container(code=143))]),
        ("could not report", [pod(container(code=4))]),
        ("a usage error, nothing ran", [pod(container(code=2))]),
        ("an exit code that is no integer", [pod(container(code="0"))]),
        ("an exit code that is a boolean", [pod(container(code=False))]),
        ("still running", [pod(container(state="running"))]),
        ("never started", [pod(container(state="waiting"))]),
        ("restarted once", [pod(container(restarts=1))]),
        ("a restart count that is no integer", [pod(container(restarts="0"))]),
        ("no restart count", [pod({k: v for k, v in container().items() if k != "restartCount"})]),
        ("ended after the Job did", [pod(container(finished=_at(JOB_END_SKEW + A_SECOND)))]),
        ("no end time", [pod(container(finished="not a time"))]),
        ("an end time with no zone", [pod(container(finished="2026-12-03T07:00:00"))]),
        ("no Pod", []),
        ("a Pod with no reporting container", [pod(container("sidecar"))]),
        ("two Pods that report (one made beside the Job's)", [pod(container()), pod(container())]),
    ],
)
def test_anything_else_witnesses_nothing(why: str, pods: list[dict[str, Any]]) -> None:
    assert not report_witnessed(pods, ENDED), why


def test_the_kubelets_clock_may_be_a_little_ahead_of_the_job_controllers() -> None:
    assert report_witnessed([pod(container(finished=_at(JOB_END_SKEW)))], ENDED)
    assert report_witnessed([pod(container(finished=_at(-dt.timedelta(minutes=5))))], ENDED)


def test_a_job_end_with_no_zone_witnesses_nothing() -> None:
    assert not report_witnessed([pod(container())], ENDED.replace(tzinfo=None))


def _job(*conditions: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": "ptah-apply-00a0000001", "uid": "j-1", "creationTimestamp": ENDED_AT}
    return {"metadata": meta, "status": {"conditions": list(conditions)}}


COMPLETE = {"type": "Complete", "status": "True", "lastTransitionTime": ENDED_AT}
FAILED = {
    "type": "Failed",
    "status": "True",
    "reason": "BackoffLimitExceeded",
    "lastTransitionTime": ENDED_AT,
}


def test_job_state_carries_the_witness_of_a_job_that_ended() -> None:
    assert job_state(_job(COMPLETE), [pod(container())]).report_witnessed
    assert job_state(_job(FAILED), [pod(container(code=1))]).report_witnessed
    assert not job_state(_job(FAILED), [pod(container(code=143))]).report_witnessed


def test_a_job_still_running_witnesses_nothing_yet() -> None:
    assert not job_state(_job(), [pod(container())]).report_witnessed


def test_a_pod_another_job_controls_witnesses_nothing() -> None:
    assert not job_state(_job(COMPLETE), [pod(container(), uid="j-2")]).report_witnessed
