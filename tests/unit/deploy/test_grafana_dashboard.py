"""The Grafana dashboard's queries parse, and it shows what the issue asks a dashboard for.

Each panel's expression is checked by promtool as a recording rule (the same parser the
server uses); the end-to-end scenario (tests/e2e/test_alerts.py) evaluates them against the
local Prometheus.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from localstack.prometheus import DASHBOARD, dashboard_queries


def test_every_panel_queries_prometheus_through_the_datasource_variable() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    titles = {panel["title"] for panel in dashboard["panels"]}
    assert {
        "Resources by phase",
        "Runs by outcome",
        "Operation durations (p90, mean)",
        "Approvals waiting",
    } <= titles
    for panel in dashboard["panels"]:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
    for _, expr in dashboard_queries():
        assert "$" not in expr, f"a Grafana variable left in {expr!r}"


def test_every_panel_expression_parses(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool not found: install Debian's prometheus (hack/install-deps.sh)")
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {
                        "record": "dashboard:" + re.sub(r"\W+", "_", title).strip("_").lower(),
                        "expr": expr,
                    }
                    for title, expr in dashboard_queries()
                ],
            }
        ]
    }
    path = tmp_path / "dashboard-rules.yaml"
    path.write_text(json.dumps(rules))
    checked = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
