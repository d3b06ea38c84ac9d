"""Issue #10: features beyond tables and columns, and what the engine refuses by name."""

from __future__ import annotations

import pytest

from ptah_operator.engine.schema.model import Dialect
from ptah_operator.engine.schema.normalize import NormalizationError, normalize_default, reading

PG, MY = Dialect.POSTGRESQL, Dialect.MARIADB


@pytest.mark.parametrize(
    ("text", "column_type", "expected"),
    [
        ("1.5", "decimal(35,30)", "1.500000000000000000000000000000"),
        ("'1.5'", "decimal(35,30)", "1.500000000000000000000000000000"),
        ("-1", "decimal(65,30)", "-1.000000000000000000000000000000"),
        ("9" * 65, "decimal(65,0)", "9" * 65),
        ("0", "decimal(10,2)", "0.00"),
    ],
)
def test_wide_mysql_decimal_defaults_take_the_column_scale(
    text: str, column_type: str, expected: str
) -> None:
    assert normalize_default(MY, text, column_type) == expected


def test_a_reading_failure_names_the_object_and_not_the_data() -> None:
    expected = r"^table public\.t, check c: unreadable"
    with pytest.raises(NormalizationError, match=expected), reading("table public.t, check c"):
        raise NormalizationError("unreadable SQL expression")
    with pytest.raises(NormalizationError) as caught, reading("table public.t, column a"):
        list(None)  # type: ignore[call-overload]
    assert str(caught.value) == "table public.t, column a: the engine cannot read it (TypeError)"
