"""Refused histories, and changes that remain after a run.

The seeds: a migration's history refuses at stage 2 when it is modified, out of order or ahead;
"None of the four resolves by waiting", and fixing the database or the artifact is enough to
unblock it, because the history is read again (here at once: an edit to the source ConfigMap
is seen through the watch). A proof that still finds changes publishes a new plan.
"""

from __future__ import annotations

from typing import Any

import pytest
from localstack.stack import LocalStack

from tests.e2e.scenario import Scenario

pytestmark = pytest.mark.e2e

ONE = {"0000000001_create_customers.up.sql": "CREATE TABLE customers (id bigint PRIMARY KEY);\n"}
TWO = {"0000000002_create_orders.up.sql": "CREATE TABLE orders (id bigint PRIMARY KEY);\n"}
THREE = {"0000000003_create_items.up.sql": "CREATE TABLE items (id bigint PRIMARY KEY);\n"}


def _blocked(reason: str) -> Any:
    def check(status: dict[str, Any]) -> bool:
        return status.get("phase") == "Blocked" and any(
            c["type"] == "Ready" and c["reason"] == reason for c in status.get("conditions", [])
        )

    return check


@pytest.mark.req("MIG-10", "MIG-37", "MIG-40", "SRC-CM-10", "SRC-CM-12", "PRIV-02")
def test_a_file_edited_after_it_ran_is_refused_until_it_is_put_back(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    s.migrations(ONE)
    s.migration(apply="Always")
    s.wait_phase("InSync")

    edited = {
        "0000000001_create_customers.up.sql": "CREATE TABLE customers (id int PRIMARY KEY);\n"
    }
    s.migrations(edited)
    blocked = s.wait(_blocked("HistoryModified"), "Blocked HistoryModified")
    assert blocked["history"]["modifiedVersions"] == ["0000000001"]
    assert blocked.get("plan") is None
    assert len(s.jobs("Apply")) == 1

    s.migrations(ONE)
    s.wait_phase("InSync")
    assert len(s.jobs("Apply")) == 1, "putting the file back runs nothing"


@pytest.mark.req("MIG-38", "MIG-40", "MIG-10")
def test_a_late_merged_lower_version_is_refused_and_named(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    s.migrations({**ONE, **THREE})
    s.migration(apply="Always")
    s.wait_phase("InSync")

    s.migrations({**ONE, **TWO, **THREE})
    blocked = s.wait(_blocked("HistoryOutOfOrder"), "Blocked HistoryOutOfOrder")
    assert blocked["history"]["outOfOrderVersions"] == ["0000000002"]
    assert blocked.get("plan") is None, "no plan for a sequence the executor could never run"

    # A person renumbers the late file above the current version.
    s.migrations(
        {**ONE, **THREE, "0000000004_create_orders.up.sql": TWO["0000000002_create_orders.up.sql"]}
    )
    done = s.wait(
        lambda st: (
            st.get("phase") == "InSync"
            and (st.get("history") or {}).get("currentVersion") == "0000000004"
        ),
        "InSync at 0000000004",
    )
    assert done["lastRun"]["appliedVersions"] == ["0000000004"]
    assert "orders" in s.tables()


@pytest.mark.req("MIG-39", "MIG-40", "PATH-15")
def test_a_database_ahead_of_its_artifact_is_refused_and_both_versions_named(
    e2e_stack: LocalStack,
) -> None:
    s = Scenario(e2e_stack)
    s.migrations({**ONE, **TWO})
    s.migration(apply="Always")
    s.wait_phase("InSync")

    s.migrations(ONE)  # a tag moved back to yesterday's build
    blocked = s.wait(_blocked("HistoryAhead"), "Blocked HistoryAhead")
    assert blocked["history"]["ahead"] == {
        "databaseVersion": "0000000002",
        "artifactVersion": "0000000001",
    }
    assert "orders" in s.tables(), "the operator never rolls a database back"

    s.migrations({**ONE, **TWO})
    s.wait_phase("InSync")
    assert len(s.jobs("Apply")) == 1


@pytest.mark.req("PATH-16", "MIG-48", "JNL-08", "RUN-09")
def test_changes_that_remain_after_a_run_publish_a_new_plan(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    slow = {
        "0000000001_create_customers.up.sql": "SELECT pg_sleep(6);\nCREATE TABLE customers (id bigint);\n"
    }
    s.migrations(slow)
    s.migration()
    first = s.wait_phase("AwaitingApproval")["plan"]
    s.approve()
    s.wait_phase("Applying")

    # While the first run is under way, a second file lands.
    s.migrations({**slow, **TWO})
    second = s.wait(
        lambda st: (
            st.get("phase") == "AwaitingApproval"
            and (st.get("plan") or {}).get("name") not in (None, first["name"])
        ),
        "a new plan for what remains",
    )
    assert second["lastRun"]["outcome"] == "Applied"
    assert second["lastRun"]["appliedVersions"] == ["0000000001"]
    verified = [e for e in second["journal"]["entries"] if e["type"] == "Verified"]
    assert verified
    assert verified[-1]["operationID"] == second["lastRun"]["operationID"]

    s.approve()
    s.wait(
        lambda st: (
            st.get("phase") == "InSync"
            and (st.get("history") or {}).get("currentVersion") == "0000000002"
        ),
        "InSync after the second approval",
    )
