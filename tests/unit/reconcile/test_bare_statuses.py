"""A status restored from a backup or edited by hand may hold any phase with nothing else: every
phase of both families, with its source there or gone, is decided without raising (a raise is
a traceback in the manager's log and the resource retried for ever, never a status a person can
read). Found so: a bare VerifyingHistory with its ConfigMap gone raised on every pass."""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.api.constants import MigrationPhase, SchemaPhase
from ptah_operator.api.migration import PtahMigrationStatus
from ptah_operator.api.schema import PtahSchemaStatus
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.schema import reconcile_schema
from tests.unit.reconcile.migration import worlds as migration_worlds
from tests.unit.reconcile.schema import worlds as schema_worlds


@pytest.mark.parametrize("source", [True, False], ids=["source", "no source"])
@pytest.mark.parametrize("phase", list(MigrationPhase))
def test_a_bare_migration_status_is_decided(phase: MigrationPhase, source: bool) -> None:
    world = migration_worlds.new()
    resource = world.migration.model_copy(update={"status": PtahMigrationStatus(phase=phase)})
    world = dataclasses.replace(world, migration=resource, source=world.source if source else None)
    decision = reconcile_migration(world)
    assert decision.status is not None


@pytest.mark.parametrize("source", [True, False], ids=["source", "no source"])
@pytest.mark.parametrize("phase", list(SchemaPhase))
def test_a_bare_schema_status_is_decided(phase: SchemaPhase, source: bool) -> None:
    world = schema_worlds.new()
    resource = world.schema.model_copy(update={"status": PtahSchemaStatus(phase=phase)})
    world = dataclasses.replace(world, schema=resource, source=world.source if source else None)
    decision = reconcile_schema(world)
    assert decision.status is not None
