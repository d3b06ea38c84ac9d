"""reconcile layer: pure decisions, one function per family.

`reconcile_migration(world) -> Decision` (migration.py) decides one pass of a PtahMigration
from an immutable World (world.py); the controller carries the Decision out (decision.py).
Nothing here does I/O, reads a clock or draws a random number.
"""
