"""A PtahMigration's History or Apply as the engine takes it.

The operation document (`PTAH_OPERATION`, contract `ptah.run/operation/v1`) is read and checked
by api/contracts/operation.py `MigrationDocument`, the model the manager builds it from; this
turns what it accepts into the engine's terms. Pure: no I/O, no environment.

Versions travel as the strings the files spell them (`0000000001`) and checksums as
`sha256:<hex>`; `expected_migrations()` turns them into what the engine compares under its
lock (an integer version and the bare hex checksum).
"""

from __future__ import annotations

from dataclasses import dataclass

from ptah_operator.api.contracts.operation import ExpectedVersion, MigrationDocument, ResourceRef
from ptah_operator.engine.migrations.apply import ExpectedMigration, TransactionMode
from ptah_operator.engine.migrations.connection import Engine
from ptah_operator.engine.migrations.revision_table import RevisionTable


@dataclass(frozen=True)
class Operation:
    operation_id: str
    type: str
    resource: ResourceRef
    engine: Engine
    revision_table: RevisionTable
    transaction_mode: TransactionMode | None
    content_digest: str
    expected: tuple[ExpectedVersion, ...] | None = None
    planned_target_digest: str | None = None

    @property
    def is_apply(self) -> bool:
        return self.type == "Apply"

    def expected_migrations(self) -> list[ExpectedMigration] | None:
        if self.expected is None:
            return None
        return [
            ExpectedMigration(int(e.version), e.checksum.removeprefix("sha256:"))
            for e in self.expected
        ]


def parse_operation(text: str) -> Operation:
    """Read and check a History or Apply document; raises OperationError saying what is wrong."""
    document = MigrationDocument.parse(text)
    table = document.revision_table
    mode = document.transaction_mode
    return Operation(
        operation_id=document.operation_id,
        type=document.type,
        resource=document.resource,
        engine=Engine(document.engine),
        revision_table=RevisionTable(name=table.name, schema=table.schema_),
        transaction_mode=None if mode is None else TransactionMode(mode),
        content_digest=document.content_digest,
        expected=document.expected,
        planned_target_digest=document.planned_target_digest,
    )
