"""A PtahMigration on the whole local stack: the path and where it turns.

Each test is one branch of the seeds' "where the path turns" diagram, told as what a person
does and sees. The operator, its Jobs (real containers), its webhooks and the databases are
all real.
"""

from __future__ import annotations

import json

import pytest
from localstack.stack import LocalStack

from tests.e2e.scenario import Scenario

pytestmark = pytest.mark.e2e

CUSTOMERS = {
    "0000000001_create_customers.up.sql": "CREATE TABLE customers (id bigint PRIMARY KEY, email text NOT NULL);\n",
}
ORDERS = {
    "0000000002_create_orders.up.sql": (
        "CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL);\n"
        "CREATE INDEX orders_customer ON orders (customer_id);\n"
    ),
}


@pytest.mark.req(
    "PATH-01",
    "PATH-10",
    "PATH-18",
    "MIG-05",
    "MIG-08",
    "MIG-09",
    "MIG-11",
    "MIG-14",
    "MIG-17",
    "MIG-22",
    "MIG-62",
    "APR-04",
    "RUN-02",
    "RUN-04",
    "SRC-CM-01",
    "SRC-CM-06",
    "JOB-04",
    "PRIV-02",
)
def test_from_nothing_to_insync_through_an_approval(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    s.migrations({**CUSTOMERS, **ORDERS})
    s.migration()

    waiting = s.wait_phase("AwaitingApproval")
    plan = waiting["plan"]
    assert waiting["history"]["pendingCount"] == 2
    assert s.tables() == set(), "nothing may be written before the approval"
    shown = s.plugin("migration", "orders").stdout
    assert "0000000002" in shown
    assert "CREATE" not in shown

    s.approve(wait=True)
    done = s.wait_phase("InSync")
    assert s.tables() >= {"customers", "orders"}
    assert done["lastRun"]["outcome"] == "Applied"
    assert done["lastRun"]["plan"]["name"] == plan["name"]
    assert done["lastRun"]["approver"]["username"] == "alice@example.com"
    assert done["history"]["currentVersion"] == "0000000002"
    assert s.condition("Ready")["reason"] == "HistoryMatched"
    types = [entry["type"] for entry in done["journal"]["entries"]]
    for expected in ("PlanPublished", "ApprovalAccepted", "RunFinished", "Verified"):
        assert expected in types
    assert "CREATE TABLE" not in json.dumps(s.get())


@pytest.mark.req("PATH-13", "MIG-08", "RRQ-04", "RRQ-05", "JNL-13")
def test_nothing_pending_needs_no_apply_and_no_approval(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    s.migrations(CUSTOMERS)
    s.migration(apply="Always")
    first = s.wait_phase("InSync")
    runs = first["lastRun"]["operationID"]

    s.request_read()
    again = s.wait(
        lambda st: (
            st.get("phase") == "InSync"
            and st.get("lastReadRequest") is not None
            and st.get("history", {}).get("operationID") != first["history"]["operationID"]
        ),
        "a second reading",
    )
    assert again["lastRun"]["operationID"] == runs, "a reading with nothing pending runs nothing"
    assert "plan" not in again or again["plan"] is None or again["plan"] == first.get("plan")


@pytest.mark.req("MIG-43", "MIG-36", "RUN-17", "PRIV-05", "MIG-40", "MIG-45")
def test_a_statement_that_fails_leaves_it_blocked_until_a_person_repairs(
    e2e_stack: LocalStack,
) -> None:
    s = Scenario(e2e_stack)
    s.migrations({**CUSTOMERS, "0000000002_broken.up.sql": "SELECT 1 / 0;\n"})
    s.migration(apply="Always")

    blocked = s.wait(
        lambda st: (
            st.get("phase") == "Blocked"
            and (st.get("lastRun") or {}).get("outcome") == "Failed"
            and any(c["reason"] == "HistoryDirty" for c in st.get("conditions", []))
        ),
        "Blocked HistoryDirty after a failed run",
    )
    failure = blocked["lastRun"]["failure"]
    assert failure["version"] == "0000000002"
    assert failure["sqlstate"] == "22012"
    assert "division" not in json.dumps(blocked).lower()
    assert blocked["history"]["dirty"]["version"] == "0000000002"

    # A person fixes the file and clears the dirty row with Ptah, then asks for a read.
    s.migrations({**CUSTOMERS, "0000000002_broken.up.sql": "SELECT 1;\n"})
    s.sql("DELETE FROM schema_migrations WHERE version = 2")
    s.request_read()
    s.wait_phase("InSync")
    assert s.status()["lastRun"]["outcome"] == "Applied"


@pytest.mark.req("SRC-CM-10", "SRC-CM-12", "MIG-16", "APR-05", "APR-12", "PLUGIN-05")
def test_a_plan_that_went_stale_needs_a_new_approval(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack)
    s.migrations(CUSTOMERS)
    s.migration()
    first = s.wait_phase("AwaitingApproval")["plan"]

    s.migrations({**CUSTOMERS, **ORDERS})
    second = s.wait(
        lambda st: (
            st.get("phase") == "AwaitingApproval"
            and (st.get("plan") or {}).get("name") not in (None, first["name"])
        ),
        "a new plan",
    )["plan"]

    stale = {
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahMigrationApproval",
        "metadata": {"name": "old-plan"},
        "spec": {
            "migrationRef": {"name": "orders", "uid": s.get()["metadata"]["uid"]},
            "planRef": {"name": first["name"], "uid": first["uid"]},
            "planFingerprint": first["fingerprint"],
        },
    }
    refused = s.stack.cp.kubectl(
        "create",
        "-n",
        s.namespace,
        "-f",
        "-",
        input=json.dumps(stale),
        kubeconfig=s.approver,
        check=False,
    )
    assert refused.returncode != 0
    assert "denied the request" in refused.stderr

    s.approve()
    done = s.wait_phase("InSync")
    assert done["lastRun"]["plan"]["name"] == second["name"]
    assert s.tables() >= {"customers", "orders"}


@pytest.mark.req("MIG-56", "MIG-12", "MIG-55")
def test_mariadb_with_transaction_mode_none_under_always(e2e_stack: LocalStack) -> None:
    s = Scenario(e2e_stack, engine="MariaDB")
    s.migrations(
        {
            "0000000001_create_customers.up.sql": "CREATE TABLE customers (id bigint PRIMARY KEY);\n",
            "0000000002_add_email.up.sql": "ALTER TABLE customers ADD COLUMN email varchar(200);\n",
        }
    )
    s.migration(apply="Always", policy={"apply": "Always", "transactionMode": "none"})
    done = s.wait_phase("InSync")
    assert done["lastRun"]["outcome"] == "Applied"
    assert "customers" in s.tables()
