"""A PtahSchema on the whole local stack: observe, plan, approve, apply, prove.

The operator, its Jobs (real containers running the schema engine against real PostgreSQL and
MariaDB), its webhooks and the plugin are all real; the scenarios act as a person does and read
what a person reads.
"""

from __future__ import annotations

import pytest
from localstack.stack import LocalStack

from tests.e2e.scenario import SchemaScenario

pytestmark = pytest.mark.e2e

SCHEMA = (
    "CREATE TABLE customers (id bigint PRIMARY KEY, email text NOT NULL, nickname text);\n"
    "CREATE TABLE orders (\n"
    "  id bigint PRIMARY KEY,\n"
    "  customer_id bigint NOT NULL REFERENCES customers (id)\n"
    ");\n"
    "CREATE INDEX orders_customer ON orders (customer_id);\n"
)
WITHOUT_NICKNAME = SCHEMA.replace(", nickname text", "")
WITH_TOTAL = SCHEMA.replace(
    "customer_id bigint NOT NULL REFERENCES customers (id)\n",
    "customer_id bigint NOT NULL REFERENCES customers (id),\n  total_cents bigint\n",
)


def _journal_types(s: SchemaScenario) -> list[str]:
    return [e["type"] for e in (s.status().get("journal") or {}).get("entries") or []]


@pytest.mark.req(
    "PATH-02", "PATH-17", "PATH-21", "SCH-05", "SCH-10", "SCH-13", "SCH-19", "SCH-22", "SCH-26"
)
def test_a_schema_goes_from_nothing_to_insync_through_an_approval(e2e_stack: LocalStack) -> None:
    s = SchemaScenario(e2e_stack)
    s.desired({"schema.sql": SCHEMA})
    s.schema(scope={"schemas": ["public"]})

    waiting = s.wait_phase("AwaitingApproval", timeout=240)
    assert waiting["plan"]["name"]
    assert s.tables() == set(), "nothing may change before the approval"
    shown = s.plugin("schema", "orders").stdout
    assert "CREATE TABLE" not in shown, "the status view never prints SQL"
    plan = s.plugin("plan", "schema/orders").stdout
    assert "CREATE TABLE" in plan, "the plan verb prints the SQL a person is asked to approve"
    drift = waiting.get("drift") or {}
    assert drift.get("total", 0) > 0

    s.approve(wait=True)
    done = s.wait_phase("InSync", timeout=240)
    assert {"customers", "orders"} <= s.tables()
    assert s.condition("InSync")["reason"] == "ScopedConverged"
    assert done["applied"]["plan"]["name"] == waiting["plan"]["name"]
    assert done["lastApply"]["outcome"] == "Succeeded"
    applied = s.plugin("plan", "schema/orders", "--applied").stdout
    assert waiting["plan"]["name"] in applied
    types = _journal_types(s)
    for expected in ("PlanPublished", "ApprovalAccepted", "ApplyFinished", "Verified"):
        assert expected in types, types


@pytest.mark.req("SCH-12", "SCH-14", "SCH-16", "SCH-30", "SCH-49")
def test_destructive_and_protected_changes_are_blocked_and_change_nothing(
    e2e_stack: LocalStack,
) -> None:
    s = SchemaScenario(e2e_stack)
    s.desired({"schema.sql": SCHEMA})
    s.schema(apply="Always", policy={"protectedTables": ["public.orders"]})
    # Creating tables touches public.orders too: a protected table is Blocked from the start.
    s.wait_phase("Blocked", timeout=240)
    assert s.condition("Ready")["reason"] == "ProtectedTable"
    assert s.tables() == set()

    # Without the protection, Always applies a plan with nothing destructive at once.
    s.schema(apply="Always")
    s.wait_phase("InSync", timeout=240)
    assert {"customers", "orders"} <= s.tables()

    # Dropping a column is destructive: Blocked, and the column stays.
    s.desired({"schema.sql": WITHOUT_NICKNAME})
    s.wait_phase("Blocked", timeout=240)
    assert s.condition("Ready")["reason"] == "DestructiveChangeDisallowed"
    columns = s.sql(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'customers'"
    )
    assert "nickname" in columns.split()

    # An additive change applies under Always (no approval).
    s.desired({"schema.sql": WITH_TOTAL})
    s.wait_phase("InSync", timeout=240)
    columns = s.sql(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'orders'"
    )
    assert "total_cents" in columns.split()


@pytest.mark.req("SCH-11", "SCH-30")
def test_a_mariadb_schema_converges_and_a_hand_made_change_is_seen_as_drift(
    e2e_stack: LocalStack,
) -> None:
    s = SchemaScenario(e2e_stack, engine="MariaDB")
    s.desired(
        {
            "schema.sql": (
                "CREATE TABLE invoices (id BIGINT NOT NULL PRIMARY KEY, "
                "status VARCHAR(16) NOT NULL DEFAULT 'open');\n"
            )
        }
    )
    s.schema(apply="Always")
    s.wait_phase("InSync", timeout=240)
    assert "invoices" in s.tables()

    s.sql("CREATE TABLE scratch (id INT PRIMARY KEY)")
    s.request_read()
    blocked = s.wait_phase("Blocked", timeout=240)
    assert s.condition("Ready")["reason"] == "DestructiveChangeDisallowed"
    assert (blocked.get("drift") or {}).get("total", 0) >= 1
    assert "scratch" in s.tables()


@pytest.mark.req("SCH-04", "SCH-06", "SCH-07", "SCH-08", "SRC-OCI-06")
def test_schemas_from_an_oci_artifact_and_from_git_converge(e2e_stack: LocalStack) -> None:
    from ptah_operator.engine.sources.oci import parse_ref
    from tests.support.sources import oci_client, unique

    assert e2e_stack.registry is not None
    assert e2e_stack.git is not None
    schema_type = "application/vnd.stokaro.ptah.schema.v1"

    oci = SchemaScenario(e2e_stack)
    reference = e2e_stack.registry.ref(unique("acme/catalog-schema"), "stable")
    digest = oci_client(e2e_stack.registry).push(
        parse_ref(reference), {"schema.sql": SCHEMA.encode()}, schema_type
    )
    oci.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "verification"},
            "data": {"policy.yaml": f"version: 1\nartifact_types:\n  - {schema_type}\n"},
        }
    )
    oci.schema(
        apply="Always",
        source={
            "artifact": {
                "ociRef": e2e_stack.pod_url(reference),
                "verificationPolicyFrom": {"name": "verification", "key": "policy.yaml"},
            }
        },
    )
    done = oci.wait_phase("InSync", timeout=300)
    assert done["source"]["ociDigest"] == digest
    assert oci.condition("ArtifactVerified")["reason"] == "PolicySatisfied"
    assert {"customers", "orders"} <= oci.tables()

    git = SchemaScenario(e2e_stack)
    repo = e2e_stack.git.create_repo()
    commit = repo.commit({"db/schema.sql": SCHEMA.encode()}, "desired schema")
    repo.push("main")
    git.schema(
        apply="Always",
        source={"git": {"repository": e2e_stack.pod_url(repo.url), "ref": "main", "path": "db"}},
    )
    done = git.wait_phase("InSync", timeout=300)
    assert done["source"]["commit"] == commit
    assert git.condition("ArtifactResolved")["reason"] == "CommitResolved"
    assert {"customers", "orders"} <= git.tables()
