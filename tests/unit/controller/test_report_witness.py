"""A result record is the run's word only when the Job's own container says the runner
reported (issue #18; docs/security.md, "The run's own exit").

Whoever holds an operation's token can post the first report; the claim then remembers that
report's digest, and if the runner's Pod is deleted before it reports, nothing conflicts. The
second witness is the kubelet's: the reporting container (`run`, `resolve`, `verify`) exits 0
(REPORTED) or 1 (NOT_DONE) only after the endpoint stored or held its report.
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest

from ptah_operator.controller.cache import keep_job, keep_pod
from ptah_operator.controller.witness import reporting_digest
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


def spec(name: str = "run", **changes: Any) -> dict[str, Any]:
    """The Pod spec the Job's template gives (a Pod the Job controller made has the same)."""
    container: dict[str, Any] = {
        "name": name,
        "image": "registry.local/ptah@sha256:" + "a" * 64,
        "command": ["ptah-runner", "history", "--files", "/var/run/ptah/files"],
        "env": [{"name": "PTAH_RESULT_URL", "value": "https://ptah.ptah-system.svc:9443"}],
        "volumeMounts": [{"name": "result", "mountPath": "/var/run/ptah/result"}],
    }
    container.update(changes.pop("container", {}))
    body: dict[str, Any] = {
        "containers": [container],
        "volumes": [{"name": "result", "secret": {"secretName": "ptah-op-1"}}],
    }
    body.update(changes)
    return body


TEMPLATE = reporting_digest(spec())


def pod(
    *containers: dict[str, Any], uid: str = "j-1", pod_spec: dict[str, Any] | None = None
) -> dict[str, Any]:
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "x", "uid": uid, "controller": True}
    names = [c["name"] for c in containers if c.get("name") in ("run", "resolve", "verify")]
    return {
        "metadata": {"name": "p", "ownerReferences": [owner]},
        "spec": pod_spec if pod_spec is not None else spec(*names[:1]),
        "status": {"phase": "Succeeded", "containerStatuses": list(containers)},
    }


def witnessed(pods: list[dict[str, Any]], ended: dt.datetime = ENDED) -> bool:
    templates = {reporting_digest(p["spec"]) for p in pods} or {TEMPLATE}
    # (Each Pod here is the Job's own unless a test gives it another spec: the template is
    # that of the Pod's container's name.)
    template = templates.pop() if len(templates) == 1 else TEMPLATE
    return report_witnessed(pods, ended, template)


@pytest.mark.parametrize("name", ["run", "resolve", "verify"])
@pytest.mark.parametrize("code", [0, 1])
def test_the_runners_exit_after_reporting_witnesses_the_result(name: str, code: int) -> None:
    assert witnessed([pod(container(name, code))])


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
    assert not witnessed(pods), why


def test_the_kubelets_clock_may_be_a_little_ahead_of_the_job_controllers() -> None:
    assert witnessed([pod(container(finished=_at(JOB_END_SKEW)))])
    assert witnessed([pod(container(finished=_at(-dt.timedelta(minutes=5))))])


def test_a_job_end_with_no_zone_witnesses_nothing() -> None:
    assert not witnessed([pod(container())], ENDED.replace(tzinfo=None))


def _job(*conditions: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": "ptah-apply-00a0000001", "uid": "j-1", "creationTimestamp": ENDED_AT}
    return {
        "metadata": meta,
        "spec": {"template": {"spec": spec()}},
        "status": {"conditions": list(conditions)},
    }


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


# --- a Pod someone made beside the Job's, its owner reference copied (issue #18) ---------------


def _mounted(**changes: Any) -> dict[str, Any]:
    """The template's spec with the result mount changed."""
    return spec(
        container={
            "volumeMounts": [{"name": "result", "mountPath": "/var/run/ptah/result"} | changes]
        }
    )


@pytest.mark.parametrize(
    ("why", "made"),
    [
        ("another command", spec(container={"command": ["sh", "-c", "exit 0"]})),
        ("another image", spec(container={"image": "attacker/ptah:latest"})),
        ("another endpoint", spec(container={"env": [{"name": "PTAH_RESULT_URL", "value": "x"}]})),
        (
            "a mount over the runner's code",
            spec(
                container={
                    "volumeMounts": [
                        {"name": "result", "mountPath": "/var/run/ptah/result"},
                        {"name": "code", "mountPath": "/usr/local/lib/python3.11"},
                    ]
                },
                volumes=[
                    {"name": "result", "secret": {"secretName": "ptah-op-1"}},
                    {"name": "code", "configMap": {"name": "mine"}},
                ],
            ),
        ),
        (
            "another result Secret",
            spec(volumes=[{"name": "result", "secret": {"secretName": "x"}}]),
        ),
        ("the endpoint's name pointed elsewhere", spec(hostAliases=[{"ip": "10.0.0.9"}])),
        ("the node's network", spec(hostNetwork=True)),
        # One row for each other field the digest keeps: dropping any one from witness.py
        # must fail here.
        ("other arguments", spec(container={"args": ["--endpoint", "x"]})),
        ("another working directory", spec(container={"workingDir": "/tmp/mine"})),
        ("environment from a Secret", spec(container={"envFrom": [{"secretRef": {"name": "x"}}]})),
        ("the result mounted elsewhere", _mounted(mountPath="/var/run/ptah/other")),
        ("a sub-path of the result", _mounted(subPath="token")),
        ("a sub-path expression", _mounted(subPathExpr="$(POD_NAME)")),
        ("a read-only result", _mounted(readOnly=True)),
        ("mounts propagated", _mounted(mountPropagation="HostToContainer")),
        ("another DNS policy", spec(dnsPolicy="None")),
        ("another name server", spec(dnsConfig={"nameservers": ["10.0.0.9"]})),
        ("the node's processes", spec(hostPID=True)),
        ("the node's IPC", spec(hostIPC=True)),
        ("a process namespace shared", spec(shareProcessNamespace=True)),
    ],
)
def test_a_pod_that_runs_other_than_the_jobs_template_witnesses_nothing(
    why: str, made: dict[str, Any]
) -> None:
    forged = pod(container(), pod_spec=made)
    assert not report_witnessed([forged], ENDED, TEMPLATE), why
    # Through job_state too: the Job's template is the real one.
    assert not job_state(_job(COMPLETE), [forged]).report_witnessed, why


def test_what_admission_adds_to_pods_and_not_templates_changes_nothing() -> None:
    admitted = spec(
        serviceAccountName="default",
        tolerations=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}],
        containers=[
            *spec()["containers"],
            {"name": "istio-proxy", "image": "istio/proxyv2"},
        ],
    )
    assert report_witnessed([pod(container(), pod_spec=admitted)], ENDED, TEMPLATE)


def test_with_no_template_digest_nothing_is_witnessed() -> None:
    assert not report_witnessed([pod(container())], ENDED, None)


def test_the_informer_transforms_keep_the_digests_the_witness_compares() -> None:
    job, made = _job(COMPLETE), pod(container())
    kept_job, kept_pod = keep_job(copy.deepcopy(job)), keep_pod(copy.deepcopy(made))
    assert "template" not in kept_job["spec"]
    assert "spec" not in kept_pod
    assert job_state(kept_job, [kept_pod]).report_witnessed
    forged = pod(container(), pod_spec=spec(container={"command": ["true"]}))
    assert not job_state(kept_job, [keep_pod(copy.deepcopy(forged))]).report_witnessed
    # A digest can come only from the transform, never from the object as listed.
    smuggled = copy.deepcopy(forged)
    smuggled["ptahReportingDigest"] = TEMPLATE
    assert not job_state(kept_job, [keep_pod(smuggled)]).report_witnessed
