"""A runner that crashes exits NOT_REPORTED (4), never Python's 1 (issue #18).

The manager believes a result record only when the run's container exited 0 (REPORTED) or
1 (NOT_DONE), which the runner gives only once the endpoint took its report. CPython ends an
uncaught exception with 1 too: a runner that crashed after a forged report was stored would
then confirm it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from ptah_operator.api.contracts.codes import ExitCode
from ptah_operator.runner import main as runner_main

SECRET = "postgresql://app:hunter2@db/orders"


def test_an_error_nothing_expected_ends_not_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def crashing(_args: object) -> int:
        raise RuntimeError(SECRET)

    termination = tmp_path / "termination-log"
    monkeypatch.setenv("PTAH_TERMINATION_LOG", str(termination))
    monkeypatch.setattr(runner_main, "_source", crashing)
    # (The runner's own logging setup would leave every later test's logger on this test's
    # captured stream.)
    monkeypatch.setattr(runner_main, "configure_logging", lambda: None)
    argv = ["source", "--snapshot", str(tmp_path), "--digest", "sha256:" + "0" * 64]
    with capture_logs() as logs:
        code = runner_main.main([*argv, "--out", str(tmp_path / "out")])
    assert code == ExitCode.NOT_REPORTED
    assert termination.read_text().strip() == "result not reported"
    assert [e["error"] for e in logs if e["event"] == "runner failed"] == ["RuntimeError"]
    assert SECRET not in repr(logs)
