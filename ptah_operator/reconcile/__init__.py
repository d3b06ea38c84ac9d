"""reconcile layer: pure decisions, one core and two families.

The core (this package's modules) holds what both families share: the Decision a pass ends in
(decision.py), the shared parts of a World (world.py), conditions, the journal, the Job builders,
the realm checks and the schedule. Each family is a sub-package that decides one pass of its
resource from an immutable World and imports only the core:

- `migration/`: `reconcile_migration(world) -> Decision` (migration/lifecycle.py);
- `schema/`: `reconcile_schema(world) -> Decision` (schema/lifecycle.py).

The controller carries the Decision out. Nothing here does I/O, reads a clock or draws a random
number.
"""
