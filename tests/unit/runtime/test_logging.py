"""Logs are JSON lines with timestamp, level, event and the bound context."""

from __future__ import annotations

import io
import json
import logging

import structlog

from ptah_operator.runtime.logging import configure_logging


def test_structlog_and_stdlib_lines_are_json_with_bound_context() -> None:
    out = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    configure_logging("info", out)
    try:
        log = structlog.get_logger("ptah_operator.test").bind(informer="cms")
        with structlog.contextvars.bound_contextvars(controller="ptahschema", key="ns/a"):
            log.info("object observed", generation=3)
        log.debug("not shown at info")
        logging.getLogger("aiohttp.client").warning("from the standard library %s", "too")
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            log.exception("reconcile failed")
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
    finally:
        # Leave logging as the other tests expect it.
        structlog.reset_defaults()
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])
    assert len(lines) == 3
    first = lines[0]
    assert first["event"] == "object observed"
    assert first["level"] == "info"
    assert first["controller"] == "ptahschema"
    assert first["key"] == "ns/a"
    assert first["informer"] == "cms"
    assert first["generation"] == 3
    assert first["timestamp"].endswith("Z")
    assert lines[1]["event"] == "from the standard library too"
    assert lines[1]["level"] == "warning"
    assert "RuntimeError: boom" in lines[2]["exception"]
    assert lines[2]["level"] == "error"
