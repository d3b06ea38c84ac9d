"""A manager without leader election leads at once, and says so in its metrics."""

from __future__ import annotations

import asyncio
from typing import Any

from ptah_operator.runtime.manager import Manager, ManagerOptions


def test_a_manager_without_leader_election_reports_itself_leading() -> None:
    async def scenario() -> tuple[Any, Any]:
        manager = Manager(object(), ManagerOptions(metrics_bind_address="0"))  # type: ignore[arg-type]
        stop = asyncio.Event()
        running = asyncio.create_task(manager.run(stop))
        await asyncio.sleep(0.05)
        leading = manager.metrics.registry.get_sample_value(
            "ptah_leader_election_is_leader", {"name": ""}
        )
        stop.set()
        assert await running == 0
        after = manager.metrics.registry.get_sample_value(
            "ptah_leader_election_is_leader", {"name": ""}
        )
        return leading, after

    assert asyncio.run(scenario()) == (1, 0)
