"""Two PtahMigrations on one database take turns, or are both refused.

LCK-01: every resource addressing one physical database names the same coordinationKey, in any
namespace, and they take turns through the database-realm Lease, which only Apply takes
(LCK-07). LCK-02/LCK-03: the database is shared only when every claimant sets
spec.target.sharedRealm; one that does not blocks them all, RealmConflict, with no Job.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from localstack.stack import OPERATOR_NAMESPACE, LocalStack

from ptah_operator.api.names import realm_lease_name
from tests.e2e.scenario import Scenario

pytestmark = pytest.mark.e2e


def _logged_run(who: str) -> dict[str, str]:
    """One migration that records when it started and ended, three seconds apart."""
    return {
        f"0000000001_{who}_run.up.sql": (
            f"INSERT INTO run_log VALUES ('{who}', 'start', clock_timestamp());\n"
            "SELECT pg_sleep(3);\n"
            f"INSERT INTO run_log VALUES ('{who}', 'end', clock_timestamp());\n"
        ),
    }


def _time(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def _key(s: Scenario) -> str:
    return f"shared/{s.database}"


def _statuses(stack: LocalStack, names: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The statuses of resources in several namespaces, in one request: {name: status}."""
    items = json.loads(stack.cp.kubectl("get", "ptahmigrations", "-A", "-o", "json").stdout)
    return {
        names[i["metadata"]["namespace"]]: i.get("status") or {}
        for i in items["items"]
        if names.get(i["metadata"]["namespace"]) == i["metadata"]["name"]
    }


def _pair(stack: LocalStack, shared: tuple[bool, bool]) -> tuple[Scenario, Scenario]:
    """`orders` and `billing` in two namespaces, on one database under one coordinationKey,
    each with its own revision table and a migration that logs its run into `run_log`."""
    a = Scenario(stack)
    b = Scenario(stack, database=a.database)
    a.sql("CREATE TABLE run_log (who text NOT NULL, at text NOT NULL, ts timestamptz NOT NULL)")
    a.migrations(_logged_run("orders"))
    b.migrations(_logged_run("billing"))
    for s, who, share in ((a, "orders", shared[0]), (b, "billing", shared[1])):
        s.migration(
            name=who,
            apply="Always",
            target={"coordinationKey": _key(a), "sharedRealm": share},
            policy={"apply": "Always", "revisionTable": {"name": f"{who}_migrations"}},
        )
    return a, b


@pytest.mark.req("LCK-01", "LCK-02", "LCK-07", "PATH-09", "JOB-05", "MIG-12")
def test_two_migrations_with_one_coordination_key_take_turns(e2e_stack: LocalStack) -> None:
    a, b = _pair(e2e_stack, (True, True))
    seen_waiting: set[str] = set()

    def both_in_sync(_: dict[str, Any]) -> bool:
        states = _statuses(e2e_stack, {a.namespace: "orders", b.namespace: "billing"})
        for who, st in states.items():
            if "Lease is held by another operation" in (st.get("message") or ""):
                seen_waiting.add(who)
        return all(st.get("phase") == "InSync" for st in states.values())

    a.wait(both_in_sync, "both InSync", name="orders", timeout=240)
    runs = {"orders": a.status("orders")["lastRun"], "billing": b.status("billing")["lastRun"]}
    assert all(r["outcome"] == "Applied" for r in runs.values())

    # What the database recorded: one run's start comes after the other's end.
    rows = a.sql("SELECT who, at, ts FROM run_log ORDER BY ts").splitlines()
    assert [r.split("|")[1] for r in rows] == ["start", "end", "start", "end"]
    assert rows[0].split("|")[0] == rows[1].split("|")[0]
    assert rows[2].split("|")[0] == rows[3].split("|")[0] != rows[0].split("|")[0]

    # What the cluster recorded: the second Apply Job was created only after the first run
    # ended, so the Lease, not the database's own lock, kept them apart.
    first, second = sorted(runs, key=lambda who: runs[who]["finishedAt"])
    jobs = {
        "orders": a.jobs("Apply", "orders"),
        "billing": b.jobs("Apply", "billing"),
    }
    assert all(len(j) == 1 for j in jobs.values())
    second_created = _time(jobs[second][0]["metadata"]["creationTimestamp"])
    assert second_created >= _time(runs[first]["finishedAt"])
    assert _time(runs[second]["startedAt"]) >= _time(runs[first]["finishedAt"])
    assert seen_waiting, "the two never met at the Lease: the scenario proved nothing"
    lease = json.loads(
        e2e_stack.cp.kubectl(
            "get", "lease", "-n", OPERATOR_NAMESPACE, realm_lease_name(_key(a)), "-o", "json"
        ).stdout
    )
    assert not lease["spec"].get("holderIdentity"), "both runs gave the Lease back"
    assert lease["spec"]["leaseTransitions"] == 2, "one holder after the other"


@pytest.mark.req("LCK-02", "LCK-03", "LCK-04", "MIG-24", "SCH-31")
def test_one_claimant_without_shared_realm_blocks_both(e2e_stack: LocalStack) -> None:
    a, b = _pair(e2e_stack, (True, False))

    for s, who in ((a, "orders"), (b, "billing")):
        blocked = s.wait(
            lambda st: (
                st.get("phase") == "Blocked"
                and any(c["reason"] == "RealmConflict" for c in st.get("conditions", []))
            ),
            f"{who} Blocked RealmConflict",
            name=who,
        )
        assert blocked.get("activeOperation") is None
        assert blocked.get("plan") is None
        assert s.condition("Progressing", name=who)["status"] == "False"
    # A read one of them started before the other existed was dropped; once its Job is over,
    # both are still refused, and neither ever ran an Apply.
    a.wait(
        lambda _: all(j.get("status", {}).get("active", 0) == 0 for j in a.jobs() + b.jobs()),
        "every Job of the pair over",
        timeout=60,
    )
    for s, who in ((a, "orders"), (b, "billing")):
        assert s.status(who)["phase"] == "Blocked"
        assert s.condition("Ready", name=who)["reason"] == "RealmConflict"
        assert s.jobs("Apply") == []
    assert a.tables() == {"run_log"}, "no migration reached the database"
