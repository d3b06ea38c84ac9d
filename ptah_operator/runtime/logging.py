"""The one place logging is configured: structlog, one JSON object per line.

Contract: after `configure_logging(level)`, every structlog logger and every stdlib logger
(aiohttp, kubernetes_asyncio) writes JSON lines to the given stream (stderr by default) with
`timestamp` (RFC 3339, UTC), `level`, `event`, `logger`, the context bound on the logger and
the context bound with `structlog.contextvars` (the controller binds `controller` and `key`
around each reconcile). Exceptions are rendered into an `exception` field.
Never log SQL text, row data or credentials: nothing here filters them. An exception's message
and its traceback's text may carry them (an API server's answer, a database's error), so the
runtime logs an error it did not expect by `error_fields` (class and frames) instead.
"""

from __future__ import annotations

import logging
import sys
import traceback
from typing import TextIO

import structlog
from structlog.typing import Processor

MAX_FRAMES = 12
"""The innermost frames `error_fields` keeps of a traceback."""


def error_fields(error: BaseException) -> dict[str, object]:
    """An error as a log line may carry it: its class, its cause's class, and where it was
    raised (`module.py:line in function`, innermost last, at most MAX_FRAMES). Never its
    message, its arguments or the source lines (issue #18; PRIV-05): an ApiException's text
    is the API server's answer, a driver's is the database's."""
    frames = [
        f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno} in {frame.name}"
        for frame in traceback.extract_tb(error.__traceback__)[-MAX_FRAMES:]
    ]
    fields: dict[str, object] = {"error": type(error).__name__, "frames": frames}
    cause = error.__cause__ or error.__context__
    if cause is not None:
        fields["cause"] = type(cause).__name__
    status = getattr(error, "status", None)
    if type(status) is int:
        fields["status"] = status
    return fields


_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def configure_logging(level: str = "info", stream: TextIO | None = None) -> None:
    """Route structlog and stdlib logging to JSON lines on `stream` at `level`."""
    numeric = _LEVELS.get(level.lower())
    if numeric is None:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(_LEVELS)}")
    out = stream if stream is not None else sys.stderr
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
    ]
    structlog.configure(
        processors=[
            *shared,
            structlog.stdlib.PositionalArgumentsFormatter(),
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric)
    # aiohttp's access log would log every /metrics scrape.
    logging.getLogger("aiohttp.access").setLevel(max(numeric, logging.WARNING))
