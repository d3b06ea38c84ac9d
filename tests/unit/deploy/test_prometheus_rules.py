"""The alert rules pass promtool's checks and unit tests, and the PrometheusRule wraps them.

promtool comes with Debian's prometheus package (hack/install-deps.sh); without it these tests
fail rather than skip, so a CI machine missing it cannot pass them silently.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

RULES_DIR = Path(__file__).resolve().parents[3] / "deploy" / "prometheus"
RULES = RULES_DIR / "ptah-rules.yaml"
RULE_TESTS = RULES_DIR / "ptah-rules.test.yaml"
MANIFEST = RULES_DIR / "prometheusrule.yaml"


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool not found: install Debian's prometheus (hack/install-deps.sh)")
    return subprocess.run(
        [promtool, *args], capture_output=True, text=True, check=False, cwd=RULES_DIR, timeout=120
    )


def _alerts(groups: dict[str, object]) -> set[str]:
    return {
        rule["alert"]
        for group in groups["groups"]  # type: ignore[attr-defined]
        for rule in group["rules"]
        if "alert" in rule
    }


def test_the_rule_file_passes_promtool_check_rules() -> None:
    checked = _promtool("check", "rules", RULES.name)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_alert_rule_is_unit_tested_and_the_tests_pass() -> None:
    rules = yaml.safe_load(RULES.read_text())
    tests = yaml.safe_load(RULE_TESTS.read_text())
    tested = {case["alertname"] for t in tests["tests"] for case in t.get("alert_rule_test", [])}
    assert _alerts(rules) <= tested, f"untested: {sorted(_alerts(rules) - tested)}"
    ran = _promtool("test", "rules", RULE_TESTS.name)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_the_prometheusrule_manifest_wraps_the_same_groups() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    assert manifest["apiVersion"] == "monitoring.coreos.com/v1"
    assert manifest["kind"] == "PrometheusRule"
    assert manifest["spec"] == yaml.safe_load(RULES.read_text())


def test_the_rules_cover_what_an_operator_is_alerted_on() -> None:
    assert _alerts(yaml.safe_load(RULES.read_text())) >= {
        "PtahUnresolvedRun",
        "PtahReconciliationOverdue",
        "PtahOperationPastDeadline",
        "PtahRealmLeaseHeldPastRun",
        "PtahPlanAwaitingApproval",
        "PtahRepeatedOperationFailures",
        "PtahWebhookCertificateExpiringSoon",
        "PtahNoLeader",
    }


def test_the_local_stacks_copy_changes_only_every_alerts_for() -> None:
    from localstack.prometheus import rules_copy

    written = yaml.safe_load(RULES.read_text())
    copy = rules_copy(RULES, "2s")
    for group, copied in zip(written["groups"], copy["groups"], strict=True):
        for rule, rule_copy in zip(group["rules"], copied["rules"], strict=True):
            assert rule_copy.pop("for") == "2s"
            rule.pop("for", None)
            assert rule_copy == rule
    assert rules_copy(RULES, None) == yaml.safe_load(RULES.read_text())
