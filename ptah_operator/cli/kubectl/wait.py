"""`kubectl ptah wait KIND/NAME --for=PHASE`, and the following of a resource's phases that
`approve --wait` shares."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ptah_operator.api.common import StatusCommon
from ptah_operator.api.constants import Kind
from ptah_operator.api.kinds import kind_info
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.schema import PtahSchema
from ptah_operator.cli.kubectl.errors import EXIT_OK, CommandError
from ptah_operator.cli.kubectl.follow import observe
from ptah_operator.cli.kubectl.session import Session, noun_of, read_model
from ptah_operator.cli.kubectl.waits import phase_reached


def phase_line(status: StatusCommon, phase: str | None) -> str:
    progressing = status.condition("Progressing")
    reason = f" ({progressing.reason})" if progressing is not None else ""
    return f"phase {phase or 'none yet'}{reason}"


async def follow(
    session: Session,
    kind: Kind,
    name: str,
    what: str,
    wait_seconds: float,
    judge: Callable[[Any], int | None],
) -> int:
    """Say each new phase of the resource until `judge` returns an exit code."""
    shown = ""
    try:
        async with asyncio.timeout(wait_seconds):
            async for resource in states(session, kind, name):
                status = resource.status or StatusCommon()
                line = phase_line(status, getattr(status, "phase", None))
                if line != shown:
                    session.say(line)
                    shown = line
                code = judge(resource)
                if code is not None:
                    return code
    except TimeoutError:
        raise CommandError(f"timed out waiting for {what}") from None
    raise CommandError(f"stopped watching {noun_of(kind)} {name}")


async def states(session: Session, kind: Kind, name: str) -> Any:
    info = kind_info(kind)
    model: type[PtahMigration] | type[PtahSchema] = (
        PtahSchema if kind == Kind.PTAH_SCHEMA else PtahMigration
    )
    async for obj in observe(session.api, info.plural, session.namespace, name):
        if obj is None:
            raise CommandError(f"{noun_of(kind)} {name} was deleted")
        yield read_model(model, obj)


async def wait_for_phase(
    session: Session,
    name: str,
    phase: str,
    wait_seconds: float,
    kind: Kind = Kind.PTAH_MIGRATION,
) -> int:
    shown = ""
    last: PtahMigration | PtahSchema | None = None
    noun = noun_of(kind)
    try:
        async with asyncio.timeout(wait_seconds):
            async for resource in states(session, kind, name):
                last = resource
                status: StatusCommon = resource.status or StatusCommon()
                current = resource.status.phase if resource.status is not None else None
                if phase_reached(resource, phase):
                    session.say(f"{noun} {name} is {phase}")
                    return EXIT_OK
                line = phase_line(status, current)
                if line != shown:
                    session.say(line)
                    shown = line
    except TimeoutError:
        where = ""
        if last is not None:
            status = last.status or StatusCommon()
            current = last.status.phase if last.status is not None else None
            where = f"; it is in {phase_line(status, current)}"
        raise CommandError(f"timed out waiting for {noun} {name} to be {phase}{where}") from None
    raise CommandError(f"stopped watching {noun} {name}")
