"""A hostile runner (issue #18): whatever its container writes into its termination message, or
Kubernetes' reason fields, reaches neither status, nor an Event, nor the manager's log. The Pod
is read by `controller.world.job_state`, as the controller reads it, into a running read's
World, and the pass that judges the failed read is inspected."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

import pytest
from structlog.testing import capture_logs

from ptah_operator.controller.world import job_state
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.migration.worlds import later, reading

Json = dict[str, Any]
MARKER = "hostile-MARKER-postgres://app:hunter2@db/orders"


def hostile(job: str, init_code: int, run_code: int | None) -> tuple[Json, list[Json]]:
    ended = {"exitCode": init_code, "reason": MARKER, "message": MARKER}
    pod: Json = {
        "metadata": {
            "name": f"{job}-x",
            "creationTimestamp": "2026-08-30T12:00:00Z",
            "ownerReferences": [{"kind": "Job", "uid": "job-uid", "controller": True}],
        },
        "status": {
            "phase": "Failed",
            "reason": MARKER,
            "message": MARKER,
            "initContainerStatuses": [{"name": "source", "state": {"terminated": ended}}],
        },
    }
    if run_code is not None:
        run = {"exitCode": run_code, "reason": "Error", "message": MARKER}
        pod["status"]["containerStatuses"] = [{"name": "run", "state": {"terminated": run}}]
    failed = {
        "metadata": {"name": job, "uid": "job-uid"},
        "status": {
            "failed": 1,
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "BackoffLimitExceeded",
                    "message": MARKER,
                    "lastTransitionTime": "2026-08-30T12:00:00Z",
                }
            ],
        },
    }
    return failed, [pod]


@pytest.mark.req("PRIV-04", "PRIV-05", "JNL-14")
@pytest.mark.parametrize(
    ("init_code", "run_code"), [(0, 1), (3, None)], ids=["run fails", "source refuses"]
)
def test_nothing_a_hostile_container_writes_reaches_status_events_or_logs(
    init_code: int, run_code: int | None
) -> None:
    world = reading()
    assert world.migration.status is not None
    claim = world.migration.status.active_operation
    assert claim is not None
    assert claim.job_name is not None
    job, pods = hostile(claim.job_name, init_code, run_code)
    with capture_logs() as logs:
        state = job_state(job, pods)
        jobs = dict(world.jobs)
        jobs[claim.job_name] = dataclasses.replace(
            state, uid=jobs[claim.job_name].uid, operation_id=claim.operation_id
        )
        world = later(dataclasses.replace(world, jobs=jobs), dt.timedelta(minutes=2))
        decision = reconcile_migration(world)
    assert state.phase == JobPhase.FAILED
    assert decision.status is not None
    said = json.dumps(decision.status, default=str) + repr(decision.events) + repr(logs)
    assert "MARKER" not in said
    assert "hunter2" not in said
    assert "container" in json.dumps(decision.status, default=str)
