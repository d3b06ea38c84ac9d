"""Talking to the manager's result endpoint: reporting a result, and a schema plan's text.

`POST {PTAH_RESULT_URL}/{namespace}/{operationID}` with `Authorization: Bearer <token>` (the
token file of the operation Secret) over TLS, trusting only the CA in `PTAH_RESULT_CA_FILE`.
The body is the same bytes on every attempt, so a retry after a lost answer finds its own
record (the endpoint answers 200 for an identical one). A schema Plan first uploads its plan
file in pieces (`PUT …/plan/{index}`, text/plain UTF-8) and an Apply fetches the published plan
(`GET …/plan`), with the same token and the same retries.

Retries: connection failures, timeouts, 5xx, 408 and 429 are retried with exponential backoff
(0.5 s doubling to 10 s, with jitter) until the budget (two minutes by default) is spent.
Any other answer is final: 200/201 is reported; a 4xx refusal (401, 403, 404, 409, 413, ...)
will not change by asking again.

Each attempt is one request on a connection of its own, made with the standard library's
`http.client` in a daemon thread: an operation Job's process starts by loading what it runs,
and aiohttp's client alone took about 180 ms of the runner's start-up (issue #16). A daemon
thread, so that a process told to stop does not wait for an attempt in flight (each attempt
is bounded by its timeout in any case).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.client
import json
import random
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import structlog

log = structlog.get_logger("ptah.runner")

DEFAULT_BUDGET_SECONDS = 120.0
_LAST_TRY_MARGIN = 0.05
"""Seconds before the deadline under which no further attempt is started."""
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


@dataclass(frozen=True)
class Exchange:
    """What one request to the endpoint came to, after its retries."""

    done: bool
    status: int | None
    attempts: int
    body: bytes = b""
    error: str | None = None
    """The endpoint's short `error` field of a final refusal (never the request's body)."""


_ERROR_ANSWER_BYTES = 64 * 1024
"""How much of a refusal's body is read, for its short `error` field."""

T = TypeVar("T")


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes
    too_large: bool = False


def _read_capped(resp: http.client.HTTPResponse, limit: int) -> bytes | None:
    """The answer's body, or None when it is longer than `limit` bytes."""
    length = resp.getheader("Content-Length")
    if length is not None and length.isdigit() and int(length) > limit:
        return None
    data = resp.read(limit + 1)
    return None if len(data) > limit else data


def _attempt(
    context: ssl.SSLContext,
    method: str,
    url: str,
    body: bytes | None,
    headers: dict[str, str],
    timeout: float,
    max_answer_bytes: int,
) -> _Answer:
    """One request on a connection of its own (blocking: run in a thread)."""
    parts = urlsplit(url)
    connection = http.client.HTTPSConnection(
        parts.hostname or "", parts.port or 443, context=context, timeout=timeout
    )
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request(method, path, body=body, headers=headers)
        resp = connection.getresponse()
        if resp.status in (200, 201):
            answer = _read_capped(resp, max_answer_bytes) if max_answer_bytes else b""
        else:
            answer = _read_capped(resp, _ERROR_ANSWER_BYTES) or b""
        return _Answer(resp.status, answer or b"", too_large=answer is None)
    finally:
        connection.close()


async def _in_thread(work: Callable[[], T]) -> T:
    """`work()` in a daemon thread of its own, awaited without blocking the event loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return  # the caller stopped waiting (cancelled)
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result, error = work(), None
        except BaseException as exc:  # handed to the awaiting task, not lost in the thread
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="ptah-report", daemon=True).start()
    return await future


async def exchange(
    target: ReportTarget,
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    content_type: str | None = None,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    what: str = "result",
    verb: str = "reported",
    max_answer_bytes: int = 0,
) -> Exchange:
    """Send one request until the endpoint answers 200/201, refuses it for good, or the budget
    is spent. With `max_answer_bytes`, a 200's body is read (at most that many bytes). Logs name
    `what` (and what was done, `verb`), the status and the attempt, never a body or the URL."""
    context = ssl.create_default_context(cafile=str(target.ca_file))
    headers = {"Authorization": f"Bearer {target.token}"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    deadline = time.monotonic() + budget_seconds
    delay = _FIRST_DELAY
    attempts = 0
    status: int | None = None
    while True:
        attempts += 1
        remaining = deadline - time.monotonic()
        timeout = max(1.0, min(_ATTEMPT_TIMEOUT, remaining))
        try:
            work = functools.partial(
                _attempt, context, method, url, body, headers, timeout, max_answer_bytes
            )
            answer = await asyncio.wait_for(_in_thread(work), timeout)
        except (http.client.HTTPException, TimeoutError, OSError) as exc:
            status = None
            log.warning(f"{what} endpoint not reached", attempt=attempts, error=type(exc).__name__)
        else:
            status = answer.status
            if answer.too_large:
                log.error(f"{what} answer too large", attempts=attempts)
                return Exchange(False, status, attempts, error="the answer is too large")
            if status in (200, 201):
                log.info(f"{what} {verb}", status=status, attempts=attempts)
                return Exchange(True, status, attempts, answer.body)
            error = _short_error(answer.body)
            if status < 500 and status not in _RETRIED_STATUSES:
                log.error(f"{what} refused", status=status, error=error)
                return Exchange(False, status, attempts, error=error)
            log.warning(f"{what} endpoint unavailable", attempt=attempts, status=status)
        left = deadline - time.monotonic()
        if left <= _LAST_TRY_MARGIN:
            log.error(f"{what} not {verb}", attempts=attempts, status=status)
            return Exchange(False, status, attempts)
        # The last pause is cut short so that one more attempt lands at the deadline: the
        # whole budget is used, however the jitter fell.
        pause = min(delay, _MAX_DELAY) * (0.5 + random.random() / 2)
        await asyncio.sleep(min(pause, left))
        delay *= 2


async def post_result(
    target: ReportTarget,
    namespace: str,
    operation_id: str,
    body: bytes,
    *,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
) -> ReportOutcome:
    """POST `body` until the endpoint accepts it, refuses it for good, or the budget is spent."""
    sent = await exchange(
        target,
        "POST",
        target.endpoint(namespace, operation_id),
        body=body,
        content_type="application/json",
        budget_seconds=budget_seconds,
        what="result",
    )
    return ReportOutcome(sent.done, sent.status, sent.attempts)


async def put_piece(
    target: ReportTarget,
    namespace: str,
    operation_id: str,
    index: int,
    text: str,
    *,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
) -> Exchange:
    """PUT one piece of a plan file: `{base}/{namespace}/{operationID}/plan/{index}`, the piece
    as UTF-8 text. The same bytes on every attempt, so a retry finds its own record."""
    return await exchange(
        target,
        "PUT",
        f"{target.endpoint(namespace, operation_id)}/plan/{index}",
        body=text.encode("utf-8"),
        content_type="text/plain; charset=utf-8",
        budget_seconds=budget_seconds,
        what="plan piece",
        verb="uploaded",
    )


async def get_plan(
    target: ReportTarget,
    namespace: str,
    operation_id: str,
    *,
    max_bytes: int,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
) -> Exchange:
    """GET the published plan an Apply runs: `{base}/{namespace}/{operationID}/plan`."""
    return await exchange(
        target,
        "GET",
        f"{target.endpoint(namespace, operation_id)}/plan",
        budget_seconds=budget_seconds,
        what="plan",
        verb="fetched",
        max_answer_bytes=max_bytes,
    )


def _short_error(body: bytes) -> str | None:
    """The endpoint's short `error` field, for the log (it never echoes the body)."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return str(data["error"])[:200]
    return None
