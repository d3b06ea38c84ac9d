"""The drift report Observe publishes: what differs, counted, never shown.

Only the dialect, the total, the highest severity, per-category counts out of the fixed
`CATEGORIES` and a digest of the detail leave the process (PRIV-03, SCH-54). The detail —
statements, object names, reasons — stays in memory; the digest lets two observations be
compared without revealing either.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ptah_operator.engine.schema.diff import Statement
from ptah_operator.engine.schema.model import Dialect, canonical_json
from ptah_operator.engine.schema.plan import summarize

DRIFT_CONTRACT_VERSION = "ptah.schema.drift/v1"


def drift_report(dialect: Dialect, statements: list[Statement]) -> dict[str, Any]:
    detail = canonical_json([s.to_json() for s in statements])
    summary = summarize(statements)
    return {
        "contractVersion": DRIFT_CONTRACT_VERSION,
        "dialect": dialect.value,
        "digest": "sha256:" + hashlib.sha256(detail).hexdigest(),
        "total": summary["total"],
        "highestSeverity": summary["highestSeverity"],
        "categories": summary["categories"],
    }
