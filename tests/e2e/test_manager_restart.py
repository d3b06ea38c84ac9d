"""The manager killed during an Apply and started again never runs a migration twice.

The claim is on record before its Job exists (JOB-04), the Job's name comes from the claim's
operation id, and the runner keeps offering its result until a manager takes it: a manager
that starts from nothing but the API server finds the run where the last one left it, and
creates nothing a second time (PATH-09, RUN-10).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from localstack.stack import LocalStack

from tests.e2e.scenario import Scenario

pytestmark = pytest.mark.e2e

FILES = {
    "0000000001_create_events.up.sql": (
        "CREATE TABLE events (id bigserial PRIMARY KEY, note text NOT NULL);\n"
    ),
    "0000000002_record_once.up.sql": (
        "SELECT pg_sleep(8);\nINSERT INTO events (note) VALUES ('applied once');\n"
    ),
}


@pytest.mark.req("JOB-04", "JOB-05", "PATH-09", "RUN-10", "MIG-49", "MIG-17", "RUN-04")
def test_a_manager_killed_during_an_apply_never_runs_it_twice(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    s.migrations(FILES)
    s.migration()
    plan = s.wait_phase("AwaitingApproval")["plan"]
    s.approve()

    applying = s.wait(
        lambda st: (
            st.get("phase") == "Applying"
            and any(
                p.get("status", {}).get("phase") == "Running"
                for p in _pods(s, (st.get("activeOperation") or {}).get("jobName"))
            )
        ),
        "the Apply Job's Pod running",
    )
    operation = applying["activeOperation"]["operationID"]

    try:
        e2e_stack.stop_operator()
        # With no manager at all, the run goes on and commits; its result has nowhere to go.
        s.wait(
            lambda st: (
                s.sql("SELECT count(*) FROM information_schema.tables WHERE table_name = 'events'")
                == "1"
                and s.sql("SELECT count(*) FROM events") == "1"
            ),
            "the run's INSERT committed while no manager runs",
            timeout=120,
        )
    finally:
        e2e_stack.start_operator_again()

    done = s.wait_phase("InSync", timeout=240)
    assert s.sql("SELECT count(*) FROM events") == "1", "the migration ran exactly once"
    run = done["lastRun"]
    assert run["operationID"] == operation
    assert run["outcome"] == "Applied"
    assert run["plan"]["name"] == plan["name"]
    assert run["appliedVersions"] == ["0000000001", "0000000002"]
    assert run["verification"]["outcome"] == "InSync"
    apply_jobs = s.jobs("Apply")
    assert [j["metadata"]["name"] for j in apply_jobs] == [run["job"]["name"]]
    assert apply_jobs[0]["metadata"]["uid"] == run["job"]["uid"]
    assert len(s.pods_ever_run("ptah-apply-")) == 1, "one Pod of one Apply Job, ever"
    finished = [e for e in done["journal"]["entries"] if e["type"] == "RunFinished"]
    accepted = [e for e in done["journal"]["entries"] if e["type"] == "ApprovalAccepted"]
    assert len(finished) == 1
    assert len(accepted) == 1


def _pods(s: Scenario, job: str | None) -> list[dict[str, Any]]:
    if not job:
        return []
    items: list[dict[str, Any]] = json.loads(
        s.kubectl("get", "pods", "-l", f"job-name={job}", "-o", "json").stdout
    )["items"]
    return items
