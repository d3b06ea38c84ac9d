"""A read fails: it changed nothing, so it runs again after failureRetryInterval.

The seeds: "A read whose Job fails does not show Failed. It stays in its phase, with
Progressing=True and the reason, and runs again under the same claim." Each failed attempt is
an OperationFailed entry, folded into one with a count while the failures repeat, and the
latest failure is on ReconciliationFailed (Decision 17).
"""

from __future__ import annotations

from typing import Any

import pytest
from localstack.stack import LocalStack

from tests.e2e.scenario import Scenario

pytestmark = pytest.mark.e2e

CUSTOMERS = {
    "0000000001_create_customers.up.sql": "CREATE TABLE customers (id bigint PRIMARY KEY);\n",
}


def _failed_reads(status: dict[str, Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = (status.get("journal") or {}).get("entries") or []
    return [e for e in entries if e["type"] == "OperationFailed" and e["operation"] == "History"]


def _between_attempts(status: dict[str, Any]) -> bool:
    progressing: dict[str, Any] = next(
        (c for c in status.get("conditions", []) if c["type"] == "Progressing"), {}
    )
    return (
        status.get("phase") == "Reading"
        and progressing.get("status") == "True"
        and progressing.get("reason") == "OperationFailed"
    )


@pytest.mark.req(
    "MIG-27",
    "RETRY-01",
    "RETRY-15",
    "JNL-12",
    "JNL-14",
    "PATH-10",
    "RUN-22",
    "JOB-08",
)
def test_a_read_that_fails_is_retried_under_the_same_claim(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    s.migrations(CUSTOMERS)
    missing = s.url.rsplit("/", 1)[0] + "/no_such_database"
    s.migration(url=missing, execution={"failureRetryInterval": "10s"})

    first = s.wait(_between_attempts, "a failed read waiting for its retry")
    claim = first["activeOperation"]
    assert claim["type"] == "History"
    failed = s.condition("ReconciliationFailed")
    assert failed["status"] == "True"
    assert failed["reason"] == "ConnectionFailed"
    assert "no_such_database" not in failed["message"], "no database name, no URL in status"
    [entry] = _failed_reads(first)
    assert entry["reason"] == "ConnectionFailed"
    assert entry["count"] >= 1

    # The same claim runs again and fails again: the one entry's count grows.
    again = s.wait(
        lambda st: (
            _between_attempts(st)
            and (_failed_reads(st) or [{}])[-1].get("count", 0) > entry["count"]
        ),
        "a second failed attempt",
        timeout=60,
    )
    assert again["activeOperation"]["operationID"] == claim["operationID"]
    assert again["activeOperation"]["attempt"] > claim.get("attempt", 1)
    assert len(_failed_reads(again)) == 1, "repeated failures fold into one entry"
    assert again["phase"] == "Reading", "a failed read never shows Failed"
    warnings = [
        e for e in s.events() if e["type"] == "Warning" and e["reason"] == "OperationFailed"
    ]
    assert len(warnings) >= 2, "each failed attempt says so"

    # The person points the Secret at the database that exists: the next attempt reads it.
    s.apply(s.database_secret("orders", s.url))
    waiting = s.wait_phase("AwaitingApproval", timeout=90)
    assert waiting["history"]["pendingCount"] == 1
    assert waiting["history"]["operationID"] == claim["operationID"]
    assert s.condition("ReconciliationFailed") == {}, "a later success replaces the failure"
    assert s.condition("Progressing")["reason"] == "AwaitingApproval"
    assert waiting.get("lastRun") is None
    assert s.jobs("Apply") == [], "a read that failed never leads to an Apply"
    assert s.tables() == set()
