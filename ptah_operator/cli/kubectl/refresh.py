"""`kubectl ptah refresh KIND/NAME [--wait]`: ask for a read now (RRQ-20), and with --wait
follow the read the request starts (RRQ-21)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from ptah_operator.api.common import StatusCommon
from ptah_operator.api.constants import ANNOTATION_READ_REQUESTED_AT
from ptah_operator.cli.kubectl.errors import EXIT_OK, CommandError
from ptah_operator.cli.kubectl.session import CONFLICT_RETRIES, Session, read_model
from ptah_operator.cli.kubectl.targets import AnyTarget
from ptah_operator.cli.kubectl.waits import ReadTracker, next_read_request


def _status_of(target: AnyTarget, obj: dict[str, Any]) -> tuple[StatusCommon, str | None]:
    """The status and, for a migration, the operation of its latest history reading."""
    status = target.status(read_model(target.model, obj))
    return status, target.reading_operation(status)


async def request_read(session: Session, target: AnyTarget, name: str) -> ReadTracker:
    """Write the annotation with a value later than any the resource holds (RRQ-20)."""
    kind, info = target.kind, target.info
    for _ in range(CONFLICT_RETRIES):
        obj = await session.get(kind, name)
        assert obj is not None
        meta = obj.get("metadata") or {}
        status, reading = _status_of(target, obj)
        held = (meta.get("annotations") or {}).get(ANNOTATION_READ_REQUESTED_AT)
        value = next_read_request(datetime.now(UTC), [held, status.last_read_request])
        before = {reading} if reading else set()
        if status.active_operation is not None:
            before.add(status.active_operation.operation_id)
        patch = {
            "metadata": {
                "resourceVersion": meta.get("resourceVersion"),
                "annotations": {ANNOTATION_READ_REQUESTED_AT: value},
            }
        }
        if not await session.merge_patch(kind, name, patch, "read not requested"):
            continue
        session.say(f"read requested: {ANNOTATION_READ_REQUESTED_AT}={value}")
        return ReadTracker(value=value, before=frozenset(before))
    raise CommandError(f"read not requested: {info.singular} {name} kept changing; try again")


async def wait_for_read(
    session: Session, target: AnyTarget, name: str, tracker: ReadTracker, wait_seconds: float
) -> int:
    """Wait until the request is answered and the read it started has finished (RRQ-21)."""
    info = target.info
    announced = False
    last_status: StatusCommon | None = None
    try:
        async with asyncio.timeout(wait_seconds):
            async for obj in session.observe(info.plural, name):
                if obj is None:
                    raise CommandError(f"{info.singular} {name} was deleted")
                status, reading = _status_of(target, obj)
                last_status = status
                if tracker.answered(status) and not announced:
                    session.say("request answered; waiting for the read it starts")
                    announced = True
                if tracker.finished(status, reading):
                    phase = (obj.get("status") or {}).get("phase") or "none yet"
                    operation = tracker.read_operation or reading or "-"
                    session.say(f"read finished: operation {operation}; phase {phase}")
                    return EXIT_OK
    except TimeoutError:
        if last_status is None or not tracker.answered(last_status):
            recorded = last_status.last_read_request if last_status else None
            raise CommandError(
                f"timed out: the request is not answered yet "
                f"(status.lastReadRequest is {recorded or 'unset'})"
            ) from None
        raise CommandError("timed out waiting for the read the request started") from None
    raise CommandError(f"stopped watching {info.singular} {name}")


async def refresh(
    session: Session, target: AnyTarget, name: str, wait: bool, wait_seconds: float
) -> int:
    tracker = await request_read(session, target, name)
    if not wait:
        return EXIT_OK
    return await wait_for_read(session, target, name, tracker, wait_seconds)
