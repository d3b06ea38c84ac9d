"""An aggregated catalog read's document (`introspect_mysql.document_rows`): its rows are
taken only when it holds exactly the rows the server counted, each of the read's width;
otherwise the read falls back to rows (None).

The server cuts a document at `group_concat_max_len` and may cut it just after an element,
which leaves a valid but shorter array: only the count tells.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ptah_operator.engine.schema.introspect_mysql import document_rows

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
