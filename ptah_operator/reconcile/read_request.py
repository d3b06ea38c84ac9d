"""The `operator.ptah.run/read-requested-at` annotation: when a request is answered, and how.

RRQ-01..RRQ-21, as a migration keeps them:

- A value `status.lastReadRequest` does not record (RRQ-19: values over 64 bytes as their
  sha256:<hex>) is a request not answered yet.
- The engine and realm checks come first: a resource they block does not answer (RRQ-07).
- An RFC 3339 instant is answered once no operation is running (RRQ-03), by the read it
  starts: in InSync, Blocked, AwaitingApproval and Planning a request makes that read due at
  once; a Failed resource answers it when its retry starts (RRQ-11); Pending answers it with
  the read it starts anyway; Suspended keeps it until it resumes. The answer records the
  value, moves nextReconciliationTime to now, writes a ReadRequested Event (RRQ-04) and names
  the value in `activeOperation.readRequest`, so `kubectl ptah refresh --wait` can follow the
  read it started (RRQ-21).
- A read already under way does not answer it (RRQ-12), nor does an Apply or the read that
  proves one (RRQ-15): the request waits until they end. A read between failed attempts gives
  way to it when its retry delay ends (RRQ-14).
- A value that is not an instant starts and ends nothing: it is recorded as answered with one
  ReadRequestInvalid Warning naming it (RRQ-16), wherever no operation runs, and at once by a
  read between failed attempts, which goes on retrying (RRQ-17).

Choice where the seeds leave it open: the answer and the read it starts are one status write.
The seed describes the answer and "the next pass" that starts the read; this operator makes
that next pass the rest of the same pass, so no write records an answer whose read is not yet
claimed, and `activeOperation.readRequest` names exactly the read the request started.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from ptah_operator.api.common import StatusCommon
from ptah_operator.api.constants import ANNOTATION_READ_REQUESTED_AT, EventReason
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.read_requests import (
    is_answered,
    parse_read_request,
    recorded_read_request,
)
from ptah_operator.api.schema import PtahSchema


class Answering(Protocol):
    """What answering a request writes to: a pass's working status, its clock, its Events
    (the migration's MigrationDraft, the schema's SchemaDraft)."""

    @property
    def status(self) -> StatusCommon: ...

    @property
    def now(self) -> datetime: ...

    def normal(self, reason: EventReason, message: str) -> None: ...

    def warning(self, reason: EventReason, message: str) -> None: ...


SHOWN_VALUE_LIMIT = 64


@dataclass(frozen=True)
class ReadRequest:
    """A read-requested-at value the resource has not answered yet."""

    value: str
    recorded: str
    """What status.lastReadRequest records for it."""
    instant: datetime | None
    """The instant it names, or None when it is not an RFC 3339 instant."""

    @property
    def valid(self) -> bool:
        return self.instant is not None

    def shown(self) -> str:
        """The value as an Event names it: itself, or its digest when it is long."""
        if self.recorded != self.value:
            return self.recorded
        return self.value[:SHOWN_VALUE_LIMIT]


def unanswered(migration: PtahMigration | PtahSchema) -> ReadRequest | None:
    """The resource's read request when status.lastReadRequest does not record it yet."""
    value = migration.metadata.annotation(ANNOTATION_READ_REQUESTED_AT)
    if value is None:
        return None
    last = migration.status.last_read_request if migration.status else None
    if is_answered(value, last):
        return None
    return ReadRequest(
        value=value, recorded=recorded_read_request(value), instant=parse_read_request(value)
    )


def invalid_message(request: ReadRequest) -> str:
    return (
        f"read-requested-at value {request.shown()!r} is not an RFC 3339 instant; "
        "it starts no read and is recorded as answered"
    )


def answered_message(request: ReadRequest, what: str = "the history is read now") -> str:
    return f"read requested at {request.value}: {what}"


def answer_invalid(draft: Answering, request: ReadRequest) -> None:
    """Record a value that is not an instant as answered, with one Warning naming it (RRQ-16)."""
    draft.status.last_read_request = request.recorded
    draft.warning(EventReason.READ_REQUEST_INVALID, invalid_message(request))


def answer(draft: Answering, request: ReadRequest, what: str = "the history is read now") -> None:
    """Answer an instant: record it, move nextReconciliationTime to now, say so (RRQ-04)."""
    draft.status.last_read_request = request.recorded
    draft.status.next_reconciliation_time = draft.now
    draft.normal(EventReason.READ_REQUESTED, answered_message(request, what))
