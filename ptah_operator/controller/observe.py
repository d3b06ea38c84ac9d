"""Placeholder controllers for PtahMigration and PtahSchema: they only observe.

Contract: the reconcile of each reads the object from its informer's store, logs that it was
observed (key, generation, resourceVersion; nothing from spec) and counts it in
`ptah_resources_observed_total{kind}`. It writes nothing: no status, no Events, no Jobs.
The family reconcilers that carry out `reconcile_migration` / `reconcile_schema` decisions
replace these with issue #4 (schema) and issue #6 (migration).
"""

from __future__ import annotations

import structlog

from ptah_operator.api.constants import GROUP, VERSION, Kind
from ptah_operator.api.kinds import kind_info
from ptah_operator.runtime.controller import Controller, Result
from ptah_operator.runtime.manager import Manager
from ptah_operator.runtime.resources import Resource
from ptah_operator.runtime.store import metadata

log = structlog.get_logger(__name__)


def ptah_resource(kind: Kind) -> Resource:
    """The `Resource` of one of our kinds, from the api layer's table of kinds."""
    info = kind_info(kind)
    return Resource(GROUP, VERSION, info.plural, str(kind), info.namespaced)


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
