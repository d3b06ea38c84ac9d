"""The two SQL dialects the engines speak: PostgreSQL, and MySQL (which MariaDB shares).

Its own module, so that what only needs to name a dialect (a connection, the revision table,
`ptah migrations status`) does not load the statement splitter and compile its patterns.
"""

from __future__ import annotations

from enum import StrEnum


class Dialect(StrEnum):
    POSTGRESQL = "postgresql"
    MYSQL = "mysql"
