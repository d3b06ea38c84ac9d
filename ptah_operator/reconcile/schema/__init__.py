"""The PtahSchema lifecycle as a pure function: reconcile_schema(world) -> Decision.

See lifecycle.py for the order of a pass and docs/design/schema-path.md for the contracts.
"""

from ptah_operator.reconcile.schema.lifecycle import reconcile_schema
from ptah_operator.reconcile.schema.world import PlanText, SchemaWorld

__all__ = ["PlanText", "SchemaWorld", "reconcile_schema"]
