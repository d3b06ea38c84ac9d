"""The seal the result endpoint puts on every record it stores, and the controller opens.

Anyone allowed to write ConfigMaps in a namespace can write one named `ptah-result-<hex>`,
owned by a resource, with a well-formed body: the name, the labels and the owner prove
nothing. The endpoint, the one writer that checked the operation's token, seals what it stores
with an HMAC-SHA256 under a key derived from the manager's result key for this purpose only (a
token never opens a record, a writer record never a result), over the namespace, the
operation id, the owning resource's UID and the SHA-256 of the stored `result.json`. The seal
is the record's annotation `operator.ptah.run/result-seal`; the controller takes as a result
only a record whose seal opens for the resource that owns it and the text it holds.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from typing import Final

_KEY_PURPOSE: Final = b"operator.ptah.run/result-seal v1"


def body_digest(text: str) -> str:
    """`sha256:<hex>` of a record's `result.json` as stored."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class ResultSeal:
    """Seals and opens result records; every replica derives the same key."""

    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    @classmethod
    def derived_from(cls, result_key: bytes) -> ResultSeal:
        """The seal whose key is derived from the manager's result key, for results only."""
        return cls(hmac.new(result_key, _KEY_PURPOSE, hashlib.sha256).digest())

    def seal(self, namespace: str, operation_id: str, owner_uid: str, text: str) -> str:
        """The annotation value for the record of `text`."""
        bound = {
            "namespace": namespace,
            "operationID": operation_id,
            "ownerUID": owner_uid,
            "digest": body_digest(text),
        }
        message = json.dumps(bound, sort_keys=True, separators=(",", ":")).encode()
        return hmac.new(self.key, message, hashlib.sha256).hexdigest()

    def opens(
        self, presented: object, namespace: str, operation_id: str, owner_uid: str, text: str
    ) -> bool:
        """Whether `presented` is this seal's for that record, compared in constant time."""
        if not isinstance(presented, str) or not presented:
            return False
        expected = self.seal(namespace, operation_id, owner_uid, text)
        return hmac.compare_digest(expected.encode(), presented.encode())
