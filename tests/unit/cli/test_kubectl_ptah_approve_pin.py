"""`kubectl ptah approve --plan NAME --fingerprint F`: approve only the plan the person reviewed
(PLUGIN-05, seed 000: "approves nothing if the plan it showed was replaced")."""

from __future__ import annotations

import io

import pytest

from ptah_operator.api.constants import Kind
from ptah_operator.cli.kubectl.approve import Reviewed, differs_from_reviewed
from ptah_operator.cli.kubectl.errors import EXIT_USAGE
from ptah_operator.cli.kubectl.main import Command, parse_command, run

FINGERPRINT = "sha256:" + "ab12" * 16


@pytest.mark.req("PLUGIN-05")
def test_approve_reads_the_plan_and_fingerprint_the_person_reviewed() -> None:
    command, _ = parse_command(
        [
            "approve",
            "migration/orders",
            "--plan",
            "orders-ab12ab12ab",
            "--fingerprint",
            "sha256:AB12ab12ab12",
        ]
    )
    assert command == Command(
        "approve",
        Kind.PTAH_MIGRATION,
        "orders",
        False,
        1800.0,
        reviewed=Reviewed("orders-ab12ab12ab", "sha256:ab12ab12ab12"),
    )
    command, _ = parse_command(["approve", "schema/catalog", "--fingerprint", FINGERPRINT[7:]])
    assert command.reviewed == Reviewed(None, FINGERPRINT)
    command, _ = parse_command(["approve", "schema/catalog"])
    assert command.reviewed == Reviewed()


@pytest.mark.req("PLUGIN-05")
@pytest.mark.parametrize(
    "value", ["sha256:ab12", "abc", "sha256:" + "g" * 12, "sha512:" + "a" * 64]
)
async def test_a_fingerprint_that_is_not_one_is_a_usage_error(value: str) -> None:
    err = io.StringIO()
    code = await run(["approve", "migration/orders", "--fingerprint", value], io.StringIO(), err)
    assert code == EXIT_USAGE
    assert err.getvalue().startswith(
        "error: --fingerprint takes sha256: and 12 to 64 hex digits, as kubectl ptah plan shows"
    )
    assert "Traceback" not in err.getvalue()


@pytest.mark.req("PLUGIN-05")
def test_the_plan_waiting_now_must_be_the_one_reviewed() -> None:
    assert differs_from_reviewed(Reviewed(), "orders-1", FINGERPRINT) is None
    assert differs_from_reviewed(Reviewed("orders-1", FINGERPRINT), "orders-1", FINGERPRINT) is None
    assert differs_from_reviewed(Reviewed(None, FINGERPRINT[:19]), "orders-1", FINGERPRINT) is None
    assert differs_from_reviewed(Reviewed("orders-0"), "orders-1", FINGERPRINT) == (
        "it waits on plan orders-1, not on orders-0"
    )
    other = "sha256:" + "cd34" * 16
    assert differs_from_reviewed(Reviewed(None, other[:19]), "orders-1", FINGERPRINT) == (
        f"plan orders-1 has fingerprint {FINGERPRINT}, not {other[:19]}"
    )
    assert differs_from_reviewed(Reviewed(None, other), "orders-1", None) is not None
