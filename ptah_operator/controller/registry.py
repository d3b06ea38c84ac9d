"""The controllers `ptah-operator` runs, by name, so later code adds its own in one place.

Contract: a `ControllerFactory` takes the `Manager` (shared informers, metrics, clock, API
client) and returns a `Controller` wired to its informers; `ControllerRegistry.build(manager)`
makes every registered controller and adds it to the manager. `default_registry()` holds the
observers for PtahMigration and PtahSchema; `cli/manager.py` registers the family reconcilers
(`migration.py`, `schema.py`) in their place when it serves the webhooks and results.
"""

from __future__ import annotations

from collections.abc import Callable

from ptah_operator.controller import observe
from ptah_operator.runtime.controller import Controller
from ptah_operator.runtime.manager import Manager

ControllerFactory = Callable[[Manager], Controller]


class ControllerRegistry:
    def __init__(self) -> None:
        self._factories: dict[str, ControllerFactory] = {}

    def register(self, name: str, factory: ControllerFactory) -> None:
        if name in self._factories:
            raise ValueError(f"controller {name!r} is already registered")
        self._factories[name] = factory

    def names(self) -> list[str]:
        return list(self._factories)

    def build(self, manager: Manager) -> list[Controller]:
        controllers = [factory(manager) for factory in self._factories.values()]
        for controller in controllers:
            manager.add_controller(controller)
        return controllers


def default_registry() -> ControllerRegistry:
    registry = ControllerRegistry()
    registry.register("ptahmigration", observe.migration_observer)
    registry.register("ptahschema", observe.schema_observer)
    return registry
