"""What `kubectl ptah migration` and `approve` print, from statuses built with the API models."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptah_operator.api.common import PlanReference
from ptah_operator.api.migration import AheadVersions
from ptah_operator.cli.kubectl.migration_view import render_approval_summary, render_migration
from ptah_operator.cli.kubectl.view import one_line, short, table
from tests.unit.cli.rendering_fixtures import blocked, waiting

GOLDEN = Path(__file__).with_name("migration_waiting.golden")


@pytest.mark.req("PLUGIN-04", "PRIV-01", "PRIV-02", "RUN-12", "RUN-17")
def test_a_migration_awaiting_approval_reads_as_the_golden_text() -> None:
    m, p = waiting()
    # The golden text is everything printed: phase, conditions, history with its revisions
    # ("-" for a duration the table does not record), the plan's versions and checksums,
    # the last run with its failure position, and the journal newest first. Nothing else.
    assert render_migration(m, p) == GOLDEN.read_text()


@pytest.mark.req("PLUGIN-04")
def test_the_details_that_stop_everything_are_named() -> None:
    out = render_migration(blocked())
    assert "Phase:            Blocked" in out
    assert "Dirty:            0000000002 (step 2): a failed or interrupted run left" in out
    assert "Modified:         0000000001: applied files" in out
    assert "Out of order:     0000000000: pending below the current version" in out
    assert (
        "Operation:        History op-00000000cc, attempt 2, Job ptah-history-00000000cc, "
        "retry at 2026-08-30T09:01:00Z, last failure ConnectionFailed"
    ) in out
    assert "Unresolved run op-00000000bb: Partial" in out
    assert "PtahMigrationRunAcknowledgment names operation op-00000000bb" in out
    assert "Plan: none" in out
    assert "Journal: empty" in out


@pytest.mark.req("PLUGIN-04", "RUN-22")
def test_a_new_migration_shows_what_it_does_not_have_yet() -> None:
    m, _ = waiting()
    m.status = None
    out = render_migration(m)
    assert "Phase:            (none yet)" in out
    assert "History: no reading yet" in out
    assert "Last run: none (no Apply has happened)" in out


def test_a_plan_that_cannot_be_read_is_shown_by_its_reference() -> None:
    m, _ = waiting()
    out = render_migration(m, None)
    assert "(the plan object could not be read)" in out


@pytest.mark.req("PLUGIN-05", "PRIV-02")
def test_the_approval_summary_is_the_plan_exactly() -> None:
    m, p = waiting()
    out = render_approval_summary(m, p)
    assert out.splitlines()[0] == (
        f"Approving plan {p.metadata.name} of migration application/orders:"
    )
    assert f"  Fingerprint:      {p.spec.fingerprint}" in out
    for version in p.spec.versions:
        assert f"{version.version}  {version.checksum}  {version.description}" in out


@pytest.mark.req("PLUGIN-04")
def test_the_ahead_and_checkpoint_details() -> None:
    m, p = waiting()
    assert m.status is not None
    assert m.status.history is not None
    m.status.history.ahead = AheadVersions(database_version="0000000009", artifact_version="3")
    m.status.history.checkpoint_version = "0000000001"
    out = render_migration(m, p)
    assert "Ahead:            the database is at 0000000009; the artifact ends at 3" in out
    assert "Checkpoint:       0000000001 (covers the versions below it)" in out


def test_helpers() -> None:
    assert short("sha256:" + "a" * 64) == "sha256:aaaaaaaaaaaa"
    assert short("plain") == "plain"
    assert short(None) == "-"
    assert one_line("two\nlines  here") == "two lines here"
    assert one_line("x" * 300).endswith("...")
    assert len(one_line("x" * 300)) == 200
    assert one_line(None) == "-"
    assert table(["A", "BB"], [["1", ""], ["333", "4"]]) == ["  A    BB", "  1", "  333  4"]
    assert PlanReference(name="p").fingerprint is None


@pytest.mark.req("PLUGIN-02", "PRIV-02")
def test_kubectl_ptah_plan_shows_identity_contents_and_what_the_plan_waits_for() -> None:
    from ptah_operator.cli.kubectl.main import parse_command
    from ptah_operator.cli.kubectl.migration_view import render_plan

    command, _ = parse_command(["plan", "migration/orders", "-n", "application"])
    assert (command.verb, command.name) == ("plan", "orders")
    migration, plan = waiting()
    assert migration.status is not None
    assert migration.status.plan is not None
    text = render_plan(migration, migration.status.plan, plan)
    assert plan.spec.fingerprint in text
    for version in plan.spec.versions:
        assert version.version in text
        assert version.checksum in text
    assert "Bound to" in text
    assert "waits for a PtahMigrationApproval" in text
    assert "CREATE" not in text.upper().replace("CREATE_", "")
