"""`kubectl ptah wait KIND/NAME --for=PHASE`, and the following of a resource's states that
`approve --wait` shares: each new phase is said once, as `phase PHASE (REASON)`, where REASON is
the Progressing condition's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from ptah_operator.cli.kubectl.errors import EXIT_OK, CommandError
from ptah_operator.cli.kubectl.lookup import Reads
from ptah_operator.cli.kubectl.targets import AnyTarget
from ptah_operator.cli.kubectl.waits import phase_reached


def phase_line(resource: Any) -> str:
    status = resource.status
    progressing = status.condition("Progressing") if status is not None else None
    reason = f" ({progressing.reason})" if progressing is not None else ""
    phase = resource.status.phase if resource.status is not None else None
    return f"phase {phase or 'none yet'}{reason}"


@dataclass
class PhaseLines:
    """Says the phase line of each state that changes it."""

    session: Reads
    shown: str = ""

    def see(self, resource: Any) -> None:
        line = phase_line(resource)
        if line != self.shown:
            self.session.say(line)
            self.shown = line


async def states(session: Reads, target: AnyTarget, name: str) -> AsyncIterator[Any]:
    """The resource's states, read into its model; its deletion ends the wait."""
    async for obj in session.observe(target.info.plural, name):
        if obj is None:
            raise CommandError(f"{target.noun} {name} was deleted")
        yield session.read_object(target.kind, obj)


async def follow(
    session: Reads,
    target: AnyTarget,
    name: str,
    what: str,
    wait_seconds: float,
    judge: Callable[[Any], int | None],
) -> int:
    """Say each new phase of the resource until `judge` returns an exit code."""
    lines = PhaseLines(session)
    try:
        async with asyncio.timeout(wait_seconds):
            async for resource in states(session, target, name):
                lines.see(resource)
                code = judge(resource)
                if code is not None:
                    return code
    except TimeoutError:
        raise CommandError(f"timed out waiting for {what}") from None
    raise CommandError(f"stopped watching {target.noun} {name}")


async def wait_for_phase(
    session: Reads, target: AnyTarget, name: str, phase: str, wait_seconds: float
) -> int:
    """Until the status says `phase` of the current generation; the phases met are said."""
    lines = PhaseLines(session)
    last: Any = None
    noun = target.noun
    try:
        async with asyncio.timeout(wait_seconds):
            async for resource in states(session, target, name):
                last = resource
                if phase_reached(resource, phase):
                    session.say(f"{noun} {name} is {phase}")
                    return EXIT_OK
                lines.see(resource)
    except TimeoutError:
        where = f"; it is in {phase_line(last)}" if last is not None else ""
        raise CommandError(f"timed out waiting for {noun} {name} to be {phase}{where}") from None
    raise CommandError(f"stopped watching {noun} {name}")
