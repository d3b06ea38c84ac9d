"""The verification policy of an OCI source, and its verdict on an artifact type.

The policy is YAML, mounted from the ConfigMap key `spec.artifact.verificationPolicyFrom`
names (SRC-OCI-05):

    version: 1
    artifact_types:
      - application/vnd.stokaro.ptah.migrations.v1

`version` must be the integer 1 and `artifact_types` a non-empty list of media types
(`type/subtype`); any other key, value or shape makes the policy invalid, and an invalid
policy accepts nothing. An artifact is accepted only when its type, as the digest-pinned
manifest states it (`artifactType`, else the config's media type), is listed exactly
(SRC-OCI-02..04). Pure: the caller reads the file and inspects the artifact.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import yaml

POLICY_VERSION = 1
MAX_POLICY_BYTES = 64 * 1024
MIGRATIONS_ARTIFACT_TYPE = "application/vnd.stokaro.ptah.migrations.v1"
SCHEMA_ARTIFACT_TYPE = "application/vnd.stokaro.ptah.schema.v1"

_MEDIA_TYPE = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
)
_KEYS = ("version", "artifact_types")


class PolicyError(ValueError):
    """The policy cannot be used; the message says what is wrong (never the policy's text)."""


@dataclass(frozen=True)
class VerificationPolicy:
    artifact_types: tuple[str, ...]

    def accepts(self, artifact_type: str) -> bool:
        return artifact_type in self.artifact_types


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    refusal: str | None = None


def policy_digest(data: bytes) -> str:
    """`sha256:<hex>` of the policy file's bytes, as the Verify result records it."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def parse_policy(data: bytes) -> VerificationPolicy:
    if len(data) > MAX_POLICY_BYTES:
        raise PolicyError(f"it is larger than {MAX_POLICY_BYTES} bytes")
    try:
        document: Any = yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise PolicyError("it is not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise PolicyError(f"it is not valid YAML{where}") from None
    if not isinstance(document, dict):
        raise PolicyError("it must be a mapping with version and artifact_types")
    unknown = sorted(str(k) for k in document if k not in _KEYS)
    if unknown:
        raise PolicyError(f"it has an unknown key {unknown[0][:64]!r}")
    version = document.get("version")
    # bool is an int in Python: `version: true` is not version 1.
    if isinstance(version, bool) or version != POLICY_VERSION or not isinstance(version, int):
        raise PolicyError(f"version must be {POLICY_VERSION}")
    types = document.get("artifact_types")
    if not isinstance(types, list) or not types:
        raise PolicyError("artifact_types must be a non-empty list of artifact types")
    for index, item in enumerate(types):
        if not isinstance(item, str) or not _MEDIA_TYPE.match(item):
            raise PolicyError(f"artifact_types[{index}] is not a media type (type/subtype)")
    return VerificationPolicy(artifact_types=tuple(types))


def decide(policy_bytes: bytes, artifact_type: str) -> Verdict:
    """The verdict on `artifact_type` under the policy in `policy_bytes`."""
    try:
        policy = parse_policy(policy_bytes)
    except PolicyError as exc:
        return Verdict(False, f"the verification policy is invalid: {exc}")
    if policy.accepts(artifact_type):
        return Verdict(True)
    return Verdict(False, f"artifact type {artifact_type} is not one the policy accepts")
