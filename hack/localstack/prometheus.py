"""A throwaway Prometheus: Debian's `prometheus` (2.42), on 127.0.0.1, scraping the manager.

Its own data directory and configuration under the stack's work directory, a free loopback
port, no package service. It scrapes each target's `/metrics` and evaluates the operator's
alert rules (`deploy/prometheus/ptah-rules.yaml`, copied; `alert_for` replaces every rule's
`for:` in the copy so a test sees an alert fire within seconds) at `interval`. Removed when it
stops. `query(expr)` and `alerts()` read its HTTP API.
"""

from __future__ import annotations

import json
import secrets
import shutil
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from localstack.controlplane import REPO
from localstack.process import OneProcessServer, Process, StackError, free_port, port_open

BINARY = "prometheus"
RULES = REPO / "deploy" / "prometheus" / "ptah-rules.yaml"


def rules_copy(source: Path, alert_for: str | None) -> dict[str, Any]:
    """The rule file's groups, with every alert's `for:` set to `alert_for` when given."""
    groups: dict[str, Any] = yaml.safe_load(source.read_text())
    if alert_for is not None:
        for group in groups["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    rule["for"] = alert_for
    return groups


DASHBOARD = REPO / "deploy" / "grafana" / "ptah-operator.json"
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__range": "1h", "$__interval": "15s"}
"""What Grafana puts for its interval variables, for evaluating a panel's query outside it."""


def dashboard_queries(path: Path = DASHBOARD) -> list[tuple[str, str]]:
    """(panel title, expression) of every target of every panel, Grafana's variables replaced."""
    dashboard = json.loads(path.read_text())
    queries = []
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expr = str(target["expr"])
            for variable, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            queries.append((str(panel["title"]), expr))
    return queries


class PrometheusServer(OneProcessServer):
    """`with PrometheusServer(workdir, ["127.0.0.1:8080"]) as prom:`; `prom.url` is its address.
    `targets` is a list of addresses, or the path of a file_sd file someone keeps current (the
    real node's Pod watch, podwatch.py)."""

    def __init__(
        self,
        workdir: Path,
        targets: list[str] | Path,
        *,
        rules: Path | None = RULES,
        alert_for: str | None = None,
        interval: str = "2s",
        port: int | None = None,
    ) -> None:
        self.workdir = workdir / f"prometheus-{secrets.token_hex(3)}"
        self.targets = targets
        self.rules = rules
        self.alert_for = alert_for
        self.interval = interval
        self.port = port or free_port()
        self._proc: Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _config(self) -> dict[str, Any]:
        config: dict[str, Any] = {
            "global": {"scrape_interval": self.interval, "evaluation_interval": self.interval},
            "scrape_configs": [
                {
                    "job_name": "ptah-operator",
                    "scrape_timeout": self.interval,
                    **(
                        {"file_sd_configs": [{"files": [str(self.targets)]}]}
                        if isinstance(self.targets, Path)
                        else {"static_configs": [{"targets": self.targets}]}
                    ),
                }
            ],
        }
        if self.rules is not None:
            copy = self.workdir / "ptah-rules.yaml"
            copy.write_text(json.dumps(rules_copy(self.rules, self.alert_for), indent=2))
            config["rule_files"] = [str(copy)]
        return config

    def start(self) -> PrometheusServer:
        binary = shutil.which(BINARY)
        if binary is None:
            raise StackError(
                f"{BINARY} not found (install Debian's prometheus: hack/install-deps.sh)"
            )
        data = self.workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        config_path = self.workdir / "prometheus.yml"
        config_path.write_text(json.dumps(self._config(), indent=2))  # JSON is YAML
        self._proc = Process(
            "prometheus",
            [
                binary,
                f"--config.file={config_path}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=1d",
                "--log.level=warn",
            ],
            self.workdir / "prometheus.log",
            cwd=self.workdir,
        )
        self._proc.start()
        self._proc.wait_until(self._ready, 60, "answering /-/ready")
        return self

    def _ready(self) -> bool:
        if not port_open(self.port):
            return False
        with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as answer:
            return int(answer.status) == 200

    def api(self, path: str, **params: str) -> Any:
        """`data` of a GET on the HTTP API; StackError when Prometheus answers an error."""
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}{query}", timeout=10) as answer:
                body = json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            body = json.loads(exc.read() or b"{}")
        if body.get("status") != "success":
            raise StackError(f"prometheus {path}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result (a vector's samples, or a scalar as one sample)."""
        data = self.api("query", query=expr)
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        result: list[dict[str, Any]] = data["result"]
        return result

    def alerts(self) -> list[dict[str, Any]]:
        """The alerts pending or firing now."""
        alerts: list[dict[str, Any]] = self.api("alerts")["alerts"]
        return alerts
