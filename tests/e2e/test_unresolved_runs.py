"""Migration, Partial or Unknown: a run nobody can account for holds the resource.

The seeds' branch: "The run stays in status.unresolvedRun, and the resource publishes no plan
and dispatches no Apply until it is settled. A history read of that database with nothing
pending settles it. So does a PtahMigrationRunAcknowledgment bound to that run, which a person
creates after establishing what the run did." A retry never does (RUN-03, RETRY-13).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from localstack.stack import LocalStack

from tests.e2e.scenario import Scenario

pytestmark = pytest.mark.e2e

HALF_DONE = {
    "0000000001_create_audit.up.sql": (
        "CREATE TABLE audit (id bigint PRIMARY KEY, note text);\nSELECT 1 / 0;\n"
    ),
}
MENDED = {
    "0000000001_create_audit.up.sql": (
        "CREATE TABLE audit (id bigint PRIMARY KEY, note text);\nSELECT 1;\n"
    ),
}


def _runs_finished(status: dict[str, Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = (status.get("journal") or {}).get("entries") or []
    return [e for e in entries if e["type"] == "RunFinished"]


def _held(status: dict[str, Any]) -> bool:
    return status.get("phase") == "Blocked" and status.get("unresolvedRun") is not None


def _ready(status: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in status.get("conditions") or [] if c["type"] == "Ready")


@pytest.mark.req(
    "MIG-19",
    "MIG-46",
    "MIG-47",
    "MIG-56",
    "MIG-10",
    "RUN-01",
    "RUN-03",
    "RUN-05",
    "RUN-06",
    "RUN-17",
    "RETRY-13",
    "JNL-09",
    "JNL-11",
    "JNL-16",
    "PATH-19",
    "MIG-43",
    "PLUGIN-04",
)
def test_a_partial_run_is_held_until_a_person_acknowledges_it(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    s.migrations(HALF_DONE)
    s.migration(apply="Always", policy={"apply": "Always", "transactionMode": "none"})

    # The CREATE TABLE committed on its own, then the division failed: Partial, held.
    held = s.wait(_held, "Blocked with an unresolved run")
    run = held["unresolvedRun"]
    assert run["outcome"] == "Partial"
    assert held["lastRun"]["outcome"] == "Partial"
    assert held["lastRun"]["failure"]["sqlstate"] == "22012"
    assert held["lastRun"]["failure"]["statementIndex"] == 2  # 1-based: the second
    assert "audit" in s.tables(), "what committed stays: the operator rolls nothing back"
    assert s.condition("Ready")["reason"] == "ApplyOutcomeUnknown"
    assert s.condition("Progressing")["status"] == "False"
    assert held.get("plan") is None
    assert len(_runs_finished(held)) == 1
    shown = s.plugin("migration", "orders").stdout
    assert f"Unresolved run {run['operationID']}: Partial" in shown
    assert "1 / 0" not in shown

    # A read request reads again, and the hold stays: a read that is not clean settles nothing.
    s.request_read()
    reread = s.wait(
        lambda st: (
            _held(st)
            and (st.get("history") or {}).get("operationID") != held["history"]["operationID"]
        ),
        "a second reading under the hold",
    )
    assert reread["history"]["verdict"] == "Dirty"
    assert reread["unresolvedRun"]["operationID"] == run["operationID"]

    # A fixed file is read at once, and still no plan and no Apply: only a person ends the hold.
    s.migrations(MENDED)
    mended_source = s.wait(
        lambda st: (
            _held(st)
            and (st.get("history") or {}).get("operationID") != reread["history"]["operationID"]
        ),
        "a reading of the fixed file under the hold",
    )
    assert mended_source.get("plan") is None
    assert len(_runs_finished(mended_source)) == 1
    assert len(s.jobs("Apply")) == 1, "a held run is never retried"

    # An acknowledgment naming another run is refused by admission.
    wrong = dict(run, operationID="op-0000000000")
    refused = s.acknowledge(wrong, ack_name="wrong-run")
    assert refused.returncode != 0
    assert "denied the request" in refused.stderr

    # Alice established what the run did, and says so.
    created = s.acknowledge(run)
    assert created.returncode == 0, created.stderr
    stamped = json.loads(
        s.kubectl("get", "ptahmigrationrunacknowledgment", "accounted-for", "-o", "json").stdout
    )["spec"]
    assert stamped["acknowledgedBy"]["username"] == "alice@example.com"

    # The hold is released; the dirty row the run left still blocks, as after a failed run.
    released = s.wait(
        lambda st: (
            st.get("phase") == "Blocked"
            and st.get("unresolvedRun") is None
            and any(c["reason"] == "HistoryDirty" for c in st.get("conditions", []))
        ),
        "the hold released, Blocked HistoryDirty",
    )
    acknowledged = [e for e in released["journal"]["entries"] if e["type"] == "RunAcknowledged"]
    assert len(acknowledged) == 1
    assert acknowledged[0]["operationID"] == run["operationID"]
    assert acknowledged[0]["outcome"] == "Partial"
    assert acknowledged[0]["acknowledgedBy"]["username"] == "alice@example.com"
    assert released["history"]["dirty"]["version"] == "0000000001"
    annotations = s.get()["metadata"].get("annotations") or {}
    assert "operator.ptah.run/unresolved-run" not in annotations

    # The person marks the row applied with Ptah (the table is there; the fixed file's second
    # statement changes nothing) and asks for a read: nothing pending, InSync, nothing re-run.
    s.ptah(MENDED, "repair", "--version=1", "--mark=applied")
    s.request_read()
    done = s.wait_phase("InSync")
    assert done["history"]["currentVersion"] == "0000000001"
    assert done["lastRun"]["operationID"] == run["operationID"]
    assert len(_runs_finished(done)) == 1
    assert len(s.jobs("Apply")) == 1
    assert "1 / 0" not in json.dumps(s.get())


SLOW = {
    "0000000001_create_ledger.up.sql": (
        "CREATE TABLE ledger (id bigint PRIMARY KEY);\nSELECT pg_sleep(20);\n"
    ),
}


@pytest.mark.req("MIG-19", "MIG-46", "MIG-47", "RUN-03", "RUN-07", "RUN-15", "RUN-16", "JOB-08")
def test_a_run_killed_mid_file_is_unknown_until_a_clean_read(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    s.migrations(SLOW)
    s.migration(apply="Always", policy={"apply": "Always", "transactionMode": "none"})

    # The run is inside its sleep: the table committed on its own, the row says how far.
    s.wait(lambda st: st.get("phase") == "Applying", "Applying")
    job = s.jobs("Apply")[0]
    s.wait(
        lambda st: (
            s.sql(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE pid <> pg_backend_pid() AND query LIKE '%pg_sleep%'"
            )
            != "0"
            and "ledger" in s.tables()
        ),
        "the run inside its sleep",
    )
    pods = json.loads(
        s.kubectl("get", "pods", "-l", f"job-name={job['metadata']['name']}", "-o", "json").stdout
    )["items"]
    assert len(pods) == 1
    e2e_stack.kill_container(s.namespace, pods[0]["metadata"]["name"], "run")

    # No result can come from it: Unknown, held, and the run names no database.
    held = s.wait(_held, "Blocked with an unresolved run", timeout=240)
    run = held["unresolvedRun"]
    assert run["outcome"] == "Unknown"
    assert run["job"]["name"] == job["metadata"]["name"]
    assert run.get("plannedTargetDigest")
    assert held["lastRun"]["outcome"] == "Unknown"
    assert held["lastRun"].get("targetIdentityDigest") is None
    # From the same reading of status: the run's database is read back at once, so a later
    # reading may already show that read in progress.
    assert _ready(held)["reason"] == "ApplyOutcomeUnknown"

    # Reading again finds the dirty row: the hold stays, and nothing runs again.
    s.request_read()
    reread = s.wait(
        lambda st: (
            _held(st)
            and (st.get("history") or {}).get("verdict") == "Dirty"
            and (st.get("history") or {}).get("operationID") != held["history"]["operationID"]
        ),
        "a reading of the dirty row under the hold",
    )
    assert reread["lastRun"].get("verification") is None, "a run that named no database"

    # The person finds the table made and the sleep harmless, marks the row applied with Ptah,
    # and asks for a read: nothing pending on the planned database settles the hold (RUN-07).
    s.ptah(SLOW, "repair", "--version=1", "--mark=applied")
    s.request_read()
    done = s.wait_phase("InSync")
    assert done.get("unresolvedRun") is None
    assert done["lastRun"]["operationID"] == run["operationID"]
    assert len(_runs_finished(done)) == 1
    assert not [e for e in done["journal"]["entries"] if e["type"] == "RunAcknowledged"]
    assert len(s.jobs("Apply")) == 1
    assert len(s.pods_ever_run("ptah-apply-")) == 1
