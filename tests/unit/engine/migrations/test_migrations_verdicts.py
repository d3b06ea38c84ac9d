"""The six verdicts, checkpoints and the fingerprint, on in-memory revision rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptah_operator.engine.migrations.directory import MigrationDirectory, read_directory
from ptah_operator.engine.migrations.revision_table import Revision, RevisionRead
from ptah_operator.engine.migrations.status import Verdict, evaluate, history_fingerprint


def _dir(tmp_path: Path, names: list[str]) -> MigrationDirectory:
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in names:
        (tmp_path / name).write_text(f"SELECT '{name}';\n")
    return read_directory(tmp_path)


def _row(
    directory: MigrationDirectory | None,
    version: int,
    *,
    state: str = "applied",
    checksum: str | None = None,
    kind: str = "migration",
) -> Revision:
    if checksum is None:
        assert directory is not None
        checksum = directory.by_version[version].checksum
    return Revision(
        version=version,
        description="d",
        kind=kind,
        state=state,
        statements_applied=1 if state == "applied" else 0,
        statements_total=1,
        checksum=checksum,
        execution_millis=None,
        error_class=None,
        recorded_by="up",
        applied_at=None,
    )


def _read(*rows: Revision) -> RevisionRead:
    return RevisionRead(exists=bool(rows), columns=frozenset(), rows=tuple(rows))


FILES = ["1_a.up.sql", "2_b.up.sql", "3_c.up.sql"]


@pytest.mark.req("MIG-33", "MIG-62")
def test_empty_history_is_ready_with_everything_pending(tmp_path: Path) -> None:
    status = evaluate(_dir(tmp_path, FILES), _read())
    assert status.verdict is Verdict.READY
    assert status.pending_versions == (1, 2, 3)
    assert (status.current_version, status.applied_count) == (None, 0)


@pytest.mark.req("MIG-33", "MIG-08")
def test_nothing_pending(tmp_path: Path) -> None:
    d = _dir(tmp_path, FILES)
    status = evaluate(d, _read(_row(d, 1), _row(d, 2), _row(d, 3)))
    assert status.verdict is Verdict.NOTHING_PENDING
    assert (status.current_version, status.applied_count, status.pending_count) == (3, 3, 0)


@pytest.mark.req("MIG-33", "MIG-09")
def test_ready_names_the_pending_tail(tmp_path: Path) -> None:
    d = _dir(tmp_path, FILES)
    status = evaluate(d, _read(_row(d, 1)))
    assert (status.verdict, status.pending_versions) == (Verdict.READY, (2, 3))


@pytest.mark.req("MIG-36")
def test_dirty_wins_over_everything(tmp_path: Path) -> None:
    d = _dir(tmp_path, FILES)
    status = evaluate(d, _read(_row(d, 1, checksum="f" * 64), _row(d, 2, state="failed")))
    assert status.verdict is Verdict.DIRTY
    assert [r.version for r in status.dirty] == [2]
    assert status.modified_versions == (1,)  # still reported beside the verdict


@pytest.mark.req("MIG-37")
def test_modified_names_versions_including_a_vanished_file(tmp_path: Path) -> None:
    d = _dir(tmp_path, ["1_a.up.sql", "3_c.up.sql"])
    status = evaluate(d, _read(_row(d, 1, checksum="e" * 64), _row(None, 2, checksum="a" * 64)))
    assert status.verdict is Verdict.MODIFIED
    assert status.modified_versions == (1, 2)
    assert status.missing_versions == (2,)


@pytest.mark.req("MIG-38")
def test_out_of_order_names_the_late_files(tmp_path: Path) -> None:
    d = _dir(tmp_path, [*FILES, "4_d.up.sql"])
    status = evaluate(d, _read(_row(d, 1), _row(d, 3)))
    assert status.verdict is Verdict.OUT_OF_ORDER
    assert status.out_of_order_versions == (2,)
    assert status.pending_versions == (2, 4)


@pytest.mark.req("MIG-39")
def test_ahead_names_both_versions(tmp_path: Path) -> None:
    d = _dir(tmp_path, FILES[:2])
    status = evaluate(d, _read(_row(d, 1), _row(d, 2), _row(None, 3, checksum="c" * 64)))
    assert status.verdict is Verdict.AHEAD
    assert (status.current_version, status.artifact_version, status.ahead_versions) == (3, 2, (3,))


@pytest.mark.req("MIG-39")
def test_empty_directory_against_a_history_is_ahead(tmp_path: Path) -> None:
    d = _dir(tmp_path, [])
    status = evaluate(d, _read(_row(None, 1, checksum="c" * 64)))
    assert (status.verdict, status.artifact_version) == (Verdict.AHEAD, None)


@pytest.mark.req("MIG-34", "MIG-59")
def test_checkpoint_bootstrap_selection_is_not_a_count_subtraction(tmp_path: Path) -> None:
    d = _dir(tmp_path, [*FILES, "2_all.checkpoint.up.sql".replace("2_", "4_"), "5_e.up.sql"])
    status = evaluate(d, _read())
    assert status.pending_versions == (4, 5)
    assert len(d.files) - status.applied_count != status.pending_count
    assert (status.checkpoint_version, status.checkpoint_applied) == (4, False)
    assert status.covered_versions == (1, 2, 3)


@pytest.mark.req("MIG-59", "MIG-60")
def test_applied_checkpoint_keeps_covering_lower_versions(tmp_path: Path) -> None:
    d = _dir(tmp_path, [*FILES, "4_all.checkpoint.up.sql", "5_e.up.sql", "6_f.up.sql"])
    status = evaluate(d, _read(_row(d, 4, kind="checkpoint"), _row(d, 5)))
    assert status.verdict is Verdict.READY
    assert status.pending_versions == (6,)
    assert (status.checkpoint_version, status.checkpoint_applied) == (4, True)
    assert status.applied_count == 5


@pytest.mark.req("MIG-61")
def test_history_ignores_a_checkpoint_it_did_not_run(tmp_path: Path) -> None:
    d = _dir(tmp_path, [*FILES, "4_all.checkpoint.up.sql", "5_e.up.sql"])
    status = evaluate(d, _read(_row(d, 1), _row(d, 2), _row(d, 3)))
    assert status.verdict is Verdict.READY
    assert status.pending_versions == (5,)
    assert status.ignored_checkpoint_versions == (4,)
    assert status.checkpoint_version is None


@pytest.mark.req("MIG-61")
def test_checkpoint_below_current_is_not_out_of_order(tmp_path: Path) -> None:
    d = _dir(tmp_path, ["1_a.up.sql", "2_cp.checkpoint.up.sql", "3_c.up.sql"])
    status = evaluate(d, _read(_row(d, 1), _row(d, 3)))
    assert status.verdict is Verdict.NOTHING_PENDING


def test_fingerprint_covers_version_checksum_and_state(tmp_path: Path) -> None:
    d = _dir(tmp_path, FILES)
    base = history_fingerprint([_row(d, 1), _row(d, 2)])
    assert base == history_fingerprint([_row(d, 2), _row(d, 1)])
    assert base != history_fingerprint([_row(d, 1), _row(d, 2, state="failed")])
    assert base != history_fingerprint([_row(d, 1), _row(d, 2, checksum="0" * 64)])
    assert base.startswith("sha256:")
