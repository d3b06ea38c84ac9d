"""`kubectl_complete-ptah`: what it offers for each position, and that its table of verbs and
flags is the parser's; and the exit codes listed once, in --help and in the docs."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ptah_operator.cli.kubectl import complete
from ptah_operator.cli.kubectl.errors import EXIT_CODES
from ptah_operator.cli.kubectl.main import build_parser, run

REPO = Path(__file__).resolve().parents[3]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_the_completion_table_is_the_parsers() -> None:
    verbs = _subparsers()
    assert [v for v, _ in complete.VERBS] == list(verbs)
    for verb, sub in verbs.items():
        flags = {f for a in sub._actions for f in a.option_strings} - {"-h", "--help"}
        assert set(complete.VERB_FLAGS[verb]) | set(complete.COMMON_FLAGS) == flags, verb
        valued = {f for a in sub._actions for f in a.option_strings if a.nargs != 0}
        assert valued - {"-h", "--help"} <= complete.VALUED, verb


def test_verbs_kinds_flags_and_values_are_offered() -> None:
    assert complete.completions(["pl"]) == (
        ["plan\tshow the plan a migration or schema published"],
        4,
    )
    assert complete.completions(["__complete", "ap"])[0][0].startswith("approve\t")
    assert complete.completions(["approve", ""]) == (["migration/", "schema/"], 6)
    assert complete.completions(["wait", "s"]) == (["schema/"], 6)
    assert complete.completions(["plan", "--n"]) == (["--no-sql", "--namespace"], 4)
    assert complete.completions(["schema", "x", "-o", ""]) == (["json", "yaml"], 4)
    assert complete.completions(["wait", "schema/x", "--for", "VerifyingH"]) == (
        ["VerifyingHistory"],
        4,
    )
    assert complete.completions(["migration", "a", "b"]) == ([], 4)


def test_names_are_none_when_the_server_cannot_be_asked(tmp_path: Path) -> None:
    missing = str(tmp_path / "none")
    assert complete.completions(["migration", "--kubeconfig", missing, ""]) == ([], 4)
    assert complete.completions(["plan", "--kubeconfig", missing, "migration/"]) == ([], 4)


async def test_help_lists_every_exit_code_and_so_do_the_docs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await run(["--help"]) == 0
    text = capsys.readouterr().out
    docs = (REPO / "docs" / "kubectl-plugin.md").read_text()
    for code, meaning in EXIT_CODES:
        assert f"  {code:<4}{meaning}" in text
        assert f"| {code} | {meaning} |" in docs
