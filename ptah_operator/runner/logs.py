"""The runner's logging: structlog, one JSON object per line on stderr.

Every line carries `timestamp`, `level`, `event` and what is bound with
`structlog.contextvars` (the runner binds `operationID` and `command`). Only versions, counts,
outcomes, reasons and error classes are logged: never SQL, a row, a URL or a token.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure_logging(stream: TextIO | None = None, level: int = logging.INFO) -> None:
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
    # Libraries (aiohttp, asyncpg) log through the standard library: keep them quiet unless
    # they warn, and never let them print a request line with a URL at info level.
    logging.basicConfig(level=logging.WARNING, stream=stream or sys.stderr, format="%(message)s")
