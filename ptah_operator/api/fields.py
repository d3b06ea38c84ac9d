"""The base model of every API object and the constrained field types they share.

Each constraint here is written once and reaches both sides: pydantic enforces it when the
operator reads or builds an object, and the generated CRD carries it as maxLength, pattern or
enum, so the API server refuses the same input. Strings and lists are bounded everywhere, which
keeps status small and lets CEL rules pass the API server's cost estimate.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    """An object of the API: camelCase on the wire, snake_case in Python, unknown fields refused."""

    # Written out here rather than shared through a variable: pydantic's mypy plugin reads only
    # a literal ConfigDict, and needs validate_by_name to type __init__ by Python names.
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
        use_attribute_docstrings=True,
    )


DNS_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
CONFIGMAP_KEY_PATTERN = r"^[-._a-zA-Z0-9]+$"
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"
DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
OCI_REF_PATTERN = r"^oci://\S+$"
GIT_REPOSITORY_PATTERN = r"^(https?://|ssh://|git://|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:)\S+$"
COMMIT_PATTERN = r"^([0-9a-f]{40}|[0-9a-f]{64})$"
SQLSTATE_PATTERN = r"^[0-9A-Z]{5}$"
NO_SPACE_PATTERN = r"^\S+$"
REPORT_CODE_PATTERN = r"^[A-Z][A-Za-z0-9]{0,63}$"
"""A code a runner's report may carry beside its reason (the engine's own, CamelCase)."""
REPORTED_FILE_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9._+-]{0,254}$"
"""A file a runner's report may name as a position: a flat name of printable ASCII that holds
no space, no path separator and no control character (anything else is left unnamed)."""

Name = Annotated[
    str, StringConstraints(min_length=1, max_length=253, pattern=DNS_SUBDOMAIN_PATTERN)
]
"""A Kubernetes object name (DNS subdomain)."""

LabelName = Annotated[
    str, StringConstraints(min_length=1, max_length=63, pattern=DNS_LABEL_PATTERN)
]
"""A name that must also fit a label value or a Job name (DNS label)."""

ConfigMapKey = Annotated[
    str, StringConstraints(min_length=1, max_length=253, pattern=CONFIGMAP_KEY_PATTERN)
]
Uid = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Digest = Annotated[str, StringConstraints(max_length=71, pattern=DIGEST_PATTERN)]
"""A SHA-256 digest written sha256:<64 hex>."""

Duration = Annotated[str, StringConstraints(min_length=2, max_length=32, pattern=DURATION_PATTERN)]
"""A Go-style duration such as 30s, 10m or 1h30m."""


def duration_bounds(minimum: str, maximum: str) -> Any:
    """The json_schema_extra under which the API server holds a Duration within the bounds.

    A CEL rule rather than a pattern, because only CEL compares durations; the model itself
    keeps to the pattern, so an object stored before the bound was set still reads (the
    operator clamps such a value where it uses it). The message names the bounds.
    """
    rule = f"duration(self) >= duration('{minimum}') && duration(self) <= duration('{maximum}')"
    message = f"must be a duration between {minimum} and {maximum}"
    return {"x-kubernetes-validations": [{"rule": rule, "message": message}]}


ConditionReason = Annotated[
    str, StringConstraints(min_length=1, max_length=1024, pattern=REASON_PATTERN)
]
"""A condition reason (metav1.Condition.reason): a CamelCase word, never a message."""
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=256)]
Version = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=NO_SPACE_PATTERN)]
"""A migration version as the artifact and the revision table spell it."""

Checksum = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Description = Annotated[str, StringConstraints(max_length=256)]
Timestamp = Annotated[AwareDatetime, WithJsonSchema({"type": "string", "format": "date-time"})]
"""An RFC 3339 instant with a zone, as metav1.Time is."""

Quantity = Annotated[
    int | str,
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": True,
            "pattern": (
                r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]"
                r"|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
            ),
        }
    ),
]
"""A resource quantity (resource.Quantity), written as an integer or a string like 128Mi."""


def bounded_list(max_items: int, **kwargs: Any) -> Any:
    """A list field that defaults to empty and never holds more than max_items entries."""
    return Field(default_factory=list, max_length=max_items, **kwargs)


def defaulted_object(factory: Any) -> Any:
    """An object field that is present by default, so the API server fills its inner defaults."""
    return Field(default_factory=factory, json_schema_extra={"default": {}})


_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str) -> timedelta:
    """Read a duration such as 1h30m or 90s; refuse anything the CRD's pattern refuses."""
    if not re.fullmatch(DURATION_PATTERN, value):
        raise ValueError(f"not a duration like 10m or 1h30m: {value!r}")
    seconds = sum(
        float(number) * _UNIT_SECONDS[unit] for number, unit in _DURATION_PART.findall(value)
    )
    return timedelta(seconds=seconds)


def parse_time(value: object) -> datetime | None:
    """A timestamp as the API server writes it (RFC 3339, `Z`), or None for anything else."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def format_time(value: datetime) -> str:
    """Write an instant the way metav1.Time does: UTC, whole seconds, a trailing Z."""
    if value.tzinfo is None:
        raise ValueError("an instant needs a time zone")
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
