"""A real Prometheus scrapes the operator: a held Unknown run fires PtahUnresolvedRun, and the
person's acknowledgment clears it; every dashboard panel's query answers with data.

The stack's Prometheus evaluates deploy/prometheus/ptah-rules.yaml with every `for:` shortened
to 2 s (conftest), scraping and evaluating every 2 s; alerts are read from its
`/api/v1/alerts`, as Alertmanager or a person would.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from localstack.prometheus import PrometheusServer, dashboard_queries
from localstack.stack import LocalStack

from tests.e2e.scenario import Scenario
from tests.e2e.test_unresolved_runs import MENDED, SLOW, _held

pytestmark = pytest.mark.e2e


def _unresolved_alerts(prom: PrometheusServer, namespace: str) -> list[dict[str, Any]]:
    return [
        a
        for a in prom.alerts()
        if a["labels"].get("alertname") == "PtahUnresolvedRun"
        and a["labels"].get("namespace") == namespace
    ]


def _until(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


@pytest.mark.req("RUN-03", "RUN-05", "RUN-06", "MIG-47")
def test_a_held_unknown_run_fires_the_alert_until_it_is_acknowledged(
    e2e_stack: LocalStack,
) -> None:
    prom = e2e_stack.prometheus
    assert prom is not None
    _until(
        lambda: [s for s in prom.query('up{job="ptah-operator"}') if s["value"][1] == "1"],
        "Prometheus scraping the operator",
    )

    # A plan waits for an approval somewhere else (the dashboard's approvals panel).
    waiting = Scenario(e2e_stack)
    waiting.migrations(MENDED)
    waiting.migration(name="stock")
    waiting.wait_phase("AwaitingApproval", name="stock")

    # A run killed inside its file: no result can come from it, Unknown, held.
    s = Scenario(e2e_stack)
    s.migrations(SLOW)
    s.migration(apply="Always", policy={"apply": "Always", "transactionMode": "none"})
    s.wait(lambda st: st.get("phase") == "Applying", "Applying")
    job = s.jobs("Apply")[0]
    s.wait(lambda st: "ledger" in s.tables(), "the run inside its sleep")
    pods = json.loads(
        s.kubectl("get", "pods", "-l", f"job-name={job['metadata']['name']}", "-o", "json").stdout
    )["items"]
    e2e_stack.kill_container(s.namespace, pods[0]["metadata"]["name"], "run")
    held = s.wait(_held, "Blocked with an unresolved run", timeout=240)
    run = held["unresolvedRun"]
    assert run["outcome"] == "Unknown"

    firing = _until(
        lambda: [a for a in _unresolved_alerts(prom, s.namespace) if a["state"] == "firing"],
        "PtahUnresolvedRun firing",
    )
    assert firing[0]["labels"] | {"severity": "critical"} == {
        "alertname": "PtahUnresolvedRun",
        "family": "PtahMigration",
        "namespace": s.namespace,
        "name": "orders",
        "outcome": "Unknown",
        "severity": "critical",
    }
    assert run["operationID"] not in json.dumps(firing), "no operation id in an alert"

    # Every panel of the dashboard answers, with data: the scenario made some of each.
    empty = [(title, expr) for title, expr in dashboard_queries() if not prom.query(expr)]
    assert not empty, f"panels with no data: {empty}"
    waits = prom.query(
        "max by (namespace, name) (ptah_plan_awaiting_approval_since_timestamp_seconds"
        f'{{namespace="{waiting.namespace}"}})'
    )
    assert [w["metric"]["name"] for w in waits] == ["stock"]

    # Alice establishes what the run did and says so: the hold ends, and so does the alert.
    created = s.acknowledge(run)
    assert created.returncode == 0, created.stderr
    s.wait(lambda st: st.get("unresolvedRun") is None, "the hold released")
    _until(lambda: not _unresolved_alerts(prom, s.namespace), "PtahUnresolvedRun cleared")
