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


def test_every_informer_of_a_kind_gets_the_kinds_transform_whoever_asks_first() -> None:
    from ptah_operator.runtime.informer import drop_server_fields
    from ptah_operator.runtime.resources import CONFIG_MAPS, JOBS, PODS

    def keep_pod(obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    options = ManagerOptions(metrics_bind_address="0", transforms={"Pod": keep_pod})
    manager = Manager(object(), options)  # type: ignore[arg-type]
    assert manager.informer(PODS).transform is keep_pod
    assert manager.informer(PODS, "ns").transform is keep_pod
    assert manager.informer(JOBS).transform is drop_server_fields
    whole = Manager(object(), ManagerOptions(metrics_bind_address="0", default_transform=None))  # type: ignore[arg-type]
    assert whole.informer(CONFIG_MAPS).transform is None
