"""The plan-text routes' own rules, before any store is asked: the piece index, the piece's
size and encoding, and which reports must wait for their pieces. The routes against the real
API server are in tests/integration/results/test_results_plan_text.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ptah_operator.results.plan_text import (
    MAX_PIECE_BYTES,
    needs_pieces,
    piece_index,
    piece_manifest,
    receive_piece,
)
from ptah_operator.results.records import ClaimedReport, ResourceClaim, StoredRecord

OP = "op-3f9a2c7d1e"


class NoStore:
    """A store that must not be asked: these refusals come before any read."""

    async def resource_claim(self, kind: str, namespace: str, name: str) -> ResourceClaim | None:
        raise AssertionError("asked")

    async def write_report(
        self, kind: str, namespace: str, name: str, claim: ResourceClaim, report: ClaimedReport
    ) -> bool:
        raise AssertionError("asked")

    async def replace_record(self, manifest: Mapping[str, Any]) -> bool:
        raise AssertionError("asked")

    async def read_stored(self, namespace: str, name: str) -> StoredRecord | None:
        raise AssertionError("asked")

    async def record_event(
        self, resource: Mapping[str, str], reason: str, message: str, *, late: bool = False
    ) -> None:
        raise AssertionError("asked")

    async def create_record(self, manifest: Mapping[str, Any]) -> bool:
        raise AssertionError("asked")

    async def read_record(self, namespace: str, name: str) -> str | None:
        raise AssertionError("asked")

    async def read_piece(self, namespace: str, name: str) -> str | None:
        raise AssertionError("asked")

    async def schema_with_claim(
        self, namespace: str, operation_id: str
    ) -> Mapping[str, Any] | None:
        raise AssertionError("asked")

    async def read_object(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        raise AssertionError("asked")


@pytest.mark.parametrize(
    ("text", "index"),
    [("0", 0), ("9", 9), ("63", 63), ("64", None), ("07", None), ("-1", None), ("", None)],
)
def test_a_piece_index_is_0_to_63_in_plain_decimal(text: str, index: int | None) -> None:
    assert piece_index(text) == index


@pytest.mark.parametrize(
    ("index", "body", "status"),
    [
        ("64", b"x", 400),
        ("0", b"\xff", 400),
        ("0", b"x" * 262_145, 413),
        ("0", b"x" * (MAX_PIECE_BYTES + 1), 413),
    ],
)
async def test_a_piece_is_refused_before_anything_is_read(
    index: str, body: bytes, status: int
) -> None:
    answer = await receive_piece(NoStore(), "app", OP, index, body)
    assert answer.status == status
    assert set(answer.body) == {"error"}


def test_a_piece_record_is_owned_by_the_schema_and_labelled_with_its_index() -> None:
    schema = {"metadata": {"name": "shop", "uid": "u-1"}}
    record = piece_manifest(schema, "app", OP, 3, "text")
    assert record["metadata"]["name"] == "ptah-result-3f9a2c7d1e-3"
    assert record["metadata"]["labels"]["operator.ptah.run/plan-piece"] == "3"
    assert record["metadata"]["labels"]["operator.ptah.run/operation-id"] == OP
    assert record["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    assert record["data"] == {"piece": "text"}
    assert record["immutable"] is True


def test_only_a_schema_plan_with_changes_waits_for_its_pieces() -> None:
    schema = {"kind": "PtahSchema"}
    assert needs_pieces({"type": "Plan", "resource": schema, "plan": {"changes": True}})
    assert not needs_pieces({"type": "Plan", "resource": schema, "plan": {"changes": False}})
    assert not needs_pieces({"type": "Plan", "resource": schema})
    assert not needs_pieces({"type": "Observe", "resource": schema, "plan": {"changes": True}})
    assert not needs_pieces(
        {"type": "Plan", "resource": {"kind": "PtahMigration"}, "plan": {"changes": True}}
    )
