"""The operation document of a PtahSchema's Observe, Plan and Apply (`PTAH_OPERATION`, contract
`ptah.run/operation/v1`) in the engine's terms. Pure: no I/O, no environment.

The controller writes it (reconcile/schema/jobs.py `operation_document`) and the runner reads it
(api/contracts/operation.py `SchemaDocument`, the same model); the contract is in
docs/design/schema-path.md. What the runner takes from it:

- `scope` {schemas, includeTables, excludeTables}: the engine's scope (`--schema`, `--table`,
  `--exclude`). No schema named means the engine's default (`public`; MySQL/MariaDB ignore it,
  their scope is the URL's database).
- `policy` {allowDestructive, protectedTables, lockTimeoutSeconds, statementTimeoutSeconds}: a
  Plan names the protected tables its plan would change (the manager judges); an Apply holds
  the plan to it once more before it runs; both hold every statement of the dry run and of
  the Apply to the timeouts (lock 30 s when absent, statement none; 0 is no limit).
- `contentDigest` (Observe, Plan): the files must still give it.
- `plan` {name, uid, fingerprint, digest, size, observedFingerprint, chunks} and
  `plannedTargetDigest` (Apply): the bytes fetched must give `plan.digest`, and the database must
  be `plannedTargetDigest`, or nothing runs.

Anything else is refused (by the model) with a message that names the field, never its value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ptah_operator.api.contracts.operation import ResourceRef, SchemaDocument, SchemaPlanRef
from ptah_operator.engine.migrations.connection import Engine
from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.timeouts import Timeouts


@dataclass(frozen=True)
class SchemaOperation:
    operation_id: str
    type: str
    resource: ResourceRef
    engine: Engine
    scope: Scope
    protected_tables: tuple[str, ...]
    allow_destructive: bool
    timeouts: Timeouts = dataclasses.field(default_factory=Timeouts)
    content_digest: str | None = None
    expected_target_digest: str | None = None
    proof: bool = False
    plan: SchemaPlanRef | None = None
    planned_target_digest: str | None = None

    @property
    def is_apply(self) -> bool:
        return self.type == "Apply"

    @property
    def policy(self) -> Policy:
        """The schema's policy, as the engine holds a plan to it."""
        return Policy(self.protected_tables, self.allow_destructive)


def parse_schema_operation(text: str) -> SchemaOperation:
    """Read and check a PtahSchema's Observe, Plan or Apply document; raises OperationError
    saying what is wrong."""
    document = SchemaDocument.parse(text)
    scope = document.scope
    policy = document.policy
    lock = policy.lock_timeout_seconds
    return SchemaOperation(
        operation_id=document.operation_id,
        type=document.type,
        resource=document.resource,
        engine=Engine(document.engine),
        scope=Scope(
            schemas=scope.schemas or Scope().schemas,
            tables=scope.include_tables,
            exclude=scope.exclude_tables,
        ),
        protected_tables=policy.protected_tables,
        allow_destructive=policy.allow_destructive,
        timeouts=Timeouts(
            lock=Timeouts().lock if lock is None else lock or None,
            statement=policy.statement_timeout_seconds or None,
        ),
        content_digest=document.content_digest,
        expected_target_digest=document.expected_target_digest,
        proof=document.proof,
        plan=document.plan,
        planned_target_digest=document.planned_target_digest,
    )
