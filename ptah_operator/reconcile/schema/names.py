"""The deterministic names of what a schema's operations leave behind.

A name made from an identity (an operation id, a plan's fingerprint) means a pass that crashed
after deciding and before creating creates the same object again instead of a second one, and
that a later pass can find (and delete) what an earlier one made without remembering it.
"""

from __future__ import annotations

from ptah_operator.reconcile.jobs import operation_hex

MAX_NAME = 253
FINGERPRINT_CHARS = 10
CHUNK_SUFFIX = len("-c00")


def plan_name(schema_name: str, fingerprint: str) -> str:
    """`<schema>-<first 10 hex of the plan fingerprint>`: the same plan has the same name."""
    suffix = fingerprint.removeprefix("sha256:")[:FINGERPRINT_CHARS]
    keep = MAX_NAME - FINGERPRINT_CHARS - 1 - CHUNK_SUFFIX
    return f"{schema_name[:keep]}-{suffix}"


def chunk_name(plan: str, index: int) -> str:
    """`<plan>-c<index, two digits>`: the chunks of a plan sort in their order."""
    return f"{plan}-c{index:02d}"


def plan_text_record_name(operation_id: str, index: int) -> str:
    """Where the result endpoint keeps one uploaded piece of a Plan's plan file until its
    chunk exists: `ptah-result-<operation hex>-<index>`, beside the report's own record."""
    return f"ptah-result-{operation_hex(operation_id)}-{index}"
