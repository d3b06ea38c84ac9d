"""The seal the result endpoint puts on every record it stores, and the controller opens.

Anyone allowed to write ConfigMaps in a namespace can write one named `ptah-result-<hex>`,
owned by a resource, with a well-formed body: the name, the labels and the owner prove
nothing. The endpoint, the one writer that checked the operation's token, seals what it stores
with an HMAC-SHA256 under a key derived from the manager's result key for this purpose only (a
token never opens a record, a writer record never a result), over the namespace, the
operation id, the owning resource's UID, the record's own name, the attempt of the claim it
was stored under and the SHA-256 of the stored `result.json`. The seal is the record's
annotation `operator.ptah.run/result-seal` (the attempt beside it,
`operator.ptah.run/result-attempt`); the controller takes as a result only a record whose seal
opens for the resource that owns it, the name it has and the text it holds.

A record has one of two names: `ptah-result-<hex>`, or, when a record the endpoint did not
write holds that name (a ConfigMap writer's, one kept by a finalizer), the fallback
`ptah-result-<hex>-s<20 hex>`, an HMAC of namespace, operation and the claim's attempt keyed by
the result key, so that nobody without it can make the name before the endpoint does, and a
record held on one attempt's fallback does not block the next (docs/security.md, "A record the endpoint cannot write").

Keys replaced (`--previous-result-key-file`) still open records and give their fallback names;
every seal is made, and every new record named, under the current key only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from ptah_operator.api.names import result_record_name

_KEY_PURPOSE: Final = b"operator.ptah.run/result-seal v1"
_SEAL_VERSION: Final = 2
"""2: the name and the attempt are bound too (1 bound neither; its records no longer open)."""
_NAME_PURPOSE: Final = b"operator.ptah.run/result-record-name v1\x00"
FALLBACK_MARK: Final = "-s"
_FALLBACK_HEX: Final = 20


def body_digest(text: str) -> str:
    """`sha256:<hex>` of a record's `result.json` as stored."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _derived(result_key: bytes) -> bytes:
    return hmac.new(result_key, _KEY_PURPOSE, hashlib.sha256).digest()


@dataclass(frozen=True)
class ResultSeal:
    """Seals and opens result records; every replica derives the same key."""

    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    previous: tuple[bytes, ...] = field(default=(), repr=False)
    """Keys that still open records (and name fallbacks), never seal them."""

    @classmethod
    def derived_from(cls, result_key: bytes, previous: Iterable[bytes] = ()) -> ResultSeal:
        """The seal whose key is derived from the manager's result key, for results only;
        `previous` are result keys used before it."""
        return cls(_derived(result_key), tuple(_derived(k) for k in previous))

    def _mac(
        self,
        key: bytes,
        namespace: str,
        operation_id: str,
        owner_uid: str,
        text: str,
        name: str,
        attempt: int,
    ) -> str:
        bound = {
            "seal": _SEAL_VERSION,
            "namespace": namespace,
            "operationID": operation_id,
            "ownerUID": owner_uid,
            "name": name,
            "attempt": attempt,
            "digest": body_digest(text),
        }
        message = json.dumps(bound, sort_keys=True, separators=(",", ":")).encode()
        return hmac.new(key, message, hashlib.sha256).hexdigest()

    def seal(
        self,
        namespace: str,
        operation_id: str,
        owner_uid: str,
        text: str,
        *,
        name: str,
        attempt: int,
    ) -> str:
        """The annotation value for the record of `text` named `name`, stored under the
        claim's attempt `attempt`."""
        return self._mac(self.key, namespace, operation_id, owner_uid, text, name, attempt)

    def opens(
        self,
        presented: object,
        namespace: str,
        operation_id: str,
        owner_uid: str,
        text: str,
        *,
        name: str,
        attempt: int,
    ) -> bool:
        """Whether `presented` is this seal's (or a previous key's) for that record, compared
        in constant time."""
        if not isinstance(presented, str) or not presented:
            return False
        opened = False
        for key in (self.key, *self.previous):
            expected = self._mac(key, namespace, operation_id, owner_uid, text, name, attempt)
            opened |= hmac.compare_digest(expected.encode(), presented.encode())
        return opened

    def _fallback(self, key: bytes, namespace: str, operation_id: str, attempt: int) -> str:
        bound = f"{namespace}/{operation_id}/{attempt}".encode()
        suffix = hmac.new(key, _NAME_PURPOSE + bound, "sha256").hexdigest()[:_FALLBACK_HEX]
        return f"{result_record_name(operation_id)}{FALLBACK_MARK}{suffix}"

    def fallback_name(self, namespace: str, operation_id: str, *, attempt: int) -> str:
        """The name the endpoint stores the record of an attempt of an operation under when a
        record it did not write holds `ptah-result-<hex>`: each attempt has its own, so a
        record held on one attempt's fallback never blocks the next."""
        return self._fallback(self.key, namespace, operation_id, attempt)

    def record_names(self, namespace: str, operation_id: str, attempt: int) -> tuple[str, ...]:
        """Every name a record of the operation's attempt may have: its own, then the
        attempt's fallback under the current key and under each previous one."""
        fallbacks = (
            self._fallback(k, namespace, operation_id, attempt) for k in (self.key, *self.previous)
        )
        return (result_record_name(operation_id), *dict.fromkeys(fallbacks))
