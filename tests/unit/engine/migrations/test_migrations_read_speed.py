"""What `ptah migrations status` does faster (issue #16) still reads every file whole and finds
every directive: one read per file (a file that grows while read is read on, to its limit), and
the no-marker shortcut of `parse_directives` deciding as the line-by-line reading does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptah_operator.engine.migrations.directory import (
    DirectoryError,
    Limits,
    file_checksum,
    parse_directives,
    read_directory,
)


def test_a_file_larger_than_a_read_piece_is_read_whole(tmp_path: Path) -> None:
    body = ("SELECT 1;\n" * 300_000).encode()  # 3 MB, more than one 1 MiB piece
    (tmp_path / "1_big.up.sql").write_bytes(body)
    read = read_directory(tmp_path)
    assert read.files[0].sql.encode() == body
    assert read.files[0].checksum == file_checksum(body)


def _stale_fstat(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """fstat answers as it did before the file grew: `size` bytes."""
    real = os.fstat

    def fstat(fd: int) -> os.stat_result:
        info = real(fd)
        fields = list(info)
        fields[6] = size  # st_size
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", fstat)


def test_a_file_that_grew_after_fstat_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = b"SELECT 1;\n" * 200_000  # 2 MB; fstat says 10 bytes
    (tmp_path / "1_grew.up.sql").write_bytes(body)
    _stale_fstat(monkeypatch, 10)
    assert read_directory(tmp_path).files[0].sql.encode() == body


def test_a_file_that_grew_past_the_limit_after_fstat_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "1_grew.up.sql").write_bytes(b"x" * 5000)
    _stale_fstat(monkeypatch, 10)
    with pytest.raises(DirectoryError) as info:
        read_directory(tmp_path, Limits(max_file_bytes=4096))
    assert info.value.reason == "FileTooLarge"


def test_a_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    (tmp_path / "1_edge.up.sql").write_bytes(b"x" * 4096)
    assert len(read_directory(tmp_path, Limits(max_file_bytes=4096)).files[0].sql) == 4096


_PIECES = st.sampled_from(
    [
        "--",
        "-- ",
        "+",
        "+ptah",
        " no_transaction",
        " transaction",
        "+goose",
        "+GOOSE",
        " Up",
        " NO TRANSACTION",
        " StatementBegin",
        "migrate:",
        "up",
        "down",
        " transaction:false",
        "morph:",
        "nontransactional",
        "SELECT 1;",
        "\n",
        "\r\n",
        " ",
        "x",
    ]
)


def _outcome(text: str) -> object:
    try:
        return parse_directives("1_a.up.sql", text)
    except DirectoryError as exc:
        return (exc.reason, exc.line)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_the_no_marker_shortcut_decides_as_reading_every_line(text: str) -> None:
    # A last line `-- +` is no marker of any tool, and it makes the text hold both `--` and
    # `+`, so the shortcut cannot be taken: the line-by-line reading decides, and must agree.
    assert _outcome(text) == _outcome(text + "\n-- +")


def test_short_reads_before_the_end_are_read_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A network or FUSE file system may give fewer bytes than asked before the end: the file
    # is still read whole (a short read is the end only once fstat's size is in).
    body = b"CREATE TABLE t (id INT);\nINSERT INTO t VALUES (1);\n" * 50
    (tmp_path / "1_short.up.sql").write_bytes(body)
    real = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: real(fd, min(n, 7)))
    assert read_directory(tmp_path).files[0].sql.encode() == body
