"""The spec-writers JSONPatch as the API server applies it (RFC 6902 `add` and `remove` of object
members, nothing else): whatever shape the admitted object has, the patched object carries a
record that opens for the resource where it is stored, or no record at all.

The four-eyes tests (test_webhook_four_eyes.py) read the patch's last operation; these apply
the whole patch, so a malformed operation (a wrong key, op or path) fails here."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ptah_operator.api.constants import ANNOTATION_SPEC_WRITTEN_BY
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.webhook.writers import SpecWriters, Writer, writer_patch
from tests.unit.webhook.test_webhook_four_eyes import ALICE, KIND, NS, SEAL, _four_eyes


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def applied(obj: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    """`obj` after `patch`, refusing anything outside the two operations the webhook may send
    (as a strict JSONPatch implementation would: an unknown op or member is an error)."""
    out = copy.deepcopy(obj)
    for op in patch:
        assert isinstance(op, dict), op
        kind = op["op"]
        assert kind in ("add", "remove"), op
        assert set(op) == ({"op", "path", "value"} if kind == "add" else {"op", "path"}), op
        path = op["path"]
        assert path.startswith("/"), op
        *parents, last = [_unescape(t) for t in path[1:].split("/")]
        target = out
        for token in parents:
            target = target[token]  # a missing parent is an error, as in RFC 6902
        assert isinstance(target, dict), op
        if kind == "add":
            target[last] = copy.deepcopy(op["value"])
        else:
            del target[last]  # removing a missing member is an error too
    return out


def _opened(obj: dict[str, Any], namespace: str = NS) -> SpecWriters | None:
    stored = copy.deepcopy(obj)
    stored["metadata"]["namespace"] = namespace
    value = (stored["metadata"].get("annotations") or {}).get(ANNOTATION_SPEC_WRITTEN_BY)
    return SEAL.open(value, from_manifest(PtahMigration, stored))


def _without(*keys: str) -> dict[str, Any]:
    obj = _four_eyes()
    for key in keys:
        obj["metadata"].pop(key, None)
    return obj


def _no_metadata() -> dict[str, Any]:
    obj = _four_eyes()
    del obj["metadata"]
    return obj


def _forged() -> dict[str, Any]:
    obj = _four_eyes()
    obj["metadata"]["annotations"] = {ANNOTATION_SPEC_WRITTEN_BY: "forged", "keep": "me"}
    return obj


@pytest.mark.req("APR-04")
@pytest.mark.parametrize(
    "admitted",
    [_four_eyes(), _without("annotations"), _without("namespace"), _forged()],
    ids=["as stored", "no annotations", "no namespace in the object", "a forged record"],
)
def test_a_create_patched_as_the_api_server_does_carries_a_record_that_opens_where_stored(
    admitted: dict[str, Any],
) -> None:
    after = applied(admitted, writer_patch("CREATE", KIND, NS, admitted, None, ALICE, SEAL))
    assert _opened(after) == SpecWriters(1, (Writer(ALICE.username, "u-alice", 1),))
    # sealed for the namespace of the request, so it does not open elsewhere
    assert _opened(after, "elsewhere") is None
    assert after["spec"] == admitted["spec"]
    if "keep" in (admitted["metadata"].get("annotations") or {}):
        assert after["metadata"]["annotations"]["keep"] == "me"


@pytest.mark.req("APR-04")
def test_an_object_with_no_metadata_gets_metadata_and_annotations_before_the_record() -> None:
    admitted = _no_metadata()
    patch = writer_patch("CREATE", KIND, NS, admitted, None, ALICE, SEAL)
    after = applied(admitted, patch)
    assert [op["path"] for op in patch[:2]] == ["/metadata", "/metadata/annotations"]
    assert set(after["metadata"]) == {"annotations"}
    assert set(after["metadata"]["annotations"]) == {ANNOTATION_SPEC_WRITTEN_BY}


@pytest.mark.req("APR-04")
def test_an_object_that_does_not_read_as_its_kind_loses_a_record_it_carries() -> None:
    admitted = _forged()
    admitted["spec"] = {"not": "a migration spec"}
    patch = writer_patch("CREATE", KIND, NS, admitted, None, ALICE, SEAL)
    after = applied(admitted, patch)
    assert after["metadata"]["annotations"] == {"keep": "me"}
    # and with no record to lose, nothing to do
    assert writer_patch("CREATE", KIND, NS, after, None, ALICE, SEAL) == []
