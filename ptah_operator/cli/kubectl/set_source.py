"""`kubectl ptah set-source KIND/NAME oci://...`: point the resource at another OCI artifact
(PLUGIN-01)."""

from __future__ import annotations

import re

from ptah_operator.cli.kubectl.errors import EXIT_OK, CommandError, UsageError
from ptah_operator.cli.kubectl.session import CONFLICT_RETRIES, Session
from ptah_operator.cli.kubectl.targets import AnyTarget

# registry[:port]/repository (lowercase path components), then a tag and/or a digest.
_OCI_REFERENCE = re.compile(
    r"oci://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[a-z0-9]+([._-]+[a-z0-9]+)*)+"
    r"(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(@sha256:[0-9a-f]{64})?"
)
MAX_OCI_REF_LENGTH = 512


def oci_reference(text: str) -> str:
    if not _OCI_REFERENCE.fullmatch(text) or len(text) > MAX_OCI_REF_LENGTH:
        raise UsageError(
            f"{text!r} is not an OCI reference: oci://REGISTRY/REPOSITORY[:TAG|@sha256:DIGEST]"
        )
    return text


def policy_key(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    name, _, key = text.partition("/")
    if not name or not key or "/" in key:
        raise UsageError(f"--verification-policy {text!r}: expected CONFIGMAP/KEY")
    return name, key


async def set_source(
    session: Session,
    target: AnyTarget,
    name: str,
    reference: str,
    policy_ref: tuple[str, str] | None,
) -> int:
    """Point the resource at another OCI artifact with one merge patch of its spec, under
    optimistic concurrency (the resourceVersion read)."""
    noun = target.noun
    for _ in range(CONFLICT_RETRIES):
        obj = await session.get(target.kind, name)
        assert obj is not None
        spec = obj.get("spec") or {}
        artifact = spec.get("artifact") or {}
        policy = artifact.get("verificationPolicyFrom")
        if policy_ref is not None:
            policy = {"name": policy_ref[0], "key": policy_ref[1]}
        if policy is None:
            raise CommandError(
                f"{noun} {name} reads no OCI artifact yet: name its "
                "verification policy with --verification-policy CONFIGMAP/KEY"
            )
        wanted = {"ociRef": reference, "verificationPolicyFrom": policy}
        if artifact == wanted:
            session.say(f"{noun} {name} already reads {reference}")
            return EXIT_OK
        patch = {
            "metadata": {"resourceVersion": (obj.get("metadata") or {}).get("resourceVersion")},
            "spec": {"artifact": wanted, "configMap": None, "git": None},
        }
        if not await session.merge_patch(target.kind, name, patch, "source not changed"):
            continue
        session.say(
            f"{noun} {name} now reads {reference}; "
            "it is resolved and verified before anything else runs"
        )
        return EXIT_OK
    raise CommandError(f"source not changed: {noun} {name} kept changing")
