"""`kubectl ptah migration` names the file a run that did not finish stopped in (RUN-12)."""

from __future__ import annotations

import pytest

from ptah_operator.api.migration import RunStoppedAt
from ptah_operator.cli.kubectl.migration_view import render_migration
from tests.unit.cli.rendering_fixtures import waiting


@pytest.mark.req("PLUGIN-04", "RUN-12")
def test_the_last_run_names_where_it_stopped() -> None:
    m, p = waiting()
    assert m.status is not None
    assert m.status.last_run is not None
    m.status.last_run.stopped_at = RunStoppedAt(
        version="0000000002", statements_applied=1, statements_total=3
    )
    out = render_migration(m, p)
    assert "Stopped in:       version 0000000002, 1 of 3 statements committed" in out
