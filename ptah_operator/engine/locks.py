"""The one database lock everything Ptah runs against a database takes (LCK-05).

A migration and a schema on the same database are independent resources, but they serialize
through the same lock: the migration engine's Apply and the schema engine's Plan and Apply
take exactly this one, so neither can change the database under the other even if the
Kubernetes Lease were bypassed (a person running `ptah` by hand, say).

- PostgreSQL: a session-level advisory lock. Advisory locks live in one database, so a fixed
  key serves every database.
- MySQL / MariaDB: a named lock (GET_LOCK), which is server-wide, so the name carries the
  database (hashed: lock names are at most 64 characters).
"""

from __future__ import annotations

import hashlib

ADVISORY_LOCK_KEY = int.from_bytes(
    hashlib.sha256(b"ptah.run/database-lock").digest()[:8], "big", signed=True
)
"""The PostgreSQL advisory lock key (a fixed signed 64-bit value)."""


def named_lock(database: str) -> str:
    """The MySQL / MariaDB lock name for a database."""
    return "ptah.run:" + hashlib.sha256(database.encode()).hexdigest()[:32]
