"""Every name REQUIREMENTS.md uses exists in the API: constants, fields and field paths."""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ptah_operator.api import constants, crdgen
from ptah_operator.api.constants import (
    ANNOTATION_READ_REQUESTED_AT,
    ANNOTATION_SETTLED_APPLY,
    ConditionType,
    EventReason,
    JournalEntryType,
    MigrationPhase,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.api.kinds import KINDS, kind_info

REPO = Path(__file__).resolve().parents[3]
REQUIREMENTS = REPO.parent / "shared" / "design" / "REQUIREMENTS.md"

# Backticked words that are commands or prose, not names of the API.
NOT_API_NAMES = {"set", "approve", "baseline", "name", "key", "uid"}


@cache
def _requirements() -> str:
    if not REQUIREMENTS.is_file():
        pytest.fail(f"REQUIREMENTS.md not found at {REQUIREMENTS}")
    return REQUIREMENTS.read_text()


def _requirement(rid: str) -> str:
    match = re.search(rf"^- \*\*{re.escape(rid)}\*\* (.*)$", _requirements(), re.MULTILINE)
    assert match, rid
    return match.group(1)


def _backticked() -> list[str]:
    return re.findall(r"`([^`\n]+)`", _requirements())


def _vocabulary() -> set[str]:
    values: set[str] = set()
    for value in vars(constants).values():
        if isinstance(value, type) and issubclass(value, StrEnum):
            values |= {member.value for member in value}
        elif isinstance(value, str):
            values.add(value)
    return values


def _schemas() -> dict[str, dict[str, Any]]:
    return {info.kind.value: crdgen.openapi_schema(info) for info in KINDS}


def _property_names(node: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for name, child in node.get("properties", {}).items():
        names.add(name)
        names |= _property_names(child)
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            names |= _property_names(node[key])
    return names


def _has_path(schema: dict[str, Any], path: str) -> bool:
    node = schema
    for part in path.split("."):
        while node.get("type") == "array":
            node = node["items"]
        if part not in node.get("properties", {}):
            return False
        node = node["properties"][part]
    return True


@pytest.mark.req("JNL-02", "LCK-04", "MIG-53", "SCH-59", "SCH-60", "SCH-61", "SRC-CM-05")
def test_every_capitalised_name_in_the_requirements_is_a_constant() -> None:
    names: set[str] = set()
    for token in _backticked():
        match = re.fullmatch(r"([A-Z][A-Za-z]+)(=(True|False))?", token)
        if match:
            names.add(match.group(1))
    assert len(names) > 40
    missing = sorted(names - _vocabulary())
    assert not missing, f"names REQUIREMENTS.md uses that api/constants.py lacks: {missing}"


@pytest.mark.req("SCH-01")
def test_schema_phases_are_the_requirement_list() -> None:
    listed = re.search(r"one of: ([^.]+)\.", _requirement("SCH-01"))
    assert listed
    assert [p.strip() for p in listed.group(1).split(",")] == [p.value for p in SchemaPhase]


@pytest.mark.req("MIG-01")
def test_migration_phases_are_the_requirement_list() -> None:
    listed = re.search(r"one of: ([^.]+)\.", _requirement("MIG-01"))
    assert listed
    assert [p.strip() for p in listed.group(1).split(",")] == [p.value for p in MigrationPhase]


@pytest.mark.req("JNL-02")
def test_journal_entry_types_are_the_requirement_list() -> None:
    listed = re.findall(r"`([A-Za-z]+)`", _requirement("JNL-02"))
    assert listed == [t.value for t in JournalEntryType]


@pytest.mark.req("MIG-53")
def test_progressing_reasons_of_seed_002() -> None:
    listed = re.findall(r"`([A-Za-z]+)`", _requirement("MIG-53"))
    assert len(listed) == 8
    assert set(listed) <= {r.value for r in Reason}


def test_decision_15_reasons_and_condition_types() -> None:
    for reason in (
        "OperationInProgress",
        "OperationFailed",
        "RealmConflict",
        "RealmNotAuthorized",
        "UnsupportedEngine",
        "PolicyRefused",
    ):
        assert reason in {r.value for r in Reason}
    assert {c.value for c in ConditionType} >= {
        "Ready",
        "Progressing",
        "InSync",
        "ReconciliationFailed",
        "ArtifactResolved",
        "ArtifactVerified",
    }


@pytest.mark.req("RRQ-04", "RRQ-16", "RETRY-05", "SCH-66")
def test_event_reasons() -> None:
    assert {e.value for e in EventReason} >= {
        "ReadRequested",
        "ReadRequestInvalid",
        "ReadRestarted",
        "PlanStale",
    }


@pytest.mark.req("RRQ-02", "SCH-41")
def test_annotation_keys() -> None:
    assert ANNOTATION_READ_REQUESTED_AT == "operator.ptah.run/read-requested-at"
    assert ANNOTATION_SETTLED_APPLY == "operator.ptah.run/settled-apply"
    for token in _backticked():
        if token.startswith("operator.ptah.run/") and token != "operator.ptah.run/v1alpha1":
            assert token in _vocabulary(), token


@pytest.mark.req("SCH-03", "MIG-02")
def test_operation_types() -> None:
    assert [o.value for o in OperationType] == [
        "Resolve",
        "Verify",
        "Observe",
        "Plan",
        "Apply",
        "History",
    ]
    assert {o.value for o in constants.SCHEMA_OPERATIONS} == {
        "Resolve",
        "Verify",
        "Observe",
        "Plan",
        "Apply",
    }
    assert {o.value for o in constants.MIGRATION_OPERATIONS} == {
        "Resolve",
        "Verify",
        "History",
        "Apply",
    }


def test_every_field_path_in_the_requirements_exists() -> None:
    schemas = _schemas()
    families = [schemas["PtahSchema"], schemas["PtahMigration"]]
    checked = 0
    for token in _backticked():
        match = re.match(
            r"^(?:(Ptah[A-Za-z]+)\.)?((?:spec|status)(?:\.[A-Za-z]+(?:\[\])?)*)", token
        )
        if not match:
            continue
        owner, path = match.groups()
        parts = path.replace("[]", "").split(".")
        if len(parts) == 1:
            continue
        rest = ".".join(parts)
        candidates = [schemas[owner]] if owner else list(schemas.values())
        if parts[0] == "status" and not owner:
            candidates = families
        assert any(_has_path(schema, rest) for schema in candidates), token
        checked += 1
    assert checked > 30


def test_every_field_name_in_the_requirements_exists() -> None:
    fields: set[str] = set()
    for schema in _schemas().values():
        fields |= _property_names(schema)
    names = {
        token
        for token in _backticked()
        if re.fullmatch(r"[a-z][A-Za-z]+", token) and token not in NOT_API_NAMES
    }
    assert len(names) > 25
    missing = sorted(names - fields)
    assert not missing, f"fields REQUIREMENTS.md names that no kind has: {missing}"


@pytest.mark.req("RUN-06")
def test_decision_16_shapes() -> None:
    schemas = _schemas()
    for token in _backticked():
        match = re.fullmatch(r"([a-zA-Z]+)\{([a-z,]+)\}", token)
        if not match:
            continue
        field, subfields = match.group(1), match.group(2).split(",")
        holders = [
            schema["properties"]["spec"]["properties"][field]
            for schema in schemas.values()
            if field in schema["properties"]["spec"].get("properties", {})
        ]
        assert holders, token
        for holder in holders:
            assert set(subfields) <= set(holder["properties"]), token
    ack = schemas["PtahMigrationRunAcknowledgment"]["properties"]["spec"]
    assert set(ack["properties"]) == {
        "migrationRef",
        "operationID",
        "planRef",
        "jobRef",
        "outcome",
        "acknowledgedBy",
        "acknowledgedAt",
    }
    realm = kind_info("PtahRealm")
    assert not realm.namespaced
    assert set(schemas["PtahRealm"]["properties"]["spec"]["properties"]) == {
        "engine",
        "namespaces",
        "sharing",
    }
