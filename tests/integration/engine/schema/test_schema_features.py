"""PostgreSQL and MariaDB features beyond tables and columns, on real servers (issue #10).

Each modelled feature keeps the three properties of `dump_roundtrip`: the database's own dump
plans nothing against it, planning from an empty database and applying gives the catalog of
loading the file directly, and a second plan is empty. What an engine cannot manage is
refused by name at plan time, in the desired schema and in the database alike.
"""

from __future__ import annotations

from pathlib import Path

from ptah_operator.engine.schema.operations import inspect_url
from ptah_operator.engine.schema.scope import Scope

from .dump_roundtrip import assert_properties

# Issue #10, item 6: inspection ended in a traceback on these.


async def test_a_check_that_names_no_column_is_inspected_and_converges(
    pg_url: str, pg_twin: str, tmp_path: Path
) -> None:
    text = "CREATE TABLE t (a int, CONSTRAINT always CHECK (1 > 0), CHECK (true));"
    await assert_properties(pg_url, pg_twin, tmp_path, text, own_dump=False)
    observed = await inspect_url(pg_twin, Scope())
    assert sorted(c.expr for c in observed.tables[0].checks) == ["1 > 0", "TRUE"]


async def test_a_wide_decimal_with_a_default_is_inspected_and_converges(
    maria_url: str, maria_twin: str, tmp_path: Path
) -> None:
    text = (
        "CREATE TABLE t (a decimal(35,30) DEFAULT 1.5, b decimal(65,30) DEFAULT "
        "-12345678901234567890123456789012345.123456789012345678901234567890, "
        "c decimal(65,0) DEFAULT 99999999999999999999999999999999999999999999999999999999999"
        "999999);"
    )
    await assert_properties(maria_url, maria_twin, tmp_path, text, own_dump=False)
