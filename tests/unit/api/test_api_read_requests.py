"""The read-requested-at annotation's values: instants, invalid values, and the 64-byte bound."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone

import pytest

from ptah_operator.api.common import StatusCommon
from ptah_operator.api.read_requests import is_answered, parse_read_request, recorded_read_request


@pytest.mark.req("RRQ-02")
@pytest.mark.parametrize(
    ("value", "instant"),
    [
        ("2026-08-30T12:00:00Z", datetime(2026, 8, 30, 12, tzinfo=UTC)),
        ("2026-08-30t12:00:00z", datetime(2026, 8, 30, 12, tzinfo=UTC)),
        (
            "2026-08-30T14:00:00+02:00",
            datetime(2026, 8, 30, 14, tzinfo=timezone(timedelta(hours=2))),
        ),
        ("2026-08-30T12:00:00.123456789Z", datetime(2026, 8, 30, 12, 0, 0, 123456, tzinfo=UTC)),
    ],
)
def test_rfc3339_instants(value: str, instant: datetime) -> None:
    assert parse_read_request(value) == instant


@pytest.mark.req("RRQ-16")
@pytest.mark.parametrize(
    "value",
    [
        "now",
        "",
        "2026-08-30",
        "2026-08-30T12:00:00",  # no zone: not an instant
        "2026-08-30 12:00:00Z",
        "2026-13-30T12:00:00Z",
        "1756555200",
    ],
)
def test_values_that_are_not_instants(value: str) -> None:
    assert parse_read_request(value) is None


@pytest.mark.req("RRQ-19", "PRIV-08", "RRQ-18")
def test_values_over_64_bytes_are_recorded_as_their_digest() -> None:
    short = "2026-08-30T12:00:00Z"
    assert recorded_read_request(short) == short
    exactly = "x" * 64
    assert recorded_read_request(exactly) == exactly
    longer = "x" * 65
    expected = "sha256:" + hashlib.sha256(longer.encode()).hexdigest()
    assert recorded_read_request(longer) == expected
    multibyte = "é" * 33  # 66 bytes, 33 characters
    assert recorded_read_request(multibyte).startswith("sha256:")
    # Whatever a person writes, the record fits status.lastReadRequest.
    assert StatusCommon(last_read_request=recorded_read_request("y" * 10_000)).last_read_request


@pytest.mark.req("RRQ-19", "PRIV-08")
@pytest.mark.parametrize(
    "value", ["now\x1b[2J", "a\nb", "tab\there", "\x00", "rtl\u202eoverride", "del\x7f"]
)
def test_values_with_control_characters_are_recorded_as_their_digest(value: str) -> None:
    recorded = recorded_read_request(value)
    assert recorded == "sha256:" + hashlib.sha256(value.encode()).hexdigest()
    assert is_answered(value, recorded)


def test_printable_text_is_recorded_as_written() -> None:
    for value in ("now please", "2026-08-30T12:00:00Z", "demain à midi"):
        assert recorded_read_request(value) == value


@pytest.mark.req("RRQ-03")
def test_is_answered() -> None:
    value = "2026-08-30T12:00:00Z"
    assert not is_answered(value, None)
    assert not is_answered(value, "2026-08-30T11:00:00Z")
    assert is_answered(value, value)
    long_value = "z" * 100
    assert is_answered(long_value, recorded_read_request(long_value))
