"""hack/mutation_report.py: what `make mutate` reports (issue #11)."""

from __future__ import annotations

import json
from pathlib import Path

import mutation_report
import pytest


def _write_results(root: Path, codes: dict[str, int | None]) -> None:
    meta = root / "mutants" / "ptah_operator" / "reconcile" / "m.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": codes}))


def test_a_timed_out_mutant_is_shown_apart_and_not_counted_as_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # On a loaded machine a mutant that ran out of time says nothing about the tests.
    _write_results(
        tmp_path,
        {
            "ptah_operator.reconcile.m.x_f__mutmut_1": 1,
            "ptah_operator.reconcile.m.x_f__mutmut_2": 0,
            "ptah_operator.reconcile.m.x_f__mutmut_3": 36,
            "ptah_operator.reconcile.m.x_f__mutmut_4": -24,
        },
    )
    monkeypatch.setattr(mutation_report, "MUTANTS", tmp_path / "mutants")
    monkeypatch.setattr(mutation_report, "CONTRIBUTING", tmp_path / "contributing.md")

    assert mutation_report.main([]) == 0

    out = capsys.readouterr().out
    assert "killed: 1 " in out
    assert "timed out: 2" in out
    assert "kill rate of the non-equivalent mutants: 50.0 % (1/2)" in out
    assert "  timed out: ptah_operator.reconcile.m.x_f__mutmut_3" in out
    assert "  timed out: ptah_operator.reconcile.m.x_f__mutmut_4" in out
    assert "  survived: ptah_operator.reconcile.m.x_f__mutmut_2" in out
