"""`-o json|yaml` on every read verb: the object read, as the server gave it, keys sorted."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml

from ptah_operator.api.constants import Kind
from ptah_operator.api.kinds import to_manifest
from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.lookup import Reads
from ptah_operator.cli.kubectl.main import execute_read, parse_command
from tests.support.migration_objects import awaiting_approval, migration, plan, plan_spec
from tests.support.webhook_stack import ref

_M = migration()
_P = plan(plan_spec(ref(_M)), name="orders-plan")
MIGRATION = to_manifest(migration(status=awaiting_approval(_P)))
PLAN = to_manifest(_P)


class _Reads(Reads):
    def __init__(self, objects: dict[tuple[Kind, str], dict[str, Any]]) -> None:
        self.objects = objects
        self.namespace = "apps"
        self.out = io.StringIO()

    async def get(
        self, kind: Kind, name: str, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        found = self.objects.get((kind, name))
        if found is None and not missing_ok:
            raise CommandError(f"{kind} {name} not found")
        return found

    async def observe(self, plural: str, name: str) -> AsyncIterator[dict[str, Any] | None]:
        yield self.objects.get((Kind.PTAH_MIGRATION, name))


def _run(argv: list[str], reads: _Reads) -> tuple[int, str]:
    command, _ = parse_command(argv)
    code = asyncio.run(execute_read(command, reads))
    assert isinstance(reads.out, io.StringIO)
    return code, reads.out.getvalue()


def _reads() -> _Reads:
    return _Reads(
        {
            (Kind.PTAH_MIGRATION, "orders"): MIGRATION,
            (Kind.PTAH_MIGRATION_PLAN, "orders-plan"): PLAN,
        }
    )


def test_a_resource_prints_as_json_and_yaml() -> None:
    code, out = _run(["migration", "orders", "-o", "json"], _reads())
    assert code == 0
    assert json.loads(out) == MIGRATION
    assert out == json.dumps(MIGRATION, indent=4, sort_keys=True) + "\n"
    code, out = _run(["migration", "orders", "--output=yaml"], _reads())
    assert (code, yaml.safe_load(out)) == (0, MIGRATION)
    assert out.startswith(
        "apiVersion: operator.ptah.run/v1alpha1\nkind: PtahMigration\nmetadata:\n"
    )


def test_plan_prints_the_plan_object_the_status_names_and_only_that_one() -> None:
    code, out = _run(["plan", "migration/orders", "-o", "json"], _reads())
    assert (code, json.loads(out)) == (0, PLAN)
    other = {**PLAN, "metadata": {**PLAN["metadata"], "uid": "another"}}
    reads = _Reads(
        {
            (Kind.PTAH_MIGRATION, "orders"): MIGRATION,
            (Kind.PTAH_MIGRATION_PLAN, "orders-plan"): other,
        }
    )
    with pytest.raises(CommandError, match="plan orders-plan of migration orders no longer exists"):
        _run(["plan", "migration/orders", "-o", "json"], reads)
    bare = {**MIGRATION, "status": {"phase": "InSync"}}
    with pytest.raises(CommandError, match="migration orders has no plan published"):
        _run(["plan", "orders", "-o", "yaml"], _Reads({(Kind.PTAH_MIGRATION, "orders"): bare}))


def test_wait_prints_only_the_object_it_reached() -> None:
    code, out = _run(["wait", "migration/orders", "--for=AwaitingApproval", "-o", "json"], _reads())
    assert (code, json.loads(out)) == (0, MIGRATION)


def test_every_read_verb_takes_the_output_flag_and_no_other_format() -> None:
    for argv in (["schema", "s"], ["plan", "schema/s", "--applied"], ["wait", "schema/s"]):
        command, _ = parse_command([*argv, "-o", "yaml"])
        assert command.output == "yaml"
    from ptah_operator.cli.kubectl.errors import UsageError

    with pytest.raises(UsageError, match="invalid choice: 'wide'"):
        parse_command(["migration", "orders", "-o", "wide"])
