"""`kubectl ptah set-source KIND/NAME oci://...`: point the resource at another OCI artifact
(PLUGIN-01)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.constants import GROUP, VERSION
from ptah_operator.api.kinds import kind_info
from ptah_operator.cli.kubectl.errors import EXIT_OK, CommandError, UsageError
from ptah_operator.cli.kubectl.session import CONFLICT_RETRIES, Session, api_message, noun_of

if TYPE_CHECKING:
    from ptah_operator.cli.kubectl.main import Command


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


async def set_source(session: Session, command: Command) -> int:
    """Point the resource at another OCI artifact with one merge patch of its spec, under
    optimistic concurrency (the resourceVersion read)."""
    info = kind_info(command.kind)
    noun = noun_of(command.kind)
    for _ in range(CONFLICT_RETRIES):
        obj = await session.get(command.kind, command.name)
        assert obj is not None
        spec = obj.get("spec") or {}
        artifact = spec.get("artifact") or {}
        policy = artifact.get("verificationPolicyFrom")
        if command.policy is not None:
            policy = {"name": command.policy[0], "key": command.policy[1]}
        if policy is None:
            raise CommandError(
                f"{noun} {command.name} reads no OCI artifact yet: name its "
                "verification policy with --verification-policy CONFIGMAP/KEY"
            )
        wanted = {"ociRef": command.reference, "verificationPolicyFrom": policy}
        if artifact == wanted:
            session.say(f"{noun} {command.name} already reads {command.reference}")
            return EXIT_OK
        patch = {
            "metadata": {"resourceVersion": (obj.get("metadata") or {}).get("resourceVersion")},
            "spec": {"artifact": wanted, "configMap": None, "git": None},
        }
        try:
            custom: Any = session.custom  # its stubs do not list _content_type
            await custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                session.namespace,
                info.plural,
                command.name,
                patch,
                _content_type="application/merge-patch+json",
            )
        except ApiException as exc:
            if exc.status == 409:
                continue
            raise CommandError(f"source not changed: {api_message(exc)}") from None
        session.say(
            f"{noun} {command.name} now reads {command.reference}; "
            "it is resolved and verified before anything else runs"
        )
        return EXIT_OK
    raise CommandError(f"source not changed: {noun} {command.name} kept changing")
