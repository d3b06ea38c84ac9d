"""How inspection reads MySQL/MariaDB catalogs, without a server.

An aggregated catalog read's document (`introspect_mysql.document_rows`): its rows are
taken only when it holds exactly the rows the server counted, each of the read's width;
otherwise the read falls back to rows (None).

The server cuts a document at `group_concat_max_len` and may cut it just after an element,
which leaves a valid but shorter array: only the count tells.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ptah_operator.engine.schema.introspect_mysql import _mariadb_version, document_rows

ROWS: list[list[Any]] = [["t", "a", None, 1], ["t", "b", "x'y\\\\z", 2], ["u", "é", "\\u2028", 3]]


def test_a_whole_document_gives_its_rows_as_tuples() -> None:
    assert document_rows(3, json.dumps(ROWS), 4) == [tuple(row) for row in ROWS]
    assert document_rows(3, json.dumps(ROWS).encode(), 4) == [tuple(row) for row in ROWS]


def test_no_rows_need_no_document() -> None:
    assert document_rows(0, None, 4) == []


@pytest.mark.parametrize(
    ("count", "document"),
    [
        (3, json.dumps(ROWS[:2])),  # cut just after an element: valid, one row short
        (3, json.dumps(ROWS)[:-5]),  # cut inside an element
        (3, None),  # over max_allowed_packet: NULL
        (2, json.dumps(ROWS)),  # more rows than counted
        (3, json.dumps([*ROWS[:2], ROWS[2][:3]])),  # a row of another width
        (3, json.dumps({"rows": ROWS})),  # not an array
        (3, json.dumps([*ROWS[:2], "t"])),  # an element that is not a row
        (3, "[" + json.dumps(ROWS)),  # not JSON
    ],
)
def test_anything_but_the_counted_rows_falls_back(count: int, document: str | None) -> None:
    assert document_rows(count, document, 4) is None


class _Handshake:
    def __init__(self, version: str | None) -> None:
        self.server_version = version


@pytest.mark.parametrize(
    ("version", "read"),
    [
        ("10.11.6-MariaDB-0+deb12u1", (10, 11)),
        ("5.5.5-10.5.23-MariaDB-log", (10, 5)),  # what older clients are told first
        ("11.4.2-MariaDB", (11, 4)),
        ("8.0.36", (0, 0)),  # MySQL
        ("", (0, 0)),
        (None, (0, 0)),
    ],
)
def test_a_mariadb_version_is_read_off_the_handshake(
    version: str | None, read: tuple[int, int]
) -> None:
    # 10.6 is where STATISTICS gained IGNORED, which the statistics read then selects.
    assert _mariadb_version(_Handshake(version)) == read
