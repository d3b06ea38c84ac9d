"""Placeholder controllers for PtahMigration and PtahSchema: they only observe.

Contract: the reconcile of each reads the object from its informer's store, logs that it was
observed (key, generation, resourceVersion; nothing from spec) and counts it in
`ptah_resources_observed_total{kind}`. It writes nothing: no status, no Events, no Jobs.
`cli/manager.py` runs these instead of the family reconcilers (family.py) when no webhook
server serves results, since no operation could report.
"""

from __future__ import annotations

import structlog

from ptah_operator.api.constants import Kind
from ptah_operator.controller.world import ptah_resource
from ptah_operator.runtime.controller import Controller, Result
from ptah_operator.runtime.manager import Manager
from ptah_operator.runtime.resources import Resource
from ptah_operator.runtime.store import metadata

log = structlog.get_logger(__name__)


PTAH_MIGRATIONS = ptah_resource(Kind.PTAH_MIGRATION)
PTAH_SCHEMAS = ptah_resource(Kind.PTAH_SCHEMA)


def observation_controller(manager: Manager, resource: Resource) -> Controller:
    """A controller whose reconcile only records that it saw the object."""
    informer = manager.informer(resource)
    observed = manager.metrics.resources_observed.labels(resource.kind)

    async def reconcile(key: str) -> Result:
        obj = informer.store.get(key)
        if obj is None:
            log.info("object gone", kind=resource.kind)
            return Result.success()
        meta = metadata(obj)
        observed.inc()
        log.info(
            "object observed",
            kind=resource.kind,
            generation=meta.get("generation"),
            resource_version=meta.get("resourceVersion"),
        )
        return Result.success()

    controller = Controller(
        resource.kind.lower(), reconcile, clock=manager.clock, metrics=manager.metrics
    )
    controller.watch(informer)
    return controller


def migration_observer(manager: Manager) -> Controller:
    return observation_controller(manager, PTAH_MIGRATIONS)


def schema_observer(manager: Manager) -> Controller:
    return observation_controller(manager, PTAH_SCHEMAS)
