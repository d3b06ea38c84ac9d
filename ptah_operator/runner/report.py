"""Reporting a result to the manager's result endpoint.

`POST {PTAH_RESULT_URL}/{namespace}/{operationID}` with `Authorization: Bearer <token>` (the
token file of the operation Secret) over TLS, trusting only the CA in `PTAH_RESULT_CA_FILE`.
The body is the same bytes on every attempt, so a retry after a lost answer finds its own
record (the endpoint answers 200 for an identical one).

Retries: connection failures, timeouts, 5xx, 408 and 429 are retried with exponential backoff
(0.5 s doubling to 10 s, with jitter) until the budget (two minutes by default) is spent.
Any other answer is final: 200/201 is reported; a 4xx refusal (401, 403, 404, 409, 413, ...)
will not change by asking again.
"""

from __future__ import annotations

import asyncio
import json
import random
import ssl
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import structlog

log = structlog.get_logger("ptah.runner")

DEFAULT_BUDGET_SECONDS = 120.0
_FIRST_DELAY = 0.5
_MAX_DELAY = 10.0
_ATTEMPT_TIMEOUT = 30.0
_RETRIED_STATUSES = frozenset({408, 429})


class ReportConfigError(Exception):
    """The result endpoint's address, token or CA cannot be used."""


@dataclass(frozen=True)
class ReportTarget:
    url: str
    token: str
    ca_file: Path

    @classmethod
    def from_env(
        cls, base_url: str | None, token_file: str | None, ca_file: str | None
    ) -> ReportTarget:
        if not base_url:
            raise ReportConfigError("PTAH_RESULT_URL is not set")
        if not base_url.startswith("https://"):
            raise ReportConfigError("PTAH_RESULT_URL must be an https:// URL")
        if not token_file or not ca_file:
            raise ReportConfigError("PTAH_RESULT_TOKEN_FILE and PTAH_RESULT_CA_FILE must be set")
        try:
            token = Path(token_file).read_text().strip()
        except OSError:
            raise ReportConfigError("the result token file cannot be read") from None
        if not token or any(c.isspace() for c in token):
            raise ReportConfigError("the result token file holds no token")
        ca = Path(ca_file)
        try:
            ssl.create_default_context(cafile=str(ca))
        except (OSError, ssl.SSLError):
            raise ReportConfigError("the result CA file holds no usable certificate") from None
        return cls(url=base_url.rstrip("/"), token=token, ca_file=ca)

    def endpoint(self, namespace: str, operation_id: str) -> str:
        return f"{self.url}/{namespace}/{operation_id}"


@dataclass(frozen=True)
class ReportOutcome:
    reported: bool
    status: int | None
    attempts: int


def encode(document: dict[str, Any]) -> bytes:
    """Canonical JSON, the same bytes on every attempt (and what the endpoint stores)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


async def post_result(
    target: ReportTarget,
    namespace: str,
    operation_id: str,
    body: bytes,
    *,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
) -> ReportOutcome:
    """POST `body` until the endpoint accepts it, refuses it for good, or the budget is spent."""
    context = ssl.create_default_context(cafile=str(target.ca_file))
    url = target.endpoint(namespace, operation_id)
    headers = {
        "Authorization": f"Bearer {target.token}",
        "Content-Type": "application/json",
    }
    deadline = time.monotonic() + budget_seconds
    delay = _FIRST_DELAY
    attempts = 0
    status: int | None = None
    connector = aiohttp.TCPConnector(ssl=context)
    async with aiohttp.ClientSession(connector=connector) as session:
        while True:
            attempts += 1
            remaining = deadline - time.monotonic()
            timeout = aiohttp.ClientTimeout(total=max(1.0, min(_ATTEMPT_TIMEOUT, remaining)))
            try:
                async with session.post(url, data=body, headers=headers, timeout=timeout) as resp:
                    status = resp.status
                    answer = await _short_error(resp)
            except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                status = None
                log.warning(
                    "result endpoint not reached", attempt=attempts, error=type(exc).__name__
                )
            else:
                if status in (200, 201):
                    log.info("result reported", status=status, attempts=attempts)
                    return ReportOutcome(True, status, attempts)
                if status < 500 and status not in _RETRIED_STATUSES:
                    log.error("result refused", status=status, error=answer)
                    return ReportOutcome(False, status, attempts)
                log.warning("result endpoint unavailable", attempt=attempts, status=status)
            pause = min(delay, _MAX_DELAY) * (0.5 + random.random() / 2)
            if time.monotonic() + pause >= deadline:
                log.error("result not reported", attempts=attempts, status=status)
                return ReportOutcome(False, status, attempts)
            await asyncio.sleep(pause)
            delay *= 2


async def _short_error(resp: aiohttp.ClientResponse) -> str | None:
    """The endpoint's short `error` field, for the log (it never echoes the body)."""
    try:
        data = await resp.json(content_type=None)
    except (ValueError, aiohttp.ClientError):
        return None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return str(data["error"])[:200]
    return None
