"""The read-requested-at annotation: what counts as an instant, and how a value is recorded.

A value is an RFC 3339 instant or it is invalid (RRQ-16); either way it is recorded as answered
in status.lastReadRequest, and a value longer than 64 bytes is recorded as its SHA-256 digest,
written sha256:<hex> (RRQ-19), so status stays bounded whatever a person writes. A value that
is not all printable text (a control character, a line break, a bidirectional override) is
recorded as its digest too, so status and the Events that name it never carry it raw.
"""

from __future__ import annotations

import re
from datetime import datetime

from ptah_operator.api.constants import READ_REQUEST_MAX_BYTES
from ptah_operator.api.fingerprints import text_digest

_RFC3339 = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)


def parse_read_request(value: str) -> datetime | None:
    """The instant a read-requested-at value names, or None when it is not RFC 3339."""
    if not _RFC3339.fullmatch(value):
        return None
    normalized = value.upper()
    # fromisoformat takes at most six fractional digits; RFC 3339 allows more.
    normalized = re.sub(r"(\.[0-9]{6})[0-9]+", r"\1", normalized)
    try:
        return datetime.fromisoformat(normalized)
    except ValueError:
        return None


def recorded_read_request(value: str) -> str:
    """What status.lastReadRequest records for a value: itself, or sha256:<hex> past 64 bytes
    or when it holds anything but printable text."""
    if len(value.encode("utf-8")) > READ_REQUEST_MAX_BYTES or not value.isprintable():
        return text_digest(value)
    return value


def is_answered(value: str, last_read_request: str | None) -> bool:
    """Whether status.lastReadRequest already records this value as answered."""
    return last_read_request is not None and recorded_read_request(value) == last_read_request
